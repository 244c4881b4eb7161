// Address mapping of the whole HBM (all stacks) driven by a field-permutation string, e.g.
//   "sid-ro-ba-co:2-st-ch-pc-co:3-bg"
// Grammar (docs/hbm.md has the full description):
//   mapping := field ( '-' field )*        fields are listed from the most to the least significant
//   field   := name [ ':' bits ]
//   name    := st | ch | pc | sid | bg | ba | ro | co
// st = stack, ch = channel in the stack, pc = pseudo-channel in the channel, sid = stack ID (die rank), bg = bank
// group, ba = bank in the group, ro = row, co = column burst (columns / burst_length values). The byte offset inside
// one burst is implicit below the last field. A field named once without ':bits' takes all of its values (any
// count, not necessarily a power of two: the address is then decomposed in mixed radix). A field may be split into
// several pieces, each with ':bits'; the pieces must add up to log2(count) (so the count must be a power of two) and
// the piece nearest the least significant end holds the lowest bits. Fields with a single value (one stack, one SID)
// may be left out. With power-of-two sizes this is exactly a bit-field permutation of the address.
// Plain C++ (no SystemC).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "models/hbm/dram/memspec.h"

namespace trnsim::hbm {

enum class map_field : uint8_t { st, ch, pc, sid, bg, ba, ro, co, count_ };
constexpr unsigned NUM_MAP_FIELDS = unsigned(map_field::count_);
const char* name(map_field f);

struct dram_address {
    uint32_t stack = 0, channel = 0, pc = 0, sid = 0, bank_group = 0, bank = 0, row = 0, column = 0;  // column in bursts
    uint32_t& operator[](map_field f);
    uint32_t operator[](map_field f) const;
};

class address_mapper {
public:
    // Throws std::invalid_argument with a message naming the offending piece of `spec`.
    address_mapper(const std::string& spec, const memspec& m, uint32_t stacks);

    const std::string& spec() const { return m_spec; }
    uint64_t capacity() const { return m_capacity; }
    uint32_t burst_bytes() const { return 1u << m_offset_bits; }

    dram_address decode(uint64_t addr) const;
    // Inverse of decode (burst-aligned address).
    uint64_t encode(const dram_address& a) const;

    // Index of the pseudo-channel controller (stack-major) and of the bank inside it.
    uint32_t pc_index(const dram_address& a) const { return (a.stack * m_channels + a.channel) * m_pcs + a.pc; }
    uint32_t bank_index(const dram_address& a) const { return (a.sid * m_bank_groups + a.bank_group) * m_banks + a.bank; }

private:
    struct piece {
        map_field field;
        uint64_t radix;     // number of values of this piece
        uint32_t bits;      // log2(radix) when pow2
        uint32_t shift;     // position of the piece inside its field (split fields)
        bool pow2;
    };
    std::string m_spec;
    std::vector<piece> m_pieces;  // least significant first
    uint32_t m_offset_bits = 0;
    uint64_t m_capacity = 0;
    uint32_t m_channels, m_pcs, m_bank_groups, m_banks;
};

} // namespace trnsim::hbm
