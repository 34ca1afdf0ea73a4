/* efficiency — statistical efficiency: how many epochs a configuration needs to reach a
 * test accuracy, so that `speedup model|simulate|advise --target-accuracy A` predicts the
 * time to reach A, not only the time per epoch (DESIGN.md, "Time to accuracy").
 *
 * In: accuracy points of training runs (efficiency_run; from traces by
 * fit/efficiency_fit.h, trace/traceinfo.h's accuracy curve). Out: a fitted efficiency_model
 * (stored in calibration.json), and for a job_config, its mean staleness τ and a target A,
 * the epochs (and with a timing, the time) to reach A with the 95% prediction interval of
 * one run (efficiency_prediction).
 *
 * The form: a reference learning curve stretched along the epochs e by a slowdown s(c):
 *   acc_c(e) = f(e / s(c))
 *   f(x)     = a − (a − c0) / (1 + (x/x0)^α)       c0 = 1/classes (chance), a the plateau
 *   s(c)     = (1 + w·(G/B_ref − 1)) · (1 + γ·(1 − 1/K)·D(H)) · (1 + β·τ)
 *   D(H)     = (H − 1) / (H − 1 + H_c)             (legacy files: ln H)
 * G the global batch of one averaged update, H the local steps between averagings, B_ref
 * the smallest G of the runs with H = 1, τ the gradients' mean staleness (0 but for async
 * and hogwild). e(A) = s·x0·((A − c0)/(a − A))^(1/α) when A < a.
 *
 * The fit (efficiency_fit): θ = (a, ln x0, α, w, γ, ln H_c, β) by GSL's nonlinear least
 * squares over every point, unweighted then weighted by each group's (whole test set,
 * subset) residual σ; a parameter the runs did not vary is held at 0 (fitted[] false), w < 0
 * and ln H_c outside [0, ln H_max] are held at their bounds (at_bound[]). Predicting
 * (efficiency_predict): 4000 draws of θ and of the run's own deviation with a fixed-seed
 * RNG (the same answer every time); a target above the plateau or beyond the schedule's E
 * epochs is reported as such (reach, *_reached), never as NaN or infinity. Predictions
 * refuse another schedule or data size, and a τ past the stalest fitted run's by more than
 * EFFICIENCY_STALENESS_SLACK (efficiency_check, efficiency_check_at).
 *
 * Why this form (Morgan-Mercer-Flodin, McCandlish's noise scale, local SGD's drift,
 * staleness), the fit's details and what full Fashion-MNIST measured:
 * docs/time-to-accuracy.md ("Why this form, in full").
 *
 * Plain structs; nothing prints. efficiency_predict allocates its draws and frees them
 * before it returns. Errors: -1 with a one-line reason in why.
 */
#ifndef SPEEDUP_EFFICIENCY_H
#define SPEEDUP_EFFICIENCY_H

#include "model/costmodel.h"

#include <stdbool.h>

/* θ, in this order everywhere (calibration.json's "efficiency.params" and "cov"). */
typedef enum {
    EFFICIENCY_PLATEAU,      /* a: accuracy the curve saturates at, (c0, 1] */
    EFFICIENCY_LOG_X0,       /* ln x0: x0 the epochs at which f is half-way from c0 to a */
    EFFICIENCY_POWER,        /* α > 0: the power law's exponent */
    EFFICIENCY_W,            /* w ≥ 0: the global batch's share of the slowdown */
    EFFICIENCY_GAMMA,        /* γ: local SGD's penalty per unit of (1 − 1/K)·D(H) */
    EFFICIENCY_LOG_HC,       /* ln H_c: H_c + 1 the averaging period paying half of γ */
    EFFICIENCY_STALE_COST,   /* β: the stretch per update of mean staleness τ */
    EFFICIENCY_NP
} efficiency_param;

/* θ_j's name in calibration.json, `speedup calibrate`'s output and the report. */
const char *efficiency_param_name(efficiency_param j);
/* The form in one line of ASCII (calibration.json's "form"; the outputs print it); legacy:
 * the ln H form of files from before H_c. (A file from before β has β = 0: the current
 * form is its form.) */
const char *efficiency_form(bool legacy);

/* The fitted model, as calibration.json stores it. */
typedef struct {
    bool known;                        /* false: no efficiency fit (the calibration has none) */
    long examples;                     /* D the curve was measured on */
    long batch;                        /* B_ref */
    int epochs;                        /* E: the schedule's length (cosine over E epochs) */
    double chance;                     /* c0 = 1/classes */
    double theta[EFFICIENCY_NP];
    double cov[EFFICIENCY_NP][EFFICIENCY_NP];  /* of θ; rows and columns of unfitted ones 0 */
    bool fitted[EFFICIENCY_NP];        /* w, γ: false when the runs did not vary them */
    bool at_bound[EFFICIENCY_NP];      /* w, ln H_c: fitted past a bound and held (fitted false) */
    bool legacy_log_h;                 /* a file from before H_c: D(H) = ln H, H_c unused */
    bool pre_stale;                    /* a file from before β: β = 0, not fitted (legacy_log_h
                                          files are pre_stale too) */
    double staleness_max;              /* the largest τ of the fitted runs */
    double sd_test, sd_subset;         /* residual σ: whole-test-set points, subset points */
    long points;                       /* accuracy points fitted */
    int runs, dof;
} efficiency_model;

/* The parameters m has: θ_0 .. θ_{n-1} (all of them; those before β when pre_stale;
 * those before ln H_c when legacy_log_h). */
int efficiency_n_params(const efficiency_model *m);

/* One training run's accuracy points, for the fit. */
typedef struct {
    const char *name;                  /* for messages (the trace's path) */
    job_config config;           /* workers, sync, every_n, batch, batch_per_worker, D, E */
    const double *epochs;              /* (n) epochs seen: examples seen by all workers / D */
    const double *accuracy;            /* (n) in [0, 1] */
    const bool *subset;                /* (n) measured on a fixed subset of the test set */
    long n;
    double staleness;                  /* τ: the mean staleness of its gradients (0 but for async) */
} efficiency_run;

/* Why a target is not reached. */
typedef enum { EFFICIENCY_REACHED, EFFICIENCY_ABOVE_PLATEAU, EFFICIENCY_BEYOND_SCHEDULE } efficiency_reach;

/* The time one epoch costs a configuration (from the cost model or the simulator). */
typedef struct {
    double startup_s;                  /* W: before the first epoch */
    double epoch_s;                    /* one epoch's training time */
    double sd_ln;                      /* log-sd of the run's time (its 95% PI's half-width / 1.96) */
} efficiency_timing;

typedef struct {
    double target;                     /* A */
    efficiency_reach reach;            /* of the point prediction */
    double slowdown;                   /* s(c) */
    double plateau;                    /* a */
    double accuracy_at_end;            /* f(E/s): what the schedule's end reaches */
    double epochs;                     /* REACHED: e(A); BEYOND_SCHEDULE: what the curve would
                                          need (> E); ABOVE_PLATEAU: 0, meaningless */
    double epochs_lo, epochs_hi;       /* 95% PI of one run; valid when lo_reached / hi_reached */
    bool lo_reached, hi_reached;       /* that end of the interval reaches A within E epochs */
    bool has_time;                     /* the times below were computed (a timing was given) */
    double time_s, time_lo_s, time_hi_s; /* W + e·t_epoch: point (REACHED) and 95% PI ends */
} efficiency_prediction;

/* Fits *out from runs (see above): 0, or -1 with why ("no reference run ...", "runs of
 * different schedules: 4 epochs in A, 10 in B", a staleness that is not a number >= 0, a
 * fit that does not converge). chance is the accuracy of an untrained network, 1/classes. */
int efficiency_fit(const efficiency_run *runs, int n_runs, double chance, efficiency_model *out, char *why,
                   int whylen);

/* Accuracy points inside the learning rate's warm-up (epochs seen below this) are left
 * out of the fit (fit/efficiency_fit.h says why). */
#define EFFICIENCY_WARMUP_EPOCHS 1.0

/* Does c train on stale gradients (see above: async and hogwild but one async worker
 * pulling every step, which is plain SGD bit for bit)? Predicting for such a c needs β
 * fitted (efficiency_check). */
bool efficiency_stale(const job_config *c);
/* G, H and s of config c with mean staleness tau under m (see above). */
double efficiency_global_batch(const job_config *c);
double efficiency_averaging_period(const job_config *c);
double efficiency_slowdown(const efficiency_model *m, const job_config *c, double tau);

/* f(x) of θ (the reference curve at x reference epochs); x ≥ 0. */
double efficiency_curve(const efficiency_model *m, const double theta[EFFICIENCY_NP], double x);
/* The predicted accuracy of c (mean staleness tau) after e epochs: f(e / s(c)). */
double efficiency_accuracy(const efficiency_model *m, const job_config *c, double tau, double epochs);

/* Can m predict for c, whatever its staleness? 0, or -1 with why naming what differs:
 * another schedule length (E), another number of examples (D), stale gradients when β was
 * not fitted (the fit had no async run with τ > 0), a global batch ≠ B_ref when w was not
 * fitted, local SGD when γ was not fitted, a slowdown at τ = 0 that is not positive. */
int efficiency_check(const efficiency_model *m, const job_config *c, char *why, int whylen);
/* Can m predict for c with mean staleness tau? efficiency_check's answer, or -1 with why:
 * tau not a number >= 0, tau beyond the stalest fitted run's by more than
 * EFFICIENCY_STALENESS_SLACK updates (see above), a slowdown s(c) at tau that is not
 * positive. */
#define EFFICIENCY_STALENESS_SLACK 0.5
int efficiency_check_at(const efficiency_model *m, const job_config *c, double tau, char *why, int whylen);

/* Epochs (and, with timing non-NULL, time) for c, whose gradients' mean staleness is tau
 * (0 but for async and hogwild: the cost model's or the simulator's), to reach target A in
 * (0, 1), with the 95% prediction interval of one run: 0, or -1 with why
 * (efficiency_check_at's, a target out of (0, 1)). Never NaN or infinite: what is not
 * reached says so in reach / *_reached. */
int efficiency_predict(const efficiency_model *m, const job_config *c, double tau, double target,
                       const efficiency_timing *timing, efficiency_prediction *out, char *why, int whylen);

/* One line for a prediction that does not reach its target (reach != REACHED), e.g. "not
 * reached: 93.1% is above the plateau 92.4%" or "not reached within the 10-epoch schedule:
 * 88.7% at its end (the curve needs 13.2 epochs)". snprintf's return. */
int efficiency_describe_miss(const efficiency_prediction *p, int epochs, char *buf, int len);

/* B_noise = B_ref·(1 − w)/w and its standard error (delta method); both 0 when w is 0
 * (then B_noise is unbounded: *infinite set). */
void efficiency_noise_scale(const efficiency_model *m, double *b_noise, double *se, bool *infinite);

#endif
