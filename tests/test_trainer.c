#define _DEFAULT_SOURCE // M_PI_4
/* trainer: the learning-rate schedules against their closed forms. */
#include "train/trainer.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>

Test(trainer, cosine_schedule_runs_from_lr_to_zero) {
    trainer_config c;
    trainer_config_default(&c);
    c.lr = 0.1, c.warmup_epochs = 0;
    cr_expect(fabs(trainer_lr(&c, 0, 100, 0) - 0.1) < 1e-12);
    cr_expect(fabs(trainer_lr(&c, 50, 100, 2) - 0.05) < 1e-12);
    cr_expect(fabs(trainer_lr(&c, 25, 100, 1) - 0.1 * 0.5 * (1 + cos(M_PI_4))) < 1e-12);
    cr_expect(trainer_lr(&c, 100, 100, 4) < 1e-12);
}

Test(trainer, step_schedule_divides_by_ten_at_half_and_three_quarters) {
    trainer_config c;
    trainer_config_default(&c);
    c.lr = 0.1, c.schedule = SCHEDULE_STEP, c.epochs = 8, c.warmup_epochs = 0;
    const double want[8] = { 0.1, 0.1, 0.1, 0.1, 0.01, 0.01, 0.001, 0.001 };
    for (int e = 0; e < 8; e++)
        cr_expect(fabs(trainer_lr(&c, e * 10, 80, e) - want[e]) < 1e-12, "epoch %d: %g", e, trainer_lr(&c, e * 10, 80, e));
}

Test(trainer, warmup_ramps_linearly_then_follows_the_schedule) {
    trainer_config c;
    trainer_config_default(&c);
    c.lr = 0.1, c.schedule = SCHEDULE_STEP, c.epochs = 4, c.warmup_epochs = 1;
    // 100 steps over 4 epochs: the first 25 ramp 0.1·(t+1)/25, then the step schedule.
    cr_expect(fabs(trainer_lr(&c, 0, 100, 0) - 0.1 / 25) < 1e-12);
    cr_expect(fabs(trainer_lr(&c, 12, 100, 0) - 0.1 * 13 / 25) < 1e-12);
    cr_expect(fabs(trainer_lr(&c, 24, 100, 0) - 0.1) < 1e-12);
    cr_expect(fabs(trainer_lr(&c, 25, 100, 1) - 0.1) < 1e-12);
    cr_expect(fabs(trainer_lr(&c, 60, 100, 2) - 0.01) < 1e-12);
    c.schedule = SCHEDULE_COSINE;
    cr_expect(fabs(trainer_lr(&c, 12, 100, 0) - 0.1 * 0.5 * (1 + cos(M_PI * 12 / 100)) * 13 / 25) < 1e-12);
}
