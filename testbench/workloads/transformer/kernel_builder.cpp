#include "testbench/workloads/transformer/kernel_builder.h"

#include <algorithm>
#include <map>
#include <stdexcept>

namespace trnsim::tb {

tile tile::rows(uint32_t p0, uint32_t n) const {
    if (p0 + n > parts)
        throw std::invalid_argument(name + ": rows [" + std::to_string(p0) + ", " + std::to_string(p0 + n) +
                                    ") outside its " + std::to_string(parts) + " partitions");
    tile t = *this;
    t.addr += uint64_t(p0) * stride;
    t.parts = n;
    t.name = name + ".rows(" + std::to_string(p0) + "," + std::to_string(n) + ")";
    return t;
}

tile tile::cols(uint32_t f0, uint32_t n) const {
    if (f0 + n > free)
        throw std::invalid_argument(name + ": columns [" + std::to_string(f0) + ", " + std::to_string(f0 + n) +
                                    ") outside its " + std::to_string(free));
    tile t = *this;
    t.addr += uint64_t(f0) * numerics::size_of(type);
    t.free = n;
    t.name = name + ".cols(" + std::to_string(f0) + "," + std::to_string(n) + ")";
    return t;
}

kernel_builder::kernel_builder(const platform::chip_config& chip, uint32_t core) : m_chip(chip), m_core(core) {
    m_prog.semaphores = SEM_DMA0;
    m_prog.dma.resize(2);  // 0: loads (HBM -> SBUF), 1: stores (SBUF -> HBM): a store waiting for compute never holds up a load
    m_psum_bank_bytes = uint64_t(chip.core.te.n_max) * 4;
    m_psum_banks = uint32_t(chip.core.psum.partition_bytes / m_psum_bank_bytes);
    if (m_psum_banks == 0) throw std::invalid_argument("kernel_builder: a PSUM partition holds no n_max FP32 bank");
    m_pinned.assign(m_psum_banks, false);
}

tile kernel_builder::sbuf(uint32_t parts, uint32_t free, const std::string& name, numerics::dtype t) {
    const auto& s = m_chip.core.sbuf;
    if (parts == 0 || free == 0 || parts > s.partitions)
        throw std::invalid_argument("SBUF tile " + name + ": " + std::to_string(parts) + " x " + std::to_string(free) +
                                    " (partitions must be 1.." + std::to_string(s.partitions) + ")");
    const uint64_t bytes = (uint64_t(free) * numerics::size_of(t) + 63) / 64 * 64;
    if (m_sbuf_next + bytes > s.partition_bytes)
        throw std::invalid_argument("SBUF tile " + name + " does not fit: " + std::to_string(m_sbuf_next + bytes) +
                                    " bytes per partition needed, chip.core.sbuf.partition_kib gives " +
                                    std::to_string(s.partition_bytes));
    tile r{mem::sbuf, m_chip.core.sbuf_base + m_sbuf_next, s.partition_bytes, parts, free, t, name};
    m_sbuf_next += bytes;
    return r;
}

tile kernel_builder::psum(uint32_t parts, uint32_t free, const std::string& name) {
    return psum_tile(parts, free, name, false);
}
tile kernel_builder::psum_pinned(uint32_t parts, uint32_t free, const std::string& name) {
    return psum_tile(parts, free, name, true);
}
void kernel_builder::release(const tile& t) {
    const uint64_t bank = (t.addr - m_chip.core.psum_base) / m_psum_bank_bytes;
    if (t.where != mem::psum || bank >= m_psum_banks || !m_pinned[bank])
        throw std::invalid_argument("release of " + t.name + ": not a pinned PSUM bank");
    m_pinned[bank] = false;
}

tile kernel_builder::psum_tile(uint32_t parts, uint32_t free, const std::string& name, bool pin) {
    const auto& p = m_chip.core.psum;
    if (parts == 0 || free == 0 || parts > p.partitions || uint64_t(free) * 4 > m_psum_bank_bytes)
        throw std::invalid_argument("PSUM tile " + name + ": " + std::to_string(parts) + " x " + std::to_string(free) +
                                    " FP32 does not fit one bank (" + std::to_string(p.partitions) + " x " +
                                    std::to_string(m_psum_bank_bytes / 4) + ")");
    uint32_t tries = 0;
    while (m_pinned[m_psum_next]) {
        m_psum_next = (m_psum_next + 1) % m_psum_banks;
        if (++tries > m_psum_banks)
            throw std::invalid_argument("PSUM tile " + name + ": all " + std::to_string(m_psum_banks) + " banks are pinned");
    }
    const uint32_t bank = m_psum_next;
    m_psum_next = (m_psum_next + 1) % m_psum_banks;
    if (pin) {
        m_pinned[bank] = true;
        uint32_t free_banks = 0;
        for (bool b : m_pinned) free_banks += !b;
        if (free_banks < 2)
            throw std::invalid_argument("PSUM tile " + name + ": pinning it leaves fewer than 2 of " +
                                        std::to_string(m_psum_banks) + " banks for the rest");
    }
    return tile{mem::psum, m_chip.core.psum_base + uint64_t(bank) * m_psum_bank_bytes, p.partition_bytes, parts, free,
                numerics::dtype::fp32, name};
}

tile kernel_builder::hbm(uint64_t addr, uint32_t rows, uint32_t cols, const std::string& name, numerics::dtype t) {
    return tile{mem::hbm, addr, uint64_t(cols) * numerics::size_of(t), rows, cols, t, name};
}

void kernel_builder::extents(const tile& t, access& a) const {
    a.where = t.where;
    const uint64_t row = uint64_t(t.free) * numerics::size_of(t.type);
    if (t.where == mem::hbm) {
        a.p0 = 0;
        a.p1 = 1;
        a.b0 = t.addr;
        a.b1 = t.addr + (t.parts - 1) * t.stride + row;
        return;
    }
    const uint64_t base = t.where == mem::sbuf ? m_chip.core.sbuf_base : m_chip.core.psum_base;
    const uint64_t off = t.addr - base;
    a.p0 = off / t.stride;
    a.b0 = off % t.stride;
    a.p1 = a.p0 + t.parts;
    a.b1 = a.b0 + row;
}

std::vector<core::sem_wait> kernel_builder::deps(queue q, const std::vector<access>& acc) const {
    std::map<uint32_t, uint64_t> need;
    for (const auto& h : m_history)
        for (const auto& a : acc) {
            if (h.where != a.where || !(h.write || a.write)) continue;
            if (h.p1 <= a.p0 || a.p1 <= h.p0 || h.b1 <= a.b0 || a.b1 <= h.b0) continue;
            if (h.done.q == q && q != queue::dma) continue;  // in-order queue: earlier instructions are done first
            auto& v = need[h.done.sem];
            v = std::max(v, h.done.value);
        }
    std::vector<core::sem_wait> w;
    for (auto& [s, v] : need) w.push_back({s, v});
    return w;
}

void kernel_builder::record(std::vector<access>& acc, const token& t) {
    for (auto& a : acc) {
        a.done = t;
        m_history.push_back(a);
    }
    ++m_instructions;
}

void kernel_builder::copy(const tile& dst, const tile& src, bool accumulate) {
    if (dst.parts != src.parts || dst.free != src.free || dst.type != src.type)
        throw std::invalid_argument("DMA " + src.name + " -> " + dst.name + ": shapes or dtypes differ");
    if ((dst.where == mem::hbm) == (src.where == mem::hbm))
        throw std::invalid_argument("DMA " + src.name + " -> " + dst.name + ": one side must be HBM");
    if (accumulate && dst.where != mem::hbm)
        throw std::invalid_argument("DMA " + src.name + " -> " + dst.name + ": an accumulating copy stores to HBM");
    std::vector<access> acc(2);
    extents(src, acc[0]);
    acc[0].write = false;
    extents(dst, acc[1]);
    acc[1].write = true;
    core::instruction in;
    in.op = core::opcode::dma;
    in.waits = deps(queue::dma, acc);
    const uint32_t sem = m_prog.semaphores++;
    in.signal = int32_t(sem);
    const uint64_t win = m_chip.core_base + uint64_t(m_core) * m_chip.core_stride;
    auto global = [&](const tile& t) { return t.where == mem::hbm ? t.addr : win + t.addr; };
    in.dma.src = global(src);
    in.dma.dst = global(dst);
    in.dma.row_bytes = uint64_t(src.free) * numerics::size_of(src.type);
    in.dma.rows = src.parts;
    in.dma.src_stride = int64_t(src.stride);
    in.dma.dst_stride = int64_t(dst.stride);
    if (accumulate) in.dma.reduce = dst.type;  // the write access above orders it after dst's readers and writers
    m_prog.dma[dst.where == mem::hbm ? 1 : 0].push_back(in);
    record(acc, {sem, 1, queue::dma});
}

void kernel_builder::matmul(const tile& y, const tile& s, const tile& x, bool accumulate) {
    if (s.where != mem::sbuf || x.where != mem::sbuf || y.where != mem::psum)
        throw std::invalid_argument("matmul " + y.name + " = " + s.name + "^T " + x.name +
                                    ": operands must be in SBUF and the result in PSUM");
    if (s.parts != x.parts || y.parts != s.free || y.free != x.free || s.type != x.type)
        throw std::invalid_argument("matmul " + y.name + " = " + s.name + "^T " + x.name + ": shapes " +
                                    std::to_string(s.parts) + "x" + std::to_string(s.free) + ", " +
                                    std::to_string(x.parts) + "x" + std::to_string(x.free) + " -> " +
                                    std::to_string(y.parts) + "x" + std::to_string(y.free) + " do not agree");
    std::vector<access> acc(3);
    extents(s, acc[0]);
    acc[0].write = false;
    extents(x, acc[1]);
    acc[1].write = false;
    extents(y, acc[2]);
    acc[2].write = true;
    core::instruction in;
    in.op = core::opcode::matmul;
    in.waits = deps(queue::te, acc);
    in.signal = int32_t(SEM_TE);
    auto& m = in.mm;
    m.in_type = s.type;
    m.k = s.parts;
    m.m = s.free;
    m.n = x.free;
    m.plane_rows = m_chip.core.sbuf.partitions;
    m.s_addr = s.addr;
    m.s_stride = s.stride;
    m.x_addr = x.addr;
    m.x_stride = x.stride;
    m.y_addr = y.addr;
    m.y_stride = y.stride;
    m.accumulate = accumulate;
    m.tag = m_count[0];
    m_prog.te.push_back(in);
    record(acc, {SEM_TE, ++m_count[0], queue::te});
}

void kernel_builder::vec(bool scalar_engine, ve::vop op, const tile& out, const tile& a, const tile* b, ve::bcast bc,
                         float scale, float bias, ve::act_fn fn) {
    ve::vec_args v;
    v.op = op;
    v.fn = fn;
    v.b_bcast = bc;
    v.parts = a.parts;
    v.free = a.free;
    v.scale = scale;
    v.bias = bias;
    v.a = {a.type, a.addr, a.stride};
    v.out = {out.type, out.addr, out.stride};
    uint32_t op_parts, op_free;
    ve::out_shape(v, op_parts, op_free);
    if (out.parts != op_parts || out.free != op_free)
        throw std::invalid_argument(std::string(ve::name_of(op)) + " " + a.name + " -> " + out.name + ": the result is " +
                                    std::to_string(op_parts) + "x" + std::to_string(op_free) + ", the tile " +
                                    std::to_string(out.parts) + "x" + std::to_string(out.free));
    if (a.where == mem::hbm || out.where == mem::hbm)
        throw std::invalid_argument(std::string(ve::name_of(op)) + " " + a.name + " -> " + out.name +
                                    ": engines address SBUF and PSUM only");
    std::vector<access> acc(2);
    extents(a, acc[0]);
    acc[0].write = false;
    extents(out, acc[1]);
    acc[1].write = true;
    if (ve::inputs_of(op) == 2) {
        if (!b) throw std::invalid_argument(std::string(ve::name_of(op)) + " -> " + out.name + " needs a second operand");
        uint32_t bp, bf;
        ve::b_shape(v, bp, bf);
        if (b->parts != bp || b->free != bf)
            throw std::invalid_argument(std::string(ve::name_of(op)) + " " + a.name + ", " + b->name + ": b is " +
                                        std::to_string(b->parts) + "x" + std::to_string(b->free) + ", needs " +
                                        std::to_string(bp) + "x" + std::to_string(bf));
        v.b = {b->type, b->addr, b->stride};
        acc.emplace_back();
        extents(*b, acc.back());
        acc.back().write = false;
    }
    core::instruction in;
    in.op = scalar_engine ? core::opcode::scalar : core::opcode::vector;
    const queue q = scalar_engine ? queue::scalar : queue::vector;
    in.waits = deps(q, acc);
    const uint32_t sem = scalar_engine ? SEM_SCALAR : SEM_VECTOR;
    in.signal = int32_t(sem);
    v.tag = m_count[scalar_engine ? 2 : 1];
    in.vec = v;
    (scalar_engine ? m_prog.scalar : m_prog.vector).push_back(in);
    record(acc, {sem, ++m_count[scalar_engine ? 2 : 1], q});
}

core::core_program kernel_builder::finish() { return m_prog; }

void emit_rmsnorm(kernel_builder& kb, const tile& h, const tile& xn, const tile& r, const tile& sq, const tile& ss,
                  const tile& x, const tile& g, float eps) {
    using ve::bcast;
    using ve::vop;
    kb.binary(vop::mul, sq, x, x);
    kb.unary(vop::reduce_sum_free, ss, sq);
    kb.act(r, ss, ve::act_fn::rsqrt, 1.0f / float(x.free), eps);
    kb.binary(vop::mul, xn, x, r, bcast::column);
    kb.binary(vop::mul, h, xn, g, bcast::row);
}

void emit_rmsnorm_backward_core(kernel_builder& kb, const tile& v, const tile& w, const tile& u, const tile& c,
                                const tile& dxn, const tile& dh, const tile& g, const tile& xn) {
    using ve::bcast;
    using ve::vop;
    kb.binary(vop::mul, dxn, dh, g, bcast::row);
    kb.binary(vop::mul, u, dxn, xn);
    kb.unary(vop::reduce_sum_free, c, u);
    kb.binary(vop::mul, w, xn, c, bcast::column);
    kb.binary(vop::axpby, v, dxn, w, bcast::none, 1.0f, -1.0f / float(dh.free));  // dxn - xn * mean(dxn * xn)
}

void emit_adam(kernel_builder& kb, const tile& p, const tile& m, const tile& v, const tile& g, const tile& g2,
               const tile& den, const tile& upd, const adam_params& a) {
    using ve::act_fn;
    using ve::bcast;
    using ve::vop;
    kb.binary(vop::axpby, m, m, g, bcast::none, a.beta1, 1.0f - a.beta1);  // m = b1 m + (1 - b1) g
    kb.binary(vop::mul, g2, g, g);
    kb.binary(vop::axpby, v, v, g2, bcast::none, a.beta2, 1.0f - a.beta2);
    kb.act(den, v, act_fn::sqrt, 1.0f / a.c2);             // sqrt(v / c2)
    kb.unary(vop::scale_bias, den, den, 1.0f, a.eps);      // + eps
    kb.act(den, den, act_fn::reciprocal);
    kb.binary(vop::mul, upd, m, den);
    kb.binary(vop::axpby, p, p, upd, bcast::none, 1.0f, -a.lr / a.c1);  // p -= lr m_hat / (sqrt(v_hat) + eps)
}

} // namespace trnsim::tb
