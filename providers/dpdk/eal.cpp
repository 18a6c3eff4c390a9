#include "dpdk/eal.hpp"

#include <sched.h>
#include <unistd.h>

#include <cstdio>
#include <mutex>
#include <stdexcept>

#include "dpdk/dpdk_include.hpp"

namespace uet::dpdk {

namespace {

std::mutex eal_mutex;
eal* instance = nullptr;
bool cleaned_up = false;
// Read on every burst: plain globals, written once before any poller starts. Nanoseconds per
// TSC tick in 24.40 fixed point, so now_ns() multiplies instead of dividing 128-bit numbers.
std::uint64_t g_tsc_hz = 0;
constexpr unsigned ns_shift = 40;
std::uint64_t g_ns_per_tick = 0;

std::vector<int> affinity_cpus() {
    std::vector<int> cpus;
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
    for (int c = 0; c < CPU_SETSIZE; ++c) {
        if (CPU_ISSET(c, &set)) cpus.push_back(c);
    }
    return cpus;
}

}  // namespace

eal& eal::start(const eal_options& opts) {
    std::lock_guard lock(eal_mutex);
    if (instance != nullptr) {
        std::fprintf(stderr,
                     "uet: EAL already initialised in this process; reusing it (the new EAL "
                     "options are ignored: DPDK cannot initialise twice)\n");
        instance->started_now_ = false;
        return *instance;
    }
    if (cleaned_up) {
        throw std::runtime_error("uet: the EAL was shut down in this process and cannot restart");
    }
    auto* e = new eal();
    e->args_ = build_eal_args(opts, static_cast<int>(getpid()), affinity_cpus());
    std::vector<char*> argv;
    for (auto& s : e->args_)
        argv.push_back(s.data());
    argv.push_back(nullptr);
    const int rc = rte_eal_init(static_cast<int>(argv.size() - 1), argv.data());
    if (rc < 0) {
        const int err = rte_errno;
        delete e;
        throw std::runtime_error(std::string("uet: rte_eal_init failed: ") + rte_strerror(err));
    }
    e->tsc_hz_ = rte_get_tsc_hz();
    g_tsc_hz = e->tsc_hz_;
    if (g_tsc_hz != 0)
        g_ns_per_tick = static_cast<std::uint64_t>(
            ((static_cast<unsigned __int128>(1'000'000'000u) << ns_shift) + g_tsc_hz / 2) /
            g_tsc_hz);
    e->started_now_ = true;
    instance = e;
    return *e;
}

bool eal::running() noexcept {
    std::lock_guard lock(eal_mutex);
    return instance != nullptr;
}

std::uint64_t eal::running_tsc_hz() noexcept {
    std::lock_guard lock(eal_mutex);
    return instance != nullptr ? instance->tsc_hz_ : 0;
}

void eal::shutdown() noexcept {
    std::lock_guard lock(eal_mutex);
    if (instance == nullptr) return;
    rte_eal_cleanup();
    delete instance;
    instance = nullptr;
    cleaned_up = true;
}

std::uint64_t now_ns() noexcept {
    const unsigned __int128 tsc = rte_rdtsc();
    return static_cast<std::uint64_t>((tsc * g_ns_per_tick) >> ns_shift);
}

}  // namespace uet::dpdk
