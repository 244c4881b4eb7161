#include "testbench/workloads/program/op_sequence.h"

#include <algorithm>
#include <stdexcept>

#include "models/core/core_config.h"
#include "models/link/global_address.h"

namespace trnsim::tb {

sequence_layout chip_sequence_layout(const platform::chip_config& chip, uint32_t chips, uint64_t signal_word) {
    sequence_layout L;
    L.chips = chips;
    L.cores = chip.cores;
    L.core_base = chip.core_base;
    L.core_stride = chip.core_stride;
    L.sem_core = chip.core.sem_register(0);
    L.signal_word = signal_word;
    L.max_semaphores = uint32_t(core::core_config::SEM_WINDOW_BYTES / core::core_config::SEM_REGISTER_BYTES);
    return L;
}

op_sequence::op_sequence(const sequence_layout& L) : m_L(L), m_last_of_stream(L.chips) {
    if (L.chips == 0 || L.cores == 0 || L.streams == 0) throw std::invalid_argument("op_sequence: no chips, cores or streams");
    if (L.local_semaphores < 3 || uint64_t(L.streams) * L.local_semaphores >= L.max_semaphores)
        throw std::invalid_argument("op_sequence: the streams' semaphore regions do not fit the registers");
    m_next_fresh = L.streams * L.local_semaphores;
    m_local.assign(L.chips, std::vector<std::vector<std::vector<uint64_t>>>(
                                L.streams, std::vector<std::vector<uint64_t>>(L.cores)));
    m_barrier_uses.assign(L.chips, std::vector<uint64_t>(L.streams, 0));
}

uint32_t op_sequence::sem_first() const { return m_next_fresh; }

bool op_sequence::register_write(uint32_t chip, const core::instruction& in, uint32_t& to_chip, uint32_t& to_core,
                                 uint32_t& sem) const {
    if (in.op != core::opcode::dma) return false;
    const auto& d = in.dma;
    to_chip = link::is_global(d.dst) ? link::chip_of(d.dst) : chip;
    const uint64_t local = link::is_global(d.dst) ? link::local_of(d.dst) : d.dst;
    if (local < m_L.core_base) return false;
    const uint64_t k = (local - m_L.core_base) / m_L.core_stride;
    if (k >= m_L.cores) return false;
    const uint64_t off = local - m_L.core_base - k * m_L.core_stride;
    const uint64_t R = core::core_config::SEM_REGISTER_BYTES;
    if (off < m_L.sem_core || off >= m_L.sem_core + uint64_t(m_L.max_semaphores) * R) return false;
    if (d.total_bytes() != R || (off - m_L.sem_core) % R)
        throw std::invalid_argument("op_sequence: a DMA writes " + std::to_string(d.total_bytes()) +
                                    " bytes into the semaphore registers of chip " + std::to_string(to_chip) +
                                    " core " + std::to_string(k) + " (one aligned register per write)");
    to_core = uint32_t(k);
    sem = uint32_t((off - m_L.sem_core) / R);
    return true;
}

void op_sequence::finish_counts(op_rec& r, uint32_t done, const std::vector<std::vector<uint64_t>>& base,
                                const std::vector<std::vector<uint64_t>>& remote, uint32_t top) {
    r.finished.assign(m_L.cores, {});
    for (uint32_t k = 0; k < m_L.cores; ++k) {
        auto& p = r.progs[k];
        std::vector<uint64_t> count(top, 0);
        for (size_t s = 0; s < base[k].size() && s < top; ++s) count[s] += base[k][s];
        for (size_t s = 0; s < remote[k].size() && s < top; ++s) count[s] += remote[k][s];
        std::vector<bool> touched(top, false);
        for (size_t s = 0; s < remote[k].size() && s < top; ++s) touched[s] = remote[k][s] > 0;
        p.for_each_queue([&](std::vector<core::instruction>& q) {
            for (auto& in : q) {
                if (in.signal < 0) in.signal = int32_t(done);
                ++count[size_t(in.signal)];
                touched[size_t(in.signal)] = true;
            }
        });
        p.semaphores = std::max(p.semaphores, top);
        for (uint32_t s = 0; s < top; ++s)
            if (touched[s]) r.finished[k].push_back({s, count[s]});
    }
    // The stream's barrier registers in turn; the count after this operation's barrier.
    uint64_t& uses = m_barrier_uses[r.chip][r.stream];
    r.barrier = {region(r.stream) + uint32_t(uses % 2), (uses / 2 + 1) * m_L.cores};
    ++uses;
}

void op_sequence::check_target(uint32_t chip, uint32_t stream, const std::vector<core::core_program>& progs,
                               const std::vector<op_id>& after, const std::string& name) const {
    if (chip >= m_L.chips) throw std::invalid_argument("operation '" + name + "': no chip " + std::to_string(chip));
    if (stream >= m_L.streams)
        throw std::invalid_argument("operation '" + name + "': stream " + std::to_string(stream) + " of " +
                                    std::to_string(m_L.streams));
    if (progs.size() != m_L.cores)
        throw std::invalid_argument("operation '" + name + "': " + std::to_string(progs.size()) + " programs for " +
                                    std::to_string(m_L.cores) + " cores on chip " + std::to_string(chip));
    for (op_id a : after)
        if (a >= m_ops.size() || m_ops[a].chip != chip)
            throw std::invalid_argument("operation '" + name + "' depends on an operation of another chip or not yet "
                                        "added (on chip " + std::to_string(chip) + ")");
}

op_sequence::op_id op_sequence::push(op_rec&& r) {
    const op_id id = op_id(m_ops.size());
    auto& last = m_last_of_stream[r.chip];
    if (last.size() <= r.stream) last.resize(r.stream + 1, NONE);
    if (last[r.stream] != NONE && std::find(r.after.begin(), r.after.end(), last[r.stream]) == r.after.end())
        r.after.push_back(last[r.stream]);
    last[r.stream] = id;
    m_ops.push_back(std::move(r));
    return id;
}

op_sequence::op_id op_sequence::add(uint32_t chip, uint32_t stream, std::vector<core::core_program> progs,
                                    const std::vector<op_id>& after, const std::string& name) {
    check_target(chip, stream, progs, after, name);
    // Local semaphore j of the op is register region + 2 + j (after the two barrier registers); the op's "done"
    // semaphore follows its own.
    uint32_t own = 0;
    for (const auto& p : progs) own = std::max(own, p.semaphores);
    const uint32_t first = region(stream) + 2, done = first + own, top = done + 1;
    if (top > region(stream) + m_L.local_semaphores)
        throw std::invalid_argument("operation '" + name + "' on chip " + std::to_string(chip) + " needs " +
                                    std::to_string(own + 1) + " semaphores, more than a stream's region of " +
                                    std::to_string(m_L.local_semaphores - 2));
    auto& counts = m_local[chip][stream];
    std::vector<std::vector<uint64_t>> base(m_L.cores);
    for (uint32_t k = 0; k < m_L.cores; ++k) {
        auto& have = counts[k];
        if (have.size() < own + 1) have.resize(own + 1, 0);
        auto& b = base[k];
        b.assign(top, 0);
        for (uint32_t j = 0; j <= own; ++j) b[first + j] = have[j];
        progs[k].for_each_queue([&](std::vector<core::instruction>& q) {
            for (auto& in : q) {
                uint32_t c, kk, s;
                if (register_write(chip, in, c, kk, s))
                    throw std::invalid_argument("operation '" + name + "' writes semaphore registers: build it with "
                                                "sem_first() and add it with add_all");
                for (auto& w : in.waits) w.value += have[w.sem], w.sem += first;
                if (in.signal >= 0) in.signal += int32_t(first);
            }
        });
        progs[k].semaphores = top;
    }
    op_rec r;
    r.name = name;
    r.chip = chip;
    r.stream = stream;
    r.progs = std::move(progs);
    r.after = after;
    finish_counts(r, done, base, std::vector<std::vector<uint64_t>>(m_L.cores), top);
    // The region's counts now include this operation's signals.
    for (uint32_t k = 0; k < m_L.cores; ++k)
        for (const auto& w : r.finished[k]) counts[k][w.sem - first] = w.value;
    return push(std::move(r));
}

std::vector<op_sequence::op_id> op_sequence::add_all(uint32_t stream,
                                                     std::vector<std::vector<core::core_program>> programs,
                                                     const std::vector<std::vector<op_id>>& after,
                                                     const std::string& name, const std::vector<uint32_t>& members) {
    if (programs.size() != m_L.chips || after.size() != m_L.chips)
        throw std::invalid_argument("operation '" + name + "': programs and dependencies for " +
                                    std::to_string(m_L.chips) + " chips expected");
    std::vector<bool> member(m_L.chips, members.empty());
    for (uint32_t c : members) {
        if (c >= m_L.chips) throw std::invalid_argument("operation '" + name + "': no chip " + std::to_string(c));
        member[c] = true;
    }
    for (uint32_t c = 0; c < m_L.chips; ++c)
        if (!member[c])
            for (const auto& p : programs[c])
                if (!p.empty())
                    throw std::invalid_argument("operation '" + name + "' has instructions on chip " +
                                                std::to_string(c) + ", which is not one of its chips");
    for (uint32_t c = 0; c < m_L.chips; ++c)
        check_target(c, stream, programs[c], member[c] ? after[c] : std::vector<op_id>{}, name);
    const uint32_t first = sem_first();
    // Register writes into every core by the operation, from any chip.
    std::vector<std::vector<std::vector<uint64_t>>> remote(m_L.chips, std::vector<std::vector<uint64_t>>(m_L.cores));
    for (uint32_t c = 0; c < m_L.chips; ++c) {
        for (const auto& p : programs[c])
            for (const auto& q : p.dma)
                for (const auto& in : q) {
                    uint32_t tc, tk, s;
                    if (!register_write(c, in, tc, tk, s)) continue;
                    if (tc >= m_L.chips || s < first)
                        throw std::invalid_argument("operation '" + name + "' signals chip " + std::to_string(tc) +
                                                    " semaphore " + std::to_string(s) + ", outside its own (from " +
                                                    std::to_string(first) + ")");
                    if (!member[tc])
                        throw std::invalid_argument("operation '" + name + "' signals chip " + std::to_string(tc) +
                                                    ", which is not one of its chips");
                    auto& v = remote[tc][tk];
                    if (v.size() <= s) v.resize(s + 1, 0);
                    ++v[s];
                }
    }
    uint32_t top = first;
    for (const auto& chip : programs)
        for (const auto& p : chip) top = std::max(top, p.semaphores);
    const uint32_t done = top++;
    if (top > m_L.max_semaphores)
        throw std::invalid_argument("operation '" + name + "' needs semaphores up to " + std::to_string(top) +
                                    " with the operations before it, more than a core's " +
                                    std::to_string(m_L.max_semaphores) + " registers");
    std::vector<op_id> ids(m_L.chips, NONE);
    for (uint32_t c = 0; c < m_L.chips; ++c) {
        if (!member[c]) continue;
        for (const auto& p : programs[c])
            p.for_each_queue([&](const std::vector<core::instruction>& q) {
                for (const auto& in : q)
                    for (const auto& w : in.waits)
                        if (w.sem < first)
                            throw std::invalid_argument("operation '" + name + "' waits on semaphore " +
                                                        std::to_string(w.sem) + ", below its first (" +
                                                        std::to_string(first) + ")");
            });
        op_rec r;
        r.name = name;
        r.chip = c;
        r.stream = stream;
        r.progs = std::move(programs[c]);
        r.after = after[c];
        finish_counts(r, done, std::vector<std::vector<uint64_t>>(m_L.cores), remote[c], top);
        ids[c] = push(std::move(r));
    }
    m_next_fresh = top;
    return ids;
}

std::vector<core::sem_wait> op_sequence::barrier_waits(const std::vector<op_id>& after) const {
    std::vector<core::sem_wait> w;
    for (op_id a : after) w.push_back(m_ops[a].barrier);
    return w;
}

op_sequence::op_id op_sequence::owner_of(const std::vector<std::pair<size_t, op_id>>& list, size_t index) {
    auto it = std::upper_bound(list.begin(), list.end(), index,
                               [](size_t i, const std::pair<size_t, op_id>& e) { return i < e.first; });
    return it == list.begin() ? NONE : std::prev(it)->second;
}

std::vector<std::vector<core::core_program>> op_sequence::finish(owner_map* owners) {
    // DMA queues: a block per stream (the most any of its operations uses, plus the sync queue), streams in order.
    uint32_t streams = 0;
    for (const auto& o : m_ops) streams = std::max(streams, o.stream + 1);
    std::vector<size_t> width(streams, 0), base(streams + 1, 0);
    for (const auto& o : m_ops)
        for (const auto& p : o.progs) width[o.stream] = std::max(width[o.stream], p.dma.size());
    for (uint32_t s = 0; s < streams; ++s) base[s + 1] = base[s] + width[s] + 1;  // + the sync queue
    std::vector<std::vector<core::core_program>> out(m_L.chips, std::vector<core::core_program>(m_L.cores));
    for (auto& chip : out)
        for (auto& p : chip) {
            p.dma.resize(base[streams]);
            p.semaphores = m_next_fresh;
        }
    if (owners) owners->assign(m_L.chips, std::vector<std::vector<std::vector<std::pair<size_t, op_id>>>>(m_L.cores));
    const uint64_t R = core::core_config::SEM_REGISTER_BYTES;
    for (auto& o : m_ops) {
        const std::vector<core::sem_wait> gate = barrier_waits(o.after);
        for (uint32_t k = 0; k < m_L.cores; ++k) {
            auto& dst = out[o.chip][k];
            auto& src = o.progs[k];
            const op_id id = op_id(&o - m_ops.data());
            const size_t queues = 3 + dst.dma.size();
            auto own = [&](size_t queue, size_t first, op_id who) {
                if (!owners) return;
                auto& l = (*owners)[o.chip][k];
                if (l.size() < queues) l.resize(queues);
                auto& v = l[queue];
                if (v.empty() || v.back().second != who) v.emplace_back(first, who);
            };
            auto queue_of = [&](const std::vector<core::instruction>& to) -> size_t {
                if (&to == &dst.te) return 0;
                if (&to == &dst.vector) return 1 + dst.dma.size();
                if (&to == &dst.scalar) return 2 + dst.dma.size();
                return 1 + size_t(&to - dst.dma.data());
            };
            auto append = [&](std::vector<core::instruction>& to, std::vector<core::instruction>& from) {
                if (from.empty()) return;
                own(queue_of(to), to.size(), id);
                from.front().waits.insert(from.front().waits.end(), gate.begin(), gate.end());
                for (auto& in : from) to.push_back(std::move(in));
            };
            append(dst.te, src.te);
            append(dst.vector, src.vector);
            append(dst.scalar, src.scalar);
            for (size_t q = 0; q < src.dma.size(); ++q) append(dst.dma[base[o.stream] + q], src.dma[q]);
            // The barrier: once this core's part (and the operation's dependencies) are done, one register write
            // to every core of the chip.
            auto& sync = dst.dma[base[o.stream] + width[o.stream]];
            own(queue_of(sync), sync.size(), NONE);
            for (uint32_t j = 0; j < m_L.cores; ++j) {
                core::instruction in;
                in.op = core::opcode::dma;
                if (j == 0) {
                    in.waits = o.finished[k];
                    in.waits.insert(in.waits.end(), gate.begin(), gate.end());
                }
                in.dma.src = m_L.signal_word;
                in.dma.dst = m_L.core_base + uint64_t(j) * m_L.core_stride + m_L.sem_core + uint64_t(o.barrier.sem) * R;
                in.dma.row_bytes = R;
                in.dma.control = true;  // a semaphore write: not held behind the engines' queued data
                sync.push_back(std::move(in));
            }
            src = core::core_program();  // moved out; names, chips and streams stay for the caller
        }
    }
    return out;
}

}  // namespace trnsim::tb
