// The run command's observers: --timeline (Perfetto JSON), --vcd (SystemC signal waveforms) and --wave (the RTL
// Tensor Engine's waveforms), attached to the platform through the run driver's hooks and written when the run ends.
#pragma once
#include <memory>
#include <ostream>
#include <string>

#include "apps/args.h"
#include "platforms/cluster/cluster.h"
#include "platforms/config/platform_config.h"
#include "testbench/workloads/gemm/gemm_run.h"
#include "testbench/observe/chip_timeline.h"

namespace trnsim::tb {
class chip_waves;
}

namespace trnsim::app {

class observers {
public:
    // Reads --timeline*, --vcd; usage errors for bad values. --vcd needs sim.signals (set it in cfg before the
    // platform is built: this constructor does).
    // `generator`: the command, recorded in the timeline's metadata.
    observers(const args& a, platform::platform_config& cfg, std::string generator = "trnsim run");
    ~observers();
    void hook(tb::gemm_options& opt);
    // A multi-chip run (run --platform, collective): every full chip attached with its own track group (pid = chip
    // id), each link direction a track in its source chip's group; then finish() once the run has ended (writes the
    // files).
    void attach_platform(platform::multichip_platform& p);
    void finish();
    void report(std::ostream& os) const;    // the files written, after the report
    void warnings(std::ostream& os) const;  // what the reader must not miss (a truncated timeline), before it

private:
    std::string m_timeline_file, m_vcd_file, m_wave_file;
    std::unique_ptr<tb::chip_timeline> m_timeline;
    std::unique_ptr<tb::chip_waves> m_waves;
    std::string m_summary, m_warnings, m_wave_what;
    std::string m_generator;
};

} // namespace trnsim::app
