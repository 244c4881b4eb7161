#include "models/dma/dma_descriptor.h"

#include <algorithm>
#include <cstdio>
#include <limits>

namespace trnsim::dma {

namespace {
__extension__ typedef __int128 i128;
// Lowest and highest byte address touched along one base + strides walk; false if it wraps.
bool extent(uint64_t base, int64_t row_stride, int64_t plane_stride, const dma_descriptor& d, uint64_t& lo, uint64_t& hi) {
    i128 l = base, h = base;
    i128 last_row = i128(row_stride) * (d.rows - 1), last_plane = i128(plane_stride) * (d.planes - 1);
    l += std::min<i128>(0, last_row) + std::min<i128>(0, last_plane);
    h += std::max<i128>(0, last_row) + std::max<i128>(0, last_plane) + i128(d.row_bytes) - 1;
    if (l < 0 || h > i128(std::numeric_limits<uint64_t>::max())) return false;
    lo = uint64_t(l);
    hi = uint64_t(h);
    return true;
}
} // namespace

std::string validate(const dma_descriptor& d) {
    if (d.row_bytes == 0) return "row_bytes is 0 (zero-length transfer)";
    if (d.rows == 0) return "rows is 0 (zero-length transfer)";
    if (d.planes == 0) return "planes is 0 (zero-length transfer)";
    uint64_t lo, hi;
    if (!extent(d.src, d.src_stride, d.src_plane_stride, d, lo, hi)) return "source addresses wrap around 2^64";
    if (!extent(d.dst, d.dst_stride, d.dst_plane_stride, d, lo, hi)) return "destination addresses wrap around 2^64";
    if (d.rows > 1 && uint64_t(d.dst_stride < 0 ? -d.dst_stride : d.dst_stride) < d.row_bytes)
        return "destination rows overlap (|dst_stride| " + std::to_string(d.dst_stride) + " < row_bytes " +
               std::to_string(d.row_bytes) + ")";
    return {};
}

void for_each_burst(const dma_descriptor& d, uint64_t max_burst,
                    const std::function<void(uint64_t, uint64_t, uint64_t)>& fn) {
    for (uint32_t p = 0; p < d.planes; ++p)
        for (uint32_t r = 0; r < d.rows; ++r) {
            uint64_t s = d.src + uint64_t(int64_t(p) * d.src_plane_stride + int64_t(r) * d.src_stride);
            uint64_t t = d.dst + uint64_t(int64_t(p) * d.dst_plane_stride + int64_t(r) * d.dst_stride);
            for (uint64_t off = 0; off < d.row_bytes;) {
                uint64_t len = std::min(d.row_bytes - off, max_burst - (t + off) % max_burst);
                fn(s + off, t + off, len);
                off += len;
            }
        }
}

uint64_t burst_count(const dma_descriptor& d, uint64_t max_burst) {
    uint64_t n = 0;
    for_each_burst(d, max_burst, [&](uint64_t, uint64_t, uint64_t) { ++n; });
    return n;
}

std::vector<std::pair<uint32_t, dma_descriptor>> split_across_engines(const dma_descriptor& d, uint32_t engines,
                                                                      uint64_t granule) {
    std::vector<std::pair<uint32_t, dma_descriptor>> out;
    if (engines <= 1) {
        out.emplace_back(0, d);
        return out;
    }
    if (d.rows == 1 && d.planes == 1) {
        uint64_t granules = (d.row_bytes + granule - 1) / granule;
        uint64_t per = (granules + engines - 1) / engines * granule;
        for (uint32_t e = 0; e < engines && uint64_t(e) * per < d.row_bytes; ++e) {
            dma_descriptor p = d;
            p.src += e * per;
            p.dst += e * per;
            p.row_bytes = std::min(per, d.row_bytes - e * per);
            out.emplace_back(e, p);
        }
        return out;
    }
    for (uint32_t e = 0; e < engines && e < d.rows; ++e) {
        dma_descriptor p = d;
        p.src += uint64_t(int64_t(e) * d.src_stride);
        p.dst += uint64_t(int64_t(e) * d.dst_stride);
        p.rows = (d.rows - e + engines - 1) / engines;
        p.src_stride = d.src_stride * engines;
        p.dst_stride = d.dst_stride * engines;
        out.emplace_back(e, p);
    }
    return out;
}

std::string to_string(const dma_descriptor& d) {
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "{src 0x%llx, dst 0x%llx, %llu B x %u rows x %u planes, strides src %lld dst %lld, plane strides "
                  "src %lld dst %lld}",
                  (unsigned long long)d.src, (unsigned long long)d.dst, (unsigned long long)d.row_bytes, d.rows,
                  d.planes, (long long)d.src_stride, (long long)d.dst_stride, (long long)d.src_plane_stride,
                  (long long)d.dst_plane_stride);
    return buf;
}

} // namespace trnsim::dma
