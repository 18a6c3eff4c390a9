// Sealing and opening allocate nothing once a domain and its keys are set up: neither lib/tss
// (operator new) nor OpenSSL (CRYPTO_malloc, counted through CRYPTO_set_mem_functions, which
// must be installed before OpenSSL's first allocation, hence the static initializer).
#include <gtest/gtest.h>
#include <openssl/crypto.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <vector>

#include "tss/secure_engine.hpp"
#include "tss/sublayer.hpp"
#include "tss_helpers.hpp"

namespace {

std::atomic<std::uint64_t> allocations{0};

void* counted_malloc(std::size_t n, const char*, int) {
    ++allocations;
    return std::malloc(n);
}
void* counted_realloc(void* p, std::size_t n, const char*, int) {
    ++allocations;
    return std::realloc(p, n);
}
void counted_free(void* p, const char*, int) {
    std::free(p);
}
const bool hooked = CRYPTO_set_mem_functions(counted_malloc, counted_realloc, counted_free) == 1;

}  // namespace

void* operator new(std::size_t n) {
    ++allocations;
    if (void* p = std::malloc(n ? n : 1)) return p;
    throw std::bad_alloc();
}
// GCC, inlining these replacements into a caller's delete, takes free() for a mismatch.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void operator delete(void* p) noexcept {
    std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
    std::free(p);
}
#pragma GCC diagnostic pop

namespace {

using namespace uet::tss;

TEST(tss_alloc, seal_and_open_allocate_nothing_per_frame) {
    ASSERT_TRUE(hooked);
    {
        // The count sees OpenSSL's allocations: a GCM context makes one.
        const std::uint64_t start = allocations.load();
        gcm g;
        EXPECT_GT(allocations.load(), start);
    }
    sublayer tx, rx;
    secure_domain* s = tx.add_domain({.sdi = 3, .rekey_mask = 0xff0, .rekey_shift = 4});
    secure_domain* r = rx.add_domain({.sdi = 3, .rekey_mask = 0xff0, .rekey_shift = 4});
    s->set_key(false, test::counting_key());
    r->set_key(false, test::counting_key());
    const auto plain = test::udp_frame(std::vector<std::uint8_t>(1000, 7));
    std::vector<std::uint8_t> buf(plain.size() + 64);
    auto one = [&] {
        const std::size_t n = tx.seal_frame(*s, plain, buf);
        std::span<std::uint8_t> out;
        return n != 0 && rx.open_frame(std::span(buf).first(n), out) == drop_reason::none;
    };
    ASSERT_TRUE(one());  // first key derivations, contexts keyed
    std::vector<std::uint8_t> forged(buf.size()), replay(buf.size());
    const std::uint64_t before = allocations.load();
    // 64 frames cross four rekey intervals: the KDF runs on both sides, still without allocating.
    for (int i = 0; i < 64; ++i)
        ASSERT_TRUE(one()) << i;
    EXPECT_EQ(allocations.load() - before, 0u);
    EXPECT_GE(rx.stats().kdf_runs, 5u);
    // The drop paths too: a forged ICV and a replay.
    const std::size_t n = tx.seal_frame(*s, plain, buf);
    std::copy(buf.begin(), buf.begin() + n, forged.begin());
    std::copy(buf.begin(), buf.begin() + n, replay.begin());
    forged[n - 1] ^= 1;
    std::span<std::uint8_t> out;
    ASSERT_EQ(rx.open_frame(std::span(forged).first(n), out), drop_reason::bad_icv);
    ASSERT_EQ(rx.open_frame(std::span(replay).first(n), out), drop_reason::none);
    ASSERT_EQ(rx.open_frame(std::span(buf).first(n), out), drop_reason::replay);
    EXPECT_EQ(allocations.load() - before, 0u);
}

// An endpoint's wrapper: a burst sealed in the port's rooms and opened into its own buffers
// allocates nothing either.
TEST(tss_alloc, secure_engine_bursts_allocate_nothing) {
    test::stand_in a, b;
    a.frame = test::udp_frame(std::vector<std::uint8_t>(1000, 7));
    a.per_call = 8;
    secure_engine tx(a, {.sdi = 4}, test::counting_key(), 1200),
        rx(b, {.sdi = 4}, test::counting_key(), 1200);
    std::vector<std::vector<std::uint8_t>> rooms(8, std::vector<std::uint8_t>(2048));
    std::vector<uet::tx_frame> out(8);
    std::vector<std::span<const std::uint8_t>> in(8);
    b.received.reserve(64);
    const auto burst = [&] {
        for (std::size_t k = 0; k < out.size(); ++k) {
            out[k] = uet::tx_frame{};
            out[k].room = rooms[k];
        }
        const std::size_t n = tx.transmit(0, out);
        for (std::size_t k = 0; k < n; ++k)
            in[k] = out[k].data;
        rx.receive_burst(std::span(in).first(n), nullptr, 0);
    };
    burst();  // keys derived, contexts keyed
    const std::uint64_t before = allocations.load(), got = b.received.size();
    b.received.clear();  // keeps its room; the stand-in's copies are the test's own
    for (int i = 0; i < 4; ++i)
        burst();
    EXPECT_EQ(got, 8u);
    EXPECT_EQ(rx.stats().opened, 40u);
    EXPECT_EQ(allocations.load() - before - 32, 0u);  // the stand-in's 32 copies
}

}  // namespace
