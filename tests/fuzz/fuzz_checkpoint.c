/* fuzz_checkpoint — train/checkpoint.h on any bytes, as they are and with the checksum made
 * right (so the parser behind it is reached): an accepted checkpoint builds its network or
 * says why, and every momentum block it claims can be read. */
#include "tests/fuzz/fuzz.h"
#include "train/checkpoint.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static void exercise(const uint8_t *data, size_t size) {
    char err[1024] = "";
    checkpoint_file *f = checkpoint_parse(data, size, "fuzz", err, sizeof err);
    if (!f) {
        fuzz_check(strncmp(err, "fuzz: ", 6) == 0, "a refusal names the file");
        return;
    }
    const checkpoint_state *st = checkpoint_state_of(f);
    fuzz_check(st->momentum_blocks >= 1 && st->epochs_done >= 0 && st->steps_done >= 0, "state in range");
    net *n = checkpoint_net(f, 1, err, sizeof err);
    if (n) {
        for (int b = 0; b < st->momentum_blocks; b++)
            checkpoint_momentum(f, b, n->grads);
        net_free(n);
    }
    checkpoint_close(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static int once;
    if (!once++)
        omp_set_num_threads(1);
    exercise(data, size);
    if (size >= 12) {
        uint8_t *copy = malloc(size);
        if (!copy)
            abort();
        memcpy(copy, data, size);
        uint32_t crc = (uint32_t)crc32(0L, copy, (uInt)(size - 4));
        memcpy(copy + size - 4, &crc, 4);
        exercise(copy, size);
        free(copy);
    }
    return 0;
}
