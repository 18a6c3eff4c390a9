// Cost of the wire layer on the receive path: parsing whole frames, and the two integrity checks
// (UDP checksum, RoCEv2 ICRC) per byte. The frames are the golden samples the tests use.
#include <benchmark/benchmark.h>

#include <vector>

#include "dissect.hpp"
#include "golden.hpp"
#include "icrc.hpp"

namespace {

using namespace uet;

const golden::named_bytes& find_frame(const std::vector<golden::named_bytes>& frames,
                                      std::string_view prefix) {
    for (const auto& f : frames)
        if (f.name.starts_with(prefix)) return f;
    return frames.front();
}

void BM_dissect_uet_frame(benchmark::State& state) {
    static const auto frames = golden::uet_frames();
    const auto& f = find_frame(frames, "udp_pds_rud");
    for (auto _ : state) {
        wire::dissection d;
        benchmark::DoNotOptimize(wire::dissect(f.bytes, d));
        benchmark::DoNotOptimize(d);
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * f.bytes.size()));
}
BENCHMARK(BM_dissect_uet_frame);

void BM_dissect_roce_frame(benchmark::State& state) {
    static const auto frames = golden::roce_frames();
    const auto& f = find_frame(frames, "roce_rdma_write_first");
    for (auto _ : state) {
        wire::dissection d;
        benchmark::DoNotOptimize(wire::dissect(f.bytes, d));
        benchmark::DoNotOptimize(d);
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * f.bytes.size()));
}
BENCHMARK(BM_dissect_roce_frame);

void BM_internet_checksum(benchmark::State& state) {
    std::vector<std::uint8_t> buf(static_cast<std::size_t>(state.range(0)), 0x5a);
    for (auto _ : state)
        benchmark::DoNotOptimize(wire::internet_checksum(buf));
    state.SetBytesProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_internet_checksum)->Arg(64)->Arg(1500)->Arg(4096)->Arg(9000);

void BM_crc32(benchmark::State& state) {
    std::vector<std::uint8_t> buf(static_cast<std::size_t>(state.range(0)), 0x5a);
    for (auto _ : state)
        benchmark::DoNotOptimize(wire::crc32(buf));
    state.SetBytesProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_crc32)->Arg(64)->Arg(1500)->Arg(4096)->Arg(9000);

}  // namespace

BENCHMARK_MAIN();
