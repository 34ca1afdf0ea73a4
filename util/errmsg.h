/* errmsg — the one way a library function reports why it failed: a formatted one-line
 * message into the caller's buffer, and -1 to return. The CLI prints it once. */
#ifndef SPEEDUP_ERRMSG_H
#define SPEEDUP_ERRMSG_H

/* Writes the message into err (when err is non-NULL and errlen > 0) and returns -1, so a
 * failing path reads `return errmsg_set(err, errlen, "%s: line %ld: ...", path, line);`. */
int errmsg_set(char *err, int errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
