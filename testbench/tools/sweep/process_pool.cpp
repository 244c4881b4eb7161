#include "testbench/tools/sweep/process_pool.h"

#include <chrono>
#include <cmath>
#include <cstring>
#include <exception>
#include <thread>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

namespace trnsim::sweep {

std::string task_end::describe() const {
    if (signal) return "killed by signal " + std::to_string(signal) + " (" + strsignal(signal) + ")";
    return "exit status " + std::to_string(exit_code);
}

std::string clock_text(double s) {
    if (!(s >= 0) || std::isinf(s)) return "?";
    auto t = uint64_t(std::llround(s));
    char buf[32];
    if (t >= 3600) std::snprintf(buf, sizeof buf, "%llu:%02llu:%02llu", (unsigned long long)(t / 3600),
                                 (unsigned long long)(t / 60 % 60), (unsigned long long)(t % 60));
    else std::snprintf(buf, sizeof buf, "%llu:%02llu", (unsigned long long)(t / 60), (unsigned long long)(t % 60));
    return buf;
}

namespace {

void redirect_output(const std::string& file) {
    if (file.empty()) return;
    int fd = open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
        dup2(fd, 1);
        dup2(fd, 2);
        close(fd);
    }
}

// The child of a function task: runs it, flushes what it printed, exits with its result.
[[noreturn]] void run_body(const task& t) {
    redirect_output(t.log_file);
    int rc = 1;
    try {
        rc = t.body();
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s\n", e.what());
    } catch (...) {
        std::fprintf(stderr, "unknown exception\n");
    }
    std::fflush(nullptr);
    _exit(rc);
}

pid_t spawn(const task& t) {
    std::vector<char*> argv;
    for (const auto& a : t.argv) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    std::fflush(nullptr);  // nothing buffered is written twice by the child
    pid_t pid = fork();
    if (pid != 0) return pid;  // parent (or -1)
    if (t.body) run_body(t);
    // Command: its own process group (a Ctrl-C reaches the driver, which stops the children), output to the log.
    setpgid(0, 0);
    redirect_output(t.log_file);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, 0);
    execv(argv[0], argv.data());
    std::fprintf(stderr, "cannot execute %s: %s\n", argv[0], std::strerror(errno));
    _exit(127);
}

} // namespace

size_t run_tasks(const std::vector<task>& tasks, const pool_options& opt,
                 const std::function<bool(size_t, const task_end&)>& on_end) {
    using clock = std::chrono::steady_clock;
    struct running {
        pid_t pid;
        size_t index;
        clock::time_point start;
    };
    const auto t0 = clock::now();
    const size_t total = opt.total ? opt.total : tasks.size();
    std::vector<running> run;
    size_t next = 0, ended = 0, failed = 0;
    bool stopping = false;
    double last_draw = -1;

    auto draw = [&](bool final_line) {
        if (!opt.progress) return;
        const double el = std::chrono::duration<double>(clock::now() - t0).count();
        const size_t done = opt.already_done + ended;
        const size_t left = total > done ? total - done : 0;
        const double eta = ended ? el / double(ended) * double(left) : -1;
        const int width = 30;
        const int fill = total ? int(double(width) * double(done) / double(total)) : width;
        std::string bar(size_t(fill), '#');
        bar += std::string(size_t(width - fill), '.');
        std::fprintf(opt.progress, "%s[%s] %zu/%zu %s, %zu failed, %zu running, elapsed %s, ETA %s%s",
                     opt.tty ? "\r" : "", bar.c_str(), done, total, opt.label.c_str(), failed, run.size(),
                     clock_text(el).c_str(), ended ? clock_text(eta).c_str() : "?",
                     opt.tty ? (final_line ? "\n" : "   ") : "\n");
        std::fflush(opt.progress);
        last_draw = el;
    };

    while (next < tasks.size() || !run.empty()) {
        if (opt.stop && *opt.stop && !stopping) {
            stopping = true;
            for (auto& r : run) kill(tasks[r.index].body ? r.pid : -r.pid, SIGTERM);
        }
        while (!stopping && next < tasks.size() && run.size() < std::max(1u, opt.jobs)) {
            pid_t pid = spawn(tasks[next]);
            if (pid < 0) {
                task_end e;
                e.exit_code = 127;
                ++ended;
                if (on_end(next, e)) ++failed;
            } else {
                if (!tasks[next].body) setpgid(pid, pid);
                run.push_back({pid, next, clock::now()});
            }
            ++next;
            if (opt.tty) draw(false);
        }
        bool reaped = false;
        for (size_t i = 0; i < run.size();) {
            int status = 0;
            pid_t r = waitpid(run[i].pid, &status, WNOHANG);
            if (r == 0) {
                ++i;
                continue;
            }
            task_end e;
            e.wall_s = std::chrono::duration<double>(clock::now() - run[i].start).count();
            if (r < 0) e.exit_code = -1;
            else if (WIFEXITED(status)) e.exit_code = WEXITSTATUS(status);
            else if (WIFSIGNALED(status)) e.signal = WTERMSIG(status);
            const size_t idx = run[i].index;
            run.erase(run.begin() + long(i));
            if (stopping && !e.ok()) continue;  // stopped by us: not an end, the point runs again on resume
            ++ended;
            if (on_end(idx, e)) ++failed;
            reaped = true;
        }
        const double el = std::chrono::duration<double>(clock::now() - t0).count();
        const bool all_ended = next >= tasks.size() && run.empty();
        if (opt.tty ? reaped || el - last_draw > 0.5
                    : reaped && (all_ended || last_draw < 0 || el - last_draw >= opt.line_interval_s))
            draw(false);
        if (next >= tasks.size() || stopping || run.size() >= std::max(1u, opt.jobs))
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        if (stopping && run.empty()) break;
    }
    if (opt.tty) draw(true);
    return ended;
}

} // namespace trnsim::sweep
