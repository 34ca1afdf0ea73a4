#define _DEFAULT_SOURCE // M_PI_4
/* trainer: the learning-rate schedules against their closed forms. */
#include "train/trainer.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>

Test(trainer, cosine_schedule_runs_from_lr_to_zero) {
    trainer_config c;
    trainer_config_default(&c);
    c.lr = 0.1;
    cr_expect(fabs(trainer_lr(&c, 0, 100, 0) - 0.1) < 1e-12);
    cr_expect(fabs(trainer_lr(&c, 50, 100, 2) - 0.05) < 1e-12);
    cr_expect(fabs(trainer_lr(&c, 25, 100, 1) - 0.1 * 0.5 * (1 + cos(M_PI_4))) < 1e-12);
    cr_expect(trainer_lr(&c, 100, 100, 4) < 1e-12);
}

Test(trainer, step_schedule_divides_by_ten_at_half_and_three_quarters) {
    trainer_config c;
    trainer_config_default(&c);
    c.lr = 0.1, c.schedule = SCHEDULE_STEP, c.epochs = 8;
    const double want[8] = { 0.1, 0.1, 0.1, 0.1, 0.01, 0.01, 0.001, 0.001 };
    for (int e = 0; e < 8; e++)
        cr_expect(fabs(trainer_lr(&c, e * 10, 80, e) - want[e]) < 1e-12, "epoch %d: %g", e, trainer_lr(&c, e * 10, 80, e));
}
