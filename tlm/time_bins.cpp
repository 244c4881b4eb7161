#include "tlm/time_bins.h"

#include <algorithm>

namespace trnsim::tlmx {

void time_bins::grow(size_t bins) {
    if (m_part.size() < bins) m_part.resize(bins, 0.0), m_step.resize(bins, 0.0);
}

void time_bins::add(uint64_t begin_ps, uint64_t end_ps, double amount) {
    const uint64_t b0 = begin_ps / m_width;
    if (end_ps <= begin_ps || (end_ps - 1) / m_width == b0) {  // inside one bin
        grow(b0 + 1);
        m_part[b0] += amount;
        return;
    }
    const uint64_t b1 = (end_ps - 1) / m_width;
    const double rate = amount / double(end_ps - begin_ps);
    grow(b1 + 2);
    m_part[b0] += rate * double((b0 + 1) * m_width - begin_ps);
    m_part[b1] += rate * double(end_ps - b1 * m_width);
    if (b1 > b0 + 1) m_step[b0 + 1] += rate, m_step[b1] -= rate;  // the whole bins between
}

double time_bins::until(uint64_t t_ps) const {
    const uint64_t full = t_ps / m_width, cut = t_ps % m_width;
    double sum = 0, rate = 0;
    for (uint64_t b = 0; b < std::min<uint64_t>(full, m_part.size()); ++b) {
        rate += m_step[b];
        sum += m_part[b] + rate * double(m_width);
    }
    if (cut && full < m_part.size()) {
        rate += m_step[full];
        sum += m_part[full] * double(cut) / double(m_width) + rate * double(cut);
    }
    return sum;
}

}  // namespace trnsim::tlmx
