// Validated runtime configuration of one NeuronCore and its core-local address map.
#pragma once
#include <cstdint>

#include "models/dma/dma_config.h"
#include "models/sram/sram_config.h"
#include "models/tensor_engine/te_config.h"
#include "models/vector_engine/ve_config.h"

namespace trnsim::core {

struct core_config {
    te::te_config te;
    sram::sram_config sbuf;
    sram::sram_config psum;
    dma::dma_config dma;
    ve::ve_config vector;  // chip.core.vector
    ve::ve_config scalar;  // chip.core.scalar (scalar = true)
    // Core-local address map (the chip maps the whole window at core_base + i * core_stride).
    uint64_t sbuf_base = 0;
    uint64_t psum_base = 0x40000000;
    // The semaphore registers: register s (SEM_REGISTER_BYTES wide) at sem_base + s * SEM_REGISTER_BYTES. A write
    // transaction adds one to every register it covers (its data is ignored, so timing-only runs signal alike) at
    // the time its delay annotates; a read returns the values. Other chips' DMA engines signal a core this way
    // (a descriptor whose destination is the register's global address).
    static constexpr uint64_t SEM_REGISTER_BYTES = 8;
    static constexpr uint64_t SEM_WINDOW_BYTES = uint64_t(1) << 20;  // 131072 registers
    uint64_t sem_base = 0x80000000;
    uint64_t window = 0x80000000 + SEM_WINDOW_BYTES;
    uint64_t sem_register(uint32_t s) const { return sem_base + uint64_t(s) * SEM_REGISTER_BYTES; }
    // sim.signals: semaphores 0 .. traced_semaphores-1 are mirrored on sc_signals for waveforms.
    static constexpr uint32_t DEFAULT_TRACED_SEMAPHORES = 32;
    bool signals = false;
    uint32_t traced_semaphores = DEFAULT_TRACED_SEMAPHORES;
};

} // namespace trnsim::core
