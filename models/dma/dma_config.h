// Validated runtime configuration of a core's DMA engines.
#pragma once
#include <cstdint>

namespace trnsim::dma {

struct dma_config {
    uint32_t engines = 16;              // per core
    double engine_gbps = 27.2;          // datapath bandwidth of one engine (GB/s)
    uint64_t max_burst = 4096;          // bytes per TLM transaction
    uint32_t outstanding = 16;          // bursts in flight per engine
    double descriptor_latency_ns = 600; // from queueing a descriptor to its first burst (pipelined, not occupancy)
    bool signals = false;               // sim.signals: drive sc_signals for waveforms (queue depth, bursts in flight)
    uint64_t align_bytes = 1;           // addresses, lengths and strides must be multiples of this (power of two)
    bool checksum = false;              // end-to-end checksums on every descriptor (functional runs only)
    bool functional = true;             // sim.functional (false: accumulating copies move no data to add)
};

} // namespace trnsim::dma
