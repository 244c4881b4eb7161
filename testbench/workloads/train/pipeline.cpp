#include "testbench/workloads/train/pipeline.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace trnsim::train {

std::vector<std::vector<pipeline_span>> schedule_1f1b(const std::vector<std::vector<double>>& fwd,
                                                      const std::vector<std::vector<double>>& bwd, double send_ns) {
    const size_t S = fwd.size();
    if (S == 0 || bwd.size() != S) throw std::invalid_argument("1F1B: forward and backward times for every stage");
    const size_t M = fwd[0].size();
    for (size_t s = 0; s < S; ++s)
        if (fwd[s].size() != M || bwd[s].size() != M)
            throw std::invalid_argument("1F1B: every stage needs the same number of micro-batches");
    std::vector<std::vector<std::pair<char, size_t>>> order(S);
    for (size_t s = 0; s < S; ++s) {
        const size_t warm = std::min(S - 1 - s, M);
        for (size_t i = 0; i < warm; ++i) order[s].push_back({'F', i});
        for (size_t i = 0; i + warm < M; ++i) order[s].push_back({'F', warm + i}), order[s].push_back({'B', i});
        for (size_t i = M - warm; i < M; ++i) order[s].push_back({'B', i});
    }
    constexpr double NONE = -1;
    std::vector<std::vector<double>> fend(S, std::vector<double>(M, NONE)), bend(S, std::vector<double>(M, NONE));
    std::vector<std::vector<pipeline_span>> out(S);
    std::vector<size_t> pos(S, 0);
    std::vector<double> free_at(S, 0);
    // Sweep the stages until nobody can go on: a pass runs as soon as what it needs has finished.
    for (bool progress = true; progress;) {
        progress = false;
        for (size_t s = 0; s < S; ++s)
            while (pos[s] < order[s].size()) {
                const auto [k, i] = order[s][pos[s]];
                double ready = 0;
                if (k == 'F' && s > 0) {
                    if (fend[s - 1][i] == NONE) break;
                    ready = fend[s - 1][i] + send_ns;
                }
                if (k == 'B' && s + 1 < S) {
                    if (bend[s + 1][i] == NONE) break;
                    ready = bend[s + 1][i] + send_ns;
                }
                const double b = std::max(free_at[s], ready), e = b + (k == 'F' ? fwd[s][i] : bwd[s][i]);
                (k == 'F' ? fend : bend)[s][i] = e;
                free_at[s] = e;
                out[s].push_back({k, uint32_t(i), b, e});
                ++pos[s];
                progress = true;
            }
    }
    for (size_t s = 0; s < S; ++s)
        if (pos[s] != order[s].size()) throw std::logic_error("1F1B schedule did not complete");
    return out;
}

}  // namespace trnsim::train
