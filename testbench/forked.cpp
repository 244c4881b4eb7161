#include "testbench/forked.h"

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "testbench/tools/sweep/process_pool.h"

namespace trnsim::tb {

using json = nlohmann::json;

std::vector<json> run_forked(const std::vector<std::function<json()>>& jobs, unsigned parallel, bool quiet) {
    std::vector<std::string> files(jobs.size());
    std::vector<sweep::task> tasks(jobs.size());
    for (size_t i = 0; i < jobs.size(); ++i) {
        char name[] = "/tmp/trnsim-child-XXXXXX";
        const int fd = mkstemp(name);
        if (fd < 0) {
            for (size_t k = 0; k < i; ++k) std::remove(files[k].c_str());
            throw std::runtime_error("cannot create a temporary file in /tmp for a child simulation");
        }
        close(fd);
        files[i] = name;
        tasks[i].body = [&jobs, &files, i] {
            json j;
            try {
                j = jobs[i]();
            } catch (const std::exception& e) {
                j = json{{"error", e.what()}};
            }
            rusage ru{};
            getrusage(RUSAGE_SELF, &ru);
            j["rss_kib"] = uint64_t(ru.ru_maxrss);
            std::ofstream f(files[i]);
            f << j.dump();
            f.close();
            return f ? 0 : 1;
        };
    }
    sweep::pool_options po;
    po.jobs = std::max(1u, parallel);
    po.progress = quiet ? nullptr : stderr;
    po.tty = isatty(STDERR_FILENO);
    po.label = "simulations";
    po.line_interval_s = 10;  // a log gets a line every 10 s, a terminal a live one
    std::vector<json> out(jobs.size());
    sweep::run_tasks(tasks, po, [&](size_t i, const sweep::task_end& e) {
        std::ifstream f(files[i]);
        std::stringstream ss;
        ss << f.rdbuf();
        std::remove(files[i].c_str());
        out[i] = e.ok() && !ss.str().empty() ? json::parse(ss.str()) : json{{"error", e.describe()}};
        return out[i].contains("error");
    });
    return out;
}

} // namespace trnsim::tb
