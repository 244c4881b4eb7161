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

// Whether the rows [o, o + row_bytes) at offsets o = p * plane_stride + r * row_stride (p < planes, r < rows) are
// pairwise disjoint: every difference dp * P + dr * S of two distinct offsets is at least row_bytes in magnitude.
// Walks the shorter of the two dimensions and, for each step of it, the closest point along the other.
bool rows_disjoint(uint64_t row_bytes, uint64_t rows, int64_t row_stride, uint64_t planes, int64_t plane_stride) {
    if (rows > planes) {
        std::swap(rows, planes);
        std::swap(row_stride, plane_stride);
    }
    const i128 rb = i128(row_bytes), S = row_stride, P = plane_stride;
    auto abs128 = [](i128 v) { return v < 0 ? -v : v; };
    // Differences within one "row" line (dr = 0): multiples of P.
    if (planes > 1 && abs128(P) < rb) return false;
    for (uint64_t dr = 1; dr < rows; ++dr) {
        // |dr * S + dp * P| over dp in [-(planes - 1), planes - 1]: smallest near dp = -dr * S / P.
        const i128 base = i128(dr) * S, lim = i128(planes) - 1;
        if (P == 0 || lim == 0) {
            if (abs128(base) < rb) return false;
            continue;
        }
        i128 q = -base / P;  // truncated; check q - 1, q, q + 1 clamped to the range
        for (i128 dp = q - 1; dp <= q + 1; ++dp) {
            i128 c = std::max(-lim, std::min(lim, dp));
            if (abs128(base + c * P) < rb) return false;
        }
    }
    return true;
}

bool contiguous(const dma_descriptor& d, int64_t stride, int64_t plane_stride) {
    return (d.rows == 1 || uint64_t(stride) == d.row_bytes) &&
           (d.planes == 1 || uint64_t(plane_stride) == d.row_bytes * d.rows);
}
} // namespace

std::string validate(const dma_descriptor& d, uint64_t align) {
    if (d.row_bytes == 0) return "row_bytes is 0 (zero-length transfer)";
    if (d.rows == 0) return "rows is 0 (zero-length transfer)";
    if (d.planes == 0) return "planes is 0 (zero-length transfer)";
    if (uint64_t(d.rows) * d.planes > MAX_TOTAL_ROWS)
        return "rows x planes = " + std::to_string(uint64_t(d.rows) * d.planes) + " exceeds the limit of 2^32 rows";
    if (align > 1) {
        auto misaligned = [&](const char* what, uint64_t v) {
            char b[160];
            std::snprintf(b, sizeof b, "%s %lld (0x%llx) is not a multiple of the %llu-byte DMA alignment", what,
                          (long long)v, (unsigned long long)v, (unsigned long long)align);
            return std::string(b);
        };
        if (d.src % align) return misaligned("src", d.src);
        if (d.dst % align) return misaligned("dst", d.dst);
        if (d.row_bytes % align) return misaligned("row_bytes", d.row_bytes);
        if (d.rows > 1 && uint64_t(d.src_stride) % align) return misaligned("src_stride", uint64_t(d.src_stride));
        if (d.rows > 1 && uint64_t(d.dst_stride) % align) return misaligned("dst_stride", uint64_t(d.dst_stride));
        if (d.planes > 1 && uint64_t(d.src_plane_stride) % align)
            return misaligned("src_plane_stride", uint64_t(d.src_plane_stride));
        if (d.planes > 1 && uint64_t(d.dst_plane_stride) % align)
            return misaligned("dst_plane_stride", uint64_t(d.dst_plane_stride));
    }
    if (d.control && (d.total_bytes() > CONTROL_BYTES || d.reduce))
        return "a control write moves at most " + std::to_string(CONTROL_BYTES) + " bytes and accumulates nothing (it has " +
               std::to_string(d.total_bytes()) + " bytes" + (d.reduce ? ", accumulating)" : ")");
    if (d.reduce) {
        const uint64_t es = numerics::size_of(*d.reduce);
        const std::string t(numerics::name_of(*d.reduce));
        auto whole = [&](const char* what, uint64_t v) {
            return what + std::string(" ") + std::to_string(int64_t(v)) + " is not a whole number of " + t +
                   " elements (" + std::to_string(es) + " bytes) in an accumulating copy";
        };
        if (d.src % es) return whole("src", d.src);
        if (d.dst % es) return whole("dst", d.dst);
        if (d.row_bytes % es) return whole("row_bytes", d.row_bytes);
        if (d.rows > 1 && uint64_t(d.src_stride) % es) return whole("src_stride", uint64_t(d.src_stride));
        if (d.rows > 1 && uint64_t(d.dst_stride) % es) return whole("dst_stride", uint64_t(d.dst_stride));
        if (d.planes > 1 && uint64_t(d.src_plane_stride) % es) return whole("src_plane_stride", uint64_t(d.src_plane_stride));
        if (d.planes > 1 && uint64_t(d.dst_plane_stride) % es) return whole("dst_plane_stride", uint64_t(d.dst_plane_stride));
        if (d.checksum) return "an accumulating copy carries no checksum (its destination's data changes)";
    }
    uint64_t slo, shi, dlo, dhi;
    if (!extent(d.src, d.src_stride, d.src_plane_stride, d, slo, shi)) return "source addresses wrap around 2^64";
    if (!extent(d.dst, d.dst_stride, d.dst_plane_stride, d, dlo, dhi)) return "destination addresses wrap around 2^64";
    if (d.rows > 1 && uint64_t(d.dst_stride < 0 ? -i128(d.dst_stride) : i128(d.dst_stride)) < d.row_bytes)
        return "destination rows overlap (|dst_stride| " + std::to_string(d.dst_stride) + " < row_bytes " +
               std::to_string(d.row_bytes) + ")";
    if (!rows_disjoint(d.row_bytes, d.rows, d.dst_stride, d.planes, d.dst_plane_stride))
        return "destination rows of different planes overlap (dst_plane_stride " + std::to_string(d.dst_plane_stride) +
               " with dst_stride " + std::to_string(d.dst_stride) + ", " + std::to_string(d.rows) + " rows of " +
               std::to_string(d.row_bytes) + " bytes)";
    if (contiguous(d, d.src_stride, d.src_plane_stride) && contiguous(d, d.dst_stride, d.dst_plane_stride) &&
        slo <= dhi && dlo <= shi)
        return "source and destination overlap (an in-place copy: the result would depend on burst order)";
    return {};
}

void for_each_burst(const dma_descriptor& d, uint64_t max_burst,
                    const std::function<void(uint64_t, uint64_t, uint64_t)>& fn) {
    for (uint32_t p = 0; p < d.planes; ++p)
        for (uint32_t r = 0; r < d.rows; ++r) {
            uint64_t s = row_address(d.src, p, d.src_plane_stride, r, d.src_stride);
            uint64_t t = row_address(d.dst, p, d.dst_plane_stride, r, d.dst_stride);
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
        uint64_t granules = d.row_bytes / granule + (d.row_bytes % granule != 0);  // no overflow near 2^64
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
        p.src = row_address(d.src, 0, 0, e, d.src_stride);
        p.dst = row_address(d.dst, 0, 0, e, d.dst_stride);
        p.rows = (d.rows - e + engines - 1) / engines;
        // Wrapping (the part's addresses are still exact modulo 2^64, where they all lie).
        p.src_stride = int64_t(uint64_t(d.src_stride) * engines);
        p.dst_stride = int64_t(uint64_t(d.dst_stride) * engines);
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
    std::string s = buf;
    if (d.reduce) s.insert(s.size() - 1, ", accumulating " + std::string(numerics::name_of(*d.reduce)));
    if (d.control) s.insert(s.size() - 1, ", control");
    if (d.checksum) {
        std::snprintf(buf, sizeof buf, ", checksum 0x%016llx", (unsigned long long)*d.checksum);
        s.insert(s.size() - 1, buf);
    }
    return s;
}

} // namespace trnsim::dma
