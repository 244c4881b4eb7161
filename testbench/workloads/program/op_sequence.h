// Operations put in order on the full chips of a platform: each operation is a set of per-core programs (a GEMM from
// the GEMM compiler, a vector phase, a collective lowered for every chip), and the sequence merges them into one
// program per core of every chip, in which an operation starts only when the operations it depends on have
// finished on its chip. Nothing is timed here: the chips' own queues, semaphores and DMA engines do the ordering.
//
//   streams   every operation runs on a stream of its chip; a stream's operations run one after another (each
//             waits for the previous one), streams run side by side (a step's compute on stream 0, its data-parallel
//             gradient all-reduces on stream 1). Each stream has DMA queues of its own; the Tensor Engine, Vector
//             Engine and Scalar Engine queues are one per core, shared in the order operations were added (an
//             engine serves one instruction stream).
//   finishing an operation has finished on a core when every instruction of its program there has completed and
//             every semaphore-register write aimed at that core by the operation (a collective's remote signals,
//             from any chip) has landed. Instructions that signal nothing are given a semaphore of the operation so
//             their completion can be waited for.
//   barrier   once it has finished on a core, that core writes one semaphore register (the operation's barrier,
//             the same number on every core of the chip) of every core of the chip: an 8-byte DMA on the stream's
//             sync queue, as the collectives signal between cores. The operation has finished on the chip when
//             the barrier has counted every core; dependants' first instruction in each queue waits for that.
//             A barrier also waits for the operation's own dependencies, so an operation with no work on a chip
//             still finishes after them.
// Semaphores (a core has 131072 registers; a step has thousands of operations):
//   - the operations a stream runs on its own chip (add) share one region of the stream's, reused: an operation
//     starts only after the stream's previous one has finished, so its semaphore j continues counting from where
//     the operations before it left it (its waits are raised by those counts);
//   - each stream has two barrier registers, used in turn: an operation's barrier cannot be written before every
//     core of the chip has counted the barrier before the previous one (each core waits for the previous barrier
//     before finishing its part), so alternating two registers is enough; waits name the cumulative count;
//   - operations on every chip at once (add_all: a lowered collective, whose remote signals name registers on other
//     chips) take fresh semaphores from sem_first(), above every stream's region.
// Plain C++ (no SystemC).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "models/core/instruction.h"
#include "platforms/config/platform_config.h"

namespace trnsim::tb {

struct sequence_layout {
    uint32_t streams = 2;         // streams at most
    uint32_t local_semaphores = 8192;  // per stream: its barrier registers and its local operations' semaphores
    uint32_t chips = 1, cores = 1;
    uint64_t core_base = 0, core_stride = 0;  // chip-local address of core i's window: core_base + i * core_stride
    uint64_t sem_core = 0;       // core-local address of semaphore register 0
    uint64_t signal_word = 0;    // chip-local address of 8 readable bytes (the source of the barrier writes)
    uint32_t max_semaphores = 131072;
};

// The layout of `chips` chips like `chip` (the signal word: 8 bytes of chip-local memory the barrier writes read).
sequence_layout chip_sequence_layout(const platform::chip_config& chip, uint32_t chips, uint64_t signal_word);

class op_sequence {
public:
    using op_id = uint32_t;
    explicit op_sequence(const sequence_layout& L);

    // An operation on one chip: `progs` has one program per core, semaphores numbered from 0. It starts once the
    // previous operation of its stream and every operation of `after` (ops of the same chip) have finished.
    // Throws std::invalid_argument naming the operation if it does not fit (core count, semaphores).
    op_id add(uint32_t chip, uint32_t stream, std::vector<core::core_program> progs, const std::vector<op_id>& after,
              const std::string& name);
    // An operation on several chips at once whose programs were built with semaphores from sem_first() (a lowered
    // collective: its remote signals name registers on other chips). programs[chip][core]; after[chip] as for add().
    // `members` (empty: every chip): the chips it runs on; the others' programs must be empty and their streams do
    // not see it. Returns the operation of each chip (NONE for a chip that is not a member).
    std::vector<op_id> add_all(uint32_t stream, std::vector<std::vector<core::core_program>> programs,
                               const std::vector<std::vector<op_id>>& after, const std::string& name,
                               const std::vector<uint32_t>& members = {});
    // The first semaphore no operation of any chip has taken yet.
    uint32_t sem_first() const;

    // Which operation an instruction belongs to: owners[chip][core][queue] lists (first index, op) in index order,
    // queues numbered as neuron_core numbers them (0 the Tensor Engine, 1.. the DMA queues, then Vector, Scalar).
    // Barrier writes belong to no operation (op NONE).
    using owner_map = std::vector<std::vector<std::vector<std::vector<std::pair<size_t, op_id>>>>>;
    static constexpr op_id NONE = UINT32_MAX;
    // The merged programs, [chip][core]; `owners` (optional) filled. The sequence is spent afterwards.
    std::vector<std::vector<core::core_program>> finish(owner_map* owners = nullptr);
    // The operation owning instruction `index` of a queue's owner list (NONE if none).
    static op_id owner_of(const std::vector<std::pair<size_t, op_id>>& list, size_t index);
    uint32_t stream_of(op_id o) const { return m_ops.at(o).stream; }

    size_t operations() const { return m_ops.size(); }
    const std::string& name_of(op_id o) const { return m_ops.at(o).name; }
    uint32_t chip_of(op_id o) const { return m_ops.at(o).chip; }
    // Barrier writes generated (8-byte DMAs): cores x cores per operation.
    uint64_t barrier_writes() const { return uint64_t(m_ops.size()) * m_L.cores * m_L.cores; }

private:
    struct op_rec {
        std::string name;
        uint32_t chip = 0, stream = 0;
        std::vector<core::core_program> progs;  // semaphores final
        std::vector<op_id> after;               // including the stream's previous operation
        core::sem_wait barrier;                 // the register and the count that says "finished on the chip"
        std::vector<std::vector<core::sem_wait>> finished;  // per core: when its part is done
    };
    // The semaphore-register write a DMA instruction of chip `chip` makes, if it is one: (chip, core, register).
    bool register_write(uint32_t chip, const core::instruction& in, uint32_t& to_chip, uint32_t& to_core,
                        uint32_t& sem) const;
    // Sets r.finished (the counts every semaphore of the op reaches on each core: `base[core][s]` plus the op's own
    // signals plus `remote` register writes) and r.barrier; instructions that signal nothing signal `done`.
    void finish_counts(op_rec& r, uint32_t done, const std::vector<std::vector<uint64_t>>& base,
                       const std::vector<std::vector<uint64_t>>& remote, uint32_t top);
    // Throws std::invalid_argument naming the operation for a chip, stream, program count or dependency it cannot have.
    void check_target(uint32_t chip, uint32_t stream, const std::vector<core::core_program>& progs,
                      const std::vector<op_id>& after, const std::string& name) const;
    op_id push(op_rec&& r);
    std::vector<core::sem_wait> barrier_waits(const std::vector<op_id>& after) const;
    uint32_t region(uint32_t stream) const { return stream * m_L.local_semaphores; }

    sequence_layout m_L;
    std::vector<op_rec> m_ops;
    uint32_t m_next_fresh;                             // add_all's next semaphore (all chips alike)
    std::vector<std::vector<op_id>> m_last_of_stream;  // [chip][stream]: the last op (NONE: none)
    // [chip][stream][core][j]: the count local semaphore j of the stream's region has reached.
    std::vector<std::vector<std::vector<std::vector<uint64_t>>>> m_local;
    std::vector<std::vector<uint64_t>> m_barrier_uses;  // [chip][stream]: barriers so far
};

}  // namespace trnsim::tb
