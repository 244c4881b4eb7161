// OCP Microscaling (MX) formats: blocks of 32 elements along the reduction dimension sharing one 8-bit power-of-two
// scale (E8M0). MXFP8 E4M3 and E5M2 and MXFP4 E2M1 (OCP Microscaling Formats (MX) Specification v1.0, 2023: §5
// format, §6.3 conversion). Plain C++, no SystemC; the rules are documented in docs/numerics.md ("MX formats").
//
//  * A block's value i is X * P_i: X = 2^(e - 127) from the E8M0 code e (0x00 = 2^-127 .. 0xFE = 2^127; 0xFF is
//    NaN: every value of the block is NaN, whatever P_i); P_i an FP8 E4M3 / E5M2 or FP4 E2M1 element (dtype.h).
//  * Encoding a block V (§6.3): shared_exp = floor(log2(max |V_i|)) - emax_elem (emax_elem = 8 for E4M3, 15 for
//    E5M2, 2 for E2M1: the exponent of the element's largest normal), clamped to [-127, 127]; X = 2^shared_exp;
//    P_i = V_i / X rounded to nearest, ties to even, a magnitude above the element's largest normal saturating to
//    it (448, 57344, 6). All-zero blocks get shared_exp -127. A block holding a NaN or an Inf gets the NaN scale 0xFF
//    (no MX element encodes Inf) and its elements are encoded as if those values were absent.
//  * Decoding is exact whenever X * P_i is an FP32 value (always for blocks encoded from FP32); a product above
//    FP32's range (codes written by hand) is +-Inf.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace trnsim::numerics::mx {

enum class element : uint8_t { e4m3, e5m2, e2m1 };
constexpr size_t block_size = 32;          // elements per scale (the spec's k)
constexpr uint8_t nan_scale = 0xFF;

std::string_view name_of(element e);      // "mxfp8_e4m3", "mxfp8_e5m2", "mxfp4_e2m1"
std::optional<element> parse_element(std::string_view s);
int emax_of(element e);                   // 8, 15, 2
float max_normal(element e);              // 448, 57344, 6
unsigned bits_of(element e);              // 8, 8, 4

float e8m0_to_fp32(uint8_t code);         // 2^(code - 127), NaN for 0xFF

// One block of n <= 32 values: its scale and n element codes (one per byte; E2M1 in the low nibble).
uint8_t encode_block(element e, const float* v, size_t n, uint8_t* codes);
void decode_block(element e, uint8_t scale, const uint8_t* codes, size_t n, float* out);

// A vector of n values in blocks of 32 from its start (the last block may be short): ceil(n / 32) scales.
void encode(element e, const float* v, size_t n, uint8_t* scales, uint8_t* codes);
void decode(element e, const uint8_t* scales, const uint8_t* codes, size_t n, float* out);

// Packed storage of E2M1 codes: two per byte, element 2j in the low nibble of byte j.
void pack_e2m1(const uint8_t* codes, size_t n, uint8_t* packed);
void unpack_e2m1(const uint8_t* packed, size_t n, uint8_t* codes);

} // namespace trnsim::numerics::mx
