#include "testbench/chip_probe.h"

#include <algorithm>

namespace trnsim::tb {

namespace {
std::vector<core::neuron_core*> cores_of(platform::chip& chip) {
    std::vector<core::neuron_core*> v;
    for (auto& c : chip.cores) v.push_back(c.get());
    return v;
}
}  // namespace

sim_probe make_cores_probe(std::vector<core::neuron_core*> cores) {
    sim_probe probe;
    probe.finished = [cores] {
        for (auto* c : cores)
            if (!c->finished()) return false;
        return true;
    };
    probe.stuck = [cores] {
        std::vector<std::string> s;
        for (auto* c : cores)
            for (auto& line : c->stuck()) s.push_back(line);
        return s;
    };
    probe.progress = [cores] {
        uint64_t n = 0;
        for (auto* c : cores) n += c->progress();
        return n;
    };
    probe.progress_text = [p = probe.progress] { return "progress count " + std::to_string(p()); };
    return probe;
}

sc_core::sc_time last_completion(const std::vector<core::neuron_core*>& cores) {
    sc_core::sc_time end = sc_core::SC_ZERO_TIME;
    for (auto* c : cores) end = std::max(end, c->last_completion());
    return end;
}

sim_probe make_chip_probe(platform::chip& chip) { return make_cores_probe(cores_of(chip)); }

sc_core::sc_time last_completion(platform::chip& chip) { return last_completion(cores_of(chip)); }

} // namespace trnsim::tb
