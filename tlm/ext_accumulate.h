// Payload extension: a WRITE carrying it asks a near-memory-accumulate target (PSUM) to add the data, as FP32
// elements, to what the target holds instead of overwriting it.
#pragma once
#include <tlm>

namespace trnsim::tlmx {

struct ext_accumulate : tlm::tlm_extension<ext_accumulate> {
    tlm::tlm_extension_base* clone() const override { return new ext_accumulate(*this); }
    void copy_from(const tlm::tlm_extension_base&) override {}
};

} // namespace trnsim::tlmx
