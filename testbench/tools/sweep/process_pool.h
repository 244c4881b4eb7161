// Runs tasks as child processes, at most `jobs` at a time: a command (fork/exec, stdout+stderr to its own log file,
// its own process group) or a function of this program (fork only: a fresh process, e.g. for a fresh SystemC kernel,
// in the caller's process group and output). Reports completions and draws a progress line. Plain POSIX C++.
#pragma once
#include <atomic>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace trnsim::sweep {

struct task {
    std::vector<std::string> argv;  // argv[0] is the executable path
    std::string log_file;           // the command's stdout and stderr (empty: the caller's)
    // When set, the child runs body() instead of executing argv and exits with what it returns (an exception: 1).
    std::function<int()> body;
};

struct task_end {
    int exit_code = -1;  // when exited normally
    int signal = 0;      // when killed by a signal
    double wall_s = 0;
    bool ok() const { return signal == 0 && exit_code == 0; }
    std::string describe() const;  // "exit status 3", "killed by signal 9 (Killed)"
};

struct pool_options {
    unsigned jobs = 1;
    FILE* progress = stderr;  // null: no progress output
    bool tty = false;         // redraw one line (\r) instead of printing a line per completion
    double line_interval_s = 0;  // without tty: at most one line per this many seconds (and the last); 0: every one
    std::string label = "points";
    size_t already_done = 0;  // shown in the totals (resumed sweeps)
    size_t total = 0;         // total points (0: the number of tasks)
    // Set to true (e.g. from a SIGINT handler) to stop starting tasks; running ones get SIGTERM.
    const std::atomic<bool>* stop = nullptr;
};

// Runs every task; on_end(index, end) runs in this process after each task ends and returns whether it counts as a
// failure (for the progress line). Returns the number of tasks that ran to an end (not stopped).
size_t run_tasks(const std::vector<task>& tasks, const pool_options& opt,
                 const std::function<bool(size_t, const task_end&)>& on_end);

// "1:05" / "1:02:03".
std::string clock_text(double seconds);

} // namespace trnsim::sweep
