#define _GNU_SOURCE /* fopencookie */
#include "cli/wrap.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    FILE *dest;
    int width;
    char *line; /* the line so far, without its newline */
    size_t len, cap;
} wrap_state;

/* Columns of s[0..n): UTF-8 continuation bytes take none. */
static int columns(const char *s, size_t n) {
    int c = 0;
    for (size_t i = 0; i < n; i++)
        c += ((unsigned char)s[i] & 0xC0) != 0x80;
    return c;
}

/* May a line break at the space s[i]? Not between a number and a word of at most three
 * characters after it (a unit: "1.36 s", "50 us", "16 x 8"), as a typesetter's
 * non-breaking space would keep them. */
static bool breakable(const char *s, size_t i, size_t n) {
    if (i == 0 || s[i - 1] < '0' || s[i - 1] > '9')
        return true;
    size_t len = 0;
    while (i + 1 + len < n && s[i + 1 + len] != ' ')
        len++;
    return len > 3 || len == 0;
}

/* The byte offset of the last space in s[from..) where the line may break and whose text
 * before it fits `room` columns (counted from `from`); 0 when none does. */
static size_t last_break(const char *s, size_t from, size_t n, int room) {
    size_t best = 0;
    int c = 0;
    for (size_t i = from; i < n && c <= room; i++) {
        if (s[i] == ' ' && i > from && breakable(s, i, n))
            best = i;
        c += ((unsigned char)s[i] & 0xC0) != 0x80;
    }
    if (c <= room) /* the rest fits: no break needed */
        return n;
    return best;
}

static void emit_line(wrap_state *w) {
    const char *s = w->line;
    size_t n = w->len;
    if (columns(s, n) <= w->width) {
        if (n > 0) /* an empty line may have no buffer yet */
            fwrite(s, 1, n, w->dest);
        fputc('\n', w->dest);
        return;
    }
    int indent = 0;
    while ((size_t)indent < n && s[indent] == ' ')
        indent++;
    const int hang = indent + WRAP_HANGING_INDENT < w->width / 2 ? indent + WRAP_HANGING_INDENT : indent;
    size_t at = 0;
    int lead = 0; /* spaces before this piece */
    while (at < n) {
        size_t end = last_break(s, at, n, w->width - lead);
        if (end == 0) { /* a word longer than the room: to its end */
            end = at;
            while (end < n && s[end] != ' ')
                end++;
        }
        size_t last = end;
        while (last > at && s[last - 1] == ' ')
            last--;
        fprintf(w->dest, "%*s", lead, "");
        fwrite(s + at, 1, last - at, w->dest);
        fputc('\n', w->dest);
        at = end;
        while (at < n && s[at] == ' ')
            at++;
        lead = hang;
    }
}

static ssize_t wrap_write(void *cookie, const char *buf, size_t size) {
    wrap_state *w = cookie;
    for (size_t i = 0; i < size; i++) {
        if (buf[i] == '\n') {
            emit_line(w);
            w->len = 0;
            continue;
        }
        if (w->len + 1 >= w->cap) {
            size_t cap = w->cap ? 2 * w->cap : 256;
            char *line = realloc(w->line, cap);
            if (!line)
                return -1;
            w->line = line;
            w->cap = cap;
        }
        w->line[w->len++] = buf[i];
    }
    return (ssize_t)size;
}

static int wrap_cookie_close(void *cookie) {
    wrap_state *w = cookie;
    if (w->len > 0) { /* a last line without its newline keeps it that way */
        fwrite(w->line, 1, w->len, w->dest);
    }
    const int rc = fflush(w->dest);
    free(w->line);
    free(w);
    return rc;
}

FILE *wrap_open(FILE *dest, int width) {
    wrap_state *w = width > 0 ? calloc(1, sizeof *w) : NULL;
    if (!w)
        return dest;
    w->dest = dest;
    w->width = width;
    const cookie_io_functions_t io = { .write = wrap_write, .close = wrap_cookie_close };
    FILE *f = fopencookie(w, "w", io);
    if (!f)
        free(w);
    return f ? f : dest;
}

int wrap_close(FILE *f, FILE *dest) {
    return f == dest ? fflush(dest) : fclose(f);
}
