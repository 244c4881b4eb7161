#include "testbench/chip_probe.h"

#include <algorithm>

namespace trnsim::tb {

sim_probe make_chip_probe(platform::chip& chip) {
    sim_probe probe;
    probe.finished = [&chip] {
        for (auto& c : chip.cores)
            if (!c->finished()) return false;
        return true;
    };
    probe.stuck = [&chip] {
        std::vector<std::string> s;
        for (auto& c : chip.cores)
            for (auto& line : c->stuck()) s.push_back(line);
        return s;
    };
    probe.progress = [&chip] {
        uint64_t n = 0;
        for (auto& c : chip.cores) n += c->progress();
        return n;
    };
    probe.progress_text = [p = probe.progress] { return "progress count " + std::to_string(p()); };
    return probe;
}

sc_core::sc_time last_completion(platform::chip& chip) {
    sc_core::sc_time end = sc_core::SC_ZERO_TIME;
    for (auto& c : chip.cores) end = std::max(end, c->last_completion());
    return end;
}

} // namespace trnsim::tb
