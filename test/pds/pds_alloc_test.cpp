// The engine never allocates per packet: once warmed up, single-packet messages of every mode
// (and multi-packet RUD messages whose size class has been used before) go through two engines
// and the pipe with zero calls to operator new.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>

#include "workload.hpp"

namespace {
std::atomic<bool> counting{false};
std::atomic<std::uint64_t> allocations{0};
}  // namespace

// Replacements of the global allocation functions: malloc/free underneath all of them.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

void* operator new(std::size_t n) {
    if (counting.load(std::memory_order_relaxed)) allocations.fetch_add(1);
    if (void* p = std::malloc(n ? n : 1)) return p;
    throw std::bad_alloc();
}
void* operator new[](std::size_t n) {
    return operator new(n);
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
    if (counting.load(std::memory_order_relaxed)) allocations.fetch_add(1);
    return std::malloc(n ? n : 1);
}
void* operator new[](std::size_t n, const std::nothrow_t& t) noexcept {
    return operator new(n, t);
}
void operator delete(void* p) noexcept {
    std::free(p);
}
void operator delete[](void* p) noexcept {
    std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
    std::free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
    std::free(p);
}

namespace uet::test {
namespace {

TEST(pds_alloc, steady_state_traffic_allocates_nothing) {
    const engine_config ca = endpoint_config(1, 3), cb = endpoint_config(2, 4);
    engine a(ca), b(cb);
    pipe::impairments imp;
    imp.delay_ns = 2'000;
    imp.loss = 0.02;  // retransmissions, SACK and timers too
    imp.trim = 0.02;
    pipe::duplex net(imp, 5, 4096, 9216);
    harness h(a, b, net);
    const peer_id to_b = a.add_peer(cb.mac, cb.ip);
    std::array<send_completion, 64> done{};
    auto round = [&](std::size_t n) {
        std::size_t posted = 0, completed = 0, received = 0;
        const delivery_mode modes[] = {delivery_mode::rud, delivery_mode::rod, delivery_mode::rudi,
                                       delivery_mode::uud};
        for (std::size_t i = 0; i < n; ++i) {
            const delivery_mode m = modes[i % 4];
            const std::uint32_t size = m == delivery_mode::rud && i % 8 == 0 ? 40000 : 1000;
            ASSERT_TRUE(a.post_send(to_b, m, message_bytes(i, size), i).ok());
            ++posted;
        }
        h.run_until(
            [&] {
                received_message msg;
                while (b.poll_received(msg)) {
                    ++received;
                    b.release(msg.handle);
                }
                completed += a.poll_send_completions(done);
                return completed == posted;
            },
            h.now() + 10'000'000'000ull);
        ASSERT_EQ(completed, posted);
        h.run_to(h.now() + 1'000'000);  // let PDCs close: opening and closing must not allocate
        ASSERT_TRUE(a.pdcs().empty());
    };
    // Warm-up: the reassembly size-class pool grows to the most large messages ever being
    // reassembled at once, which depends on how losses fall (and on how long a lost packet
    // waits for its timer); three rounds reach its high water.
    round(2000);
    round(2000);
    round(2000);
    counting = true;
    round(2000);
    counting = false;
    EXPECT_EQ(allocations.load(), 0u);
}

}  // namespace
}  // namespace uet::test
