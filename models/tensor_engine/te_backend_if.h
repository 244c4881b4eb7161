// The interface of a Tensor Engine compute back end (the C++ model te_backend_model, the Verilated RTL
// te_backend_rtl): the Tensor Engine hands it one te_job per MATMUL.
#pragma once
#include "models/tensor_engine/te_job.h"

namespace trnsim::te {

// A compute back end. submit() is called from a SystemC thread; it may wait() to model back-pressure (the weight
// buffer is busy) and returns once the job is accepted. The job's on_done fires at its completion time.
class te_backend_if {
public:
    virtual ~te_backend_if() = default;
    virtual void submit(te_job&& job) = 0;
};

} // namespace trnsim::te
