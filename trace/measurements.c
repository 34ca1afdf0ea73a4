/* measurements — a trace as a measurements row (measurements.h). */
#include "trace/measurements.h"

#include "trace/traceinfo.h"

prediction_row measurements_from_trace(const trace *t) {
    const job_config *k = &t->run.config;
    prediction_row r = { .workers = k->workers, .cores = k->cores, .topology = k->topology, .speedup = 1 };
    job_sync_format(k->sync, k->every_n, r.sync, sizeof r.sync);
    r.time_s = traceinfo_training_time(t);
    traceinfo_phases ph = traceinfo_phase_means(t);
    r.startup_s = ph.startup_s;
    r.compute_s = ph.compute_s;
    r.update_s = ph.update_s;
    r.comm_s = ph.comm_s;
    r.wait_s = ph.wait_s;
    predictions_set_point(&r);
    const trace_memory *m = &t->run.memory;
    if (m->has && m->n_ranks > 0) {
        /* rank 0's peak, and the largest of the others' (rank 0's when it ran alone) */
        long others = m->n_ranks > 1 ? 0 : m->peak_rss_kib[0];
        for (int i = 1; i < m->n_ranks; i++)
            others = m->peak_rss_kib[i] > others ? m->peak_rss_kib[i] : others;
        r.has_memory = r.fits = true;
        r.rss_master_mib = (double)m->peak_rss_kib[0] / 1024.0;
        r.rss_worker_mib = (double)others / 1024.0;
    }
    traceinfo_async a;
    if (job_sync_is_async(k->sync) && traceinfo_async_of(t, &a) == 0 && a.updates > 0) {
        r.has_staleness = true;
        r.staleness_median = a.staleness_median;
        r.staleness_p90 = a.staleness_p90;
        r.staleness_mean = a.staleness_mean;
    }
    return r;
}
