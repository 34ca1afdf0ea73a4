/* cli/args.c: the strict flag-value parsers. Rates follow tc and iperf: "Mb" and "mbit"
 * are megabits, "MB" and "MBps" megabytes; "Mbps" and "mb" are refused as ambiguous.
 * Expected values are worked out by hand (1 megabit/s = 1e6 / 8 = 125000 bytes/s). */
#include "cli/args.h"

#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <stdio.h>
#include <string.h>

static double rate_ok(const char *text) {
    double v = -1.0;
    cr_assert_eq(args_bandwidth("--bandwidth", text, &v), 0, "'%s' refused", text);
    return v;
}

static void rate_refused(const char *text) {
    double v = -1.0;
    cr_assert_eq(args_bandwidth("--bandwidth", text, &v), -1, "'%s' accepted as %g bytes/s", text, v);
    cr_assert_eq(v, -1.0, "'%s': the output must stay untouched", text);
}

Test(args, megabit_spellings_are_bits_like_tc_and_iperf, .init = cr_redirect_stderr) {
    cr_assert_eq(rate_ok("100mbit"), 12.5e6);
    cr_assert_eq(rate_ok("100Mbit"), 12.5e6);
    cr_assert_eq(rate_ok("100MBIT"), 12.5e6); // tc matches the word in any case
    cr_assert_eq(rate_ok("100Mb"), 12.5e6);   // a lowercase b is a bit: the old reader said 1e8
    cr_assert_eq(rate_ok("10kb"), 1250.0);
    cr_assert_eq(rate_ok("10Kb"), 1250.0);
    cr_assert_eq(rate_ok("1Gb"), 1.25e8);
    cr_assert_eq(rate_ok("1gbit"), 1.25e8);
    cr_assert_eq(rate_ok("8bit"), 1.0);
    cr_assert_eq(rate_ok("8kibit"), 1024.0);
}

/* As vendors write them, and as speedup prints them: bits per second. */
Test(args, vendor_and_printed_spellings_are_bits, .init = cr_redirect_stderr) {
    cr_assert_eq(rate_ok("25G"), 25e9 / 8);
    cr_assert_eq(rate_ok("10GbE"), 10e9 / 8);
    cr_assert_eq(rate_ok("25gbit/s"), 25e9 / 8);
    cr_assert_eq(rate_ok("25 Gbit/s"), 25e9 / 8);
    cr_assert_eq(rate_ok("100Mbit/s"), 100e6 / 8);
    cr_assert_eq(rate_ok("125MB/s"), 125e6);
    cr_assert_eq(rate_ok("100 mbit"), 12.5e6);
    rate_refused("25Gx");
    rate_refused("25 /s");
}

Test(args, megabyte_spellings_are_bytes, .init = cr_redirect_stderr) {
    cr_assert_eq(rate_ok("125MB"), 125e6);
    cr_assert_eq(rate_ok("125MBps"), 125e6);
    cr_assert_eq(rate_ok("3kB"), 3000.0);
    cr_assert_eq(rate_ok("3KB"), 3000.0);
    cr_assert_eq(rate_ok("2KiB"), 2048.0);
    cr_assert_eq(rate_ok("1MiBps"), 1048576.0);
    cr_assert_eq(rate_ok("7B"), 7.0);
    cr_assert_eq(rate_ok("1.25e8"), 1.25e8); // a bare number is bytes/s, as in tc
}

Test(args, ambiguous_rates_are_refused_with_both_readings, .init = cr_redirect_stderr) {
    const char *ambiguous[] = { "100Mbps", "100mbps", "100kbps", "100MBPS", "100mb", "100mB", "1gb", "1gB" };
    for (size_t i = 0; i < sizeof ambiguous / sizeof *ambiguous; i++)
        rate_refused(ambiguous[i]);
    fflush(stderr);
    char buf[4096] = "";
    FILE *err = cr_get_redirected_stderr();
    size_t got = fread(buf, 1, sizeof buf - 1, err);
    buf[got] = '\0';
    cr_assert_not_null(strstr(buf, "speedup: --bandwidth: '100Mbps' is ambiguous"), "%s", buf);
    cr_assert_not_null(strstr(buf, "write 100Mbit (bits/s) or 100MBps (bytes/s)"), "%s", buf);
    cr_assert_not_null(strstr(buf, "'100mb' is ambiguous: write 100Mb or 100Mbit (bits/s), or 100MB (bytes/s)"),
                       "%s", buf);
}

Test(args, malformed_and_non_positive_rates_are_refused, .init = cr_redirect_stderr) {
    const char *bad[] = { "", "Mbit", "0", "-5mbit", "1e400", "1e300TB", "100M/s/s", "100Mbytes",
                          "inf", "nan", "100xbit" };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        rate_refused(bad[i]);
}
