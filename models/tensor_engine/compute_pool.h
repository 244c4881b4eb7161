// A small pool of host threads that runs pure computations (the PE array arithmetic of submitted MATMULs) while
// the SystemC kernel goes on simulating; the simulation waits for a result only when its completion time comes.
// Plain C++. Results do not depend on the number of threads (each job is computed whole by one thread).
#pragma once
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

namespace trnsim::te {

class compute_pool {
public:
    explicit compute_pool(unsigned threads) {
        for (unsigned i = 0; i < threads; ++i) m_threads.emplace_back([this] { work(); });
    }
    ~compute_pool() {
        {
            std::lock_guard<std::mutex> l(m_mutex);
            m_stop = true;
        }
        m_cv.notify_all();
        for (auto& t : m_threads) t.join();
    }
    compute_pool(const compute_pool&) = delete;
    compute_pool& operator=(const compute_pool&) = delete;

    // Runs f on a pool thread (or right here if the pool has no threads); the future is ready when it is done.
    std::future<void> run(std::function<void()> f) {
        std::packaged_task<void()> task(std::move(f));
        auto fut = task.get_future();
        if (m_threads.empty()) {
            task();
            return fut;
        }
        {
            std::lock_guard<std::mutex> l(m_mutex);
            m_tasks.push_back(std::move(task));
        }
        m_cv.notify_one();
        return fut;
    }

private:
    void work() {
        while (true) {
            std::packaged_task<void()> task;
            {
                std::unique_lock<std::mutex> l(m_mutex);
                m_cv.wait(l, [this] { return m_stop || !m_tasks.empty(); });
                if (m_tasks.empty()) return;
                task = std::move(m_tasks.front());
                m_tasks.pop_front();
            }
            task();
        }
    }
    std::vector<std::thread> m_threads;
    std::deque<std::packaged_task<void()>> m_tasks;
    std::mutex m_mutex;
    std::condition_variable m_cv;
    bool m_stop = false;
};

} // namespace trnsim::te
