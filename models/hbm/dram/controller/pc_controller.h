// Controller core of one HBM pseudo-channel: request queues, bank machines, scheduler, page policy, refresh and the
// timing checker. Event driven: time jumps straight to the next cycle at which a command can be issued (or a
// refresh falls due); nothing happens per cycle. Completion cycles are known when the column command is issued.
//
// Protocol: enqueue() requests with non-decreasing arrival cycles; before enqueuing a request arriving at cycle a,
// call advance(a), which issues every command earlier than a. A request arriving at cycle a can be served by a
// command at cycle a. Plain C++ (no SystemC).
#pragma once
#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "models/hbm/dram/bank_fsm.h"
#include "models/hbm/dram/checker/timing_checker.h"
#include "models/hbm/dram/command.h"
#include "models/hbm/dram/controller/controller_config.h"
#include "models/hbm/dram/controller/request_queue.h"
#include "models/hbm/dram/memspec.h"

namespace trnsim::hbm {

// One issued command, for traces.
struct command_record {
    uint32_t pc;       // pseudo-channel index (stack-major)
    cycle_t cycle;
    command cmd;
    uint32_t bank;     // bank index inside the pseudo-channel
    uint32_t row;      // ACT and column commands
    uint32_t column;   // column commands (burst index in the row)
    uint64_t tag;      // owner tag of the request served (column commands, ACT/PRE made for a request), else ~0
};
using command_observer = std::function<void(const command_record&)>;

class completion_listener {
public:
    virtual ~completion_listener() = default;
    // A burst finished: read data fully returned / write data fully transferred at `done`.
    virtual void burst_done(uint64_t tag, bool write, cycle_t arrival, cycle_t done) = 0;
};

struct pc_counters {
    uint64_t commands[NUM_COMMANDS] = {};
    uint64_t read_bursts = 0, write_bursts = 0;
    uint64_t row_hits = 0, row_misses = 0, row_conflicts = 0;
    std::vector<uint64_t> bank_open_cycles;  // per bank, closed intervals only (see pc_controller::close_accounting)
};

class pc_controller {
public:
    pc_controller(const memspec& m, const controller_config& cfg, uint32_t index, cycle_t refresh_offset);

    uint32_t index() const { return m_index; }
    const memspec& spec() const { return m_spec; }
    cycle_t now() const { return m_now; }
    bool full(bool write) const { return m_q.full(write ? WRITE : READ); }
    uint32_t pending() const { return m_q.total(); }

    void set_listener(completion_listener* l) { m_listener = l; }
    void set_observer(command_observer o) { m_observer = std::move(o); }

    void enqueue(uint64_t tag, bool write, uint32_t bank, uint32_t row, uint32_t column, cycle_t arrival);

    // Issues every command at cycles < limit (limit == NEVER: until the queues are empty). With `stop` = READ or
    // WRITE, returns right after the first column command of that direction (a queue slot became free); with
    // STOP_ANY after the first column command of either. Returns now().
    static constexpr int STOP_NONE = -1, STOP_ANY = 2;
    cycle_t advance(cycle_t limit, int stop = STOP_NONE);
    // Whether the last advance() returned because of `stop` (rather than reaching the limit or running dry).
    bool stopped_on_column() const { return m_stopped; }

    // Cycle of the next command (or refresh becoming due) if nothing else arrives; NEVER when nothing is queued
    // (refreshes of idle periods are caught up by the next advance()).
    cycle_t next_event();

    // Adds the open time of still-open banks up to `end` to the counters (call once at the end of a run).
    void close_accounting(cycle_t end);

    const pc_counters& counters() const { return m_cnt; }
    uint64_t refreshes() const { return m_cnt.commands[unsigned(command::REFAB)] + m_cnt.commands[unsigned(command::REFPB)]; }
    const timing_checker& checker() const { return m_chk; }
    const bank_fsm& banks() const { return m_fsm; }
    const char* scheduler_name() const { return m_sched->name(); }

private:
    static constexpr uint8_t NO_CLASS = timing_checker::NUM_CLS;  // no candidate (indexes a NEVER bound)
    void update_direction();
    bool would_switch_direction() const;
    void activate_refresh();
    // Recomputes the candidate command of bank b (m_req/m_cmd/m_cls/m_has/m_key/m_elocal).
    void compute_candidate(uint32_t b);
    void compute_local(uint32_t b) {
        if (m_cls[b] == NO_CLASS) return;
        auto k = timing_checker::cls(m_cls[b]);
        // Clamped at 0 (time never runs below 0) so the scan can compare unsigned.
        m_elocal[b] = std::max(std::max(m_chk.bank_bound(k, b), m_chk.group_bound(k, m_chk.bank_group_of(b))), cycle_t(0));
    }
    // One scheduling decision; returns false when nothing can happen before `limit`.
    bool step(cycle_t limit, int stop_dir, bool& stopped);
    // Issues bank b's candidate at cycle t; sets `stopped` as step() does.
    bool issue_candidate(uint32_t b, cycle_t t, int stop_dir, bool& stopped);
    void issue(uint32_t bank, int32_t req, command cmd, cycle_t t);
    void raise_group(uint32_t bank, unsigned mask);
    void bank_closed(uint32_t bank, cycle_t at);

    const memspec& m_spec;
    controller_config m_cfg;
    uint32_t m_index;
    uint32_t m_banks;
    std::unique_ptr<scheduler_if> m_sched;
    std::unique_ptr<page_policy_if> m_page;
    std::unique_ptr<refresh_if> m_refresh;
    command m_ref_kind;  // m_refresh->kind(), cached
    cycle_t m_ref_due;   // m_refresh->next_due(), cached (changes only in m_refresh->issued())
    timing_checker m_chk;
    bank_fsm m_fsm;
    request_queue m_q;

    cycle_t m_now = 0;
    unsigned m_dir = READ;
    bool m_ref_active = false;
    uint32_t m_ref_bank = 0;
    bool m_next_valid = false;
    bool m_stopped = false;
    cycle_t m_next = NEVER;
    // What the last step decided when it stopped at its limit (valid while m_next_valid and nothing but time has
    // changed): activate the due refresh at m_next, issue REFab at m_next, or issue bank m_plan_bank's candidate.
    enum : uint8_t { PLAN_NONE, PLAN_REFRESH, PLAN_REFAB, PLAN_ISSUE };
    uint8_t m_plan = PLAN_NONE;
    uint32_t m_plan_bank = 0;

    // Per bank, the command it would issue next (for the current direction), its class (NO_CLASS: none), its key
    // (rank << 8 | bank: lower is served first among equal cycles) and the bank/group part of its bound. The arrays
    // are padded to a multiple of SCAN_LANES with NO_CLASS entries so that the scan runs in whole blocks.
    static constexpr uint32_t SCAN_LANES = 8;
    static constexpr unsigned FEW_CANDIDATES = 6;  // up to this many, the scan visits the candidates one by one
    std::vector<int32_t> m_req;
    std::vector<command> m_cmd;
    std::vector<uint8_t> m_cls;
    std::vector<uint64_t> m_key;
    std::vector<cycle_t> m_elocal;
    uint32_t m_scan_banks;  // m_banks rounded up to SCAN_LANES
    // The candidate that issues first: the lexicographic minimum over the banks of (earliest legal cycle, key).
    // Returns false when no bank has a candidate (or none can ever issue).
    bool scan(cycle_t& best_t, uint32_t& best_bank) const;
    bank_set m_has;  // banks whose candidate has a class
    bank_set m_dirty;
    std::vector<cycle_t> m_open_since, m_last_use;

    completion_listener* m_listener = nullptr;
    command_observer m_observer;
    pc_counters m_cnt;
};

} // namespace trnsim::hbm
