#include "util/jsonout.h"

#include <jansson.h>
#include <string.h>

int jsonout_string(FILE *out, const char *s) {
    json_t *j = json_string(s); // NULL when s is not valid UTF-8
    if (!j)
        return -1;
    json_dumpf(j, out, JSON_ENCODE_ANY); // a failed write shows in the stream's error flag
    json_decref(j);
    return 0;
}

void jsonout_copy(char *dst, size_t cap, const char *src) {
    if (cap == 0)
        return;
    size_t n = strlen(src);
    if (n >= cap) {
        n = cap - 1;
        // Back off over continuation bytes (10xxxxxx): the cut lands before a lead byte.
        while (n > 0 && ((unsigned char)src[n] & 0xC0) == 0x80)
            n--;
    }
    memcpy(dst, src, n);
    dst[n] = '\0';
}
