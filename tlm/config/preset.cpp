#include "tlm/config/preset.h"

#include <algorithm>
#include <filesystem>

#include "tlm/config/config_node.h"

namespace trnsim::config {

std::vector<std::string> list_presets(const std::string& dir) {
    std::vector<std::string> out;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec))
        if (e.is_regular_file() && e.path().extension() == ".json") out.push_back(e.path().stem().string());
    std::sort(out.begin(), out.end());
    return out;
}

std::string resolve_preset(const std::string& n, const std::string& dir, const std::string& what,
                           const std::string& relative_to, const std::string& hint) {
    namespace fs = std::filesystem;
    if ((n.size() > 5 && n.compare(n.size() - 5, 5, ".json") == 0) || n.find('/') != std::string::npos) {
        fs::path p(n);
        if (p.is_relative() && !relative_to.empty()) p = fs::path(relative_to).parent_path() / p;
        return p.string();
    }
    fs::path p = fs::path(dir) / (n + ".json");
    if (!fs::exists(p)) {
        std::string known;
        for (auto& s : list_presets(dir)) known += (known.empty() ? "" : ", ") + s;
        throw config_error("unknown " + what + " '" + n + "' (" + what + "s in " + dir + ": " + known + hint + ")");
    }
    return p.string();
}

} // namespace trnsim::config
