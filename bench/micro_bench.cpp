// Micro-benchmarks of the hot paths (Google Benchmark): PE array kernel, numerics conversions, address decode,
// DMA burst split, and a host FP32 SGEMM (OpenBLAS) for reference.
#include <benchmark/benchmark.h>

#include <cblas.h>

#include <vector>

#include "models/dma/dma_descriptor.h"
#include "models/numerics/dtype.h"
#include "models/tensor_engine/pe_array.h"
#include "testbench/verification/golden/golden_gemm.h"
#include "testbench/stimulus.h"
#include "tlm/address_map.h"

using namespace trnsim;

static void BM_pe_array_128x128x512(benchmark::State& st) {
    std::vector<uint8_t> raw;
    auto S = tb::random_tensor(numerics::dtype::bf16, 128 * 128, 1, raw);
    auto X = tb::random_tensor(numerics::dtype::bf16, 128 * 512, 2, raw);
    std::vector<float> Y(128 * 512);
    for (auto _ : st) {
        te::pe_array_compute(S.data(), X.data(), 128, 128, 512, Y.data());
        benchmark::DoNotOptimize(Y.data());
    }
    st.counters["GFLOP/s"] = benchmark::Counter(2.0 * 128 * 128 * 512 * double(st.iterations()), benchmark::Counter::kIsRate, benchmark::Counter::kIs1000);
}
BENCHMARK(BM_pe_array_128x128x512);

static void BM_openblas_sgemm_1024(benchmark::State& st) {
    const int n = 1024;
    std::vector<float> a(n * n, 0.5f), b(n * n, 0.25f), c(n * n);
    openblas_set_num_threads(1);
    for (auto _ : st) {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);
        benchmark::DoNotOptimize(c.data());
    }
    st.counters["GFLOP/s"] = benchmark::Counter(2.0 * n * n * n * double(st.iterations()), benchmark::Counter::kIsRate, benchmark::Counter::kIs1000);
}
BENCHMARK(BM_openblas_sgemm_1024)->Unit(benchmark::kMillisecond);

static void BM_golden_gemm_512(benchmark::State& st) {
    std::vector<uint8_t> raw;
    auto A = tb::random_tensor(numerics::dtype::bf16, 512 * 512, 1, raw);
    auto B = tb::random_tensor(numerics::dtype::bf16, 512 * 512, 2, raw);
    for (auto _ : st) benchmark::DoNotOptimize(tb::golden_gemm(A, B, 512, 512, 512, 128, 1));
    st.counters["GFLOP/s"] = benchmark::Counter(2.0 * 512 * 512 * 512 * double(st.iterations()), benchmark::Counter::kIsRate, benchmark::Counter::kIs1000);
}
BENCHMARK(BM_golden_gemm_512)->Unit(benchmark::kMillisecond);

static void BM_decode_bf16(benchmark::State& st) {
    std::vector<uint16_t> in(1 << 16);
    for (size_t i = 0; i < in.size(); ++i) in[i] = uint16_t(i * 2654435761u);
    std::vector<float> out(in.size());
    for (auto _ : st) {
        numerics::decode(numerics::dtype::bf16, in.data(), out.data(), in.size());
        benchmark::DoNotOptimize(out.data());
    }
    st.SetItemsProcessed(int64_t(st.iterations()) * int64_t(in.size()));
}
BENCHMARK(BM_decode_bf16);

static void BM_encode_fp8_e4m3(benchmark::State& st) {
    std::vector<float> in(1 << 16);
    for (size_t i = 0; i < in.size(); ++i) in[i] = float(i) * 0.013f - 300.0f;
    std::vector<uint8_t> out(in.size());
    for (auto _ : st) {
        numerics::encode(numerics::dtype::fp8_e4m3, in.data(), out.data(), in.size());
        benchmark::DoNotOptimize(out.data());
    }
    st.SetItemsProcessed(int64_t(st.iterations()) * int64_t(in.size()));
}
BENCHMARK(BM_encode_fp8_e4m3);

static void BM_address_decode(benchmark::State& st) {
    tlmx::address_map m;
    for (int i = 0; i < 72; ++i) m.add(uint64_t(i) << 32, 1ull << 31, size_t(i), "r" + std::to_string(i));
    uint64_t a = 0;
    for (auto _ : st) {
        benchmark::DoNotOptimize(m.decode((a % 72) << 32 | 0x1000, 4096));
        a += 7;
    }
    st.SetItemsProcessed(int64_t(st.iterations()));
}
BENCHMARK(BM_address_decode);

static void BM_dma_burst_split(benchmark::State& st) {
    dma::dma_descriptor d;
    d.row_bytes = 1024;
    d.rows = 128;
    d.src_stride = 8192;
    d.dst_stride = 229376;
    uint64_t bytes = 0;
    for (auto _ : st) {
        dma::for_each_burst(d, 4096, [&](uint64_t, uint64_t, uint64_t n) { bytes += n; });
        benchmark::DoNotOptimize(bytes);
    }
    st.SetItemsProcessed(int64_t(st.iterations()) * 128);
}
BENCHMARK(BM_dma_burst_split);

BENCHMARK_MAIN();
