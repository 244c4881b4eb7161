// A memory manager for generic payloads: payloads and their data buffers are reused, never reallocated per
// transaction. acquire() hands out a payload with reference count 1; release() (or the last release by a target
// that acquired it too) returns it to the pool.
#pragma once
#include <memory>
#include <vector>

#include <tlm>

namespace trnsim::tlmx {

class payload_pool : public tlm::tlm_mm_interface {
public:
    payload_pool() = default;
    payload_pool(const payload_pool&) = delete;
    payload_pool& operator=(const payload_pool&) = delete;
    ~payload_pool() override = default;

    // A reset payload whose data pointer addresses a pooled buffer of at least `bytes` bytes.
    tlm::tlm_generic_payload* acquire(size_t bytes) {
        entry* e;
        if (m_free.empty()) {
            m_all.push_back(std::make_unique<entry>(this));
            e = m_all.back().get();
        } else {
            e = m_free.back();
            m_free.pop_back();
        }
        if (e->data.size() < bytes) e->data.resize(bytes);
        e->set_data_ptr(e->data.data());
        e->set_data_length(unsigned(bytes));
        e->set_streaming_width(unsigned(bytes));
        e->set_byte_enable_ptr(nullptr);
        e->set_byte_enable_length(0);
        e->set_dmi_allowed(false);
        e->set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
        e->acquire();
        return e;
    }

    // Extensions set on a pooled payload must be heap-allocated: they are freed when it returns to the pool.
    void free(tlm::tlm_generic_payload* gp) override {
        gp->free_all_extensions();
        m_free.push_back(static_cast<entry*>(gp));
    }
    size_t allocated() const { return m_all.size(); }

private:
    struct entry : tlm::tlm_generic_payload {
        explicit entry(payload_pool* pool) : tlm::tlm_generic_payload(pool) {}
        std::vector<unsigned char> data;
    };
    std::vector<std::unique_ptr<entry>> m_all;
    std::vector<entry*> m_free;
};

} // namespace trnsim::tlmx
