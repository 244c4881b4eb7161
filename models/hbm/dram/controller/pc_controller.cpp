#include "models/hbm/dram/controller/pc_controller.h"

#include <algorithm>
#include <stdexcept>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "models/hbm/dram/scheduler/scheduler_fcfs.h"
#include "models/hbm/dram/scheduler/scheduler_fr_fcfs.h"

namespace trnsim::hbm {

namespace {
constexpr int32_t FOR_REFRESH = -2;  // command issued on behalf of a due refresh
constexpr uint64_t NO_TAG = ~uint64_t(0);
} // namespace

pc_controller::pc_controller(const memspec& m, const controller_config& cfg, uint32_t index, cycle_t refresh_offset)
    : m_spec(m), m_cfg(cfg), m_index(index), m_banks(m.banks_per_pc()), m_sched(make_scheduler(cfg.scheduler)),
      m_page(make_page_policy(cfg.page_policy)), m_refresh(make_refresh(cfg.refresh, m, refresh_offset)),
      m_ref_kind(m_refresh->kind()), m_ref_due(m_refresh->next_due()), m_chk(m),
      m_fsm(m.banks_per_pc()), m_q(m.banks_per_pc(), cfg.read_queue_depth, cfg.write_queue_depth),
      m_req(m_banks, -1), m_cmd(m_banks, command::ACT),
      m_scan_banks((m_banks + SCAN_LANES - 1) / SCAN_LANES * SCAN_LANES), m_open_since(m_banks, 0),
      m_last_use(m_banks, LONG_AGO) {
    m_cls.assign(m_scan_banks, NO_CLASS);
    m_key.assign(m_scan_banks, ~uint64_t(0));
    m_elocal.assign(m_scan_banks, LONG_AGO);
    if (cfg.read_queue_depth < 1 || cfg.write_queue_depth < 1) throw std::invalid_argument("queue depths must be >= 1");
    m_cnt.bank_open_cycles.assign(m_banks, 0);
    m_dirty.set_all(m_banks);
}

bool pc_controller::would_switch_direction() const {
    uint32_t rq = m_q.count(READ), wq = m_q.count(WRITE);
    if (m_dir == READ) return wq > 0 && (wq >= m_cfg.write_high_watermark || rq == 0);
    return wq == 0 || (rq > 0 && wq <= m_cfg.write_low_watermark);
}

void pc_controller::update_direction() {
    if (!would_switch_direction()) return;
    uint32_t rq = m_q.count(READ), wq = m_q.count(WRITE);
    if (m_dir == WRITE && wq == 0 && rq == 0) return;  // nothing queued: stay
    m_dir = m_dir == READ ? WRITE : READ;
    m_dirty.set_all(m_banks);
}

void pc_controller::enqueue(uint64_t tag, bool write, uint32_t bank, uint32_t row, uint32_t column, cycle_t arrival) {
    if (arrival > m_now) advance(arrival);
    if (arrival < m_now) arrival = m_now;
    if (m_q.full(write ? WRITE : READ)) throw std::logic_error("pc_controller::enqueue: queue full");
    burst_request r;
    r.tag = tag;
    r.arrival = arrival;
    r.row = row;
    r.column = column;
    r.bank = uint16_t(bank);
    r.write = write;
    m_q.push(r);
    if (!m_next_valid || would_switch_direction() || (m_ref_active && (m_ref_kind == command::REFAB || bank == m_ref_bank))) {
        m_dirty.set(bank);
        m_next_valid = false;
        m_plan = PLAN_NONE;
        return;
    }
    if ((write ? WRITE : READ) != m_dir) return;  // no effect on the current candidates
    // Keep the cached next-event time: it can only move earlier, to this bank's (possibly new) candidate. The
    // cached decision stays right if it was another bank's command (the new candidate wins only if it is earlier,
    // or as early with a lower key); a decision for this bank or for a refresh is dropped (the next step scans).
    if (m_plan != PLAN_ISSUE || m_plan_bank == bank) m_plan = PLAN_NONE;
    compute_candidate(bank);
    m_dirty.clear(bank);
    if (m_cls[bank] != NO_CLASS) {
        cycle_t e = std::max(std::max(m_elocal[bank], m_chk.pc_bound(timing_checker::cls(m_cls[bank]))), m_now);
        if (m_plan == PLAN_ISSUE && (e < m_next || (e == m_next && m_key[bank] < m_key[m_plan_bank]))) m_plan_bank = bank;
        if (e < m_next) m_next = e;
    }
}

void pc_controller::activate_refresh() {
    m_ref_active = true;
    m_plan = PLAN_NONE;
    if (m_ref_kind == command::REFPB) {
        m_ref_bank = m_refresh->choose_bank(m_fsm, m_q, m_last_use, m_now);
        m_dirty.set(m_ref_bank);
    } else {
        m_dirty.set_all(m_banks);
    }
}

void pc_controller::compute_candidate(uint32_t b) {
    uint8_t cls = NO_CLASS;
    uint64_t rank = 0;
    command cmd = command::ACT;
    int32_t req = -1;
    if (m_ref_active && (m_ref_kind == command::REFAB || b == m_ref_bank)) {
        // A due refresh owns the bank: close it, then (per-bank) refresh it. Ranks first.
        if (m_fsm.is_open(b)) cmd = command::PRE, req = FOR_REFRESH;
        else if (m_ref_kind == command::REFPB) cmd = command::REFPB, req = FOR_REFRESH;
        // else: closed, waiting for the all-bank refresh
    } else if (m_q.in_bank(m_dir, b) > 0) {
        int64_t open = m_fsm.open_row(b);
        // The built-in schedulers are final classes with inline members: call them directly (no virtual call).
        const bool frfcfs = m_cfg.scheduler == scheduler_kind::fr_fcfs;
        if (frfcfs) req = static_cast<const scheduler_fr_fcfs&>(*m_sched).pick(m_q, m_dir, b, open);
        else req = static_cast<const scheduler_fcfs&>(*m_sched).pick(m_q, m_dir, b, open);
        const burst_request& r = m_q.at(req);
        bool column = open == int64_t(r.row);
        cmd = open < 0 ? command::ACT : column ? (r.write ? command::WR : command::RD) : command::PRE;
        rank = 1 + (frfcfs ? static_cast<const scheduler_fr_fcfs&>(*m_sched).rank(r, column)
                           : static_cast<const scheduler_fcfs&>(*m_sched).rank(r, column));
    }
    if (req != -1) cls = uint8_t(timing_checker::class_of(cmd));
    m_cls[b] = cls;
    if (cls != NO_CLASS) m_has.set(b);
    else m_has.clear(b);
    m_key[b] = (rank << 8) | b;
    m_req[b] = req;
    m_cmd[b] = cmd;
    compute_local(b);
}

bool pc_controller::scan(cycle_t& best_t, uint32_t& best_bank) const {
    // Earliest legal cycle of a candidate = max(bank/group bound, pseudo-channel bound of its class, now); the winner
    // is the earliest, ties going to the lower key (better rank). NO_CLASS entries look up NEVER and never win.
    const cycle_t* el = m_elocal.data();
    const uint8_t* cl = m_cls.data();
    const uint64_t* key = m_key.data();
    const uint32_t n = m_scan_banks;
    if (m_has.count() <= FEW_CANDIDATES) {
        // Few candidates (streams keep only a few banks busy): visit just those, in bank order, the same minimum.
        cycle_t be = NEVER;
        uint64_t bk = ~uint64_t(0);
        m_has.for_each([&](uint32_t b) {
            const cycle_t e = std::max(el[b], std::max(m_chk.pc_bound(timing_checker::cls(cl[b])), m_now));
            if (e < be || (e == be && key[b] < bk)) be = e, bk = key[b];
        });
        best_t = be;
        if (be >= NEVER) return false;
        best_bank = uint32_t(bk & 0xff);
        return true;
    }
#if defined(__AVX512F__)
    // Eight banks per instruction: the class bound is a table lookup (permute) of the class index.
    static_assert(SCAN_LANES == 8 && timing_checker::NUM_CLS == 6, "one 8-lane table of class bounds");
    // Built in registers (a table stored and loaded back whole would stall on store forwarding).
    using tc = timing_checker;
    const __m512i pv = _mm512_max_epi64(
        _mm512_set_epi64(NEVER, NEVER, m_chk.pc_bound(tc::C_REFPB), m_chk.pc_bound(tc::C_REFAB), m_chk.pc_bound(tc::C_WR),
                         m_chk.pc_bound(tc::C_RD), m_chk.pc_bound(tc::C_PRE), m_chk.pc_bound(tc::C_ACT)),
        _mm512_set1_epi64(m_now));
    __m512i vmin = _mm512_set1_epi64(NEVER);
    for (uint32_t b = 0; b < n; b += 8) {
        const __m512i c = _mm512_cvtepu8_epi64(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(cl + b)));
        vmin = _mm512_min_epi64(vmin, _mm512_max_epi64(_mm512_loadu_si512(el + b), _mm512_permutexvar_epi64(c, pv)));
    }
    const cycle_t be = _mm512_reduce_min_epi64(vmin);
    best_t = be;
    if (be >= NEVER) return false;
    const __m512i bev = _mm512_set1_epi64(be);
    __m512i kmin = _mm512_set1_epi64(-1);
    for (uint32_t b = 0; b < n; b += 8) {
        const __m512i c = _mm512_cvtepu8_epi64(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(cl + b)));
        const __m512i e = _mm512_max_epi64(_mm512_loadu_si512(el + b), _mm512_permutexvar_epi64(c, pv));
        kmin = _mm512_mask_min_epu64(kmin, _mm512_cmpeq_epi64_mask(e, bev), kmin, _mm512_loadu_si512(key + b));
    }
    const uint64_t bk = _mm512_reduce_min_epu64(kmin);
#else
    cycle_t p[SCAN_LANES];
    for (unsigned k = 0; k < SCAN_LANES; ++k)
        p[k] = k < timing_checker::NUM_CLS ? std::max(m_chk.pc_bound(timing_checker::cls(k)), m_now) : NEVER;
    cycle_t be = NEVER;
    for (uint32_t b = 0; b < n; ++b) be = std::min(be, std::max(el[b], p[cl[b]]));
    best_t = be;
    if (be >= NEVER) return false;
    uint64_t bk = ~uint64_t(0);
    for (uint32_t b = 0; b < n; ++b) bk = std::min(bk, std::max(el[b], p[cl[b]]) == be ? key[b] : ~uint64_t(0));
#endif
    best_bank = uint32_t(bk & 0xff);
    return true;
}

bool pc_controller::step(cycle_t limit, int stop_dir, bool& stopped) {
    if (m_next_valid && m_next >= limit) {  // nothing changed since the last look: skip the scan
        if (limit != NEVER && limit > m_now) m_now = limit;
        return false;
    }
    if (m_next_valid && m_plan != PLAN_NONE) {
        // The last step stopped at its limit with this decision (at m_next >= the cycle it left m_now at) and nothing
        // has changed since but time: moving now up to at most that cycle changes no candidate's earliest cycle
        // (each is max(bounds, now) and all were >= m_next) nor the order among them, so a scan would decide the same.
        const uint8_t plan = m_plan;
        m_plan = PLAN_NONE;
        if (plan == PLAN_REFRESH) {
            if (m_next > m_now) m_now = m_next;
            activate_refresh();
            return true;
        }
        if (plan == PLAN_REFAB) {
            issue(0, FOR_REFRESH, command::REFAB, m_next);
            return true;
        }
        return issue_candidate(m_plan_bank, m_next, stop_dir, stopped);
    }
    update_direction();
    if (!m_ref_active && m_ref_due <= m_now) activate_refresh();

    // Bring the candidates of changed banks up to date.
    const bool refab_due = m_ref_active && m_ref_kind == command::REFAB;
    m_dirty.for_each([&](uint32_t b) { compute_candidate(b); });
    m_dirty.clear_all();

    cycle_t best_t;
    uint32_t best_bank;
    bool have = scan(best_t, best_bank);

    bool refab = false;
    if (refab_due && m_fsm.open_count() == 0) {
        cycle_t e = std::max(m_chk.pc_bound(timing_checker::C_REFAB), m_now);
        if (!have || e < best_t) {
            best_t = e;
            have = refab = true;
        }
    }

    cycle_t t_evt = m_ref_active ? NEVER : m_ref_due;
    if (t_evt != NEVER && t_evt <= best_t) {
        // The next thing to happen is a refresh falling due.
        if (t_evt >= limit) {
            m_next = t_evt;
            m_next_valid = true;
            m_plan = PLAN_REFRESH;
            if (limit != NEVER && limit > m_now) m_now = limit;
            return false;
        }
        if (t_evt > m_now) m_now = t_evt;
        activate_refresh();
        return true;
    }
    if (!have || best_t >= limit) {
        m_next = have ? best_t : NEVER;
        m_next_valid = true;
        m_plan = !have ? PLAN_NONE : refab ? PLAN_REFAB : PLAN_ISSUE;
        m_plan_bank = best_bank;
        if (limit != NEVER && limit > m_now) m_now = limit;
        return false;
    }
    if (refab) {
        issue(0, FOR_REFRESH, command::REFAB, best_t);
        return true;
    }
    return issue_candidate(best_bank, best_t, stop_dir, stopped);
}

bool pc_controller::issue_candidate(uint32_t b, cycle_t t, int stop_dir, bool& stopped) {
    command cmd = m_cmd[b];
    int32_t req = m_req[b];
    bool column = is_column(cmd);
    bool wr = column && m_q.at(req).write;
    issue(b, req, cmd, t);
    if (column && (stop_dir == STOP_ANY || (stop_dir >= 0 && unsigned(stop_dir) == (wr ? WRITE : READ)))) stopped = true;
    return true;
}

void pc_controller::bank_closed(uint32_t b, cycle_t at) {
    if (at > m_open_since[b]) m_cnt.bank_open_cycles[b] += uint64_t(at - m_open_since[b]);
    m_open_since[b] = at;
}

// After an ACT (mask: ACT), RD/RDA (RD) or WR/WRA (WR and RD) to bank b: see the comment inside.
inline void pc_controller::raise_group(uint32_t b, unsigned mask) {
    // A command to bank b changes only bank b's bounds (b is dirty, recomputed at the next step), the pseudo-channel
    // bounds and, for ACT/RD/WR, group bounds of its group: ACT raises the group's ACT bound, RD its RD bound, WR its
    // WR and RD bounds. Bounds only rise, so the cached bank/group bound of another bank of the group whose candidate
    // is of a raised class becomes max(cached, new group bound); no other cached bound changes.
    // Branch-free: a table of the raised group bounds by class (LONG_AGO for the others). Bank b itself is
    // dirty and gets its bound recomputed before the next scan, so raising it too is harmless.
    const uint32_t g = m_chk.bank_group_of(b), n = m_spec.banks_per_group, g0 = g * n;
    auto raised = [&](unsigned k) {
        return ((mask >> k) & 1) ? m_chk.group_bound(timing_checker::cls(k), g) : LONG_AGO;
    };
    const uint8_t* cls = m_cls.data();
    cycle_t* el = m_elocal.data();
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)
    if (n <= 8) {
        static_assert(timing_checker::NUM_CLS == 6, "one 8-lane table of raised bounds");
        const __mmask8 lanes = __mmask8((1u << n) - 1);
        const __m512i c = _mm512_cvtepu8_epi64(_mm_maskz_loadu_epi8(lanes, cls + g0));
        const __m512i tab = _mm512_set_epi64(LONG_AGO, LONG_AGO, raised(5), raised(4), raised(3), raised(2), raised(1),
                                             raised(0));
        const __m512i r = _mm512_permutexvar_epi64(c, tab);
        _mm512_mask_storeu_epi64(el + g0, lanes, _mm512_max_epi64(_mm512_maskz_loadu_epi64(lanes, el + g0), r));
    } else
#endif
    for (uint32_t o = g0; o < g0 + n; ++o)
        if (cls[o] < timing_checker::NUM_CLS) el[o] = std::max(el[o], raised(cls[o]));
}

void pc_controller::issue(uint32_t b, int32_t req, command cmd, cycle_t t) {
    m_now = t;
    m_next_valid = false;
    m_plan = PLAN_NONE;
    uint64_t tag = NO_TAG;
    uint32_t row = 0, col = 0;
    switch (cmd) {
    case command::ACT: {
        burst_request& r = m_q.at(req);
        r.flags |= burst_request::ACTIVATED;
        tag = r.tag;
        row = r.row;
        m_chk.issue_act(b, t);
        raise_group(b, 1u << timing_checker::C_ACT);
        m_fsm.apply(cmd, b, r.row);
        m_open_since[b] = t;
        m_last_use[b] = t;
        break;
    }
    case command::PRE:
        if (req >= 0) {
            m_q.at(req).flags |= burst_request::CONFLICTED;
            tag = m_q.at(req).tag;
        }
        m_chk.issue_pre(b, t);
        m_fsm.apply(cmd, b);
        bank_closed(b, t);
        break;
    case command::RD:
    case command::WR: {
        const burst_request r = m_q.at(req);
        bool ap;
        switch (m_cfg.page_policy) {  // final classes, inline members: direct calls
        case page_policy_kind::closed_adaptive:
            ap = static_cast<const page_policy_closed_adaptive&>(*m_page).auto_precharge(m_q, b, r.row, req);
            break;
        case page_policy_kind::closed: ap = true; break;
        default: ap = static_cast<const page_policy_open&>(*m_page).auto_precharge(m_q, b, r.row, req); break;
        }
        if (ap) cmd = r.write ? command::WRA : command::RDA;
        tag = r.tag;
        row = r.row;
        col = r.column;
        if (r.write) {
            m_chk.issue_wr(b, t, ap);
            raise_group(b, (1u << timing_checker::C_WR) | (1u << timing_checker::C_RD));
        } else {
            m_chk.issue_rd(b, t, ap);
            raise_group(b, 1u << timing_checker::C_RD);
        }
        if (r.flags & burst_request::CONFLICTED) ++m_cnt.row_conflicts;
        else if (r.flags & burst_request::ACTIVATED) ++m_cnt.row_misses;
        else ++m_cnt.row_hits;
        if (r.write) ++m_cnt.write_bursts;
        else ++m_cnt.read_bursts;
        m_q.remove(req);
        m_last_use[b] = t;
        if (ap) {
            m_fsm.apply(cmd, b);
            bank_closed(b, m_chk.auto_precharge_at(b));
        }
        cycle_t done = t + (r.write ? m_spec.tWL : m_spec.tRL) + m_spec.burst_cycles();
        if (m_listener) m_listener->burst_done(r.tag, r.write, r.arrival, done);
        break;
    }
    case command::REFPB:
        m_chk.issue_refpb(b, t);
        m_refresh->issued(t, b);
        m_ref_due = m_refresh->next_due();
        m_ref_active = false;
        break;
    case command::REFAB:
        m_chk.issue_refab(t);
        m_refresh->issued(t, 0);
        m_ref_due = m_refresh->next_due();
        m_ref_active = false;
        m_dirty.set_all(m_banks);
        break;
    default: break;
    }
    ++m_cnt.commands[unsigned(cmd)];
    m_dirty.set(b);
    if (m_observer) m_observer(command_record{m_index, t, cmd, b, row, col, tag});
}

cycle_t pc_controller::advance(cycle_t limit, int stop_dir) {
    m_stopped = false;
    while (true) {
        if (limit == NEVER && m_q.total() == 0) break;
        if (!step(limit, stop_dir, m_stopped) || m_stopped) break;
    }
    return m_now;
}

cycle_t pc_controller::next_event() {
    if (m_q.total() == 0) return NEVER;
    if (!m_next_valid) advance(m_now);
    return m_next;
}

void pc_controller::close_accounting(cycle_t end) {
    for (uint32_t b = 0; b < m_banks; ++b)
        if (m_fsm.is_open(b)) bank_closed(b, end);
}

} // namespace trnsim::hbm
