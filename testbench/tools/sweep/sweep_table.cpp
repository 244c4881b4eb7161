#include "testbench/tools/sweep/sweep_table.h"

#include <set>

namespace trnsim::sweep {

using nlohmann::json;

std::vector<std::string> columns(const std::vector<json>& rows) {
    std::vector<std::string> cols = {"id", "status", "error"};
    std::set<std::string> seen(cols.begin(), cols.end());
    for (const char* part : {"inputs", "outputs"})
        for (const auto& r : rows) {
            if (!r.contains(part)) continue;
            for (auto it = r[part].begin(); it != r[part].end(); ++it)
                if (seen.insert(it.key()).second) cols.push_back(it.key());
        }
    return cols;
}

namespace {
json cell(const json& r, const std::string& c) {
    if (c == "id" || c == "status" || c == "error") return r.value(c, json());
    for (const char* part : {"inputs", "outputs"})
        if (r.contains(part) && r[part].contains(c)) return r[part][c];
    return json();
}
std::string csv_field(const json& v) {
    if (v.is_null()) return "";
    std::string s = v.is_string() ? v.get<std::string>() : v.dump();
    if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
    std::string q = "\"";
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
}
} // namespace

json to_json(const std::vector<json>& rows) {
    auto cols = columns(rows);
    json out = json::array();
    for (const auto& r : rows) {
        json o = json::object();
        for (const auto& c : cols) o[c] = cell(r, c);
        out.push_back(std::move(o));
    }
    return out;
}

std::string to_csv(const std::vector<json>& rows) {
    auto cols = columns(rows);
    std::string s;
    for (size_t i = 0; i < cols.size(); ++i) s += (i ? "," : "") + csv_field(json(cols[i]));
    s += "\n";
    for (const auto& r : rows) {
        for (size_t i = 0; i < cols.size(); ++i) s += (i ? "," : "") + csv_field(cell(r, cols[i]));
        s += "\n";
    }
    return s;
}

} // namespace trnsim::sweep
