/* wrap — the human-readable output of model, simulate and advise, at most 80 columns wide.
 *
 * wrap_open(dest, width) returns a stream that passes every line of at most `width`
 * columns (a table's row: predictions_write_table keeps them within 80) to dest as it is,
 * and breaks a longer line (a sentence: the setting, the interval's note, the reasons) at
 * its last space within the width, each further piece indented by the line's own
 * indentation plus WRAP_HANGING_INDENT spaces. A number stays with a word of up to three
 * characters after it (a unit: "1.36 s"); a word longer than the width stays whole.
 * Columns are counted in UTF-8 characters (×, –, …), not bytes. width 0 (--wide) wraps
 * nothing: wrap_open returns dest itself. wrap_close(f, dest) flushes what is left and
 * closes f when it is a wrapping stream, never dest.
 *
 * Why a stream and not a printf of its own: the printers write with fprintf to whatever
 * FILE they are given, and the same printers write unwrapped to files and CSV.
 */
#ifndef SPEEDUP_CLI_WRAP_H
#define SPEEDUP_CLI_WRAP_H

#include <stdio.h>

enum { WRAP_COLUMNS = 80, WRAP_HANGING_INDENT = 4 };

/* A wrapping stream onto dest; dest itself for width <= 0, or when no stream could be
 * made (then nothing is wrapped, nothing is lost). */
FILE *wrap_open(FILE *dest, int width);
/* Writes the wrapped rest and closes f unless it is dest; 0, or EOF when dest failed. */
int wrap_close(FILE *f, FILE *dest);

#endif
