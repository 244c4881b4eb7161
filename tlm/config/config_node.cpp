#include "tlm/config/config_node.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <cstdio>
#include <sstream>

namespace trnsim::config {

namespace {
std::string type_name(const nlohmann::json& j) { return j.type_name(); }
} // namespace

std::string show_hex(uint64_t v) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
    return buf;
}

std::string show(const nlohmann::json& j) {
    std::string s = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    if (s.size() > 80) s = s.substr(0, 77) + "...";
    return s;
}

bool parse_whole(const std::string& t, uint64_t& v, bool hex) {
    size_t i = 0;
    uint64_t base = 10;
    if (hex && t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X')) {
        base = 16;
        i = 2;
    }
    v = 0;
    bool digit = false;
    for (; i < t.size(); ++i) {
        const char c = t[i];
        uint64_t d;
        if (c >= '0' && c <= '9') d = uint64_t(c - '0');
        else if (base == 16 && c >= 'a' && c <= 'f') d = uint64_t(c - 'a' + 10);
        else if (base == 16 && c >= 'A' && c <= 'F') d = uint64_t(c - 'A' + 10);
        else if (c == '_' && digit) continue;
        else return false;
        if (v > (~0ull - d) / base) return false;
        v = v * base + d;
        digit = true;
    }
    return digit;
}

bool valid_utf8(const std::string& s) {
    try {
        (void)nlohmann::json(s).dump();
        return true;
    } catch (const nlohmann::json::type_error&) {
        return false;
    }
}

const nlohmann::json& node::empty_object() {
    static const nlohmann::json e = nlohmann::json::object();
    return e;
}

node::node(const nlohmann::json* j, std::string path, std::string source)
    : m_json(j), m_path(std::move(path)), m_source(std::move(source)), m_used(std::make_shared<std::set<std::string>>()) {}

node node::at(const nlohmann::json& j, std::string path, std::string source) {
    node n(&j, std::move(path), std::move(source));
    if (!j.is_object()) throw config_error(n.m_path + ": expected an object, got " + type_name(j));
    return n;
}

node node::root(const nlohmann::json& j, std::string source) {
    node n(&j, "", std::move(source));
    if (!j.is_object()) throw config_error(n.m_source + ": the top level must be a JSON object, not " + type_name(j));
    return n;
}

// Key paths come from the input: control characters (a NUL would cut the message short) are shown escaped.
std::string printable(const std::string& s) {
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
        const unsigned char c = static_cast<unsigned char>(s[i]);
        const bool c1 = c == 0xc2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) >= 0x80 &&
                        static_cast<unsigned char>(s[i + 1]) <= 0x9f;  // U+0080..U+009F in UTF-8
        if (c1) {
            char b[16];
            std::snprintf(b, sizeof b, "\\xc2\\x%02x", static_cast<unsigned char>(s[++i]));
            out += b;
        } else if (c >= 0x20 && c != 0x7f) {
            out += char(c);
        } else {
            char b[8];
            std::snprintf(b, sizeof b, "\\x%02x", c);
            out += b;
        }
    }
    return out;
}

void node::fail(const std::string& key, const std::string& msg) const {
    throw config_error(printable(key_path(key)) + ": " + msg + (m_source.empty() ? "" : " (in " + m_source + ")"));
}

void node::fail_here(const std::string& msg) const {
    throw config_error(printable(m_path.empty() ? m_source : m_path) + ": " + msg +
                       (m_source.empty() || m_path.empty() ? "" : " (in " + m_source + ")"));
}

const nlohmann::json* node::find(const std::string& key) const {
    m_used->insert(key);
    auto it = m_json->find(key);
    if (it == m_json->end() || it->is_null()) return nullptr;
    return &*it;
}

bool node::has(const std::string& key) const { return m_json->contains(key) && !(*m_json)[key].is_null(); }

node node::child(const std::string& key) const {
    const auto* j = find(key);
    if (!j) return node(&empty_object(), key_path(key), m_source);
    if (!j->is_object()) fail(key, "expected an object, got " + type_name(*j));
    return node(j, key_path(key), m_source);
}

std::vector<node> node::children(const std::string& key) const {
    std::vector<node> out;
    const auto* j = find(key);
    if (!j) return out;
    if (!j->is_array()) fail(key, "expected an array, got " + type_name(*j));
    for (size_t i = 0; i < j->size(); ++i) {
        const auto& e = (*j)[i];
        std::string p = key_path(key) + "[" + std::to_string(i) + "]";
        if (!e.is_object()) throw config_error(p + ": expected an object, got " + type_name(e) +
                                               (m_source.empty() ? "" : " (in " + m_source + ")"));
        out.push_back(node(&e, p, m_source));
    }
    return out;
}

std::vector<std::vector<node>> node::children2d(const std::string& key) const {
    std::vector<std::vector<node>> out;
    const auto* j = find(key);
    if (!j) return out;
    if (!j->is_array()) fail(key, "expected an array of arrays, got " + type_name(*j));
    for (size_t i = 0; i < j->size(); ++i) {
        const auto& row = (*j)[i];
        std::string p = key_path(key) + "[" + std::to_string(i) + "]";
        if (!row.is_array()) throw config_error(p + ": expected an array, got " + type_name(row) +
                                                (m_source.empty() ? "" : " (in " + m_source + ")"));
        out.emplace_back();
        for (size_t k = 0; k < row.size(); ++k) {
            const auto& e = row[k];
            std::string q = p + "[" + std::to_string(k) + "]";
            if (!e.is_object()) throw config_error(q + ": expected an object, got " + type_name(e) +
                                                   (m_source.empty() ? "" : " (in " + m_source + ")"));
            out.back().push_back(node(&e, q, m_source));
        }
    }
    return out;
}

double node::get_double(const std::string& key, double def, double lo, double hi) const {
    const auto* j = find(key);
    if (!j) return def;
    if (!j->is_number()) fail(key, "expected a number, got " + type_name(*j) + " " + show(*j));
    double v = j->get<double>();
    if (!(v >= lo && v <= hi)) {
        std::ostringstream os;
        os << "value " << v << " is out of range [" << lo << ", " << hi << "]";
        fail(key, os.str());
    }
    return v;
}

uint64_t node::get_uint(const std::string& key, uint64_t def, uint64_t lo, uint64_t hi) const {
    const auto* j = find(key);
    if (!j) return def;
    if (j->is_number_float()) {
        // Checked before converting: a double outside [0, 2^64) has no uint64 value (undefined behaviour).
        double d = j->get<double>();
        if (d < 0) fail(key, "expected a non-negative whole number, got " + show(*j));
        if (d != std::floor(d)) fail(key, "expected a whole number, got " + show(*j));
        if (d >= 18446744073709551616.0)
            fail(key, "value " + show(*j) + " is out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    } else if (!j->is_number_unsigned()) {
        // -0 is JSON's signed zero: the whole number 0.
        if (j->is_number_integer() && j->get<int64_t>() < 0) fail(key, "expected a non-negative whole number, got " + show(*j));
        if (!j->is_number_integer()) fail(key, "expected a whole number, got " + type_name(*j) + " " + show(*j));
    }
    uint64_t v = j->is_number_float() ? uint64_t(j->get<double>()) : j->is_number_unsigned() ? j->get<uint64_t>() : uint64_t(j->get<int64_t>());
    if (v < lo || v > hi)
        fail(key, "value " + std::to_string(v) + " is out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    return v;
}

int64_t node::get_int(const std::string& key, int64_t def, int64_t lo, int64_t hi) const {
    const auto* j = find(key);
    if (!j) return def;
    if (j->is_number_float() || !j->is_number()) fail(key, "expected a whole number, got " + type_name(*j) + " " + show(*j));
    if (j->is_number_unsigned() && j->get<uint64_t>() > uint64_t(INT64_MAX))
        fail(key, "value " + show(*j) + " is out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    int64_t v = j->get<int64_t>();
    if (v < lo || v > hi)
        fail(key, "value " + std::to_string(v) + " is out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    return v;
}

bool node::get_bool(const std::string& key, bool def) const {
    const auto* j = find(key);
    if (!j) return def;
    if (!j->is_boolean()) fail(key, "expected true or false, got " + show(*j));
    return j->get<bool>();
}

std::string node::get_string(const std::string& key, const std::string& def) const {
    const auto* j = find(key);
    if (!j) return def;
    if (!j->is_string()) fail(key, "expected a string, got " + type_name(*j) + " " + show(*j));
    return j->get<std::string>();
}

std::string node::get_label(const std::string& key, const std::string& def) const {
    return printable(get_string(key, def));
}

std::string node::get_choice(const std::string& key, const std::string& def, const std::vector<std::string>& choices) const {
    std::string v = get_string(key, def);
    for (const auto& c : choices)
        if (c == v) return v;
    std::string list;
    for (const auto& c : choices) list += (list.empty() ? "" : ", ") + c;
    fail(key, "'" + printable(v) + "' is not one of: " + list);
}

std::vector<uint64_t> node::get_uint_list(const std::string& key, const std::vector<uint64_t>& def, uint64_t lo,
                                          uint64_t hi) const {
    const auto* j = find(key);
    if (!j) return def;
    if (!j->is_array()) fail(key, "expected an array of whole numbers, got " + show(*j));
    std::vector<uint64_t> out;
    for (size_t i = 0; i < j->size(); ++i) {
        const auto& e = (*j)[i];
        std::string k = key + "[" + std::to_string(i) + "]";
        if (!e.is_number_unsigned()) fail(k, "expected a non-negative whole number, got " + show(e));
        uint64_t v = e.get<uint64_t>();
        if (v < lo || v > hi)
            fail(k, "value " + std::to_string(v) + " is out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
        out.push_back(v);
    }
    return out;
}

void node::finish() const {
    for (auto it = m_json->begin(); it != m_json->end(); ++it) {
        if (m_used->count(it.key())) continue;
        std::string known;
        for (const auto& k : *m_used) known += (known.empty() ? "" : ", ") + k;
        fail(it.key(), "unknown key" + (known.empty() ? std::string() : " (known here: " + known + ")"));
    }
}

namespace {
// Tracks the objects and arrays being parsed, so a key given twice in one object is reported with its path.
class duplicate_key_check {
public:
    explicit duplicate_key_check(const std::string& source) : m_source(source) {}
    bool operator()(int, nlohmann::json::parse_event_t ev, nlohmann::json& parsed) {
        using ev_t = nlohmann::json::parse_event_t;
        switch (ev) {
        case ev_t::object_start: m_frames.emplace_back(false); break;
        case ev_t::array_start: m_frames.emplace_back(true); break;
        case ev_t::key: {
            auto& f = m_frames.back();
            f.key = parsed.get<std::string>();
            if (!f.keys.insert(f.key).second)
                throw config_error(m_source + ": " + printable(path()) + ": key given twice (JSON keeps only one of them)");
            break;
        }
        case ev_t::value: if (!m_frames.empty() && m_frames.back().array) ++m_frames.back().index; break;
        case ev_t::object_end:
        case ev_t::array_end:
            m_frames.pop_back();
            if (!m_frames.empty() && m_frames.back().array) ++m_frames.back().index;
            break;
        }
        return true;
    }

private:
    struct frame {
        explicit frame(bool a) : array(a) {}
        bool array;
        size_t index = 0;
        std::string key;
        std::set<std::string> keys;
    };
    std::string path() const {
        std::string p;
        for (const auto& f : m_frames) {
            if (f.array) p += "[" + std::to_string(f.index) + "]";
            else p += (p.empty() ? "" : ".") + f.key;
        }
        return p;
    }
    const std::string& m_source;
    std::vector<frame> m_frames;
};
} // namespace

namespace {
// Levels of [ and { outside strings and comments, deepest first reached: throws past max_json_depth.
void check_depth(const std::string& text, const std::string& source) {
    size_t depth = 0, line = 1, col = 0;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        ++col;
        if (c == '\n') { ++line; col = 0; continue; }
        if (c == '"') {
            for (++i; i < text.size() && text[i] != '"'; ++i)
                if (text[i] == '\\') ++i;
            continue;
        }
        if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
            while (i + 1 < text.size() && text[i + 1] != '\n') ++i;
            continue;
        }
        if (c == '/' && i + 1 < text.size() && text[i + 1] == '*') {
            const size_t end = text.find("*/", i + 2);
            for (size_t k = i; k < std::min(end, text.size()); ++k) if (text[k] == '\n') ++line;
            i = end == std::string::npos ? text.size() : end + 1;
            continue;
        }
        if (c == '[' || c == '{') {
            if (++depth > max_json_depth)
                throw config_error(source + ":" + std::to_string(line) + ":" + std::to_string(col) +
                                   ": JSON nested deeper than " + std::to_string(max_json_depth) + " levels");
        } else if ((c == ']' || c == '}') && depth > 0) {
            --depth;
        }
    }
}
} // namespace

bool parse_json_value(const std::string& text, const std::string& what, nlohmann::json& out) {
    check_depth(text, what);
    try {
        out = nlohmann::json::parse(text);
        return true;
    } catch (const nlohmann::json::exception&) {
        return false;
    }
}

nlohmann::json parse_json(const std::string& text, const std::string& source) {
    check_depth(text, source);
    try {
        return nlohmann::json::parse(text, duplicate_key_check(source), true, /*ignore_comments=*/true);
    } catch (const nlohmann::json::parse_error& e) {
        // e.byte is 1-based position of the error; turn it into line:column.
        size_t line = 1, col = 1;
        for (size_t i = 0; i + 1 < e.byte && i < text.size(); ++i) {
            if (text[i] == '\n') { ++line; col = 1; } else { ++col; }
        }
        std::string what = e.what();
        auto pos = what.find("syntax error");
        throw config_error(source + ":" + std::to_string(line) + ":" + std::to_string(col) + ": JSON " +
                           (pos == std::string::npos ? what : what.substr(pos)));
    } catch (const nlohmann::json::exception& e) {
        // Not a syntax error but a value JSON cannot hold (a number overflowing a double); no position is known.
        std::string what = e.what();
        auto pos = what.find("] ");
        throw config_error(source + ": JSON " + (pos == std::string::npos ? what : what.substr(pos + 2)));
    }
}

nlohmann::json load_json_file(const std::string& file) {
    std::error_code ec;
    auto st = std::filesystem::status(file, ec);
    if (ec && ec != std::errc::no_such_file_or_directory) throw config_error(file + ": cannot open file (" + ec.message() + ")");
    if (ec || !std::filesystem::exists(st)) throw config_error(file + ": cannot open file (it does not exist)");
    if (!std::filesystem::is_regular_file(st)) throw config_error(file + ": cannot open file (not a regular file)");
    std::ifstream in(file);
    if (!in) throw config_error(file + ": cannot open file (permission denied?)");
    std::stringstream ss;
    ss << in.rdbuf();
    return parse_json(ss.str(), file);
}

void apply_override(nlohmann::json& j, const std::string& assignment) {
    auto eq = assignment.find('=');
    if (eq == std::string::npos || eq == 0)
        throw config_error("--set " + printable(assignment) + ": expected key.path=value");
    for (unsigned char c : assignment.substr(0, eq))
        if (c < 0x20 || c == 0x7f) throw config_error("--set " + printable(assignment) + ": control character in the key");
    std::string path = assignment.substr(0, eq), text = assignment.substr(eq + 1);
    nlohmann::json value;
    if (!parse_json_value(text, "--set " + printable(path), value)) {
        if (!valid_utf8(text)) throw config_error("--set " + printable(path) + "=...: the value is not valid UTF-8 text");
        value = text;
    }
    // Parts separated by '.', each a key optionally followed by [N] indices.
    nlohmann::json* cur = &j;
    const std::string bad = "--set " + printable(assignment) + ": ";
    size_t start = 0;
    while (true) {
        auto dot = path.find('.', start);
        std::string part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
        std::vector<uint64_t> indices;
        for (auto br = part.find('['); br != std::string::npos; br = part.find('[')) {
            const auto close = part.find(']', br);
            const std::string digits = close == std::string::npos ? "" : part.substr(br + 1, close - br - 1);
            if (digits.empty() || digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos ||
                (close + 1 < part.size() && part[close + 1] != '['))
                throw config_error(bad + "bad index in '" + printable(part) + "' (expected key[N], N a whole number)");
            indices.push_back(std::stoull(digits));
            part.erase(br, close - br + 1);
        }
        if (part.empty()) throw config_error(bad + "empty key in '" + printable(path) + "'");
        if (!cur->is_object())
            throw config_error(bad + "'" + path.substr(0, start ? start - 1 : 0) + "' is not an object");
        const bool last = dot == std::string::npos;
        if (indices.empty() && last) {
            (*cur)[part] = value;
            return;
        }
        cur = &(*cur)[part];
        std::string at = path.substr(0, start) + part;
        for (uint64_t i : indices) {
            if (!cur->is_array())
                throw config_error(bad + "'" + at + "' is not an array (" + (cur->is_null() ? "not set" : cur->type_name()) +
                                   "): an index can only change an element that exists");
            if (i >= cur->size())
                throw config_error(bad + "'" + at + "' has " + std::to_string(cur->size()) + " element" +
                                   (cur->size() == 1 ? "" : "s") + ": no index " + std::to_string(i));
            cur = &(*cur)[size_t(i)];
            at += "[" + std::to_string(i) + "]";
        }
        if (last) {
            *cur = value;
            return;
        }
        if (cur->is_null()) *cur = nlohmann::json::object();
        start = dot + 1;
    }
}

std::vector<std::string> json_files_in(const std::string& dir) {
    std::vector<std::string> out;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
        std::error_code tec;
        if (e.is_regular_file(tec) && !tec && e.path().extension() == ".json") out.push_back(e.path().stem().string());
    }
    std::sort(out.begin(), out.end());
    return out;
}

void merge(nlohmann::json& base, const nlohmann::json& over) {
    if (!base.is_object() || !over.is_object()) {
        base = over;
        return;
    }
    for (auto it = over.begin(); it != over.end(); ++it) {
        if (base.contains(it.key())) merge(base[it.key()], it.value());
        else base[it.key()] = it.value();
    }
}

} // namespace trnsim::config
