/* fuzz — what the fuzz harnesses share (tests/fuzz/README.md).
 *
 * Each harness defines LLVMFuzzerTestOneInput and is built two ways: with libFuzzer
 * (clang -fsanitize=fuzzer,address,undefined; -DSPEEDUP_FUZZ=ON, build-fuzz/,
 * experiments/fuzz/run) to search for crashes, and with replay.c's main (any compiler, the
 * normal builds) to run its checked-in corpus as a ctest regression test.
 *
 * The parsers under test read files by path, so fuzz_file puts the input in a file of its
 * own (one per process and tag, rewritten for every input, removed at exit). Beyond not
 * crashing, a harness checks properties with fuzz_check: what reads back must write and
 * read back the same; what a parser accepts must be in its documented range.
 */
#ifndef SPEEDUP_FUZZ_H
#define SPEEDUP_FUZZ_H

#include <stddef.h>
#include <stdint.h>

/* Writes data[0..size) to this process's scratch file named after tag; its path. Aborts
 * (a harness failure, not a finding) when the file cannot be written. */
const char *fuzz_file(const char *tag, const uint8_t *data, size_t size);
/* The path of this process's scratch file named after tag (for a harness's own output). */
const char *fuzz_path(const char *tag);
/* The same text as a NUL-terminated malloc'd string (caller frees). */
char *fuzz_string(const uint8_t *data, size_t size);
/* A property the code under test must keep (a round trip, an invariant): abort with what
 * when ok is 0, so that libFuzzer saves the input as a crash. */
void fuzz_check(int ok, const char *what);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
