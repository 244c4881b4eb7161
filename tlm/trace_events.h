// Chrome / Perfetto trace-event JSON ("JSON Object Format": {"traceEvents": [...]}) built from spans on named
// tracks. Plain C++ in picoseconds, no SystemC. A track is a process (pid: a chip) and a name ("core0.te"); spans
// on one track that overlap are packed into lanes (extra threads named "core0.dma_queue0 #2"), so every thread's
// slices nest, as trace viewers require. Size is bounded: spans outside [window_begin, window_end) are skipped,
// and after max_events spans the rest are counted but not kept (the document's otherData says so: "truncated").
#pragma once
#include <cstdint>
#include <limits>
#include <map>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace trnsim::tlmx {

// The "args" object of one event: {"bytes": 4096, "src": "0x1000", ...}.
class trace_args {
public:
    trace_args& num(std::string_view key, double v);
    trace_args& num(std::string_view key, uint64_t v);
    trace_args& hex(std::string_view key, uint64_t v);
    trace_args& str(std::string_view key, std::string_view v);
    const std::string& json() const { return m_s; }  // without braces
    bool empty() const { return m_s.empty(); }

private:
    void key(std::string_view k);
    std::string m_s;
};

// Assigns overlapping spans to the lowest lane whose last span has ended (interval packing). Plain C++.
class lane_packer {
public:
    size_t place(uint64_t begin, uint64_t end);
    size_t lanes() const { return m_end.size(); }

private:
    std::vector<uint64_t> m_end;
};

struct trace_limits {
    uint64_t max_events = 1000000;  // ~130 MB of JSON; a 2048^3 GEMM on trn2 (8 cores) records ~280,000
    uint64_t window_begin_ps = 0;
    uint64_t window_end_ps = std::numeric_limits<uint64_t>::max();
};

class trace_event_writer {
public:
    explicit trace_event_writer(trace_limits lim = {}) : m_lim(lim) {}

    // Names a process (one per chip) and declares a track. Tracks sort by `order` (default: 1000 x declaration
    // number, so a track declared later can be placed between earlier ones); lanes of a track stay together.
    void process(uint32_t pid, std::string_view name);
    size_t track(uint32_t pid, std::string_view name, int64_t order = -1);
    int64_t order_of(size_t track) const { return m_tracks.at(track).order; }
    // A complete span ("ph":"X") on a track. Returns false if it was dropped (outside the window or over budget).
    bool span(size_t track, std::string_view name, std::string_view cat, uint64_t begin_ps, uint64_t end_ps,
              const trace_args& args = {});
    // A counter sample ("ph":"C") drawn as its own track in the process.
    bool counter(uint32_t pid, std::string_view name, uint64_t t_ps, double value);

    uint64_t kept() const { return m_kept; }
    uint64_t dropped() const { return m_dropped; }
    uint64_t outside_window() const { return m_outside; }
    uint64_t max_events() const { return m_lim.max_events; }
    // When the budget ran out: the end of the first span dropped over it (spans are recorded as they end, so the
    // spans ending after it are missing); only meaningful when dropped() > 0.
    uint64_t full_until_ps() const { return m_full_until; }
    uint64_t first_ps() const { return m_first; }
    uint64_t last_ps() const { return m_last; }
    // The whole document; `meta` entries go to "otherData" (with the counts above).
    void write(std::ostream& os, const std::map<std::string, std::string>& meta = {}) const;

private:
    struct track_info {
        uint32_t pid;
        std::string name;
        lane_packer lanes;
        std::vector<uint32_t> tids;  // one per lane
        int64_t order;
    };
    bool admit(uint64_t begin_ps, uint64_t end_ps);
    uint32_t tid_for(track_info& t, size_t lane);

    trace_limits m_lim;
    std::vector<track_info> m_tracks;
    std::map<uint32_t, std::string> m_processes;
    std::string m_events;  // comma-separated event objects
    std::string m_meta;    // thread_name / sort-index metadata events
    uint32_t m_next_tid = 1;
    uint64_t m_kept = 0, m_dropped = 0, m_outside = 0;
    uint64_t m_full_until = 0;
    uint64_t m_first = std::numeric_limits<uint64_t>::max(), m_last = 0;
};

} // namespace trnsim::tlmx
