// lib/tss on one core: sealing and opening whole 4 KiB-payload UET frames through the sublayer
// (frame parsing, key cache, IV/AAD, AES-256-GCM, replay window, header rewrite). Bytes/s count
// the UDP payload bytes passed through AES-GCM: a seal+open iteration counts them twice, so the
// figure compares with `openssl speed -evp aes-256-gcm -bytes 4096` (bench/tss_vs_openssl.sh).
#include <benchmark/benchmark.h>

#include <cstring>
#include <vector>

#include "tss/sublayer.hpp"
#include "tss_helpers.hpp"

namespace {

using namespace uet;

std::vector<std::uint8_t> plain_frame(std::size_t payload) {
    return tss::test::udp_frame(std::vector<std::uint8_t>(payload, 0x5a));
}

struct pair {
    tss::sublayer tx, rx;
    tss::secure_domain* s;
    pair() {
        s = tx.add_domain({.sdi = 1});
        rx.add_domain({.sdi = 1})->set_key(false, tss::test::counting_key());
        s->set_key(false, tss::test::counting_key());
    }
};

// One frame through pair p's sender and receiver; false if either refused it.
bool seal_open(pair& p, std::span<const std::uint8_t> plain, std::vector<std::uint8_t>& buf) {
    const std::size_t n = p.tx.seal_frame(*p.s, plain, buf);
    std::span<std::uint8_t> out;
    return n != 0 && p.rx.open_frame(std::span(buf).first(n), out) == tss::drop_reason::none;
}

void BM_tss_seal_open(benchmark::State& state) {
    const std::size_t payload = static_cast<std::size_t>(state.range(0));
    pair p;
    const auto plain = plain_frame(payload);
    std::vector<std::uint8_t> sealed(plain.size() + 64);
    for (auto _ : state)
        if (!seal_open(p, plain, sealed)) state.SkipWithError("seal or open failed");
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * payload * 2));
}
BENCHMARK(BM_tss_seal_open)->Arg(4096)->Arg(1024)->Arg(256);

void BM_tss_seal(benchmark::State& state) {
    const std::size_t payload = static_cast<std::size_t>(state.range(0));
    pair p;
    const auto plain = plain_frame(payload);
    std::vector<std::uint8_t> sealed(plain.size() + 64);
    for (auto _ : state) {
        benchmark::DoNotOptimize(p.tx.seal_frame(*p.s, plain, sealed));
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * payload));
}
BENCHMARK(BM_tss_seal)->Arg(4096);

// Burst of 32: seal_burst then open_burst, one call each.
void BM_tss_burst32_seal_open(benchmark::State& state) {
    const std::size_t payload = static_cast<std::size_t>(state.range(0));
    constexpr std::size_t burst = 32;
    pair p;
    const auto plain = plain_frame(payload);
    std::vector<std::vector<std::uint8_t>> bufs(burst,
                                                std::vector<std::uint8_t>(plain.size() + 64));
    std::array<tss::seal_item, burst> seals;
    std::array<tss::open_item, burst> opens;
    for (auto _ : state) {
        for (std::size_t i = 0; i < burst; ++i)
            seals[i] = {plain, bufs[i]};
        if (p.tx.seal_burst(*p.s, seals) != burst) state.SkipWithError("seal failed");
        for (std::size_t i = 0; i < burst; ++i)
            opens[i] = {.frame = std::span(bufs[i]).first(seals[i].size)};
        if (p.rx.open_burst(opens) != burst) state.SkipWithError("open failed");
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * payload * 2 * burst));
}
BENCHMARK(BM_tss_burst32_seal_open)->Arg(4096);

}  // namespace

BENCHMARK_MAIN();
