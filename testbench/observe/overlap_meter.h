// What a platform's full chips did up to a time known only once the run is over: two workloads that start together
// (`trnsim run --platform --concurrent`: a GEMM on every chip and a collective) overlap until the first of them
// finishes. Observers on every full chip's DMA engines and HBM and on every link direction of its servers add each
// event's amount, spread evenly over its interval, to sums binned in time; until(t) reads them over [0, t).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "platforms/cluster/cluster.h"
#include "tlm/time_bins.h"

namespace trnsim::tb {

class overlap_meter {
public:
    // Attaches to every full chip of `p` (its DMA engines and HBM) and every link direction of its servers between
    // full chips. Call before the simulation starts; this object must outlive it.
    void attach(platform::multichip_platform& p);

    struct figures {
        double window_ns = 0;
        double hbm_gbps = 0, dma_gbps = 0;       // per full chip (their mean)
        double dma_queue_depth = 0;              // descriptors in an engine (submitted, not yet done), mean
        double dma_wait_ns = 0;                  // of the descriptors whose first burst went out in the window: the
                                                 // mean time from eligible to that burst
        std::vector<platform::multichip_platform::utilisation> links;  // kind, count, max and avg busy / window
    };
    // Over [0, t_ps).
    figures until(uint64_t t_ps) const;

private:
    uint32_t m_chips = 0, m_engines = 0;
    tlmx::time_bins m_hbm, m_dma, m_queued, m_wait, m_started;
    struct direction {
        std::string kind;  // "link_x", ...
        tlmx::time_bins busy;
    };
    std::vector<std::unique_ptr<direction>> m_links;  // stable addresses for the observers
};

}  // namespace trnsim::tb
