// Cost of the PDS core per data packet: sender engine builds it, the pipe copies it (clean, 1 us),
// the receiver parses, places and acknowledges it, the sender processes the ACK. Two engines in
// one thread under the virtual-time harness the tests use; RUD, one packet per message.
#include <benchmark/benchmark.h>

#include <vector>

#include "harness.hpp"

namespace {

using namespace uet;

engine_config endpoint(std::uint8_t host) {
    engine_config c;
    c.mac = {{0x02, 0, 0, 0, 0, host}};
    c.ip = 0x0a000000u | host;
    c.seed = host;
    return c;
}

void pds_rud_packet(benchmark::State& state) {
    const auto payload = static_cast<std::uint32_t>(state.range(0));
    constexpr std::size_t batch = 256;
    const engine_config ca = endpoint(1), cb = endpoint(2);
    engine a(ca), b(cb);
    pipe::impairments imp;
    imp.delay_ns = 1'000;
    pipe::duplex net(imp, 1, 4096, 9216);
    test::harness h(a, b, net);
    const peer_id to_b = a.add_peer(cb.mac, cb.ip);
    const std::vector<std::uint8_t> data(payload, 0x5a);
    std::vector<send_completion> done(batch);
    std::uint64_t packets = 0;
    for (auto _ : state) {
        for (std::size_t i = 0; i < batch; ++i)
            a.post_send(to_b, delivery_mode::rud, data, i);
        std::size_t received = 0, completed = 0;
        h.run_until(
            [&] {
                received_message m;
                while (b.poll_received(m)) {
                    ++received;
                    b.release(m.handle);
                }
                completed += a.poll_send_completions(done);
                return received == batch && completed == batch;
            },
            ~std::uint64_t{0});
        packets += batch;
    }
    state.counters["packets/s"] =
        benchmark::Counter(static_cast<double>(packets), benchmark::Counter::kIsRate);
    state.counters["ns/packet"] = benchmark::Counter(
        static_cast<double>(packets), benchmark::Counter::kIsRate | benchmark::Counter::kInvert,
        benchmark::Counter::kIs1000);
    state.SetBytesProcessed(static_cast<std::int64_t>(packets * payload));
}
BENCHMARK(pds_rud_packet)->Arg(64)->Arg(1024)->Arg(4096)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
