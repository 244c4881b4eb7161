// Every file the simulator writes goes through here (statistics, timelines, sweep manifests / rows / results, Slurm
// files, VCD and FST waveforms), so that an output can never destroy data:
// - a regular file (or a new one) is written to a unique temporary in the same directory, created exclusively
//   (O_CREAT | O_EXCL | O_NOFOLLOW, a random name: a planted link is never followed, a user's FILE.tmp never
//   touched, two runs writing one output never share a temporary), written, flushed, checked, then renamed over the
//   target: the target holds the old or the whole new content, never a part;
// - a device or FIFO (/dev/null, /dev/stdout, a pipe) is written in place, never replaced;
// - a symbolic link the user named is never replaced: the output goes where it leads (a regular file there is
//   replaced as above, beside itself); a link to the process's own standard output or error that is a regular
//   file (`--stats /dev/stdout > out.txt`) is written through that stream, after what was printed before;
// - a run stopped by SIGINT, SIGTERM or SIGHUP removes its temporaries (SIGKILL cannot be caught: a killed run may
//   leave a .FILE.xxxxxxxxxx.tmp beside FILE, never a damaged FILE);
// - every failure is an exception naming the file and the system's reason ("cannot write x.json: No space left on
//   device").
// Also: whether an output can be written at all (checked before a run), and whether two files named on one command
// line are the same file (an output over an input, two outputs on one file). Plain C++ (POSIX), no SystemC.
#pragma once
#include <atomic>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace trnsim::platform {

// Empty when `file` can be created or overwritten; otherwise why not ("directory out does not exist", ...).
std::string output_file_problem(const std::string& file);

struct output_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// One output being written. The target is replaced only by commit(); destroyed without commit(), the temporary is
// removed and the target left as it was.
class output_file {
public:
    explicit output_file(std::string target);  // throws output_error if the temporary cannot be created
    ~output_file();
    output_file(const output_file&) = delete;
    output_file& operator=(const output_file&) = delete;
    void write(std::string_view data);          // throws output_error (with errno's text)
    void commit();                              // flush, close, rename over the target; throws output_error
    void discard();                             // removes the temporary; the target is untouched
    const std::string& target() const { return m_target; }

private:
    [[noreturn]] void fail(const std::string& what, int err);
    std::string m_target, m_tmp;  // m_tmp empty: written in place (a device, FIFO or standard stream)
    std::string m_file;           // what m_tmp is renamed over: m_target, or where the link m_target leads
    int m_fd = -1;
    int m_cleanup_slot = -1;  // m_tmp's entry for the signal-time cleanup
};

// The whole of `text` into `file` through output_file.
void write_file(const std::string& file, std::string_view text);

// For a library that writes a file by name and hides its write errors (SystemC's and Verilator's VCD writers; SystemC
// also appends ".vcd" to the name; Verilator's FST writer, which also seeks in its file). The library writes into a
// private temporary directory (mkdtemp, mode 0700, under $TMPDIR or /tmp):
// - stream: into a FIFO there; a thread copies what arrives into an output_file of the real target, so every write
//   error is seen;
// - spool (a library that seeks): into a regular file there; finish() checks it with the caller's check (which
//   tells a truncated file: the library ignores "disk full") and copies it into an output_file of the target.
// finish() after the library has closed its file: commits (or throws the first write error or the check's
// complaint); destroyed without finish(), nothing is written and the target is left as it was. The temporaries
// (the output_file's, the directory and what the library leaves in it) are removed on SIGINT, SIGTERM and SIGHUP
// too, unless the program handles those signals itself.
enum class capture_mode { stream, spool };

class captured_output {
public:
    // `library_suffix`: what the library appends to the name it is given (".vcd"). The library must have closed
    // its file before finish() or the destructor.
    captured_output(std::string target, const std::string& library_suffix,
                    capture_mode mode = capture_mode::stream);
    ~captured_output();
    captured_output(const captured_output&) = delete;
    captured_output& operator=(const captured_output&) = delete;
    // The name to give the library (without the suffix it appends).
    const std::string& library_name() const { return m_library_name; }
    const std::string& target() const { return m_target; }
    // `check` (spool mode): "" when the library's file is whole, else what is wrong with it.
    void finish(const std::function<std::string(const std::string& file)>& check = {});

private:
    void stop_reader();
    void remove_private_dir();
    std::string m_target, m_dir, m_file, m_library_name;  // m_file: the FIFO or the spooled file
    capture_mode m_mode;
    std::unique_ptr<output_file> m_out;
    std::string m_error;  // the reader's first write error
    std::atomic<bool> m_done{false};  // the reader has finished
    std::thread m_reader;
    std::vector<int> m_cleanup_slots;  // the private directory's entries for the signal-time cleanup
};

// A file named on the command line (or by a config): the option that named it, its path, and whether it is written.
struct named_file {
    std::string option;  // "--stats", "--config", "chip.core.te.wave", "extends of --config", ...
    std::string path;
    bool output = false;
};

// Empty if no output is the same file as an input or another output; otherwise the message naming both options
// ("--stats x.json is the same file as --config x.json: it would be overwritten"). Compared by identity (device
// and inode for existing files, canonical directory + name for new ones), not by spelling. Devices and FIFOs
// (/dev/null, /dev/stdout) may be named any number of times.
std::string same_file_problem(const std::vector<named_file>& files);

} // namespace trnsim::platform
