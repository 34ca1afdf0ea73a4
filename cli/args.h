/* args — parse one flag value strictly, or say what was wrong with it.
 *
 * Every parser returns 0 and stores the value, or prints one line
 *   speedup: --FLAG: expected WHAT, got 'TEXT'
 * on stderr and returns -1; the caller exits 2 (usage error).
 */
#ifndef SPEEDUP_ARGS_H
#define SPEEDUP_ARGS_H

/* Prints "speedup: " + message + newline on stderr. */
void args_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The two refusals every command's getopt loop ends with; each prints and returns 2. */
int args_unknown_flag(const char *command, const char *arg);
int args_unexpected(const char *command, const char *arg);

int args_double(const char *flag, const char *text, double min, double max, double *out);
int args_long(const char *flag, const char *text, long min, long max, long *out);
int args_int(const char *flag, const char *text, int min, int max, int *out);
/* Seconds, with an optional unit: "0.5", "50ms", "20us", "1.5s". */
int args_seconds(const char *flag, const char *text, double *out);
/* Bytes per second, with an optional unit: "1.25e8", "1gbit", "100mbit", "10kbit",
 * "125MB" (decimal: 1 MB = 1e6 bytes). */
int args_bandwidth(const char *flag, const char *text, double *out_bytes_per_s);
/* A comma-separated list of ints in [min, max]: "1,2,4,8". At most max_n entries. */
int args_int_list(const char *flag, const char *text, int min, int max, int *out, int max_n, int *n);

#endif
