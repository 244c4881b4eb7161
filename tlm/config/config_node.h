// Reading JSON config with full key paths in every error, and detection of unknown keys.
//
//   config::node root = config::node::root(json, "trn2.json");
//   auto te = root.child("chip").child("core").child("te");
//   cfg.rows = te.get_uint("rows", te_config::DEFAULT_ROWS, 1, 4096);
//   te.finish();   // throws "chip.core.te.rowz: unknown key (known: rows, cols, ...)"
#pragma once
#include <cstdint>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace trnsim::config {

// Every configuration mistake: the message starts with the key path ("chip.hbm.stacks: ...").
struct config_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

class node {
public:
    // The whole document; `source` names it in messages (a file name or "--set").
    static node root(const nlohmann::json& j, std::string source);
    // An object read as if it stood at key path `path` (for sub-documents assembled by a parser).
    static node at(const nlohmann::json& j, std::string path, std::string source);
    // The JSON object this node reads.
    const nlohmann::json& raw() const { return *m_json; }
    const std::string& source() const { return m_source; }

    const std::string& path() const { return m_path; }
    std::string key_path(const std::string& key) const { return m_path.empty() ? key : m_path + "." + key; }
    bool has(const std::string& key) const;

    // A sub-object; absent keys give an empty object (so every field takes its default).
    node child(const std::string& key) const;
    // The elements of an array of objects (absent = empty).
    std::vector<node> children(const std::string& key) const;
    // The elements of an array of arrays of objects ("key[i][j]" in messages; absent = empty).
    std::vector<std::vector<node>> children2d(const std::string& key) const;

    double get_double(const std::string& key, double def, double lo, double hi) const;
    uint64_t get_uint(const std::string& key, uint64_t def, uint64_t lo, uint64_t hi) const;
    int64_t get_int(const std::string& key, int64_t def, int64_t lo, int64_t hi) const;
    bool get_bool(const std::string& key, bool def) const;
    std::string get_string(const std::string& key, const std::string& def) const;
    // A name or description that reports and listings print: the string with control characters and terminal
    // escapes shown as \xNN (printable()), so a config cannot move the cursor or hide text on a terminal.
    std::string get_label(const std::string& key, const std::string& def) const;
    // A string that must be one of `choices`.
    std::string get_choice(const std::string& key, const std::string& def, const std::vector<std::string>& choices) const;
    std::vector<uint64_t> get_uint_list(const std::string& key, const std::vector<uint64_t>& def, uint64_t lo,
                                        uint64_t hi) const;

    // The value itself, for readers with their own syntax (null if absent; the key counts as known).
    const nlohmann::json* get_raw(const std::string& key) const { return find(key); }

    // Throws for any key of this object that no get/child call asked for.
    void finish() const;

    [[noreturn]] void fail(const std::string& key, const std::string& msg) const;
    // An error about this object as a whole ("cores[0].te[3]: msg (in prog.json)").
    [[noreturn]] void fail_here(const std::string& msg) const;

private:
    node(const nlohmann::json* j, std::string path, std::string source);
    const nlohmann::json* find(const std::string& key) const;

    static const nlohmann::json& empty_object();
    const nlohmann::json* m_json;
    std::string m_path;
    std::string m_source;
    std::shared_ptr<std::set<std::string>> m_used;
};

// A value as it appears in messages: compact JSON, invalid UTF-8 replaced, cut at 80 characters.
std::string show(const nlohmann::json& j);
// An address or size as "0x1f000" (for messages).
std::string show_hex(uint64_t v);
// A whole number written as text (an option, a trace field, an address): decimal digits, or with `hex` also 0x /
// 0X and hex digits; '_' may separate digits. A leading zero is still decimal (never octal). False if the text is
// not such a number (signs, spaces, no digit) or does not fit 64 bits.
bool parse_whole(const std::string& text, uint64_t& v, bool hex);
// Text from an input made safe to print: C0 control characters (ESC, CR, NUL, ...), DEL and the C1 controls
// (U+0080..U+009F, which terminals also obey) shown as \xNN; other UTF-8 kept.
std::string printable(const std::string& s);
// Whether text is valid UTF-8 (JSON strings must be).
bool valid_utf8(const std::string& s);

// Parses JSON text; syntax errors name the source and line:column, a key given twice in one object is an error
// naming its path (JSON itself would silently keep the last one).
nlohmann::json parse_json(const std::string& text, const std::string& source);
// The most levels of arrays and objects a JSON text may nest (deeper is a config_error naming the source, before it
// is parsed: formatting or destroying such a value would recurse past the stack).
constexpr size_t max_json_depth = 256;
// A value given as text on the command line (--set key=TEXT, --fault kind,key=TEXT): true and `out` if TEXT is
// JSON, false if it is not (the caller takes it as a string); a config_error naming `what` if it nests too deep.
bool parse_json_value(const std::string& text, const std::string& what, nlohmann::json& out);
// Reads and parses a file; a missing, unreadable or non-regular file (a directory) is a config_error naming it.
nlohmann::json load_json_file(const std::string& file);

// The names (without .json) of the regular NAME.json files at the top level of `dir`, sorted. Entries whose type
// cannot be read (a looping or dangling symbolic link) are left out: naming one gives load_json_file's error.
std::vector<std::string> json_files_in(const std::string& dir);

// Applies "a.b.c=value" to j (value parsed as JSON if it parses, else taken as a string). Intermediate objects are
// created; a path through a non-object is an error naming the override. A key may index an existing array element,
// "chip.faults[0].kind=slow" (an index past the end is an error naming the override and the array's size).
void apply_override(nlohmann::json& j, const std::string& assignment);

// Merges `over` into `base` recursively (objects merge, everything else replaces).
void merge(nlohmann::json& base, const nlohmann::json& over);

} // namespace trnsim::config
