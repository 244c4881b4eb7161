// Every file the simulator writes goes through here (statistics, timelines, sweep manifests / rows / results, Slurm
// files, VCD waveforms), so that an output can never destroy data:
// - a regular file (or a new one) is written to a unique temporary in the same directory, created exclusively
//   (O_CREAT | O_EXCL | O_NOFOLLOW, a random name: a planted link is never followed, a user's FILE.tmp never
//   touched, two runs writing one output never share a temporary), written, flushed, checked, then renamed over the
//   target: the target holds the old or the whole new content, never a part;
// - a device or FIFO (/dev/null, /dev/stdout, a pipe) is written in place, never replaced;
// - every failure is an exception naming the file and the system's reason ("cannot write x.json: No space left on
//   device").
// Also: whether an output can be written at all (checked before a run), and whether two files named on one command
// line are the same file (an output over an input, two outputs on one file). Plain C++ (POSIX), no SystemC.
#pragma once
#include <atomic>
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
    std::string m_target, m_tmp;  // m_tmp empty: written in place (a device or FIFO)
    int m_fd = -1;
};

// The whole of `text` into `file` through output_file.
void write_file(const std::string& file, std::string_view text);

// For a library that writes a file by name and hides its write errors (SystemC's VCD writer, which also appends
// ".vcd" to the name): it writes into a FIFO in a private temporary directory, a thread copies what arrives into an
// output_file of the real target. finish() after the library has closed its file: commits (or throws the first
// write error); destroyed without finish(), nothing is written.
class captured_output {
public:
    // `library_suffix`: what the library appends to the name it is given (".vcd"). The library must have closed
    // its file before finish() or the destructor.
    captured_output(std::string target, const std::string& library_suffix);
    ~captured_output();
    captured_output(const captured_output&) = delete;
    captured_output& operator=(const captured_output&) = delete;
    // The name to give the library (without the suffix it appends).
    const std::string& library_name() const { return m_library_name; }
    void finish();

private:
    void stop_reader();
    std::string m_target, m_dir, m_fifo, m_library_name;
    std::unique_ptr<output_file> m_out;
    std::string m_error;  // the reader's first write error
    std::atomic<bool> m_done{false};  // the reader has finished
    std::thread m_reader;
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
