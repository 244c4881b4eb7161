// The alpha-beta cost model of the collective algorithms (see cost_model.h).
#include "models/collective/cost_model.h"

#include <algorithm>

namespace trnsim::collective {

namespace {

// Time of the reduce-scatter (or all-gather) half over the phases; B shrinks by k at every phase.
double half_time(double bytes, const std::vector<hop_cost>& phases, double gamma_Bps, bool reduce) {
    double t = 0, b = bytes;
    for (const hop_cost& h : phases) {
        if (h.k <= 1) continue;
        double block = b / h.k;
        t += (h.k - 1) * (h.alpha_s + block / h.beta_Bps);
        if (reduce) t += (h.k - 1) * block / gamma_Bps;
        b = block;
    }
    return t;
}

}  // namespace

double allreduce_time(uint64_t bytes, const std::vector<hop_cost>& phases, double gamma_Bps, bool bidir) {
    double b = bidir ? bytes / 2.0 : double(bytes);
    return half_time(b, phases, gamma_Bps, true) + half_time(b, phases, gamma_Bps, false);
}

double reduce_scatter_time(uint64_t bytes, const std::vector<hop_cost>& phases, double gamma_Bps) {
    return half_time(double(bytes), phases, gamma_Bps, true);
}

double allgather_time(uint64_t bytes, const std::vector<hop_cost>& phases) {
    return half_time(double(bytes), phases, 1, false);
}

double broadcast_time(uint64_t bytes, const hop_cost& ring) {
    return ring.k <= 1 ? 0.0 : (ring.k - 1) * (ring.alpha_s + double(bytes) / ring.beta_Bps);
}

double critical_path(const schedule& s, const std::function<double(const step&)>& cost) {
    std::vector<double> end(s.steps.size(), 0.0);
    double longest = 0;
    for (size_t i = 0; i < s.steps.size(); ++i) {
        double start = 0;
        for (uint32_t d : s.steps[i].deps) start = std::max(start, end[d]);
        end[i] = start + cost(s.steps[i]);
        longest = std::max(longest, end[i]);
    }
    return longest;
}

}  // namespace trnsim::collective
