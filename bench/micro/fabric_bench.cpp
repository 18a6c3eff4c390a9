// Cost of the fabric model per packet hop (one serialisation plus its arrival at the next node):
// uniform random traffic with per-packet entropy at a fixed offered load, in steady state.
// items/s in the output is packet hops per second.
#include <benchmark/benchmark.h>

#include <vector>

#include "core/rng.hpp"
#include "fabric/fabric.hpp"
#include "wire/bytes.hpp"
#include "wire/frame.hpp"

namespace {

using namespace uet;

// One round: every host sends one 1000-byte frame to a random other host, spaced so that hosts
// offer load_percent of their 100 Gb/s (80 ns per frame at line rate).
void BM_fabric_hops(benchmark::State& state) {
    netmodel::topology t;
    t.leaves = static_cast<std::uint32_t>(state.range(0));
    t.hosts_per_leaf = static_cast<std::uint32_t>(state.range(1));
    t.spines = static_cast<std::uint32_t>(state.range(2));
    t.max_frame_bytes = 1024;
    const auto load_percent = static_cast<std::uint64_t>(state.range(3));
    netmodel::fabric f(t);
    const std::uint32_t hosts = f.host_count();

    wire::frame_spec spec;
    spec.src_port = 0xc000;
    spec.dst_port = wire::uet_udp_port;
    spec.udp_checksum = false;  // the fabric never looks at it, and we patch addresses below
    std::vector<std::uint8_t> payload(1000 - 42), frame(1100);
    frame.resize(wire::build_udp_frame(spec, payload, frame));

    rng r(1);
    const std::uint64_t gap_ns = 80 * 100 / load_percent;
    std::uint64_t now = 0;
    const std::uint64_t hops_before = f.counters().hops;
    for (auto _ : state) {
        for (std::uint32_t h = 0; h < hosts; ++h) {
            const auto to = static_cast<std::uint32_t>((h + 1 + r.uniform(hosts - 1)) % hosts);
            wire::store_be32(&frame[14 + 12], f.host_ip(h));
            wire::store_be32(&frame[14 + 16], f.host_ip(to));
            wire::store_be16(&frame[14 + 20], static_cast<std::uint16_t>(r.next_u64()));
            f.send(h, frame, now);
        }
        now += gap_ns;
        benchmark::DoNotOptimize(f.deliver(now, [](auto, auto) {}));
    }
    const std::uint64_t hops = f.counters().hops - hops_before;
    state.SetItemsProcessed(static_cast<std::int64_t>(hops));
    state.counters["hops_per_frame"] =
        static_cast<double>(hops) / static_cast<double>(f.counters().sent);
    state.counters["pool_high_water"] = static_cast<double>(f.pool_high_water());
}
// leaves, hosts per leaf, spines, offered load %
BENCHMARK(BM_fabric_hops)->Args({4, 16, 8, 50})->Args({32, 32, 32, 50})->Args({32, 32, 32, 90});

}  // namespace
BENCHMARK_MAIN();
