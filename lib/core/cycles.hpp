// The CPU's cycle counter: the clock DPDK's rte_rdtsc() reads (TSC on x86), for code that must
// not include DPDK. Elsewhere, nanoseconds of the steady clock.
#pragma once

#include <cstdint>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#else
#include <chrono>
#endif

namespace uet {

inline std::uint64_t read_cycles() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    return __rdtsc();
#else
    return static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
#endif
}

}  // namespace uet
