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

/* The MPI trainer's hook: called once per step between backward and update. */
static int count_steps(void *ctx, net *n, long step, char *err, int errlen) {
    (void)n, (void)err, (void)errlen;
    long *calls = ctx;
    cr_expect_eq(step, *calls, "steps out of order");
    (*calls)++;
    return 0;
}
static int fail_at_three(void *ctx, net *n, long step, char *err, int errlen) {
    (void)ctx, (void)n;
    if (step < 3)
        return 0;
    snprintf(err, (size_t)errlen, "rank 1 went away");
    return -1;
}

Test(trainer, after_backward_runs_once_per_step_and_can_stop_the_run) {
    trainer_config c;
    trainer_config_default(&c);
    c.limit = 64, c.epochs = 2, c.batch = 16, c.net_spec = "conv3x3x2,relu,pool4,fc10";
    long calls = 0;
    c.after_backward = count_steps, c.after_backward_ctx = &calls;
    trainer_result r;
    char err[256];
    cr_assert_eq(trainer_run(&c, &r, err, sizeof err), 0, "%s", err);
    cr_expect_eq(calls, 2 * 64 / 16);
    c.after_backward = fail_at_three;
    cr_expect_eq(trainer_run(&c, &r, err, sizeof err), -1);
    cr_expect_str_eq(err, "rank 1 went away");
}
