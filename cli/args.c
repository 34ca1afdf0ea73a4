#define _POSIX_C_SOURCE 200809L
#include "cli/args.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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

int args_bandwidth(const char *flag, const char *text, double *out_bytes_per_s) {
    static const struct { const char *unit; double scale; } units[] = {
        { "", 1.0 }, { "B", 1.0 }, { "kB", 1e3 }, { "MB", 1e6 }, { "GB", 1e9 },
        { "bit", 1.0 / 8 }, { "kbit", 1e3 / 8 }, { "mbit", 1e6 / 8 }, { "gbit", 1e9 / 8 },
    };
    double x;
    const char *rest;
    if (leading_number(text, &x, &rest) == 0 && x > 0)
        for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
            if (strcasecmp(rest, units[i].unit) == 0) {
                *out_bytes_per_s = x * units[i].scale;
                return 0;
            }
    args_error("%s: expected a bandwidth > 0 such as 1gbit, 100mbit or 125MB (bytes/s), got '%s'",
               flag, text);
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
