#include "apps/args.h"

#include "platforms/config/platform_config.h"
#include "tlm/config/config_node.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace trnsim::app {

option_set option_set::operator+(const option_set& o) const {
    option_set r = *this;
    r.values.insert(o.values.begin(), o.values.end());
    r.flags.insert(o.flags.begin(), o.flags.end());
    r.multi.insert(o.multi.begin(), o.multi.end());
    return r;
}

namespace {

bool is_number(const std::string& s) {
    char* end = nullptr;
    std::strtod(s.c_str(), &end);
    return !s.empty() && *end == 0;
}

} // namespace

args::args(int argc, char** argv, int first, const option_set& options) {
    const auto& known = options.values;
    const auto& flags = options.flags;
    for (int i = first; i < argc; ++i) {
        std::string a = argv[i];
        if (a.rfind("--", 0) != 0) {
            m_pos.push_back(a);
            continue;
        }
        std::string key = a.substr(2), value;
        bool inline_value = false;
        if (auto eq = key.find('='); eq != std::string::npos) {
            value = key.substr(eq + 1);
            key = key.substr(0, eq);
            inline_value = true;
        }
        if (!known.count(key) && !flags.count(key)) throw usage_error("unknown option --" + key);
        if (flags.count(key)) {
            if (inline_value) throw usage_error("option --" + key + " takes no value");
            m_values[key].push_back("1");
            continue;
        }
        if (!inline_value) {
            if (i + 1 >= argc) throw usage_error("option --" + key + " needs a value");
            value = argv[++i];
            // `--stats --quiet` meant two options, not a file named --quiet.
            if (value.size() > 1 && value[0] == '-' && !is_number(value))
                throw usage_error("option --" + key + " needs a value, got the option '" + value +
                                  "' (write --" + key + "=" + value + " if that is the value)");
        }
        if (m_values.count(key) && !options.multi.count(key)) throw usage_error("option --" + key + " given twice");
        m_values[key].push_back(value);
    }
}

bool wants_help(int argc, char** argv, int first) {
    for (int i = first; i < argc; ++i)
        if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) return true;
    return false;
}

void args::no_positional() const {
    if (!m_pos.empty()) throw usage_error("unexpected argument '" + m_pos[0] + "'");
}

void args::refuse(std::initializer_list<const char*> keys, const std::string& why) const {
    for (const char* k : keys)
        if (has(k)) throw usage_error(std::string("--") + k + " " + why);
}

std::string args::str(const std::string& k, const std::string& def) const {
    auto it = m_values.find(k);
    return it == m_values.end() ? def : it->second.back();
}

uint64_t args::u64(const std::string& k, uint64_t def) const {
    auto it = m_values.find(k);
    if (it == m_values.end()) return def;
    const std::string& s = it->second.back();
    // Decimal, as in --set (a leading zero is not octal: --m 010 is ten).
    uint64_t v = 0;
    if (!config::parse_whole(s, v, /*hex=*/false)) {
        const bool digits = !s.empty() && s.find_first_not_of("0123456789_") == std::string::npos;
        throw usage_error("option --" + k + ": '" + s + "' is not a non-negative whole number" +
                          (digits ? " (above 2^64 - 1)" : s.rfind("0x", 0) == 0 ? " (decimal only)" : ""));
    }
    return v;
}

uint32_t args::u32(const std::string& k, uint32_t def) const {
    const uint64_t v = u64(k, def);
    if (v > 0xFFFFFFFFull) throw usage_error("--" + k + ": " + std::to_string(v) + " is too large");
    return uint32_t(v);
}

double args::num(const std::string& k, double def) const {
    auto it = m_values.find(k);
    if (it == m_values.end()) return def;
    const std::string& s = it->second.back();
    char* end = nullptr;
    double v = std::strtod(s.c_str(), &end);
    if (s.empty() || *end || !std::isfinite(v)) throw usage_error("option --" + k + ": '" + s + "' is not a number");
    return v;
}

double args::num(const std::string& k, double def, double lo, double hi) const {
    const double v = num(k, def);
    if (v < lo || v > hi) {
        char buf[160];
        std::snprintf(buf, sizeof buf, "option --%s: %g is outside %g .. %g", k.c_str(), v, lo, hi);
        throw usage_error(buf);
    }
    return v;
}

const std::vector<std::string>& args::list(const std::string& k) const {
    static const std::vector<std::string> none;
    auto it = m_values.find(k);
    return it == m_values.end() ? none : it->second;
}

std::string args::config_dir() const {
    std::string dir = str("config-dir", platform::default_config_dir());
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec)) throw usage_error("--config-dir " + dir + ": no such directory");
    return dir;
}

} // namespace trnsim::app
