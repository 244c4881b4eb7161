// A small command-line reader: --key value / --key=value / --flag, with errors that name the option.
#pragma once
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace trnsim::app {

struct usage_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

class args {
public:
    // `flags` take no value; `multi` may repeat (collected in order).
    args(int argc, char** argv, int first, const std::set<std::string>& known, const std::set<std::string>& flags,
         const std::set<std::string>& multi = {});
    bool has(const std::string& k) const { return m_values.count(k) > 0; }
    std::string str(const std::string& k, const std::string& def) const;
    uint64_t u64(const std::string& k, uint64_t def) const;
    uint32_t u32(const std::string& k, uint32_t def) const;  // the same, at most 2^32 - 1
    double num(const std::string& k, double def) const;
    // The same, within [lo, hi] (usage error naming the option and the range otherwise).
    double num(const std::string& k, double def, double lo, double hi) const;
    // --wall-limit SECONDS: 0 (the default) = no limit, else at most 1e9 s.
    double wall_limit_s() const { return num("wall-limit", 0, 0, 1e9); }
    // --config-dir (default: the built-in presets), which must be a directory.
    std::string config_dir() const;
    const std::vector<std::string>& list(const std::string& k) const;
    const std::vector<std::string>& positional() const { return m_pos; }

private:
    std::map<std::string, std::vector<std::string>> m_values;
    std::vector<std::string> m_pos;
};

} // namespace trnsim::app
