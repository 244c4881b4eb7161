#include "tlm/config/preset.h"

#include <algorithm>
#include <filesystem>

#include "tlm/config/config_node.h"

namespace trnsim::config {

// Looping or dangling links are left out of the list (naming one gives the file system's reason when it is read).
std::vector<std::string> list_presets(const std::string& dir) { return json_files_in(dir); }

std::string resolve_preset(const std::string& n, const std::string& dir, const std::string& what,
                           const std::string& relative_to, const std::string& hint) {
    namespace fs = std::filesystem;
    if ((n.size() > 5 && n.compare(n.size() - 5, 5, ".json") == 0) || n.find('/') != std::string::npos) {
        fs::path p(n);
        if (p.is_relative() && !relative_to.empty()) p = fs::path(relative_to).parent_path() / p;
        return p.string();
    }
    fs::path p = fs::path(dir) / (n + ".json");
    std::error_code ec;  // a looping link exists (its reading names the loop); never throws here
    if (!fs::exists(fs::symlink_status(p, ec))) {
        std::string known;
        for (auto& s : list_presets(dir)) known += (known.empty() ? "" : ", ") + s;
        throw config_error("unknown " + what + " '" + n + "' (" + what + "s in " + dir + ": " + known + hint + ")");
    }
    return p.string();
}

} // namespace trnsim::config
