/* efficiency — statistical efficiency: how many epochs a configuration needs to reach a
 * test accuracy, fitted from the accuracy points of training traces (trace/traceinfo.h's
 * traceinfo_accuracy_curve), so that `speedup model|simulate|advise --target-accuracy A`
 * can predict the time to reach A, not only the time per epoch (DESIGN.md, "Time to
 * accuracy").
 *
 * The form. Accuracy against epochs e (examples seen by all workers together / D) is a
 * reference learning curve, stretched along e by a slowdown s of the configuration:
 *
 *   acc_c(e) = f(e / s(c))
 *   f(x)     = a − (a − c0) / (1 + (x/x0)^α)       c0 = 1/classes (chance), a the plateau
 *   s(c)     = (1 + w·(G/B_ref − 1)) · (1 + γ·(1 − 1/K)·D(H)) · (1 + β·τ)
 *   D(H)     = (H − 1) / (H − 1 + H_c)             the drift: 0 at H = 1, half at H_c + 1, → 1
 *
 *   G       the global batch: the examples of one averaged update. Batch sync: B (the
 *           batch split over the K workers: the trajectory of one worker), K·B with
 *           --batch-per-worker; local SGD (epoch, every:N): K·B, K workers of B each.
 *   H       local steps between averagings: batch sync 1, every:N min(N, s), epoch s
 *           (s = steps per epoch per worker, model/costmodel.h's schedule).
 *   B_ref   the reference global batch: the smallest G among the runs with H = 1 (one
 *           worker, or batch sync), whose curve is f itself.
 *   τ       the mean staleness of the configuration's gradients: how many updates the
 *           server applied between a gradient's pull and its own (trace/trace.h). 0 but for
 *           async and hogwild (train/asyncps.h: a parameter server applying each worker's
 *           gradient as it comes), where G = B and H = 1 — each gradient is one update, none
 *           is averaged — and K workers pulling every N steps make τ ≈ K·(N + 1)/2 − 1
 *           (hogwild: up to K·(N + 1)/2; model/costmodel.h's costmodel_async). Predicted
 *           with the cost model's or the simulator's τ (efficiency_predict's argument), and
 *           fitted, where the time model is at hand (efficiency_fit_traces' params), on the
 *           cost model's τ of each run's configuration: the same estimator on both sides.
 *           The τ the runs measured is 5–12 % lower (each epoch starts on fresh weights:
 *           0.93–0.97, 1.69–1.77, 2.75–2.82 at K = 2, 3, 4 against 1, 2, 3 on full
 *           Fashion-MNIST); fitted on it, the held-out configurations came out later
 *           (median |error| 0.38 against 0.31 epochs at the measured crossing) and time to
 *           90 % within 15 % in 5 of 6 instead of 6 (experiments/time-to-accuracy, session 14).
 *
 * Why this form:
 *  - f is the Morgan-Mercer-Flodin curve, one of the parametric learning-curve families
 *    of Domhan et al. (IJCAI 2015): it starts at chance (an untrained network), saturates
 *    at a plateau a, and for x ≫ x0 its error a − f ≈ (a − c0)(x0/x)^α is the power law
 *    that learning curves follow (Hestness et al. 2017), the "pow3" family, without pow3's
 *    −∞ at x → 0 where --eval-every's first points lie.
 *  - The global-batch factor is McCandlish et al. 2018 ("An empirical model of large-batch
 *    training"): examples needed E = E_min·(1 + G/B_noise), so relative to B_ref
 *    s = (1 + G/B_noise)/(1 + B_ref/B_noise) = 1 + w·(G/B_ref − 1) with
 *    w = B_ref/(B_ref + B_noise) ∈ [0, 1]: w = 0, a batch far below the noise scale, more
 *    examples per update cost no epochs; w = 1, only the number of updates counts (the
 *    epochs grow as G). Linear in w, bounded, and B_noise = B_ref·(1 − w)/w is reported.
 *    The trainer does not scale the learning rate with G, so the fitted B_noise is that
 *    of this fixed rate, not McCandlish's tuned one: the smaller it is, the more "K times
 *    the batch is K times fewer steps" holds.
 *  - Local SGD: averaging K models after one local step each is one step of their mean
 *    gradient — a global batch of K·B (to first order in the rate, as long as the models
 *    stay close); after H steps they drift apart and the average makes less progress
 *    than H large steps would. The loss at the average exceeds the average loss by about
 *    the curvature times the models' spread around their mean, E‖θ_k − θ̄‖² = (1 − 1/K)·v:
 *    hence the share 1 − 1/K (0 at K = 1). v, one model's drift over H local steps, grows
 *    linearly in H − 1 while the rate times the curvature times H is small (Wang & Joshi
 *    2021, "Cooperative SGD": the extra error of periodic averaging is ∝ η²L²σ²(H − 1);
 *    Stich 2019, "Local SGD converges fast and communicates little") and saturates once
 *    each model has settled near a minimum of its own (Lin et al. 2020, "Don't use large
 *    mini-batches, use local SGD": small H costs nothing, even helps; Ortiz et al. 2021,
 *    "Trade-offs of local SGD at scale": large H costs): D(H) = (H − 1)/(H − 1 + H_c),
 *    linear for H ≪ H_c, 1 for H ≫ H_c, H_c ~ 1/(ηL) steps fitted (as ln H_c). γ is the
 *    penalty of fully drifted models at K → ∞. Why not ln H, this form's predecessor: it
 *    has slope 1 at H = 1 whatever its scale, so every:8 (ln 8 = 2.1) paid a third of
 *    epoch sync's penalty (ln 469..938 = 6.2..6.8), where full Fashion-MNIST measured
 *    none for every:8 (stretch 0.86, 0.80, 1.025 at K = 2, 3, 4; batch sync, one
 *    algorithm, 0.84..1.065) and 1.20..1.58 for epoch sync (experiments/time-to-accuracy).
 *    A calibration.json written before H_c existed (no "log_h_c") is read with ln H in
 *    D's place (efficiency_model.legacy_log_h), so that its predictions do not change.
 *    The parameter is fitted only when the local-SGD runs (K > 1) have two or more
 *    distinct H; with one H, H_c and γ cannot be told apart: ln H_c is held at 0 (D = 1 −
 *    1/H: the penalty taken as saturated at every period) and marked not fitted.
 *  - Staleness: a gradient τ updates old was taken where the weights no longer are; to
 *    first order in the rate it is the fresh gradient less the curvature times the τ
 *    steps since, so each stale update makes less progress than a fresh one, and the
 *    loss in a bound of asynchronous SGD grows linearly in τ (Lian et al. 2015,
 *    "Asynchronous parallel stochastic gradient for nonconvex optimization": the extra
 *    term ∝ η·L·τ; Zhang et al. 2016, "Staleness-aware async-SGD", divides the rate by
 *    τ to undo it). Hence the stretch 1 + β·τ, first order in τ, β fitted (its sign too:
 *    with momentum, asynchrony also acts as extra momentum (Mitliagkas et al. 2016,
 *    "Asynchrony begets momentum"), which can help as well as hurt). Beyond the largest τ
 *    measured the first order is not trusted: a staler server can diverge, and on full
 *    Fashion-MNIST two async workers pulling every 4 steps (τ ≈ 4, the server's momentum
 *    0.9) did, a NaN loss in the second epoch, where K = 4 pulling every step (τ 2.8)
 *    trained (experiments/time-to-accuracy). So a prediction whose τ exceeds the stalest
 *    fitted run's (staleness_max) by more than EFFICIENCY_STALENESS_SLACK is refused.
 *    Hogwild shares β with async: its races are not in the form, and the held-out check
 *    says what that costs (nothing measurable there).
 *  - A stretch in e keeps the curve's shape: the plateau is the same for every
 *    configuration, and within the schedule's E epochs a slowed one reaches f(E/s) only.
 *    The learning rate follows a cosine over --epochs (after a warm-up), so the curve is
 *    that schedule's: the fit stores E and predictions refuse another (efficiency_check).
 *    A stretched configuration ends its schedule with the rate annealed where the
 *    reference's is not, which no stretch follows: on the small runs, local SGD's late
 *    epochs left the stretched curve by up to 1.3 points of accuracy — above it for 2
 *    workers averaging every epoch, below it for 4 workers at the schedule's end — so a
 *    target that a configuration reaches only in its last epochs is the least certain.
 *
 * The fit (efficiency_fit; from traces, after the learning rate's warm-up:
 * efficiency_fit_traces): θ = (a, ln x0, α, w, γ) by nonlinear least squares
 * (gsl_multifit_nlinear, trust region Levenberg-Marquardt, finite-difference Jacobian) over
 * every accuracy point of every run, in two passes: unweighted, then each point weighted
 * by 1/σ² of its group (points on the whole test set; points on --eval-every's fixed
 * subset, noisier), σ of a group = its residuals' rms. Covariance (JᵀJ)⁻¹·χ²/dof. w is
 * fitted only when some run's G differs from B_ref, γ only when some run has K > 1 and
 * H > 1, ln H_c only when two or more such H differ, β only when some run's τ > 0 (an
 * async or hogwild run with K > 1 or N > 1); else each is held at 0 (fitted[]
 * false) and a prediction that needs w or γ is refused. A w fitted below 0 (a larger
 * batch needing fewer epochs) is held at its bound 0 and the rest refitted (at_bound[w]:
 * predictions for any batch then use w = 0). ln H_c starts from the best of a profile
 * over [0, ln H_max] (H_max the longest period measured; from one start the free fit ran
 * off or did not settle on full Fashion-MNIST); one fitted outside that range is held at
 * the bound it crossed, and one whose free fit does not settle at its profile's best
 * (at_bound[ln H_c] either way: the runs do not place H_c). Points
 * of one run are correlated over time (a run ahead stays ahead), so the standard errors
 * are those of independent points: somewhat optimistic.
 *
 * Predicting (efficiency_predict): epochs to reach A, e(A) = s·x0·((A − c0)/(a − A))^(1/α)
 * when A < a; "above the plateau" when A ≥ a; "beyond the schedule" when e(A) > E (the
 * prediction says what accuracy the schedule's end reaches instead). The 95% prediction
 * interval of one run: 4000 draws (a fixed-seed GSL RNG: the same answer every time) of θ
 * from N(θ̂, cov) (w held ≥ 0, α > 0) and of the run's own deviation from the mean curve,
 * ε ~ N(0, σ²) on the whole-test-set points' σ: the run reaches A when f = A − ε. A draw
 * that does not reach A within E epochs is "not reached"; when more than 2.5% do, the
 * interval's upper end is not reached. The time to A adds the time per epoch's own
 * uncertainty: time = W + e·t_epoch, times a log-normal factor of the cost model's log-sd,
 * drawn with the same draws.
 *
 * Pure functions on plain structs; nothing prints. Errors: -1 with a one-line reason.
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
