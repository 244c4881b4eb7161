#include "tlm/stats.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace trnsim::stats {

void counter::accept(visitor& v, const std::string& path) const { v.on_value(path, *this, m_value); }
void formula::accept(visitor& v, const std::string& path) const { v.on_value(path, *this, m_f()); }

void histogram::sample(double x) {
    if (m_count == 0) {
        m_min = m_max = x;
    } else {
        m_min = std::min(m_min, x);
        m_max = std::max(m_max, x);
    }
    ++m_count;
    m_sum += x;
    double b = x <= 0 ? 0.0 : std::floor(x / m_width);
    size_t i = b >= double(m_bins.size() - 1) ? m_bins.size() - 1 : size_t(b);
    ++m_bins[i];
}

double histogram::percentile(double p) const {
    if (m_count == 0) return 0.0;
    auto target = uint64_t(std::ceil(p * double(m_count)));
    if (target == 0) target = 1;
    uint64_t seen = 0;
    for (size_t i = 0; i < m_bins.size(); ++i) {
        seen += m_bins[i];
        if (seen >= target) return i + 1 == m_bins.size() ? m_max : std::min(m_max, double(i + 1) * m_width);
    }
    return m_max;
}

void histogram::accept(visitor& v, const std::string& path) const { v.on_histogram(path, *this); }

void histogram::reset() {
    std::fill(m_bins.begin(), m_bins.end(), 0);
    m_count = 0;
    m_sum = m_min = m_max = 0;
}

void group::accept(visitor& v, const std::string& prefix) const {
    std::string base = prefix.empty() ? m_name : prefix + "." + m_name;
    for (auto* s : m_stats) s->accept(v, base + "." + s->name());
    for (auto* g : m_groups) g->accept(v, base);
}

void group::reset() {
    for (auto* s : m_stats) s->reset();
    for (auto* g : m_groups) g->reset();
}

namespace {
struct flattener : visitor {
    std::map<std::string, double> out;
    void on_value(const std::string& path, const stat&, double value) override { out[path] = value; }
    void on_histogram(const std::string& path, const histogram& h) override {
        out[path + ".count"] = double(h.count());
        out[path + ".mean"] = h.mean();
        out[path + ".p50"] = h.percentile(0.5);
        out[path + ".p99"] = h.percentile(0.99);
        out[path + ".max"] = h.max();
    }
};
} // namespace

namespace {
struct describer : visitor {
    std::map<std::string, group::meta> out;
    void on_value(const std::string& path, const stat& s, double) override { out[path] = {s.unit(), s.desc()}; }
    void on_histogram(const std::string& path, const histogram& h) override {
        out[path + ".count"] = {"count", h.desc() + " (samples)"};
        for (const char* q : {"mean", "p50", "p99", "max"}) out[path + "." + q] = {h.unit(), h.desc() + " (" + q + ")"};
    }
};
} // namespace

std::map<std::string, group::meta> group::describe() const {
    describer d;
    accept(d);
    return std::move(d.out);
}

std::map<std::string, double> group::flatten() const {
    flattener f;
    accept(f);
    return std::move(f.out);
}

double group::value(const std::string& path) const {
    auto all = flatten();
    auto it = all.find(m_name + "." + path);
    if (it == all.end()) throw std::out_of_range("no statistic '" + m_name + "." + path + "'");
    return it->second;
}

} // namespace trnsim::stats
