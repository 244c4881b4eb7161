// Validated runtime configuration of an on-chip scratchpad (SBUF or PSUM).
#pragma once
#include <cstdint>

namespace trnsim::sram {

struct sram_config {
    uint32_t partitions = 128;
    uint64_t partition_bytes = 224 * 1024;
    uint32_t banks = 16;              // partitions are split evenly across banks; each bank has its own port
    double bank_bytes_per_ns = 64;    // port bandwidth of one bank (GB/s)
    double access_latency_ns = 0;     // fixed access initiation overhead
    bool accumulate = false;          // near-memory FP32 accumulate on writes carrying ext_accumulate (PSUM)
    bool functional = true;           // false: timing only, no data is stored or returned
    uint64_t size() const { return uint64_t(partitions) * partition_bytes; }
};

} // namespace trnsim::sram
