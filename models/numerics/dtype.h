// Data types of the Tensor Engine and their conversions to and from FP32.
//
// Plain C++, no SystemC: used by the TLM model, the golden GEMM, the scoreboards and the RTL co-simulation
// harness, so that every side encodes and decodes the same bits.
//
// Rules (documented in docs/numerics.md; rtl/matrix_engine/me_fp.sv decodes the same way, except that it decodes
// every NaN code to the canonical NaN - unobservable, every NaN result is written canonical - and never encodes):
//  * Encoding FP32 -> narrow format rounds to nearest, ties to even (RNE). Subnormals of the target format are
//    produced (gradual underflow); values below half the smallest subnormal round to a signed zero.
//  * Overflow: BF16, FP16, TF32 follow IEEE (round to +-Inf). FP8 E5M2 saturates finite overflow to +-57344 and keeps
//    Inf as Inf. FP8 E4M3 (OCP "fn" variant: no Inf, NaN = S.1111.111) saturates finite overflow and Inf to +-448.
//  * NaN input encodes to the target's canonical quiet NaN (sign kept).
//  * Decoding a narrow format to FP32 is exact (every value of every format here is an FP32 value).
//  * TF32 is stored in a 32-bit container: FP32 with the low 13 mantissa bits zero.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>
#include <string_view>

namespace trnsim::numerics {

enum class dtype : uint8_t { fp32, tf32, bf16, fp16, fp8_e4m3, fp8_e5m2 };

constexpr dtype all_dtypes[] = {dtype::fp32, dtype::tf32, dtype::bf16, dtype::fp16, dtype::fp8_e4m3, dtype::fp8_e5m2};

// Bytes one element occupies in memory (TF32 uses a 4-byte container).
constexpr size_t size_of(dtype t) {
    switch (t) {
    case dtype::fp32: case dtype::tf32: return 4;
    case dtype::bf16: case dtype::fp16: return 2;
    case dtype::fp8_e4m3: case dtype::fp8_e5m2: return 1;
    }
    return 0;
}

// Canonical names: "fp32", "tf32", "bf16", "fp16", "fp8_e4m3", "fp8_e5m2" (also accepted: "e4m3", "e5m2").
std::string_view name_of(dtype t);
std::optional<dtype> parse_dtype(std::string_view s);

// Bit-level conversions.
uint16_t fp32_to_bf16(float f);
uint16_t fp32_to_fp16(float f);
uint32_t fp32_to_tf32(float f);
uint8_t fp32_to_e4m3(float f);
uint8_t fp32_to_e5m2(float f);
uint8_t fp32_to_e2m1(float f);  // FP4 E2M1 (the MXFP4 element, mx.h): low nibble, RNE, saturating to +-6
float bf16_to_fp32(uint16_t h);
float fp16_to_fp32(uint16_t h);
float tf32_to_fp32(uint32_t v);
float e4m3_to_fp32(uint8_t v);
float e5m2_to_fp32(uint8_t v);
float e2m1_to_fp32(uint8_t v);  // low nibble

// Rounds f to the nearest value representable in t, returned as FP32 (encode then decode).
float quantize(dtype t, float f);

// Array conversions: `n` elements of type t at `src` (packed little-endian) to FP32, and back.
// Decode uses lookup tables for the 8- and 16-bit formats, so it runs at memory speed.
void decode(dtype t, const void* src, float* dst, size_t n);
void encode(dtype t, const float* src, void* dst, size_t n);

// dst[i] := dst[i] + src[i] for n elements of t: FP32 adds in FP32; narrower types decode to FP32, add and round
// once to nearest even (the collectives' reduction rule, and the DMA engines' accumulating copies). ta, tb:
// reusable scratch.
void accumulate(dtype t, void* dst, const void* src, size_t n, std::vector<float>& ta, std::vector<float>& tb);

// The canonical quiet NaN the Tensor Engine writes to PSUM for any NaN result.
constexpr uint32_t canonical_nan_bits = 0x7FC00000u;

} // namespace trnsim::numerics
