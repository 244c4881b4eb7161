// Statistics primitives: named values with units and descriptions, owned by models, read by writers outside them.
// Plain C++ (no SystemC), no globals: a model owns a stats::group and hands it to whoever reports.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace trnsim::stats {

class visitor;

class stat {
public:
    stat(std::string name, std::string unit, std::string desc)
        : m_name(std::move(name)), m_unit(std::move(unit)), m_desc(std::move(desc)) {}
    virtual ~stat() = default;
    stat(const stat&) = delete;
    stat& operator=(const stat&) = delete;
    const std::string& name() const { return m_name; }
    const std::string& unit() const { return m_unit; }
    const std::string& desc() const { return m_desc; }
    virtual void accept(visitor& v, const std::string& path) const = 0;
    virtual void reset() = 0;

private:
    std::string m_name, m_unit, m_desc;
};

// An accumulating value (event counts, bytes, busy time in ns).
class counter : public stat {
public:
    using stat::stat;
    counter& operator+=(double d) { m_value += d; return *this; }
    counter& operator++() { m_value += 1; return *this; }
    double value() const { return m_value; }
    void set(double v) { m_value = v; }
    void accept(visitor& v, const std::string& path) const override;
    void reset() override { m_value = 0; }

private:
    double m_value = 0;
};

// A value computed when read (bandwidth = bytes / time, utilisation = busy / elapsed).
class formula : public stat {
public:
    formula(std::string name, std::string unit, std::string desc, std::function<double()> f)
        : stat(std::move(name), std::move(unit), std::move(desc)), m_f(std::move(f)) {}
    double value() const { return m_f(); }
    void accept(visitor& v, const std::string& path) const override;
    void reset() override {}

private:
    std::function<double()> m_f;
};

// A distribution of samples: count, mean, min, max and percentiles from fixed-width buckets
// (exact to one bucket width; samples beyond the last bucket are kept in an overflow bucket and in max).
class histogram : public stat {
public:
    histogram(std::string name, std::string unit, std::string desc, double bucket_width, size_t buckets)
        : stat(std::move(name), std::move(unit), std::move(desc)), m_width(bucket_width), m_bins(buckets + 1, 0) {}
    void sample(double x);
    uint64_t count() const { return m_count; }
    double mean() const { return m_count ? m_sum / double(m_count) : 0.0; }
    double min() const { return m_count ? m_min : 0.0; }
    double max() const { return m_count ? m_max : 0.0; }
    // Upper edge of the bucket holding the p-quantile (0 < p <= 1), clamped to max().
    double percentile(double p) const;
    void accept(visitor& v, const std::string& path) const override;
    void reset() override;

private:
    double m_width;
    std::vector<uint64_t> m_bins;
    uint64_t m_count = 0;
    double m_sum = 0, m_min = 0, m_max = 0;
};

// A named group of stats and sub-groups; the path of a stat is the dotted group names plus its own.
class group {
public:
    explicit group(std::string name) : m_name(std::move(name)) {}
    group(const group&) = delete;
    group& operator=(const group&) = delete;
    const std::string& name() const { return m_name; }
    void add(stat& s) { m_stats.push_back(&s); }
    void add(group& g) { m_groups.push_back(&g); }
    void accept(visitor& v, const std::string& prefix = "") const;
    void reset();
    // Looks a value up by its path relative to this group ("core0.te.busy_cycles"); throws if absent.
    double value(const std::string& path) const;
    // Every scalar (counter, formula, histogram count/mean/p50/p99/max) by full path.
    std::map<std::string, double> flatten() const;
    struct meta {
        std::string unit, desc;
    };
    // Unit and description of every path flatten() gives.
    std::map<std::string, meta> describe() const;

private:
    std::string m_name;
    std::vector<stat*> m_stats;
    std::vector<group*> m_groups;
};

class visitor {
public:
    virtual ~visitor() = default;
    virtual void on_value(const std::string& path, const stat& s, double value) = 0;
    virtual void on_histogram(const std::string& path, const histogram& h) = 0;
};

} // namespace trnsim::stats
