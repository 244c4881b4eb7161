// SystemC signal waveforms of a chip (VCD through sc_trace): per core the Tensor Engine's busy / MATMULs in flight,
// every DMA engine's busy / queue depth / bursts in flight, and the core's semaphores. The models drive these
// signals only when sim.signals is on (trnsim run --vcd sets it).
#pragma once
#include <memory>
#include <string>

#include <systemc>

#include "tlm/output_file.h"
#include "platforms/single_chip/chip.h"

namespace trnsim::tb {

class chip_waves {
public:
    // `file` is the VCD path, written exactly as named (a device or FIFO in place) by close(); the first attach()
    // starts it. Destroyed without close() (an error ended the run), `file` is left as it was.
    explicit chip_waves(const std::string& file);
    ~chip_waves();
    chip_waves(const chip_waves&) = delete;
    chip_waves& operator=(const chip_waves&) = delete;
    // Adds the chip's signals (during elaboration, before time 0); throws std::invalid_argument if the chip was
    // built without sim.signals.
    void attach(const platform::chip& chip);
    // Finishes the file; throws platform::output_error if it could not be written (a full disk).
    void close();

private:
    void close_trace_file();
    std::string m_file;
    std::unique_ptr<platform::captured_output> m_capture;
    sc_core::sc_trace_file* m_tf = nullptr;
};

} // namespace trnsim::tb
