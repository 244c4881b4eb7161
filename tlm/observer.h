// A list of observer callbacks a model notifies of its events (DRAMSys-style trace callbacks): recorders such as
// the timeline attach here, models never write files. Costs one empty() test per event when nobody observes.
#pragma once
#include <functional>
#include <vector>

namespace trnsim::tlmx {

template <class Event>
class observer_list {
public:
    using callback = std::function<void(const Event&)>;
    void add(callback cb) { m_cbs.push_back(std::move(cb)); }
    bool empty() const { return m_cbs.empty(); }
    void notify(const Event& e) const {
        for (const auto& cb : m_cbs) cb(e);
    }

private:
    std::vector<callback> m_cbs;
};

} // namespace trnsim::tlmx
