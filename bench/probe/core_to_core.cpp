// uet-core-to-core: the round trip of one cache line between two CPUs (two threads, each pinned
// to one, passing a counter back and forth), in ns. On a VM it is far longer while the host has
// put the two vCPUs on different core complexes than while it keeps them on one, and the host
// moves them for seconds at a time; a memif link, whose every frame crosses between the cores,
// is much slower then. The bench/e2e scripts run it around each pair so that ratios compare
// runs made in the same mode.
//   uet-core-to-core [CPU_A CPU_B [ROUND_TRIPS]]   (0 1 200000)
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "pin.hpp"

namespace {

// The line both threads write: the initiator stores odd values, the echo the next even one.
alignas(64) std::atomic<std::uint64_t> line{0};

}  // namespace

int main(int argc, char** argv) {
    const int a = argc > 1 ? std::atoi(argv[1]) : 0;
    const int b = argc > 2 ? std::atoi(argv[2]) : 1;
    const std::uint64_t trips = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 200'000;
    if (trips == 0) {
        std::fprintf(stderr, "usage: uet-core-to-core [CPU_A CPU_B [ROUND_TRIPS > 0]]\n");
        return 2;
    }
    bool echo_pinned = false;
    std::thread echo([&] {
        echo_pinned = uet::probe::pin_to_cpu(b);
        for (std::uint64_t i = 1; i < 2 * trips; i += 2) {
            while (line.load(std::memory_order_acquire) != i) {
            }
            line.store(i + 1, std::memory_order_release);
        }
    });
    if (!uet::probe::pin_to_cpu(a)) {
        std::fprintf(stderr, "uet-core-to-core: cannot pin to CPU %d\n", a);
        std::exit(1);  // the echo thread waits forever otherwise
    }
    const auto start = std::chrono::steady_clock::now();
    for (std::uint64_t i = 0; i < 2 * trips; i += 2) {
        line.store(i + 1, std::memory_order_release);
        while (line.load(std::memory_order_acquire) != i + 2) {
        }
    }
    const auto ns =
        std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start);
    echo.join();
    if (!echo_pinned) {
        std::fprintf(stderr, "uet-core-to-core: cannot pin to CPU %d\n", b);
        return 1;
    }
    std::printf("core_to_core_ns %.0f\n", ns.count() / static_cast<double>(trips));
    return 0;
}
