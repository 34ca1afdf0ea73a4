/* params — the registry's table and accessors (params.h). */
#include "model/params.h"

#include <stddef.h>
#include <string.h>

#define ROW_(id, name, field, se, unit, lo, hi, drawn, req, print, says) \
    [PARAM_##id] = { name, unit, says, lo, hi, drawn, req, print, NULL, PARAM_SECONDS },
#define ROW_FLAG_(id, name, field, se, unit, lo, hi, drawn, req, print, says, flag, kind) \
    [PARAM_##id] = { name, unit, says, lo, hi, drawn, req, print, flag, kind },
static const param_row rows[PARAM_COUNT] = { COSTMODEL_PARAMS(ROW_, ROW_FLAG_) };
#undef ROW_
#undef ROW_FLAG_

#define OFFSET_(id, name, field, se, ...) [PARAM_##id] = offsetof(costmodel_params, field),
static const size_t value_offset[PARAM_COUNT] = { COSTMODEL_PARAMS(OFFSET_, OFFSET_) };
#undef OFFSET_
#define OFFSET_(id, name, field, se, ...) [PARAM_##id] = offsetof(calibration_stderr, se),
static const size_t se_offset[PARAM_COUNT] = { COSTMODEL_PARAMS(OFFSET_, OFFSET_) };
#undef OFFSET_

const param_row *param_info(param_id id) { return &rows[id]; }

bool param_in_range(const param_row *r, double v) { return v >= r->lo && v <= r->hi; }

double *param_value(costmodel_params *p, param_id id) { return (double *)((char *)p + value_offset[id]); }

double param_get(const costmodel_params *p, param_id id) {
    return *(const double *)((const char *)p + value_offset[id]);
}

double *param_se(calibration_stderr *e, param_id id) { return (double *)((char *)e + se_offset[id]); }

double param_se_get(const calibration_stderr *e, param_id id) {
    return *(const double *)((const char *)e + se_offset[id]);
}

int param_by_name(const char *name) {
    for (int i = 0; i < PARAM_COUNT; i++)
        if (strcmp(rows[i].name, name) == 0)
            return i;
    return -1;
}
