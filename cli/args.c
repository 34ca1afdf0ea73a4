#define _POSIX_C_SOURCE 200809L
#include "cli/args.h"

#include "model/memory.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <ctype.h>

void args_error(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("speedup: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

int args_unknown_flag(const char *command, const char *arg) {
    args_error("%s: unknown flag or missing value: '%s' (try speedup %s --help)", command, arg, command);
    return 2;
}

int args_unexpected(const char *command, const char *arg) {
    args_error("%s: unexpected argument '%s'", command, arg);
    return 2;
}

/* A number followed by the rest of the text (a unit, or nothing). */
static int leading_number(const char *text, double *x, const char **rest) {
    char *end = NULL;
    errno = 0;
    *x = strtod(text, &end);
    if (end == text || errno == ERANGE || !isfinite(*x))
        return -1;
    *rest = end;
    return 0;
}

int args_double(const char *flag, const char *text, double min, double max, double *out) {
    double x;
    const char *rest;
    if (leading_number(text, &x, &rest) || *rest != '\0') {
        args_error("%s: expected a number, got '%s'", flag, text);
        return -1;
    }
    if (x < min || x > max) {
        args_error("%s: expected a number in [%g, %g], got '%s'", flag, min, max, text);
        return -1;
    }
    *out = x;
    return 0;
}

int args_long(const char *flag, const char *text, long min, long max, long *out) {
    char *end = NULL;
    errno = 0;
    long x = strtol(text, &end, 10);
    if (end == text || *end != '\0' || errno == ERANGE) {
        args_error("%s: expected an integer, got '%s'", flag, text);
        return -1;
    }
    if (x < min || x > max) {
        args_error("%s: expected an integer in [%ld, %ld], got '%s'", flag, min, max, text);
        return -1;
    }
    *out = x;
    return 0;
}

int args_int(const char *flag, const char *text, int min, int max, int *out) {
    long x;
    if (args_long(flag, text, min, max, &x))
        return -1;
    *out = (int)x;
    return 0;
}

int args_choice(const char *flag, const char *text, const char *const *names, int n, int *out) {
    for (int i = 0; i < n; i++)
        if (strcmp(text, names[i]) == 0) {
            *out = i;
            return 0;
        }
    char expected[256] = "";
    for (int i = 0, used = 0; i < n && used < (int)sizeof expected; i++)
        used += snprintf(expected + used, sizeof expected - (size_t)used, "%s%s", i == 0 ? "" : i == n - 1 ? " or " : ", ",
                         names[i]);
    args_error("%s: expected %s, got '%s'", flag, expected, text);
    return -1;
}

void args_warning(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("speedup: warning: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

int args_latency(const char *flag, const char *text, double *out) {
    if (args_seconds(flag, text, out))
        return -1;
    double x;
    const char *rest;
    if (leading_number(text, &x, &rest) == 0 && *rest == '\0' && *out > 10e-3)
        args_warning("%s %s: read as %g s, over 10 ms for one message: for microseconds write %sus", flag, text, *out,
                     text);
    return 0;
}

int args_seconds(const char *flag, const char *text, double *out) {
    static const struct { const char *unit; double scale; } units[] = {
        { "", 1.0 }, { "s", 1.0 }, { "ms", 1e-3 }, { "us", 1e-6 }, { "ns", 1e-9 },
    };
    double x;
    const char *rest;
    if (leading_number(text, &x, &rest) == 0 && x >= 0)
        for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
            if (strcasecmp(rest, units[i].unit) == 0) {
                *out = x * units[i].scale;
                return 0;
            }
    args_error("%s: expected a duration >= 0 such as 0.05, 50ms or 20us, got '%s'", flag, text);
    return -1;
}

int args_size(const char *flag, const char *text, double min, double max, double *out) {
    double x;
    if (memory_parse_size(text, &x) == 0 && x >= min && x <= max) {
        *out = x;
        char *end;
        strtod(text, &end);
        if (*end == '\0' && x < 1000)
            args_warning("%s %s: read as %g bytes, under 1 kB: for megabytes write %sMB", flag, text, x, text);
        return 0;
    }
    args_error("%s: expected a size in [%g, %g] bytes such as 1819688, 100MB or 1.8MiB, got '%s'", flag, min, max,
               text);
    return -1;
}

/* Rate units (args.h states the rule). Words that spell "bit" are matched in any case, as
 * tc does; symbols are matched exactly, because their case is what tells a bit (b) from a
 * byte (B). The scale is bytes per second per unit. */
static const struct { const char *unit; double scale; int any_case; } rate_units[] = {
    { "", 1.0, 0 },
    { "bit", 1.0 / 8, 1 }, { "kbit", 1e3 / 8, 1 }, { "mbit", 1e6 / 8, 1 }, { "gbit", 1e9 / 8, 1 },
    { "tbit", 1e12 / 8, 1 }, { "kibit", 1024.0 / 8, 1 }, { "mibit", 1048576.0 / 8, 1 },
    { "gibit", 1073741824.0 / 8, 1 }, { "tibit", 1099511627776.0 / 8, 1 },
    { "kb", 1e3 / 8, 0 }, { "Kb", 1e3 / 8, 0 }, { "Mb", 1e6 / 8, 0 }, { "Gb", 1e9 / 8, 0 }, { "Tb", 1e12 / 8, 0 },
    { "B", 1.0, 0 }, { "kB", 1e3, 0 }, { "KB", 1e3, 0 }, { "MB", 1e6, 0 }, { "GB", 1e9, 0 }, { "TB", 1e12, 0 },
    { "KiB", 1024.0, 0 }, { "MiB", 1048576.0, 0 }, { "GiB", 1073741824.0, 0 }, { "TiB", 1099511627776.0, 0 },
    { "Bps", 1.0, 0 }, { "kBps", 1e3, 0 }, { "KBps", 1e3, 0 }, { "MBps", 1e6, 0 }, { "GBps", 1e9, 0 },
    { "TBps", 1e12, 0 }, { "KiBps", 1024.0, 0 }, { "MiBps", 1048576.0, 0 }, { "GiBps", 1073741824.0, 0 },
    { "TiBps", 1099511627776.0, 0 },
};

/* Vendors' and the tool's own spellings of bits per second: "25G" (25G Ethernet), "10GbE",
 * "25gbit/s", "25 Gbit/s" (what speedup prints). */
static const struct { const char *unit; double scale; } vendor_units[] = {
    { "K", 1e3 / 8 }, { "M", 1e6 / 8 }, { "G", 1e9 / 8 }, { "T", 1e12 / 8 },
    { "GbE", 1e9 / 8 }, { "gbe", 1e9 / 8 }, { "MbE", 1e6 / 8 },
};

int args_rate_unit(const char *unit, double *bytes_per_s) {
    while (*unit == ' ')
        unit++;
    char bare[32];
    const size_t len = strlen(unit);
    if (len > 2 && len < sizeof bare && strcmp(unit + len - 2, "/s") == 0) { /* "gbit/s": the rate's "/s" */
        memcpy(bare, unit, len - 2);
        bare[len - 2] = '\0';
        if (strncasecmp(bare + strlen(bare) - 3 * (strlen(bare) >= 3), "bit", 3) == 0 || strcmp(bare, "B") == 0 ||
            (strlen(bare) == 2 && bare[1] == 'B'))
            unit = bare;
    }
    for (size_t i = 0; i < sizeof vendor_units / sizeof vendor_units[0]; i++)
        if (strcmp(unit, vendor_units[i].unit) == 0) {
            *bytes_per_s = vendor_units[i].scale;
            return 0;
        }
    for (size_t i = 0; i < sizeof rate_units / sizeof rate_units[0]; i++)
        if (rate_units[i].any_case ? strcasecmp(unit, rate_units[i].unit) == 0 : strcmp(unit, rate_units[i].unit) == 0) {
            *bytes_per_s = rate_units[i].scale;
            return 0;
        }
    return -1;
}

int args_bandwidth(const char *flag, const char *text, double *out_bytes_per_s) {
    double x, scale;
    const char *rest;
    if (leading_number(text, &x, &rest) == 0 && x > 0 && args_rate_unit(rest, &scale) == 0 &&
        isfinite(x * scale) && x * scale > 0) {
        *out_bytes_per_s = x * scale;
        if (*rest == '\0' && x * scale < 125e3) /* a bare number is bytes/s, as tc reads it */
            args_warning("%s %s: read as %g bytes/s, under 1 Mbit/s: for bits write %sgbit or %smbit", flag, text, x,
                         text, text);
        return 0;
    }
    if (leading_number(text, &x, &rest) == 0 && *rest && strchr("kKmMgGtT", rest[0]) &&
        (strcasecmp(rest + 1, "bps") == 0 || strcasecmp(rest + 1, "b") == 0)) {
        const int bps = strcasecmp(rest + 1, "bps") == 0;
        const char p = rest[0] == 'k' ? 'k' : (char)toupper((unsigned char)rest[0]);
        const int n = (int)(rest - text);
        if (bps) // tc reads "Mbps" as megabytes per second, most other tools as megabits
            args_error("%s: '%s' is ambiguous: tc reads %s as bytes per second, most tools as bits; write "
                       "%.*s%cbit (bits/s) or %.*s%cBps (bytes/s)", flag, text, rest, n, text, p, n, text, p);
        else // "mb": m is milli, and "mb" is written for megabits and megabytes alike
            args_error("%s: '%s' is ambiguous: write %.*s%cb or %.*s%cbit (bits/s), or %.*s%cB (bytes/s)", flag,
                       text, n, text, p, n, text, p, n, text, p);
        return -1;
    }
    args_error("%s: expected a rate > 0 such as 1gbit or 100Mb (bits/s), 125MB (bytes/s) or 1.25e8 "
               "(bytes/s), got '%s'", flag, text);
    return -1;
}

int args_int_list(const char *flag, const char *text, int min, int max, int *out, int max_n, int *n) {
    *n = 0;
    const char *p = text;
    for (;;) {
        char item[32];
        size_t len = strcspn(p, ",");
        if (len == 0 || len >= sizeof item) {
            args_error("%s: expected a comma-separated list of integers, got '%s'", flag, text);
            return -1;
        }
        if (*n == max_n) {
            args_error("%s: at most %d values, got '%s'", flag, max_n, text);
            return -1;
        }
        memcpy(item, p, len);
        item[len] = '\0';
        if (args_int(flag, item, min, max, &out[*n]))
            return -1;
        (*n)++;
        if (p[len] == '\0')
            return 0;
        p += len + 1;
    }
}
