#include "testbench/tools/sweep/sweep_spec.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "tlm/config/config_node.h"

namespace trnsim::sweep {

using config::config_error;
using nlohmann::json;

namespace {

[[noreturn]] void fail(const std::string& source, const std::string& path, const std::string& msg) {
    throw config_error(path + ": " + msg + " (in " + source + ")");
}

std::string label_of(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

std::vector<assignment> parse_set(const json& j, const std::string& source, const std::string& path) {
    if (!j.is_object()) fail(source, path, "expected an object of \"key.path\": value, got " + j.dump());
    std::vector<assignment> out;
    for (auto it = j.begin(); it != j.end(); ++it) {
        if (it.key().empty() || it.key().front() == '.' || it.key().back() == '.')
            fail(source, path + "." + it.key(), "not a dotted key path");
        if (it.value().is_object() || it.value().is_array() || it.value().is_null())
            fail(source, path + "." + it.key(), "expected a number, string or boolean, got " + it.value().dump());
        out.push_back({it.key(), it.value()});
    }
    return out;
}

// splitmix64: a tiny generator with the same output on every platform (std distributions are not portable).
struct rng {
    uint64_t s;
    uint64_t next() {
        uint64_t z = (s += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    double uniform() { return double(next() >> 11) * (1.0 / 9007199254740992.0); }  // [0, 1)
};

// The most points a sweep may have (each is a process and a row): a larger grid or sample count is a mistake.
constexpr uint64_t MAX_POINTS = 1000000;

json range_value(const axis& a, double u) {
    double v = a.log ? std::exp(std::log(a.lo) + u * (std::log(a.hi) - std::log(a.lo))) : a.lo + u * (a.hi - a.lo);
    if (a.integer) return json(int64_t(std::llround(v)));
    return json(v);
}

} // namespace

std::vector<std::string> point::overrides() const {
    std::vector<std::string> out;
    for (const auto& [k, v] : set)
        if (k.rfind("workload.", 0) != 0) out.push_back(k + "=" + v.dump());
    return out;
}

json point::workload(const spec& s) const {
    json w = s.workload;
    for (const auto& [k, v] : set)
        if (k.rfind("workload.", 0) == 0) w[k.substr(9)] = v;
    return w;
}

json point::inputs(const spec& s) const {
    json in = json::object();
    if (!s.preset.empty()) in["preset"] = s.preset;
    if (!s.config_file.empty()) in["config"] = s.config_file;
    for (const auto& [k, v] : s.base_set) in[k] = v;
    for (const auto& [k, v] : set)
        if (k.rfind("workload.", 0) != 0) in[k] = v;
    json w = workload(s);
    for (auto it = w.begin(); it != w.end(); ++it) in["workload." + it.key()] = it.value();
    for (const auto& [name, label] : labels)
        if (!in.contains(name)) in[name] = label;  // linked axes: their label names the value
    return in;
}

spec parse(const json& j, const std::string& source) {
    if (!j.is_object()) fail(source, "(top level)", "a sweep file is a JSON object");
    static const std::set<std::string> known = {"name", "preset", "config", "set", "workload", "mode", "samples", "seed",
                                                "axes", "description"};
    for (auto it = j.begin(); it != j.end(); ++it)
        if (!known.count(it.key())) fail(source, it.key(), "unknown key (known: name, description, preset, config, set, workload, mode, samples, seed, axes)");
    spec s;
    s.source = j;
    auto str = [&](const char* k, const std::string& def) {
        if (!j.contains(k)) return def;
        if (!j[k].is_string()) fail(source, k, "expected a string, got " + j[k].dump());
        return j[k].get<std::string>();
    };
    s.name = str("name", "sweep");
    // The name becomes a directory, a Slurm job name and log names: one plain word.
    for (char c : s.name)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' || c == '+'))
            fail(source, "name", "'" + s.name + "' may hold only letters, digits and _ - . +");
    if (s.name.empty()) fail(source, "name", "must not be empty");
    s.preset = str("preset", "");
    s.config_file = str("config", "");
    if (!s.preset.empty() && !s.config_file.empty()) fail(source, "config", "give preset or config, not both");
    if (s.preset.empty() && s.config_file.empty()) s.preset = "trn2";
    if (j.contains("set")) s.base_set = parse_set(j["set"], source, "set");
    s.workload = j.value("workload", json::object());
    if (!s.workload.is_object()) fail(source, "workload", "expected an object");
    if (!s.workload.contains("name")) s.workload["name"] = "gemm";
    s.mode = str("mode", "grid");
    if (s.mode != "grid" && s.mode != "random") fail(source, "mode", "'" + s.mode + "' is not one of: grid, random");
    auto uint = [&](const char* k, uint64_t def) {
        if (!j.contains(k)) return def;
        if (!j[k].is_number_unsigned()) fail(source, k, "expected a non-negative whole number, got " + j[k].dump());
        return j[k].get<uint64_t>();
    };
    s.samples = uint("samples", 0);
    if (s.samples > MAX_POINTS) fail(source, "samples", "at most " + std::to_string(MAX_POINTS) + " points, got " + std::to_string(s.samples));
    s.seed = uint("seed", 1);
    if (s.mode == "random" && s.samples == 0) fail(source, "samples", "mode \"random\" needs samples >= 1");
    if (s.mode == "grid" && j.contains("samples")) fail(source, "samples", "only for mode \"random\"");

    const json& axes = j.value("axes", json::array());
    if (!axes.is_array()) fail(source, "axes", "expected an array of axes");
    std::set<std::string> names;
    std::map<std::string, std::string> axis_of_key;  // key path -> the axis that sets it
    uint64_t grid_points = 1;
    for (size_t i = 0; i < axes.size(); ++i) {
        const std::string p = "axes[" + std::to_string(i) + "]";
        const json& aj = axes[i];
        if (!aj.is_object()) fail(source, p, "expected an object");
        for (auto it = aj.begin(); it != aj.end(); ++it)
            if (!std::set<std::string>{"name", "key", "values", "range", "steps", "log", "integer"}.count(it.key()))
                fail(source, p + "." + it.key(), "unknown key (known: name, key, values, range, steps, log, integer)");
        // Typed members, each error naming its key path.
        auto text = [&](const char* k, const std::string& def) {
            if (!aj.contains(k)) return def;
            if (!aj[k].is_string()) fail(source, p + "." + k, "expected a string, got " + aj[k].dump());
            return aj[k].get<std::string>();
        };
        auto flag = [&](const char* k) {
            if (!aj.contains(k)) return false;
            if (!aj[k].is_boolean()) fail(source, p + "." + k, "expected true or false, got " + aj[k].dump());
            return aj[k].get<bool>();
        };
        axis a;
        a.key = text("key", "");
        a.name = text("name", a.key);
        if (a.name.empty()) fail(source, p, "an axis needs a \"key\" or a \"name\"");
        if (!names.insert(a.name).second) fail(source, p + ".name", "axis '" + a.name + "' appears twice");
        if (aj.contains("values") == aj.contains("range")) fail(source, p, "give \"values\" or \"range\" (one of them)");
        if (aj.contains("values")) {
            const json& vs = aj["values"];
            if (!vs.is_array() || vs.empty()) fail(source, p + ".values", "expected a non-empty array");
            for (size_t k = 0; k < vs.size(); ++k) {
                const std::string vp = p + ".values[" + std::to_string(k) + "]";
                axis_value v;
                if (vs[k].is_object()) {
                    for (auto it = vs[k].begin(); it != vs[k].end(); ++it)
                        if (it.key() != "label" && it.key() != "set") fail(source, vp + "." + it.key(), "unknown key (known: label, set)");
                    if (!vs[k].contains("set")) fail(source, vp, "a linked value needs \"set\": {key: value, ...}");
                    v.set = parse_set(vs[k]["set"], source, vp + ".set");
                    if (!a.key.empty()) fail(source, vp, "an axis with \"key\" takes plain values, not objects");
                    if (vs[k].contains("label") && !vs[k]["label"].is_string())
                        fail(source, vp + ".label", "expected a string, got " + vs[k]["label"].dump());
                    v.label = vs[k].value("label", std::to_string(k));
                } else if (vs[k].is_array() || vs[k].is_null()) {
                    fail(source, vp, "expected a number, string, boolean or {label, set}, got " + vs[k].dump());
                } else {
                    if (a.key.empty()) fail(source, vp, "a plain value needs the axis \"key\"");
                    v.set = {{a.key, vs[k]}};
                    v.label = label_of(vs[k]);
                }
                a.values.push_back(std::move(v));
            }
        } else {
            if (a.key.empty()) fail(source, p + ".range", "a range axis needs \"key\"");
            const json& r = aj["range"];
            if (!r.is_array() || r.size() != 2 || !r[0].is_number() || !r[1].is_number())
                fail(source, p + ".range", "expected [low, high], got " + r.dump());
            a.range = true;
            a.lo = r[0].get<double>();
            a.hi = r[1].get<double>();
            a.log = flag("log");
            a.integer = flag("integer");
            if (!(a.lo <= a.hi)) fail(source, p + ".range", "low must not exceed high");
            // Every step must be a number: a width beyond a double's range would make steps infinite (null in
            // JSON, so the point would silently run the default).
            if (!std::isfinite(a.hi - a.lo)) fail(source, p + ".range", "high - low overflows a double (" + r.dump() + ")");
            if (a.integer && !(std::fabs(a.lo) <= 9007199254740992.0 && std::fabs(a.hi) <= 9007199254740992.0))
                fail(source, p + ".range", "an integer range must lie within +-2^53");
            if (a.log && a.lo <= 0) fail(source, p + ".range", "a log range needs low > 0");
            if (s.mode == "grid") {
                if (!aj.contains("steps") || !aj["steps"].is_number_unsigned() || aj["steps"].get<uint64_t>() < 1)
                    fail(source, p + ".steps", "a range axis in grid mode needs steps >= 1");
                const uint64_t n = aj["steps"].get<uint64_t>();
                if (n > MAX_POINTS) fail(source, p + ".steps", "at most " + std::to_string(MAX_POINTS) + ", got " + std::to_string(n));
                for (uint64_t k = 0; k < n; ++k) {
                    json v = range_value(a, n == 1 ? 0.0 : double(k) / double(n - 1));
                    a.values.push_back({label_of(v), {{a.key, v}}});
                }
            } else if (aj.contains("steps")) {
                fail(source, p + ".steps", "only for grid mode (random mode draws from the range)");
            }
        }
        // One key, one axis: two axes setting it would contradict each other in every point they share.
        std::set<std::string> own;
        for (const auto& v : a.values)
            for (const auto& [k, _] : v.set) own.insert(k);
        if (a.range) own.insert(a.key);
        for (const auto& k : own) {
            auto [it, fresh] = axis_of_key.emplace(k, a.name);
            if (!fresh)
                fail(source, p, "key '" + k + "' is set by axis '" + it->second + "' too (one key, one axis)");
        }
        if (s.mode == "grid") {
            grid_points *= a.values.size();  // each factor <= MAX_POINTS and the product kept <= MAX_POINTS: no overflow
            if (grid_points > MAX_POINTS)
                fail(source, p, "the grid has more than " + std::to_string(MAX_POINTS) + " points up to this axis");
        }
        s.axes.push_back(std::move(a));
    }
    return s;
}

std::vector<point> expand(const spec& s) {
    std::vector<point> out;
    auto make = [&](size_t idx) {
        point p;
        p.index = idx;
        char buf[32];
        std::snprintf(buf, sizeof buf, "p%04zu", idx);
        p.id = buf;
        return p;
    };
    if (s.mode == "grid") {
        size_t total = 1;
        for (const auto& a : s.axes) total *= a.values.size();
        for (size_t idx = 0; idx < total; ++idx) {
            point p = make(idx);
            // The last axis varies fastest.
            size_t rest = idx, stride = total;
            for (const auto& a : s.axes) {
                stride /= a.values.size();
                const auto& v = a.values[rest / stride];
                rest %= stride;
                p.set.insert(p.set.end(), v.set.begin(), v.set.end());
                p.labels.push_back({a.name, v.label});
            }
            out.push_back(std::move(p));
        }
        return out;
    }
    rng g{s.seed};
    for (size_t idx = 0; idx < s.samples; ++idx) {
        point p = make(idx);
        for (const auto& a : s.axes) {
            if (a.range) {
                json v = range_value(a, g.uniform());
                p.set.push_back({a.key, v});
                p.labels.push_back({a.name, label_of(v)});
            } else {
                const auto& v = a.values[size_t(g.next() % a.values.size())];
                p.set.insert(p.set.end(), v.set.begin(), v.set.end());
                p.labels.push_back({a.name, v.label});
            }
        }
        out.push_back(std::move(p));
    }
    return out;
}

} // namespace trnsim::sweep
