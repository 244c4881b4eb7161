#include "tlm/output_file.h"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>

#include <climits>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

namespace trnsim::platform {

namespace fs = std::filesystem;

namespace {

// Where an output named `name` goes. A symbolic link the user named is never replaced: the output goes where the
// link leads.
// - in_place: a device, FIFO or socket (/dev/null, a pipe, /dev/stdout on a terminal), opened by its name;
// - stream: a regular file that is this process's standard output or error, named through a link (/dev/stdout,
//   /proc/self/fd/1 with `> out.txt`): written through that stream, after what the process printed before;
// - replace: anything else, by a temporary renamed over `path`, the end of the name's chain of links (the name
//   itself when it is no link).
struct destination {
    enum kind_t { in_place, stream, replace } kind = replace;
    std::string path;     // replace: the file to rename over; in_place: the name to open
    int stream_fd = -1;   // stream: 1 or 2
    std::string problem;  // a link that cannot be followed: why
};

bool same_inode(const struct stat& a, int fd) {
    struct stat b{};
    return ::fstat(fd, &b) == 0 && S_ISREG(b.st_mode) && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

destination destination_of(const std::string& name) {
    destination d;
    d.path = name;
    struct stat lst{}, st{};
    if (::lstat(name.c_str(), &lst) != 0 || !S_ISLNK(lst.st_mode)) {
        if (::stat(name.c_str(), &st) == 0 && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)))
            d.kind = destination::in_place;
        return d;
    }
    const bool target_exists = ::stat(name.c_str(), &st) == 0;
    if (target_exists && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))) {
        d.kind = destination::in_place;
        return d;
    }
    if (target_exists && S_ISREG(st.st_mode))
        for (const int fd : {1, 2})
            if (same_inode(st, fd)) {
                d.kind = destination::stream;
                d.stream_fd = fd;
                return d;
            }
    // Follow the chain by its text, each relative link against the directory holding it.
    std::string cur = name;
    for (int hops = 0;; ++hops) {
        if (::lstat(cur.c_str(), &lst) != 0 || !S_ISLNK(lst.st_mode)) break;
        if (hops == 40) {
            d.problem = "is a link in a loop of links (or a chain over 40 long)";
            return d;
        }
        std::string to(PATH_MAX, '\0');
        const ssize_t n = ::readlink(cur.c_str(), to.data(), to.size());
        if (n <= 0 || size_t(n) >= to.size()) {
            d.problem = "is a link that cannot be read";
            return d;
        }
        to.resize(size_t(n));
        const fs::path base = fs::path(cur).has_parent_path() ? fs::path(cur).parent_path() : fs::path(".");
        cur = fs::path(to).is_absolute() ? to : (base / to).string();
    }
    // A link the kernel resolves by itself (/proc/self/fd/N) may name no file by its text: the text must lead to
    // the same file the link does, or the output would go somewhere else.
    struct stat end{};
    const bool end_exists = ::stat(cur.c_str(), &end) == 0;
    if (target_exists ? !(end_exists && end.st_dev == st.st_dev && end.st_ino == st.st_ino) : end_exists) {
        d.problem = "is a link to a file that has no name to write it by (" + cur + ")";
        return d;
    }
    d.path = cur;
    return d;
}

} // namespace

std::string output_file_problem(const std::string& name) {
    const fs::path named(name);
    if (name.empty() || named.filename().empty() || named.filename() == "." || named.filename() == "..")
        return "is not a file name";
    const destination d = destination_of(name);
    if (!d.problem.empty()) return d.problem;
    if (d.kind == destination::stream) return {};
    if (d.kind == destination::in_place) return ::access(name.c_str(), W_OK) == 0 ? "" : "is not writable";
    const std::string& file = d.path;
    const std::string via = file == name ? "" : " (where the link " + name + " leads)";
    const fs::path p(file);
    const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) return "directory " + dir.string() + " does not exist" + via;
    if (fs::is_directory(p, ec)) return "is a directory" + via;
    struct stat st{};
    const bool exists = ::stat(file.c_str(), &st) == 0;
    if (::access(dir.c_str(), W_OK) != 0) return "directory " + dir.string() + " is not writable" + via;
    if (exists && ::access(file.c_str(), W_OK) != 0) return "is not writable" + via;
    return {};
}

namespace {

std::string random_suffix() {
    static std::atomic<uint64_t> counter{0};
    static const uint64_t seed = std::random_device{}() ^ (uint64_t(::getpid()) << 32);
    std::mt19937_64 g(seed + counter++ * 0x9e3779b97f4a7c15ull +
                      uint64_t(std::chrono::steady_clock::now().time_since_epoch().count()));
    static const char chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    std::string s;
    for (int i = 0; i < 10; ++i) s += chars[g() % (sizeof chars - 1)];
    return s;
}

// Temporaries to remove when the process is stopped by SIGINT, SIGTERM or SIGHUP (a killed run leaves no hidden
// .FILE.xxxx.tmp behind): fixed slots, so the handler neither allocates nor locks. Files are unlinked first, then
// directories removed. The handlers are installed with the first temporary, only for signals the program leaves at
// their default action; after cleaning up, the signal is raised again with its default action (same exit status).
constexpr int cleanup_slots = 64;
struct cleanup_entry {
    std::atomic<int> state{0};  // 0 free, 1 being filled, 2 armed
    bool dir = false;
    char path[PATH_MAX] = {};
};
cleanup_entry g_cleanup[cleanup_slots];

extern "C" void remove_temporaries_and_reraise(int sig) {
    for (auto& e : g_cleanup)
        if (e.state.load() == 2 && !e.dir) ::unlink(e.path);
    for (auto& e : g_cleanup)
        if (e.state.load() == 2 && e.dir) ::rmdir(e.path);
    ::signal(sig, SIG_DFL);
    ::raise(sig);
}

void install_cleanup_handlers() {
    static std::atomic<bool> installed{false};
    if (installed.exchange(true)) return;
    for (const int sig : {SIGINT, SIGTERM, SIGHUP}) {
        struct sigaction old{};
        if (::sigaction(sig, nullptr, &old) != 0 || old.sa_handler != SIG_DFL) continue;  // the program's own
        struct sigaction sa{};
        sa.sa_handler = remove_temporaries_and_reraise;
        sigemptyset(&sa.sa_mask);
        ::sigaction(sig, &sa, nullptr);
    }
}

// The slot armed for `path`, or -1 (no slot free, or a path too long: then it is not removed on a signal).
int arm_cleanup(const std::string& path, bool dir) {
    if (path.size() >= PATH_MAX) return -1;
    install_cleanup_handlers();
    for (int i = 0; i < cleanup_slots; ++i) {
        int free_slot = 0;
        if (!g_cleanup[i].state.compare_exchange_strong(free_slot, 1)) continue;
        g_cleanup[i].dir = dir;
        std::memcpy(g_cleanup[i].path, path.c_str(), path.size() + 1);
        g_cleanup[i].state.store(2);
        return i;
    }
    return -1;
}

void disarm_cleanup(int& slot) {
    if (slot >= 0) g_cleanup[slot].state.store(0);
    slot = -1;
}

} // namespace

output_file::output_file(std::string target) : m_target(std::move(target)) {
    if (m_target.empty()) throw output_error("cannot write an output file with an empty name");
    const destination d = destination_of(m_target);
    if (!d.problem.empty()) throw output_error("cannot write " + m_target + ": it " + d.problem);
    if (d.kind == destination::stream) {
        // After what the process printed there so far.
        std::cout.flush();
        std::cerr.flush();
        std::fflush(d.stream_fd == 1 ? stdout : stderr);
        m_fd = ::fcntl(d.stream_fd, F_DUPFD_CLOEXEC, 3);
        if (m_fd < 0) fail("cannot write", errno);
        return;
    }
    if (d.kind == destination::in_place) {
        m_fd = ::open(m_target.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
        if (m_fd < 0) fail("cannot write", errno);
        return;
    }
    m_file = d.path;
    const fs::path p(m_file);
    const std::string dir = p.has_parent_path() ? p.parent_path().string() : std::string(".");
    // The temporary's mode is the target's if it exists (an executable script stays executable), else 0666 less umask.
    struct stat st{};
    const bool exists = ::stat(m_file.c_str(), &st) == 0 && S_ISREG(st.st_mode);
    for (int attempt = 0; attempt < 100 && m_fd < 0; ++attempt) {
        // At most 200 bytes of the name, so the temporary of a name near the 255-byte limit is still a name.
        m_tmp = dir + "/." + p.filename().string().substr(0, 200) + "." + random_suffix() + ".tmp";
        m_fd = ::open(m_tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0666);
        if (m_fd < 0 && errno != EEXIST) {
            const int err = errno;
            m_tmp.clear();
            fail("cannot write", err);
        }
    }
    if (m_fd < 0) {
        m_tmp.clear();
        fail("cannot write", EEXIST);
    }
    m_cleanup_slot = arm_cleanup(m_tmp, false);
    if (exists) (void)::fchmod(m_fd, st.st_mode & 07777);
}

output_file::~output_file() { discard(); }

void output_file::fail(const std::string& what, int err) {
    discard();
    throw output_error(what + " " + m_target + ": " + std::strerror(err));
}

void output_file::write(std::string_view data) {
    if (m_fd < 0) throw output_error("cannot write " + m_target + ": already closed");
    while (!data.empty()) {
        const ssize_t n = ::write(m_fd, data.data(), data.size());
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) {  // a non-blocking pipe that is full: wait for the reader
            ::usleep(1000);
            continue;
        }
        if (n <= 0) fail("cannot write", n < 0 ? errno : EIO);
        data.remove_prefix(size_t(n));
    }
}

void output_file::commit() {
    if (m_fd < 0) throw output_error("cannot write " + m_target + ": already closed");
    if (!m_tmp.empty() && ::fsync(m_fd) != 0) fail("cannot write", errno);
    const int fd = m_fd;
    m_fd = -1;
    if (::close(fd) != 0) fail("cannot write", errno);
    if (m_tmp.empty()) return;
    if (::rename(m_tmp.c_str(), m_file.c_str()) != 0) fail("cannot write", errno);
    disarm_cleanup(m_cleanup_slot);
    m_tmp.clear();
}

void output_file::discard() {
    if (m_fd >= 0) ::close(m_fd);
    m_fd = -1;
    if (!m_tmp.empty()) ::unlink(m_tmp.c_str());
    disarm_cleanup(m_cleanup_slot);
    m_tmp.clear();
}

void write_file(const std::string& file, std::string_view text) {
    output_file out(file);
    out.write(text);
    out.commit();
}

// ---- captured_output ----

captured_output::captured_output(std::string target, const std::string& library_suffix, capture_mode mode)
    : m_target(std::move(target)), m_mode(mode), m_out(std::make_unique<output_file>(m_target)) {
    // The private directory lives under $TMPDIR, or /tmp if that cannot hold one.
    const char* t = std::getenv("TMPDIR");
    std::string tmpl;
    for (const std::string& base : {std::string(t && *t ? t : "/tmp"), std::string("/tmp")}) {
        tmpl = base + "/trnsim-XXXXXX";
        if (::mkdtemp(tmpl.data())) break;
        tmpl.clear();
    }
    if (tmpl.empty())
        throw output_error("cannot write " + m_target + ": cannot create a temporary directory in $TMPDIR or /tmp: " +
                           std::strerror(errno));
    m_dir = tmpl;
    m_library_name = m_dir + "/out";
    m_file = m_library_name + library_suffix;
    // What the signal-time cleanup removes: the library's file (and the FST writer's hierarchy spool), then the
    // directory.
    for (const std::string& f : {m_file, m_file + ".hier"}) m_cleanup_slots.push_back(arm_cleanup(f, false));
    m_cleanup_slots.push_back(arm_cleanup(m_dir, true));
    if (m_mode == capture_mode::spool) {
        m_done = true;
        return;
    }
    int fd = -1;
    if (::mkfifo(m_file.c_str(), 0600) == 0) fd = ::open(m_file.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        const int err = errno;
        remove_private_dir();
        throw output_error("cannot write " + m_target + ": cannot create a FIFO in " + m_dir + ": " + std::strerror(err));
    }
    // The read end is open before the library opens the FIFO (so a writer opening it non-blocking finds a reader).
    // Linux reports POLLHUP on a FIFO only once a writer has come and gone, so poll() waits for the first writer.
    m_reader = std::thread([this, fd] {
        char buf[1 << 16];
        while (true) {
            pollfd p{fd, POLLIN, 0};
            if (::poll(&p, 1, -1) < 0) {
                if (errno == EINTR) continue;
                if (m_error.empty()) m_error = "cannot write " + m_target + ": " + std::strerror(errno);
                break;
            }
            const ssize_t n = ::read(fd, buf, sizeof buf);
            if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
            if (n == 0 && !(p.revents & POLLHUP)) continue;
            if (n <= 0) break;  // every writer has closed (or a read error, which cannot happen on a pipe)
            if (!m_error.empty()) continue;  // keep draining so the library's writer never blocks
            try {
                m_out->write(std::string_view(buf, size_t(n)));
            } catch (const std::exception& e) {
                m_error = e.what();
            }
        }
        ::close(fd);
        m_done = true;
    });
}

void captured_output::stop_reader() {
    if (!m_reader.joinable()) return;
    if (!m_done) {  // the library never opened the FIFO: a writer that comes and goes ends the reader's stream
        const int fd = ::open(m_file.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
        if (fd >= 0) ::close(fd);
    }
    m_reader.join();
}

void captured_output::remove_private_dir() {
    if (m_dir.empty()) return;
    ::unlink(m_file.c_str());
    ::unlink((m_file + ".hier").c_str());
    ::rmdir(m_dir.c_str());
    for (int& slot : m_cleanup_slots) disarm_cleanup(slot);
    m_dir.clear();
}

void captured_output::finish(const std::function<std::string(const std::string& file)>& check) {
    stop_reader();
    if (m_mode == capture_mode::spool && m_error.empty()) {
        struct stat st{};
        const std::string why = ::lstat(m_file.c_str(), &st) != 0 || !S_ISREG(st.st_mode)
                                    ? std::string("the writer produced no file")
                                    : check ? check(m_file) : std::string();
        if (!why.empty()) m_error = "cannot write " + m_target + ": " + why;
        std::ifstream in(m_file, std::ios::binary);
        std::vector<char> buf(1 << 20);
        while (m_error.empty() && in) {
            in.read(buf.data(), std::streamsize(buf.size()));
            try {
                m_out->write(std::string_view(buf.data(), size_t(in.gcount())));
            } catch (const std::exception& e) {
                m_error = e.what();
            }
        }
        if (m_error.empty() && in.bad()) m_error = "cannot write " + m_target + ": cannot read back " + m_file;
    }
    remove_private_dir();
    if (!m_error.empty()) {
        m_out->discard();
        throw output_error(m_error);
    }
    m_out->commit();
}

captured_output::~captured_output() {
    stop_reader();
    remove_private_dir();
    m_out->discard();
}

// ---- same_file_problem ----

namespace {

// Identity of a file for comparison: "" for a device, FIFO or what cannot be resolved (left to the other checks).
std::string identity(const std::string& name) {
    const destination d = destination_of(name);
    if (d.kind != destination::replace || !d.problem.empty()) return {};
    const std::string& path = d.path;
    struct stat st{};
    if (::stat(path.c_str(), &st) == 0) {
        if (!S_ISREG(st.st_mode)) return {};
        return "inode " + std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
    }
    const fs::path p(path);
    std::error_code ec;
    const fs::path dir = fs::canonical(p.has_parent_path() ? p.parent_path() : fs::path("."), ec);
    if (ec) return {};
    return "path " + (dir / p.filename()).string();
}

} // namespace

std::string same_file_problem(const std::vector<named_file>& files) {
    std::vector<std::string> ids;
    for (const auto& f : files) ids.push_back(identity(f.path));
    for (size_t j = 0; j < files.size(); ++j)
        for (size_t i = 0; i < j; ++i) {
            if (ids[i].empty() || ids[i] != ids[j] || (!files[i].output && !files[j].output)) continue;
            const named_file& a = files[i].output ? files[i] : files[j];  // an output
            const named_file& b = &a == &files[i] ? files[j] : files[i];
            const std::string what = a.option + " " + a.path + " is the same file as " + b.option + " " + b.path;
            return b.output ? what + ": one output would overwrite the other" : what + ": the run would overwrite its input";
        }
    return {};
}

} // namespace trnsim::platform
