/* cli/wrap.h: lines within the width pass as they are; a longer one breaks at its last
 * space that fits, its further pieces indented by its own indentation plus four; a word
 * longer than the width stays whole; columns count characters, not UTF-8 bytes. Every
 * expected text below is worked out by hand. */
#define _GNU_SOURCE /* open_memstream */
#include "cli/wrap.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

/* What `text` becomes through a wrap stream of `width` columns (malloc'd). */
static char *wrapped(const char *text, int width) {
    char *buf = NULL;
    size_t len = 0;
    FILE *dest = open_memstream(&buf, &len);
    cr_assert_not_null(dest);
    FILE *w = wrap_open(dest, width);
    cr_assert_not_null(w);
    fputs(text, w);
    cr_assert_eq(wrap_close(w, dest), 0);
    fclose(dest);
    return buf;
}

static void expect(const char *text, int width, const char *want) {
    char *got = wrapped(text, width);
    cr_assert_str_eq(got, want, "width %d:\n%s\nwanted:\n%s", width, got, want);
    free(got);
}

Test(wrap, passes_lines_within_the_width_unchanged) {
    expect("workers cores\n      1     1\n", 13, "workers cores\n      1     1\n");
    expect("\n\nx\n", 1, "\n\nx\n");
}

Test(wrap, breaks_a_long_line_at_its_last_space_that_fits_with_a_hanging_indent) {
    /* 20 columns: "best: one two three" is 19; "four" goes on, after four spaces. */
    expect("best: one two three four\n", 20, "best: one two three\n    four\n");
    /* An indented line keeps its indentation and hangs four further. */
    expect("  why: aaaa bbbb cccc dddd\n", 16, "  why: aaaa bbbb\n      cccc dddd\n");
    /* Several spaces at a break are dropped, not carried to the next line. */
    expect("aaa bbb   ccc\n", 10, "aaa bbb\n    ccc\n");
}

Test(wrap, keeps_a_number_with_its_unit) {
    /* "took 1.36 s" is 11 columns and fits 12. In 11, "took 12.5 ms end" would break
     * after "12.5" (10 columns) but that splits the unit off: it breaks after "took", and
     * the rest (7 columns of room after the indent) after "ms". */
    expect("took 1.36 s\n", 12, "took 1.36 s\n");
    expect("took 12.5 ms end\n", 11, "took\n    12.5 ms\n    end\n");
    /* A longer word after a number may go on the next line. */
    expect("took 12 workers\n", 12, "took 12\n    workers\n");
}

Test(wrap, keeps_a_word_longer_than_the_width_whole) {
    expect("see /a/very/long/path/to/calibration.json here\n", 10,
           "see\n    /a/very/long/path/to/calibration.json\n    here\n");
}

Test(wrap, counts_utf8_characters_not_bytes) {
    /* "8 × 16 – ok" is 11 characters (15 bytes): it fits in 11 columns. */
    expect("8 × 16 – ok\n", 11, "8 × 16 – ok\n");
    expect("8 × 16 – ok\n", 10, "8 × 16 –\n    ok\n");
}

Test(wrap, width_zero_passes_everything_and_a_last_line_keeps_its_missing_newline) {
    const char *long_line = "a b c d e f g h i j k l m n o p q r s t u v w x y z\n";
    expect(long_line, 0, long_line);
    expect("no newline at the end", 80, "no newline at the end");
}
