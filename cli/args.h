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
/* One of n names: its index in *out; else "FLAG: expected A, B or C, got 'text'" and -1. */
int args_choice(const char *flag, const char *text, const char *const *names, int n, int *out);
/* Prints "speedup: warning: " + message + newline on stderr (the value is still taken). */
void args_warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Seconds, with an optional unit: "0.5", "50ms", "20us", "1.5s". */
int args_seconds(const char *flag, const char *text, double *out);
/* A message's latency: args_seconds, and a bare number over 10 ms (seconds implied, an
 * implausible latency: "50" meant as µs) is taken with a warning naming the unit. A
 * bare rate under 1 Mbit/s (args_bandwidth) and a bare size under 1 kB (args_size) are
 * warned of likewise. */
int args_latency(const char *flag, const char *text, double *out);
/* Bytes per second, from a number and an optional unit, following tc and iperf:
 *   bare number          bytes/s ("1.25e8"), as tc reads one
 *   bit kbit mbit gbit tbit, kibit mibit gibit tibit
 *                        bits/s, in any case as tc reads them ("100mbit" = "100Mbit")
 *   kb Kb Mb Gb Tb       bits/s: a lowercase b is a bit (iperf, SI)
 *   B kB KB MB GB TB, KiB MiB GiB TiB, and the same + "ps" (MBps)
 *                        bytes/s: an uppercase B is a byte
 *   K M G T, GbE         bits/s, as vendors write them ("25G", "10GbE"); a trailing "/s"
 *                        is read too ("25gbit/s", "25 Gbit/s" as speedup prints it)
 * Decimal prefixes are powers of 1000, "Ki"/"Mi"/... of 1024. Symbols are case-exact.
 * Refused as ambiguous, with the two readings spelled out: "Mbps", "mbps", "kbps"
 * (megabytes per second to tc, megabits to most tools) and "mb", "mB", "gb" (m is milli;
 * "mb" is written for megabits and megabytes alike). */
int args_bandwidth(const char *flag, const char *text, double *out_bytes_per_s);
/* The scale of one rate unit in bytes/s ("" = 1), by the rule above: 0, or -1 when the
 * unit is not one args_bandwidth accepts. */
int args_rate_unit(const char *unit, double *bytes_per_s);
/* Bytes, with an optional unit (model/memory.h's memory_parse_size): "1819688", "100MB"
 * (10^6), "1.8MiB" (2^20), "4G" (2^30); at least min, at most max. */
int args_size(const char *flag, const char *text, double min, double max, double *out);
/* A comma-separated list of ints in [min, max]: "1,2,4,8". At most max_n entries. */
int args_int_list(const char *flag, const char *text, int min, int max, int *out, int max_n, int *n);

#endif
