// Parameters of the light chip (light_chip.h), plain C++ (the platform config includes it without SystemC).
#pragma once
#include <cstdint>
#include <string>

#include "models/numerics/dtype.h"

namespace trnsim::chip_light {

struct light_chip_config {
    uint64_t hbm_bytes = 96ull << 30;
    double hbm_gbps = 2900;
    double hbm_latency_ns = 100;        // write latency at the destination memory
    double dma_gbps = 3500;             // all DMA engines of the chip together
    double dma_latency_ns = 1300;       // fixed cost per DMA transfer
    double ve_clock_ghz = 0.96;
    uint32_t ve_lanes_32bit = 256;      // elements per cycle for 4-byte types
    uint32_t ve_lanes_16bit = 512;      // elements per cycle for 2-byte and 1-byte types (perf mode)
    uint32_t reduce_engines = 1;        // vector engines working on collective reductions
    double reduce_latency_ns = 200;     // fixed cost per reduce step
    // The share of HBM bandwidth a reduction sustains (it reads two operands and writes one: the HBM term of the rate
    // is reduce_hbm_efficiency x hbm_gbps / 3).
    double reduce_hbm_efficiency = 1.0;
    // A reduce in tiles: the full chip stages its operands through SBUF in tiles of reduce_tile_elements, dealt in
    // turn to reduce_tiles cores that work at once, so a step lasts as long as its busiest core: the light chip books
    // that core's bytes times reduce_tiles at the reduction rate (reduce_tile_elements 0: the step's own bytes).
    uint64_t reduce_tile_elements = 0;
    uint32_t reduce_tiles = 1;
    // What releasing a dependent step costs once a step of this chip has ended (the full chip's semaphore signal: a
    // semaphore-register write by DMA): to a step on this chip, and to a step on another chip (the write crosses
    // the links too).
    double signal_ns = 0;
    double remote_signal_ns = 0;
    bool functional = true;
    // Reduction rate in bytes per ns for dtype t.
    double reduce_gbps(numerics::dtype t) const;
    // The bytes a reduce of `bytes` of dtype t books at that rate (its busiest core's bytes x reduce_tiles).
    uint64_t reduce_booked_bytes(uint64_t bytes, numerics::dtype t) const;
    std::string check() const;
};

}  // namespace trnsim::chip_light
