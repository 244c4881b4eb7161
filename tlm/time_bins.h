// Amounts spread over time, summed in bins (plain C++): what happened up to a time known only afterwards.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace trnsim::tlmx {

// Amounts spread evenly over time intervals, summed in bins of a fixed width, read as the sum over [0, t) once
// every amount is in. O(1) an add (the rate over whole bins kept as its changes), O(t / width) a read. Exact at bin
// boundaries; a bin cut by t counts its amounts in proportion to the part of it before t.
class time_bins {
public:
    explicit time_bins(uint64_t width_ps = 100000) : m_width(width_ps) {}
    // `amount` spread evenly over [begin_ps, end_ps); all of it at begin_ps when end_ps <= begin_ps.
    void add(uint64_t begin_ps, uint64_t end_ps, double amount);
    double until(uint64_t t_ps) const;

private:
    void grow(size_t bins);
    uint64_t m_width;
    std::vector<double> m_part;  // per bin: the amounts (or parts of amounts) that lie in it, not on a whole bin
    std::vector<double> m_step;  // per bin: the change, at its start, of the rate (amount per ps) over whole bins
};

}  // namespace trnsim::tlmx
