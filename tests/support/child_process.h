// SystemC elaborates once per process: a test case that needs a second simulation (a yardstick run on another
// platform, a timing-only twin) runs it in a forked child before this process simulates anything, and gets back
// the one number it produced.
#pragma once
#include <functional>

#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

namespace trnsim::test {

// fn's value as computed in a forked child; -1 if it threw there.
inline double in_child_process(const std::function<double()>& fn) {
    int fd[2];
    REQUIRE(pipe(fd) == 0);
    const pid_t pid = fork();
    if (pid == 0) {
        double t = -1;
        try {
            t = fn();
        } catch (...) {
        }
        (void)!write(fd[1], &t, sizeof t);
        _exit(0);
    }
    double t = -1;
    REQUIRE(read(fd[0], &t, sizeof t) == sizeof t);
    waitpid(pid, nullptr, 0);
    close(fd[0]);
    close(fd[1]);
    return t;
}

}  // namespace trnsim::test
