// Records a chip's activity as a Chrome/Perfetto timeline through the models' observer callbacks: per core the
// Tensor Engine (MATMUL spans with tile ids, weight loads), every instruction queue, every DMA engine; per HBM
// channel its data transfers. The writer bounds the size (event budget, time window).
#pragma once
#include <string>

#include "models/link/link.h"
#include "platforms/single_chip/chip.h"
#include "tlm/trace_events.h"

namespace trnsim::tb {

struct timeline_options {
    tlmx::trace_limits limits;
    bool dma_engines = true;   // one track per DMA engine (descriptor spans)
    bool hbm_channels = true;  // one track per HBM channel (per-channel transfer spans)
    bool noc = false;          // one track per interconnect target (every routed transaction; link ports later)
};

class chip_timeline {
public:
    explicit chip_timeline(timeline_options opt = {}) : m_opt(opt), m_w(opt.limits) {}
    chip_timeline(const chip_timeline&) = delete;
    chip_timeline& operator=(const chip_timeline&) = delete;

    // Declares the chip's tracks as process `pid` and attaches the observers (call before simulation starts;
    // this object must outlive the simulation). A multi-chip platform attaches each chip with its own pid.
    void attach(platform::chip& chip, uint32_t pid = 0);
    // Any router (a chip's NoC, a link switch): one track per target, "<prefix>-><target>", spans from a
    // transaction's entry to its completion with bytes, address and direction.
    void attach_router(tlmx::router& r, uint32_t pid, const std::string& prefix);
    // One direction of a chip-to-chip link as a track `name` of process `pid` (its source chip's group): a span per
    // transfer over the interval it held the direction, with bytes, address and direction.
    void attach_link(link::link_direction& d, uint32_t pid, const std::string& name);
    // Writes the JSON atomically-by-rename is the caller's choice; this writes the document to `os`.
    void write(std::ostream& os, const std::map<std::string, std::string>& meta = {}) const { m_w.write(os, meta); }
    const tlmx::trace_event_writer& writer() const { return m_w; }

private:
    timeline_options m_opt;
    tlmx::trace_event_writer m_w;
};

} // namespace trnsim::tb
