// A small command-line reader: --key value / --key=value / --flag, with errors that name the option.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace trnsim::app {

struct usage_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// The options of one command: `values` take a value, `flags` take none, `multi` (of `values`) may repeat.
struct option_set {
    std::set<std::string> values, flags, multi;
    // The union of two sets (a command whose modes share options).
    option_set operator+(const option_set& o) const;
};

class args {
public:
    // Parses argv[first..]. A value that looks like an option (`--stats --quiet`) is an error unless it is a
    // negative number or given inline (--key=--value).
    args(int argc, char** argv, int first, const option_set& options);
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
    // Usage error "unexpected argument 'X'" if there are positional arguments.
    void no_positional() const;
    // An option the chosen mode ignores is an error: usage error "--KEY <why>" for the first of `keys` given.
    void refuse(std::initializer_list<const char*> keys, const std::string& why) const;

private:
    std::map<std::string, std::vector<std::string>> m_values;
    std::vector<std::string> m_pos;
};

// True if argv[first..] asks for help (--help or -h).
bool wants_help(int argc, char** argv, int first);

} // namespace trnsim::app
