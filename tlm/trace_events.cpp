#include "tlm/trace_events.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

namespace trnsim::tlmx {

namespace {
void escape(std::string& out, std::string_view s) {
    for (char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (static_cast<unsigned char>(c) < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out += buf;
        } else {
            out += c;
        }
    }
}
// Trace-event timestamps are microseconds; picosecond resolution needs six decimals.
void micros(std::string& out, uint64_t ps) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%" PRIu64 ".%06" PRIu64, ps / 1000000, ps % 1000000);
    out += buf;
}
} // namespace

void trace_args::key(std::string_view k) {
    if (!m_s.empty()) m_s += ',';
    m_s += '"';
    escape(m_s, k);
    m_s += "\":";
}

trace_args& trace_args::num(std::string_view k, double v) {
    key(k);
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.9g", v);
    m_s += buf;
    return *this;
}

trace_args& trace_args::num(std::string_view k, uint64_t v) {
    key(k);
    m_s += std::to_string(v);
    return *this;
}

trace_args& trace_args::hex(std::string_view k, uint64_t v) {
    key(k);
    char buf[32];
    std::snprintf(buf, sizeof buf, "\"0x%" PRIx64 "\"", v);
    m_s += buf;
    return *this;
}

trace_args& trace_args::str(std::string_view k, std::string_view v) {
    key(k);
    m_s += '"';
    escape(m_s, v);
    m_s += '"';
    return *this;
}

size_t lane_packer::place(uint64_t begin, uint64_t end) {
    for (size_t i = 0; i < m_end.size(); ++i)
        if (m_end[i] <= begin) {
            m_end[i] = end;
            return i;
        }
    m_end.push_back(end);
    return m_end.size() - 1;
}

void trace_event_writer::process(uint32_t pid, std::string_view name) { m_processes[pid] = std::string(name); }

size_t trace_event_writer::track(uint32_t pid, std::string_view name, int64_t order) {
    if (order < 0) order = int64_t(m_tracks.size()) * 1000;
    m_tracks.push_back({pid, std::string(name), {}, {}, order});
    return m_tracks.size() - 1;
}

uint32_t trace_event_writer::tid_for(track_info& t, size_t lane) {
    while (t.tids.size() <= lane) {
        const uint32_t tid = m_next_tid++;
        const size_t l = t.tids.size();
        t.tids.push_back(tid);
        std::string name = t.name + (l ? " #" + std::to_string(l + 1) : "");
        std::string pid = std::to_string(t.pid), ts = std::to_string(tid);
        m_meta += ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":" + pid + ",\"tid\":" + ts + ",\"args\":{\"name\":\"";
        escape(m_meta, name);
        m_meta += "\"}}";
        m_meta += ",\n{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":" + pid + ",\"tid\":" + ts +
                  ",\"args\":{\"sort_index\":" + std::to_string(t.order * 64 + int64_t(l)) + "}}";
    }
    return t.tids[lane];
}

bool trace_event_writer::admit(uint64_t begin_ps, uint64_t end_ps) {
    if (end_ps < m_lim.window_begin_ps || begin_ps >= m_lim.window_end_ps ||
        (end_ps == begin_ps && begin_ps < m_lim.window_begin_ps)) {
        ++m_outside;
        return false;
    }
    if (m_kept >= m_lim.max_events) {
        if (m_dropped++ == 0) m_full_until = end_ps;
        return false;
    }
    ++m_kept;
    m_first = std::min(m_first, begin_ps);
    m_last = std::max(m_last, end_ps);
    if (!m_events.empty()) m_events += ",\n";
    return true;
}

bool trace_event_writer::span(size_t track, std::string_view name, std::string_view cat, uint64_t begin_ps,
                              uint64_t end_ps, const trace_args& args) {
    if (end_ps < begin_ps) end_ps = begin_ps;
    if (!admit(begin_ps, end_ps)) return false;
    track_info& t = m_tracks.at(track);
    const uint32_t tid = tid_for(t, t.lanes.place(begin_ps, end_ps));
    m_events += "{\"name\":\"";
    escape(m_events, name);
    m_events += "\",\"cat\":\"";
    escape(m_events, cat);
    m_events += "\",\"ph\":\"X\",\"pid\":" + std::to_string(t.pid) + ",\"tid\":" + std::to_string(tid) + ",\"ts\":";
    micros(m_events, begin_ps);
    m_events += ",\"dur\":";
    micros(m_events, end_ps - begin_ps);
    if (!args.empty()) m_events += ",\"args\":{" + args.json() + "}";
    m_events += "}";
    return true;
}

bool trace_event_writer::counter(uint32_t pid, std::string_view name, uint64_t t_ps, double value) {
    if (!admit(t_ps, t_ps)) return false;
    m_events += "{\"name\":\"";
    escape(m_events, name);
    m_events += "\",\"ph\":\"C\",\"pid\":" + std::to_string(pid) + ",\"ts\":";
    micros(m_events, t_ps);
    char buf[48];
    std::snprintf(buf, sizeof buf, ",\"args\":{\"value\":%.9g}}", value);
    m_events += buf;
    return true;
}

void trace_event_writer::write(std::ostream& os, const std::map<std::string, std::string>& meta) const {
    os << "{\"displayTimeUnit\":\"ns\",\n\"traceEvents\":[\n";
    std::string procs;
    for (const auto& [pid, name] : m_processes) {
        if (!procs.empty()) procs += ",\n";
        procs += "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":" + std::to_string(pid) + ",\"args\":{\"name\":\"";
        escape(procs, name);
        procs += "\"}}";
    }
    os << procs;
    std::string body = m_meta;
    if (procs.empty() && !body.empty()) body.erase(0, 2);  // leading ",\n"
    os << body;
    if (!m_events.empty()) os << ((procs.empty() && body.empty()) ? "" : ",\n") << m_events;
    os << "\n],\n\"otherData\":{";
    std::string other = "\"events_kept\":\"" + std::to_string(m_kept) + "\",\"events_dropped_over_budget\":\"" +
                        std::to_string(m_dropped) + "\",\"events_outside_window\":\"" + std::to_string(m_outside) + "\"";
    // Truncation in words, for whoever opens the file (Perfetto shows otherData under "metadata").
    other += ",\"truncated\":\"";
    if (m_dropped) {
        char buf[200];
        std::snprintf(buf, sizeof buf, "yes: %llu events over the budget of %llu were dropped; spans ending after %.3f us are missing",
                      (unsigned long long)m_dropped, (unsigned long long)m_lim.max_events, double(m_full_until) / 1e6);
        other += buf;
    } else {
        other += "no";
    }
    other += "\"";
    for (const auto& [k, v] : meta) {
        other += ",\"";
        escape(other, k);
        other += "\":\"";
        escape(other, v);
        other += "\"";
    }
    os << other << "}}\n";
}

} // namespace trnsim::tlmx
