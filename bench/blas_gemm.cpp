// blas_gemm N [REPEATS]: the host's optimised FP32 GEMM (cblas_sgemm, OpenBLAS from Debian) on N x N x N, the yard
// stick of the functional GEMM simulation (issue 8: functional 4096^3 within 3x of it). Prints the best wall time of
// REPEATS runs, GFLOP/s and the thread count, and a checksum so the work cannot be optimised away.
#include <cblas.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

extern "C" int openblas_get_num_threads(void);

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: blas_gemm N [REPEATS]\n");
        return 2;
    }
    const long n = std::strtol(argv[1], nullptr, 10);
    const int reps = argc > 2 ? std::atoi(argv[2]) : 3;
    if (n <= 0 || n > 32768 || reps <= 0) {
        std::fprintf(stderr, "blas_gemm: N must be in [1, 32768] and REPEATS >= 1\n");
        return 2;
    }
    std::vector<float> a(size_t(n) * n), b(size_t(n) * n), c(size_t(n) * n);
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> u(-1, 1);
    for (auto& x : a) x = u(rng);
    for (auto& x : b) x = u(rng);
    double best = 1e30;
    for (int r = 0; r < reps; ++r) {
        auto t0 = std::chrono::steady_clock::now();
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(n), int(n), int(n), 1.0f, a.data(), int(n),
                    b.data(), int(n), 0.0f, c.data(), int(n));
        double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (s < best) best = s;
    }
    double sum = 0;
    for (size_t i = 0; i < c.size(); i += 4097) sum += c[i];
    std::printf("blas_gemm n=%ld threads=%d best_s=%.4f gflops=%.1f checksum=%.6g\n", n, openblas_get_num_threads(),
                best, 2.0 * n * n * n / best * 1e-9, sum);
    return 0;
}
