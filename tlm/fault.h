// Fault injection for reliability studies. A fault_spec is one configured fault (chip.faults[i] or --fault); the
// component it names (`target`, relative to the component that receives it) interprets `kind`. Models that can
// fail take the specs aimed at them in their runtime config and keep one fault_trigger per spec: it decides, per
// transaction, whether the fault hits (time window, transactions let through first, how many to hit).
// Plain C++, no chip knowledge: a new model (a chip-to-chip link: "down", "degrade") plugs in by accepting specs
// for its own targets; the platform's fault table (platforms/config) says which targets and kinds exist.
#pragma once
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace trnsim::tlmx {

struct fault_spec {
    std::string label;     // for messages: "chip.faults[0] (hbm.channel3:disable)"
    std::string target;    // "hbm.channel3", "core0.dma2", ... (made relative as it is handed down)
    std::string kind;      // "disable", "error", "slow", "corrupt"; links later: "down", "degrade"
    double from_ns = 0;                                         // active from this simulated time
    double until_ns = std::numeric_limits<double>::infinity();  // until this one
    uint64_t after = 0;                                         // transactions let through first
    uint64_t count = std::numeric_limits<uint64_t>::max();      // transactions hit after that
    double latency_ns = 0;     // "slow": added to every hit transaction
    double factor = 1;         // "degrade": bandwidth multiplier (links)
    std::string policy = "error";  // "disable": "error" (requests fail) or "remap" (a spare serves them)
    std::string on = "read";       // "corrupt": "read" or "write" data
};

class fault_trigger {
public:
    explicit fault_trigger(const fault_spec& s) : m_spec(s) {}
    const fault_spec& spec() const { return m_spec; }
    // A transaction at `now_ns` that the fault could affect: does it?
    bool hit(double now_ns) {
        if (now_ns < m_spec.from_ns || now_ns >= m_spec.until_ns) return false;
        if (m_seen++ < m_spec.after) return false;
        if (m_hits >= m_spec.count) return false;
        ++m_hits;
        return true;
    }
    // Active at `now_ns` regardless of counts (states such as "disabled", "down").
    bool active(double now_ns) const { return now_ns >= m_spec.from_ns && now_ns < m_spec.until_ns; }
    uint64_t hits() const { return m_hits; }

private:
    fault_spec m_spec;
    uint64_t m_seen = 0, m_hits = 0;
};

// The specs whose target is `prefix` or lies below it ("core0" takes "core0" and "core0.dma2"), with the prefix
// and its dot removed from the target ("dma2"; "" for the component itself).
inline std::vector<fault_spec> faults_under(const std::vector<fault_spec>& all, const std::string& prefix) {
    std::vector<fault_spec> out;
    for (const auto& f : all) {
        if (f.target == prefix) {
            out.push_back(f);
            out.back().target.clear();
        } else if (f.target.size() > prefix.size() && f.target.compare(0, prefix.size(), prefix) == 0 &&
                   f.target[prefix.size()] == '.') {
            out.push_back(f);
            out.back().target = f.target.substr(prefix.size() + 1);
        }
    }
    return out;
}

} // namespace trnsim::tlmx
