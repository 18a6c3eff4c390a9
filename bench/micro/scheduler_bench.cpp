// The fabric model's scheduler (sim/fabric/event_heap.hpp) under the hold model, the classic
// priority-queue benchmark: n ports each hold one pending event; every operation takes the
// earliest, runs it and moves the port to a later time (a serialisation, or an arrival 1 us on),
// as the fabric does per packet hop. items/s is events scheduled per second.
#include <benchmark/benchmark.h>

#include <cstdint>

#include "core/rng.hpp"
#include "fabric/event_heap.hpp"

namespace {

using uet::netmodel::event_heap;

// leave: the port goes idle (leaves the heap) and comes back when a frame reaches it.
template <bool leave>
void BM_event_heap(benchmark::State& state) {
    const auto n = static_cast<std::uint32_t>(state.range(0));
    event_heap h(n);
    uet::rng r(1);
    // Times in ps: a 4 KB frame at 100 Gb/s is ~330 ns, a hop 1 us.
    for (std::uint32_t i = 0; i < n; ++i)
        h.set(i, r.uniform(1'000'000));
    for (auto _ : state) {
        const std::uint64_t t = h.top_time();
        const std::uint32_t id = h.top_id();
        if constexpr (leave) h.set(id, event_heap::never);
        const std::uint64_t step = (r.next_u64() & 1) ? 330'000 : 1'000'000 + r.uniform(330'000);
        h.set(id, t + step);
        benchmark::DoNotOptimize(t);
    }
    state.SetItemsProcessed(state.iterations());
}
// Busy ports: a 16-host rack, a 1,024-host leaf-spine, the 6,144 ports of a 1,024-host fat
// tree, and more.
BENCHMARK(BM_event_heap<false>)
    ->Name("BM_event_heap_hold")
    ->Arg(64)
    ->Arg(1024)
    ->Arg(8192)
    ->Arg(65536);
BENCHMARK(BM_event_heap<true>)->Name("BM_event_heap_leave_and_return")->Arg(1024)->Arg(65536);

}  // namespace
BENCHMARK_MAIN();
