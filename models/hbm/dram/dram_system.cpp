#include "models/hbm/dram/dram_system.h"

#include <algorithm>
#include <stdexcept>

namespace trnsim::hbm {

dram_system::dram_system(const hbm_dram_config& cfg, const std::string& stats_name)
    : m_cfg(cfg), m_map(cfg.mapping.empty() ? default_mapping(cfg.spec) : cfg.mapping, cfg.spec, cfg.stacks),
      m_stats(stats_name) {
    m_cfg.mapping = m_map.spec();
    const memspec& s = m_cfg.spec;
    uint32_t n = s.pcs_per_stack() * cfg.stacks;
    for (uint32_t i = 0; i < n; ++i) {
        // Stagger refresh over the pseudo-channels (they are independent; this only avoids lock-step).
        cycle_t offset = cycle_t(uint64_t(i) * s.tREFI / n);
        m_pcs.push_back(std::make_unique<pc_controller>(s, cfg.ctrl, i, offset));
        m_pcs.back()->set_listener(this);
    }
    m_is_active.assign(n, false);
    m_fifo.resize(n);

    auto add = [&](stats::group& g, const char* nm, const char* unit, const char* desc, std::function<double()> f) {
        m_formulas.push_back(std::make_unique<stats::formula>(nm, unit, desc, std::move(f)));
        g.add(*m_formulas.back());
    };
    m_stats.add(m_reads);
    m_stats.add(m_writes);
    m_stats.add(m_bytes_read);
    m_stats.add(m_bytes_written);
    add(m_stats, "elapsed", "ns", "first arrival to last completion (or to the end given to finish())",
        [this] { return elapsed_ns(); });
    add(m_stats, "bandwidth", "GB/s", "bytes read and written per elapsed time", [this] {
        double e = elapsed_ns();
        return e > 0 ? (m_bytes_read.value() + m_bytes_written.value()) / e : 0.0;
    });
    add(m_stats, "read_bandwidth", "GB/s", "bytes read per elapsed time", [this] {
        double e = elapsed_ns();
        return e > 0 ? m_bytes_read.value() / e : 0.0;
    });
    add(m_stats, "write_bandwidth", "GB/s", "bytes written per elapsed time", [this] {
        double e = elapsed_ns();
        return e > 0 ? m_bytes_written.value() / e : 0.0;
    });
    add(m_stats, "peak_bandwidth", "GB/s", "data-bus peak of all pseudo-channels", [this] { return peak_gbps(); });
    add(m_stats, "efficiency", "%", "data bursts transferred / bursts the buses could carry in the elapsed time", [this] {
        double e = elapsed_ns();
        if (e <= 0) return 0.0;
        double bursts = sum_pcs([](const pc_controller& p) { return p.counters().read_bursts + p.counters().write_bursts; });
        return 100.0 * bursts * m_cfg.spec.burst_bytes() / (e * peak_gbps());
    });
    add(m_stats, "row_hits", "bursts", "column commands to an already open row",
        [this] { return sum_pcs([](const pc_controller& p) { return p.counters().row_hits; }); });
    add(m_stats, "row_misses", "bursts", "column commands that needed an ACT of a closed bank",
        [this] { return sum_pcs([](const pc_controller& p) { return p.counters().row_misses; }); });
    add(m_stats, "row_conflicts", "bursts", "column commands that needed PRE of another row, then ACT",
        [this] { return sum_pcs([](const pc_controller& p) { return p.counters().row_conflicts; }); });
    add(m_stats, "row_hit_rate", "%", "row hits / column commands", [this] {
        double h = sum_pcs([](const pc_controller& p) { return p.counters().row_hits; });
        double all = h + sum_pcs([](const pc_controller& p) { return p.counters().row_misses + p.counters().row_conflicts; });
        return all > 0 ? 100.0 * h / all : 0.0;
    });
    add(m_stats, "refreshes", "commands", "REFab + REFpb commands issued",
        [this] { return sum_pcs([](const pc_controller& p) { return p.refreshes(); }); });
    m_stats.add(m_read_lat);
    m_stats.add(m_write_lat);

    for (unsigned c = 0; c < NUM_COMMANDS; ++c) {
        std::string nm = name(command(c));
        std::transform(nm.begin(), nm.end(), nm.begin(), [](unsigned char ch) { return char(std::tolower(ch)); });
        m_formulas.push_back(std::make_unique<stats::formula>(nm, "commands", std::string(name(command(c))) + " commands issued",
                                                              [this, c] { return sum_cmd(command(c)); }));
        m_cmd_group.add(*m_formulas.back());
    }
    m_stats.add(m_cmd_group);
    for (uint32_t b = 0; b < s.banks_per_pc(); ++b) {
        m_formulas.push_back(std::make_unique<stats::formula>(
            "b" + std::to_string(b), "%",
            "time bank " + std::to_string(b) + " of a pseudo-channel has a row open, mean over pseudo-channels",
            [this, b] {
                double e = elapsed_ns();
                if (e <= 0) return 0.0;
                double open = sum_pcs([b](const pc_controller& p) { return p.counters().bank_open_cycles[b]; });
                return 100.0 * open * tck_ns() / (e * num_pcs());
            }));
        m_bank_group.add(*m_formulas.back());
    }
    m_stats.add(m_bank_group);
}

double dram_system::sum_cmd(command c) const {
    return sum_pcs([c](const pc_controller& p) { return p.counters().commands[unsigned(c)]; });
}

double dram_system::elapsed_ns() const {
    if (m_first_arrival == NEVER) return 0.0;
    cycle_t end = std::max(m_end, m_last_done);
    return end > m_first_arrival ? double(end - m_first_arrival) * tck_ns() : 0.0;
}

void dram_system::set_observer(const command_observer& o) {
    for (auto& p : m_pcs) p->set_observer(o);
}

void dram_system::mark_active(uint32_t pc) {
    if (!m_is_active[pc]) {
        m_is_active[pc] = true;
        m_active.push_back(pc);
    }
}

void dram_system::admitted(uint32_t slot, cycle_t at) {
    txn& x = m_txn[slot];
    if (at > x.accepted) x.accepted = at;
    if (--x.waiting == 0 && m_sink) m_sink->accepted(x.tag, x.accepted);
}

void dram_system::pump(uint32_t p, cycle_t limit, bool one_column) {
    pc_controller& c = *m_pcs[p];
    auto& fifo = m_fifo[p];
    auto admit_what_fits = [&] {
        while (!fifo.empty() && !c.full(fifo.front().write)) {
            waiting_burst w = fifo.front();
            fifo.pop_front();
            c.enqueue(w.slot, w.write, w.bank, w.row, w.column, c.now());
            admitted(w.slot, c.now());
        }
    };
    while (true) {
        admit_what_fits();
        int stop = one_column ? pc_controller::STOP_ANY
                   : fifo.empty() ? pc_controller::STOP_NONE
                                  : int(fifo.front().write ? WRITE : READ);
        c.advance(limit, stop);
        if (!c.stopped_on_column()) return;  // reached the limit or ran dry
        if (one_column) {
            admit_what_fits();
            return;
        }
        // A slot of the waiting burst's direction freed in this cycle: admit, continue.
    }
}

void dram_system::submit(uint64_t tag, bool write, uint64_t addr, uint64_t size, cycle_t arrival, const size_t* pcs) {
    if (size == 0) size = 1;
    if (addr >= capacity() || size > capacity() - addr)
        throw std::out_of_range("dram_system::submit: [" + std::to_string(addr) + ", +" + std::to_string(size) +
                                ") is outside the HBM (" + std::to_string(capacity()) + " bytes)");
    const uint64_t bb = m_map.burst_bytes();
    uint64_t first = addr & ~(bb - 1), last = (addr + size - 1) & ~(bb - 1);
    uint32_t n = uint32_t((last - first) / bb + 1);

    cycle_t t = std::max(arrival, m_clock);
    m_clock = t;
    if (m_first_arrival == NEVER) m_first_arrival = t;
    uint32_t slot;
    if (m_free.empty()) {
        slot = uint32_t(m_txn.size());
        m_txn.emplace_back();
    } else {
        slot = m_free.back();
        m_free.pop_back();
    }
    m_txn[slot] = txn{tag, size, t, t, 0, n, n, write};
    if (write) m_write_bursts += n;
    ++m_outstanding;

    for (uint32_t k = 0; k < n; ++k) {
        dram_address d = m_map.decode(first + uint64_t(k) * bb);
        uint32_t p = pcs ? uint32_t(pcs[k]) : m_map.pc_index(d);
        pc_controller& c = *m_pcs[p];
        pump(p, t);
        mark_active(p);
        if (m_fifo[p].empty() && !c.full(write)) {
            c.enqueue(slot, write, m_map.bank_index(d), d.row, d.column, t);
            admitted(slot, t);
        } else {
            m_fifo[p].push_back(waiting_burst{slot, m_map.bank_index(d), d.row, d.column, write});
        }
        touch(p);
    }
}

void dram_system::touch(uint32_t p) {
    if (!m_ordered) return;
    cycle_t t = m_pcs[p]->next_event();
    if (t == m_heap_t[p]) return;  // the entry in the heap is still right
    ++m_version[p];
    m_heap_t[p] = t;
    if (t != NEVER) m_pc_heap.push(pc_event{t, p, m_version[p]});
}

cycle_t dram_system::next_completion() {
    if (!m_ordered) {
        m_ordered = true;
        m_version.assign(m_pcs.size(), 0);
        m_heap_t.assign(m_pcs.size(), NEVER);
        for (uint32_t p : m_active) touch(p);
    }
    while (true) {
        // A column command at cycle t completes no earlier than t + min_latency.
        const cycle_t min_latency = cycle_t((m_write_bursts ? std::min(spec().tRL, spec().tWL) : spec().tRL) +
                                            spec().burst_cycles());
        cycle_t known = m_done_heap.empty() ? NEVER : m_done_heap.top();
        while (!m_pc_heap.empty() && m_pc_heap.top().version != m_version[m_pc_heap.top().pc]) m_pc_heap.pop();
        if (m_pc_heap.empty()) return known;
        pc_event e = m_pc_heap.top();
        // Every completion not yet known comes from a command at or after e.t.
        if (known <= e.t + min_latency) return known;
        m_pc_heap.pop();
        m_heap_t[e.pc] = NEVER;
        // Commands before min(known, e.t + min_latency) precede every completion not yet known, so any future
        // arrival (which waits for a completion) comes after them.
        pump(e.pc, std::min(known, e.t + min_latency));
        touch(e.pc);
    }
}

void dram_system::retire_completion() {
    if (!m_done_heap.empty()) m_done_heap.pop();
}

void dram_system::burst_done(uint64_t slot, bool write, cycle_t, cycle_t done) {
    if (write) --m_write_bursts;
    txn& x = m_txn[slot];
    if (done > x.done) x.done = done;
    if (--x.remaining) return;
    double lat = double(x.done - x.arrival) * tck_ns();
    if (x.write) {
        ++m_writes;
        m_bytes_written += double(x.size);
        m_write_lat.sample(lat);
    } else {
        ++m_reads;
        m_bytes_read += double(x.size);
        m_read_lat.sample(lat);
    }
    if (x.done > m_last_done) m_last_done = x.done;
    --m_outstanding;
    m_free.push_back(uint32_t(slot));
    if (m_ordered) m_done_heap.push(x.done);
    if (m_sink) m_sink->completed(x.tag, x.done);
}

void dram_system::advance(cycle_t limit) {
    for (size_t i = 0; i < m_active.size();) {
        uint32_t p = m_active[i];
        pump(p, limit);
        if (m_pcs[p]->pending() == 0 && m_fifo[p].empty()) {
            m_is_active[p] = false;
            m_active[i] = m_active.back();
            m_active.pop_back();
        } else {
            ++i;
        }
    }
}

cycle_t dram_system::next_event() {
    cycle_t t = NEVER;
    for (uint32_t p : m_active) t = std::min(t, m_pcs[p]->next_event());
    return t;
}

void dram_system::drain() { advance(NEVER); }

void dram_system::finish(cycle_t end, bool drain_first) {
    if (drain_first) drain();
    end = std::max({end, m_last_done, m_clock});
    if (end == NEVER) end = m_last_done;
    for (auto& p : m_pcs) {
        if (p->now() < end) p->advance(end);
        p->close_accounting(end);
    }
    m_end = end;
}

} // namespace trnsim::hbm
