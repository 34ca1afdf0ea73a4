/* sgemm_peak — this machine's OpenBLAS sgemm GFLOP/s at T threads: the best of a square
 * 1024 product and the trainer's own largest product (conv2 forward, batch 32:
 * (32·14·14) x 800 times 800 x 64). Usage: sgemm_peak T */
#define _POSIX_C_SOURCE 200809L
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void openblas_set_num_threads(int);

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double gflops(int M, int N, int K, int transb) {
    float *a = malloc(sizeof(float) * (size_t)M * K), *b = malloc(sizeof(float) * (size_t)K * N),
          *c = malloc(sizeof(float) * (size_t)M * N);
    for (long i = 0; i < (long)M * K; i++) a[i] = (float)(i % 13) * 0.01f;
    for (long i = 0; i < (long)K * N; i++) b[i] = (float)(i % 7) * 0.01f;
    double best = 0;
    for (int rep = 0; rep < 7; rep++) {
        double t0 = now_s();
        int n = 0;
        do {
            cblas_sgemm(CblasRowMajor, CblasNoTrans, transb ? CblasTrans : CblasNoTrans, M, N, K, 1.0f, a, K, b,
                        transb ? K : N, 0.0f, c, N);
            n++;
        } while (now_s() - t0 < 0.2);
        double g = 2.0 * M * N * K * n / (now_s() - t0) / 1e9;
        best = g > best ? g : best;
    }
    free(a), free(b), free(c);
    return best;
}

int main(int argc, char **argv) {
    int t = argc > 1 ? atoi(argv[1]) : 1;
    openblas_set_num_threads(t);
    double sq = gflops(1024, 1024, 1024, 0), conv = gflops(32 * 14 * 14, 64, 800, 1);
    printf("{\"threads\": %d, \"sgemm_square1024_gflops\": %.2f, \"sgemm_conv2_gflops\": %.2f, \"ceiling_gflops\": %.2f}\n",
           t, sq, conv, sq > conv ? sq : conv);
    return 0;
}
