// Byte storage for large, mostly untouched address spaces (HBM of many GiB): fixed-size pages allocated on first
// write; reads of never-written bytes return zero. Plain C++.
#pragma once
#include <cstdint>
#include <cstring>
#include <memory>
#include <unordered_map>

namespace trnsim::tlmx {

class sparse_store {
public:
    static constexpr uint64_t PAGE_BITS = 16;  // 64 KiB pages
    static constexpr uint64_t PAGE_SIZE = uint64_t(1) << PAGE_BITS;

    explicit sparse_store(uint64_t size) : m_size(size) {}
    uint64_t size() const { return m_size; }
    bool contains(uint64_t addr, uint64_t len) const { return addr <= m_size && len <= m_size - addr; }

    void read(uint64_t addr, void* dst, uint64_t len) const {
        auto* out = static_cast<uint8_t*>(dst);
        while (len) {
            uint64_t off = addr & (PAGE_SIZE - 1), n = std::min(len, PAGE_SIZE - off);
            auto it = m_pages.find(addr >> PAGE_BITS);
            if (it == m_pages.end()) std::memset(out, 0, n);
            else std::memcpy(out, it->second.get() + off, n);
            addr += n; out += n; len -= n;
        }
    }
    void write(uint64_t addr, const void* src, uint64_t len) {
        auto* in = static_cast<const uint8_t*>(src);
        while (len) {
            uint64_t off = addr & (PAGE_SIZE - 1), n = std::min(len, PAGE_SIZE - off);
            std::memcpy(page(addr >> PAGE_BITS, n == PAGE_SIZE) + off, in, n);
            addr += n; in += n; len -= n;
        }
    }
    // Pointer to the page holding addr (allocating it) and the bytes left in that page: the DMI window.
    uint8_t* page_ptr(uint64_t addr, uint64_t& bytes_left) {
        bytes_left = PAGE_SIZE - (addr & (PAGE_SIZE - 1));
        return page(addr >> PAGE_BITS) + (addr & (PAGE_SIZE - 1));
    }
    uint64_t resident_bytes() const { return m_pages.size() * PAGE_SIZE; }

private:
    // A new page is zero-filled unless the caller is about to overwrite all of it.
    uint8_t* page(uint64_t idx, bool whole = false) {
        auto& p = m_pages[idx];
        if (!p) p.reset(whole ? new uint8_t[PAGE_SIZE] : new uint8_t[PAGE_SIZE]());
        return p.get();
    }
    uint64_t m_size;
    std::unordered_map<uint64_t, std::unique_ptr<uint8_t[]>> m_pages;
};

} // namespace trnsim::tlmx
