// The 1F1B pipeline schedule (PipeDream-Flush / Megatron's non-interleaved schedule) as a timing calculation:
// stage s runs min(S - 1 - s, M) warm-up forwards, then alternates one forward and one backward, then the remaining
// backwards. F(s, i) starts once F(s - 1, i) has finished and its activations have been sent (send_ns); B(s, i)
// once B(s + 1, i) has finished and its gradient has been sent (the last stage: after its own F(s, i)). A stage
// runs one pass at a time. Plain C++.
#pragma once
#include <cstdint>
#include <vector>

namespace trnsim::train {

struct pipeline_span {
    char kind;             // 'F' or 'B'
    uint32_t micro_batch;
    double begin_ns, end_ns;
};

// fwd[s][i], bwd[s][i]: the duration of micro-batch i's forward / backward pass on stage s (every stage has the
// same number of micro-batches). Returns every stage's passes in the order it runs them.
std::vector<std::vector<pipeline_span>> schedule_1f1b(const std::vector<std::vector<double>>& fwd,
                                                      const std::vector<std::vector<double>>& bwd, double send_ns);

}  // namespace trnsim::train
