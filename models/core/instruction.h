// A NeuronCore's instruction streams: one queue for the Tensor Engine, several DMA queues, one for the Vector Engine
// and one for the Scalar Engine. Engines synchronise
// through counting semaphores: an instruction waits until each named semaphore has reached a value, runs, and adds
// one to its signal semaphore when it completes.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "models/dma/dma_descriptor.h"
#include "models/tensor_engine/matmul_args.h"
#include "models/vector_engine/vec_args.h"

namespace trnsim::core {

enum class opcode : uint8_t { dma, matmul, vector, scalar };

struct sem_wait {
    uint32_t sem = 0;
    uint64_t value = 0;
};

struct instruction {
    opcode op = opcode::dma;
    std::vector<sem_wait> waits;
    int32_t signal = -1;                 // semaphore incremented on completion (-1: none)
    dma::dma_descriptor dma;             // op == dma (chip-global addresses)
    te::matmul_args mm;                  // op == matmul (core-local addresses)
    ve::vec_args vec;                    // op == vector / scalar (core-local addresses)
};

struct core_program {
    uint32_t semaphores = 0;
    std::vector<instruction> te;                    // Tensor Engine queue
    std::vector<std::vector<instruction>> dma;      // DMA queues
    std::vector<instruction> vector;                // Vector Engine queue
    std::vector<instruction> scalar;                // Scalar Engine queue
    // Calls f(queue) for every instruction queue: the Tensor Engine's, the DMA queues, the Vector's, the Scalar's.
    template <class F>
    void for_each_queue(F&& f) {
        f(te);
        for (auto& q : dma) f(q);
        f(vector);
        f(scalar);
    }
    template <class F>
    void for_each_queue(F&& f) const {
        f(te);
        for (const auto& q : dma) f(q);
        f(vector);
        f(scalar);
    }
    size_t instructions() const {
        size_t n = 0;
        for_each_queue([&](const std::vector<instruction>& q) { n += q.size(); });
        return n;
    }
    bool empty() const {
        if (!te.empty() || !vector.empty() || !scalar.empty()) return false;
        for (auto& q : dma)
            if (!q.empty()) return false;
        return true;
    }
};

} // namespace trnsim::core
