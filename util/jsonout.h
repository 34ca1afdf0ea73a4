/* jsonout — strings inside JSON that is printed piece by piece. Traces and Chrome JSON are
 * written with fprintf for their numbers (millions of event lines, each number in a fixed
 * format), but every string in them can come from a user or from a file read back, so each
 * one is quoted and escaped by jansson here: a name holding ", \ or a control character
 * still writes valid JSON and reads back unchanged.
 *
 * Fixed-size name fields (a trace event's name[32], a host[128]) keep what fits; the cut
 * never splits a UTF-8 character, so what was valid UTF-8 stays valid (jansson refuses to
 * write anything else).
 */
#ifndef SPEEDUP_JSONOUT_H
#define SPEEDUP_JSONOUT_H

#include <stddef.h>
#include <stdio.h>

/* Writes s as a JSON string literal, quotes included: 0, or -1 when s is not valid UTF-8
 * (nothing is written then). A failed write shows in ferror(out), as for fputs. */
int jsonout_string(FILE *out, const char *s);
/* Copies src into dst[cap], cut at the last UTF-8 character boundary that fits. */
void jsonout_copy(char *dst, size_t cap, const char *src);

#endif
