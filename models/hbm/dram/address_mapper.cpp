#include "models/hbm/dram/address_mapper.h"

#include <stdexcept>

namespace trnsim::hbm {

namespace {
const char* const FIELD_NAMES[] = {"st", "ch", "pc", "sid", "bg", "ba", "ro", "co"};
bool is_pow2(uint64_t v) { return v && !(v & (v - 1)); }
uint32_t log2u(uint64_t v) {
    uint32_t b = 0;
    while ((uint64_t(1) << b) < v) ++b;
    return b;
}
} // namespace

const char* name(map_field f) { return unsigned(f) < NUM_MAP_FIELDS ? FIELD_NAMES[unsigned(f)] : "?"; }

uint32_t& dram_address::operator[](map_field f) {
    switch (f) {
    case map_field::st: return stack;
    case map_field::ch: return channel;
    case map_field::pc: return pc;
    case map_field::sid: return sid;
    case map_field::bg: return bank_group;
    case map_field::ba: return bank;
    case map_field::ro: return row;
    default: return column;
    }
}
uint32_t dram_address::operator[](map_field f) const { return const_cast<dram_address&>(*this)[f]; }

address_mapper::address_mapper(const std::string& spec, const memspec& m, uint32_t stacks)
    : m_spec(spec), m_channels(m.channels), m_pcs(m.pseudo_channels), m_bank_groups(m.bank_groups),
      m_banks(m.banks_per_group) {
    if (stacks < 1) throw std::invalid_argument("stacks must be at least 1");
    const uint64_t counts[NUM_MAP_FIELDS] = {stacks, m.channels, m.pseudo_channels, m.sids, m.bank_groups,
                                             m.banks_per_group, m.rows, m.bursts_per_row()};
    const std::string where = "mapping '" + spec + "': ";

    // Tokenise, most significant first.
    struct token {
        map_field f;
        bool has_bits;
        uint32_t bits;
        std::string text;
    };
    std::vector<token> toks;
    size_t start = 0;
    while (true) {
        size_t dash = spec.find('-', start);
        std::string t = spec.substr(start, dash == std::string::npos ? std::string::npos : dash - start);
        if (t.empty()) throw std::invalid_argument(where + "empty field (expected name[:bits] separated by '-')");
        std::string nm = t, bits;
        auto colon = t.find(':');
        if (colon != std::string::npos) {
            nm = t.substr(0, colon);
            bits = t.substr(colon + 1);
        }
        int idx = -1;
        for (unsigned i = 0; i < NUM_MAP_FIELDS; ++i)
            if (nm == FIELD_NAMES[i]) idx = int(i);
        if (idx < 0)
            throw std::invalid_argument(where + "unknown field '" + nm + "' (known: st, ch, pc, sid, bg, ba, ro, co)");
        token tk{map_field(idx), colon != std::string::npos, 0, t};
        if (tk.has_bits) {
            if (bits.empty() || bits.find_first_not_of("0123456789") != std::string::npos || bits.size() > 2)
                throw std::invalid_argument(where + "'" + t + "': expected a bit count after ':'");
            tk.bits = uint32_t(std::stoul(bits));
        }
        toks.push_back(tk);
        if (dash == std::string::npos) break;
        start = dash + 1;
    }

    // Per field: occurrences and bit totals.
    unsigned occurrences[NUM_MAP_FIELDS] = {};
    uint32_t bit_sum[NUM_MAP_FIELDS] = {};
    bool any_bits[NUM_MAP_FIELDS] = {}, any_plain[NUM_MAP_FIELDS] = {};
    for (const auto& tk : toks) {
        unsigned i = unsigned(tk.f);
        ++occurrences[i];
        if (tk.has_bits) {
            any_bits[i] = true;
            bit_sum[i] += tk.bits;
        } else {
            any_plain[i] = true;
        }
    }
    for (unsigned i = 0; i < NUM_MAP_FIELDS; ++i) {
        std::string f = FIELD_NAMES[i], cnt = std::to_string(counts[i]);
        if (occurrences[i] == 0) {
            if (counts[i] > 1) throw std::invalid_argument(where + "field '" + f + "' (" + cnt + " values) is not placed");
            continue;
        }
        if (occurrences[i] > 1 && any_plain[i])
            throw std::invalid_argument(where + "field '" + f + "' appears " + std::to_string(occurrences[i]) +
                                        " times: every piece of a split field needs ':bits'");
        if (any_bits[i]) {
            if (!is_pow2(counts[i]))
                throw std::invalid_argument(where + "field '" + f + "' has " + cnt +
                                            " values, not a power of two: it cannot be split into bit pieces");
            if (bit_sum[i] != log2u(counts[i]))
                throw std::invalid_argument(where + "the pieces of field '" + f + "' cover " + std::to_string(bit_sum[i]) +
                                            " bits but it has " + cnt + " values (" + std::to_string(log2u(counts[i])) +
                                            " bits)");
        }
    }

    // Pieces, least significant first; split pieces fill their field from bit 0 upwards.
    uint32_t next_shift[NUM_MAP_FIELDS] = {};
    for (auto it = toks.rbegin(); it != toks.rend(); ++it) {
        unsigned i = unsigned(it->f);
        piece p;
        p.field = it->f;
        if (it->has_bits) {
            p.bits = it->bits;
            p.radix = uint64_t(1) << it->bits;
            p.pow2 = true;
        } else {
            p.radix = counts[i];
            p.pow2 = is_pow2(p.radix);
            p.bits = p.pow2 ? log2u(p.radix) : 0;
        }
        p.shift = next_shift[i];
        next_shift[i] += p.bits;
        if (p.radix > 1) m_pieces.push_back(p);
    }

    uint64_t bb = m.burst_bytes();
    if (!is_pow2(bb)) throw std::invalid_argument("burst size must be a power of two bytes");
    m_offset_bits = log2u(bb);
    m_capacity = bb;
    for (unsigned i = 0; i < NUM_MAP_FIELDS; ++i) m_capacity *= counts[i];
    if (m_capacity != m.stack_bytes() * stacks)
        throw std::logic_error(where + "internal: capacity mismatch");
}

dram_address address_mapper::decode(uint64_t addr) const {
    uint32_t f[NUM_MAP_FIELDS] = {};
    uint64_t v = addr >> m_offset_bits;
    for (const auto& p : m_pieces) {
        uint64_t digit;
        if (p.pow2) {
            digit = v & (p.radix - 1);
            v >>= p.bits;
        } else {
            digit = v % p.radix;
            v /= p.radix;
        }
        f[unsigned(p.field)] |= uint32_t(digit << p.shift);
    }
    dram_address a;
    a.stack = f[unsigned(map_field::st)];
    a.channel = f[unsigned(map_field::ch)];
    a.pc = f[unsigned(map_field::pc)];
    a.sid = f[unsigned(map_field::sid)];
    a.bank_group = f[unsigned(map_field::bg)];
    a.bank = f[unsigned(map_field::ba)];
    a.row = f[unsigned(map_field::ro)];
    a.column = f[unsigned(map_field::co)];
    return a;
}

uint64_t address_mapper::encode(const dram_address& a) const {
    uint64_t v = 0, scale = 1;
    for (const auto& p : m_pieces) {
        uint64_t digit = p.pow2 ? (uint64_t(a[p.field]) >> p.shift) & (p.radix - 1) : uint64_t(a[p.field]);
        v += digit * scale;
        scale *= p.radix;
    }
    return v << m_offset_bits;
}

} // namespace trnsim::hbm
