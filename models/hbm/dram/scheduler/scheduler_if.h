// Request scheduling policy of a pseudo-channel controller. Two decisions, both pure functions of the queue:
//  - pick(): which pending request of one bank the bank should work towards next;
//  - rank(): the priority of the command that request needs, when several commands are legal in the same cycle
//    (lower is served first). The controller adds refresh, which always ranks first.
// Plain C++ (no SystemC).
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "models/hbm/dram/burst_request.h"

namespace trnsim::hbm {

class scheduler_if {
public:
    virtual ~scheduler_if() = default;
    virtual const char* name() const = 0;
    // A request of direction `d` queued for `bank` (the bank has at least one); `open_row` is the row open in the
    // bank or -1.
    virtual int32_t pick(const request_queue& q, unsigned d, uint32_t bank, int64_t open_row) const = 0;
    // Priority of a command for request `r`; `column` = the command is the RD/WR itself (a row hit). Must be below
    // 2^55 (the controller packs it with the bank index).
    virtual uint64_t rank(const burst_request& r, bool column) const = 0;
};

enum class scheduler_kind { fcfs, fr_fcfs };

std::unique_ptr<scheduler_if> make_scheduler(scheduler_kind k);
const char* name(scheduler_kind k);

} // namespace trnsim::hbm
