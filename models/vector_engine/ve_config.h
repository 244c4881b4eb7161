// Validated runtime configuration of a Vector or Scalar Engine (chip.core.vector, chip.core.scalar;
// docs/vector_engine.md).
#pragma once
#include <cstdint>

namespace trnsim::ve {

struct ve_config {
    // Defaults: the Trainium2 Vector Engine (docs/sources.md, NKI2/NC3): 0.96 GHz, 256 FP32 elem/cycle.
    double clock_ghz = 0.96;
    uint32_t elements_per_cycle = 256;    // across all lanes, per input stream
    // Perf mode: elements per cycle when every operand and the result are 16-bit (BF16/FP16); 0 = elements_per_cycle.
    // Trainium2 Vector Engine: 512 (docs/sources.md, NKI2/NC3).
    uint32_t elements_per_cycle_16bit = 0;
    uint32_t lanes = 128;                 // partitions processed in parallel
    uint32_t pipeline_latency = 16;       // cycles from first element in to first element out (A)
    uint32_t static_overhead_cycles = 100;  // per-instruction fixed cost (NKI1/PERF cost model, ~100 cycles)
    bool scalar = false;                  // Scalar Engine: one input tensor per instruction (no two-input ops)
    bool functional = true;               // false: timing only (no data read, computed or written)
};

} // namespace trnsim::ve
