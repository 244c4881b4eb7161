// Typed read/write helpers for initiators, and the payload checks every memory-like target shares.
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include <systemc>
#include <tlm>

#include "tlm/payload_pool.h"
#include "tlm/sparse_store.h"

namespace trnsim::tlmx {

// Blocking transport of one pooled payload; returns its response status. `delay` is the initiator's local time
// offset, advanced by the path's annotation (LT style). `ext`, if given, is heap-allocated and owned by the payload.
// `data` nullptr: a timing-only transaction, nothing copied (the payload still addresses a pooled buffer of `len`
// bytes, which the timing-only targets of such a run neither read nor write).
template <class Socket, class Ext = tlm::tlm_extension_base>
tlm::tlm_response_status transport(Socket& socket, payload_pool& pool, tlm::tlm_command cmd, uint64_t addr, void* data,
                                   uint64_t len, sc_core::sc_time& delay, Ext* ext = nullptr) {
    tlm::tlm_generic_payload* gp = pool.acquire(len);
    gp->set_command(cmd);
    gp->set_address(addr);
    if (cmd == tlm::TLM_WRITE_COMMAND && data) std::memcpy(gp->get_data_ptr(), data, len);
    if constexpr (!std::is_same_v<Ext, tlm::tlm_extension_base>) {
        if (ext) gp->set_extension(ext);
    }
    socket->b_transport(*gp, delay);
    auto status = gp->get_response_status();
    if (cmd == tlm::TLM_READ_COMMAND && status == tlm::TLM_OK_RESPONSE && data) std::memcpy(data, gp->get_data_ptr(), len);
    gp->release();
    return status;
}

// Zero-time backdoor access (host loader, scoreboards); returns the bytes transferred.
template <class Socket>
unsigned debug_transport(Socket& socket, tlm::tlm_command cmd, uint64_t addr, void* data, uint64_t len) {
    tlm::tlm_generic_payload gp;
    gp.set_command(cmd);
    gp.set_address(addr);
    gp.set_data_ptr(static_cast<unsigned char*>(data));
    gp.set_data_length(unsigned(len));
    gp.set_streaming_width(unsigned(len));
    return socket->transport_dbg(gp);
}

// Checks a payload against a target of `size` bytes: range, byte enables (unsupported), streaming width.
// Sets the error status and returns false if the target must not perform it.
inline bool check_payload(tlm::tlm_generic_payload& gp, uint64_t size) {
    uint64_t a = gp.get_address(), n = gp.get_data_length();
    if (a > size || n > size - a) {
        gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return false;
    }
    if (gp.get_byte_enable_ptr()) {
        gp.set_response_status(tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
        return false;
    }
    if (gp.get_streaming_width() < n) {
        gp.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
        return false;
    }
    if (gp.get_command() == tlm::TLM_IGNORE_COMMAND) {
        gp.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
        return false;
    }
    return true;
}

// A debug (zero-time) access served from a sparse store; returns the bytes transferred (0 if out of range).
inline unsigned serve_debug(sparse_store& store, tlm::tlm_generic_payload& gp) {
    uint64_t a = gp.get_address(), n = gp.get_data_length();
    if (!store.contains(a, n)) return 0;
    if (gp.is_read()) store.read(a, gp.get_data_ptr(), n);
    else if (gp.is_write()) store.write(a, gp.get_data_ptr(), n);
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
    return unsigned(n);
}

// "read 4096 bytes at 0x1000" for error messages.
inline std::string describe(const tlm::tlm_generic_payload& gp) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "%s %u bytes at 0x%llx", gp.is_read() ? "read" : "write", gp.get_data_length(),
                  static_cast<unsigned long long>(gp.get_address()));
    return buf;
}

} // namespace trnsim::tlmx
