// engine_handler end to end without DPDK: two engines, each under a host_stack, joined by an
// in-memory wire with loss. The engines know each other only by IP (placeholder MACs): the host
// stacks resolve the MACs by ARP and fill them in. Every mode's messages arrive verified.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/rng.hpp"
#include "host/engine_handler.hpp"
#include "host/host_stack.hpp"
#include "messages.hpp"

namespace {

using namespace uet;

constexpr std::uint32_t ip_a = 0x0a000001, ip_b = 0x0a000002;

// Zero-copy test double: payloads of 256 bytes and more are "registered" in region 7.
constexpr std::uint32_t test_region = 7;
struct large_payloads final : payload_memory {
    std::uint32_t find(const std::uint8_t*, std::size_t length) noexcept override {
        return length >= 256 ? test_region : no_payload_region;
    }
} reference_large;

// The shortest payload the engine offered reference_large_noting (SIZE_MAX: none).
std::size_t shortest_offered = SIZE_MAX;
struct large_payloads_noting final : payload_memory {
    std::uint32_t find(const std::uint8_t* data, std::size_t length) noexcept override {
        shortest_offered = std::min(shortest_offered, length);
        return reference_large.find(data, length);
    }
} reference_large_noting;

// reference_min: engine_config::reference_min_bytes, with the double that notes its calls.
engine_config make_engine(std::uint32_t ip, std::uint64_t seed, bool zero_copy = false,
                          bool udp_checksum = true, std::uint32_t reference_min = 0) {
    engine_config c;
    if (zero_copy)
        c.zero_copy = reference_min != 0 ? static_cast<payload_memory*>(&reference_large_noting)
                                         : &reference_large;
    c.reference_min_bytes = reference_min;
    c.udp_checksum = udp_checksum;
    c.ip = ip;
    c.seed = seed;
    c.mtu_payload = 1400;
    c.mpr = 256;
    c.max_message_size = 4u << 20;
    return c;
}

struct side {
    side(std::uint32_t ip, std::uint8_t id, bool zero_copy = false, bool udp_checksum = true,
         std::uint32_t reference_min = 0)
        : e(make_engine(ip, id, zero_copy, udp_checksum, reference_min)),
          handler(e),
          host(make_host(ip, id), handler) {
        host.on_start({});
    }
    static host::host_config make_host(std::uint32_t ip, std::uint8_t id) {
        host::host_config h;
        h.iface = {{{0x02, 0, 0, 0, 0, id}}, ip, 24, 0};
        return h;
    }
    uet::engine e;
    host::engine_handler handler;
    host::host_stack host;
};

struct wire_counts {
    std::uint64_t frames = 0, by_reference = 0, bad_region = 0;
    std::uint64_t udp = 0, udp_checksum_zero = 0;  // UET frames, and those sent without a sum
};

// Moves one burst from `from` to `to` through slots of slot_size bytes, dropping each frame with
// probability p. A frame with ext set goes out as a port without zero-copy sends it: the
// registered payload copied behind the slot's bytes.
void transfer(side& from, side& to, std::uint64_t now, uet::rng& loss, double p,
              std::size_t slot_size = 9216, wire_counts* counts = nullptr) {
    std::vector<std::vector<std::uint8_t>> bufs(host::burst_size,
                                                std::vector<std::uint8_t>(slot_size));
    std::vector<host::tx_frame> frames(host::burst_size);
    for (std::size_t i = 0; i < frames.size(); ++i)
        frames[i].reset(bufs[i], nullptr);
    const std::size_t n = from.host.on_transmit(now, frames);
    std::vector<std::uint8_t> joined;
    for (std::size_t i = 0; i < n; ++i) {
        std::span<const std::uint8_t> frame(frames[i].buffer.data(), frames[i].length);
        const auto& ext = frames[i].ext;
        if (counts) {
            ++counts->frames;
            counts->by_reference += ext.length != 0;
            counts->bad_region += ext.length != 0 && ext.region != test_region;
            // Ethernet type IPv4, protocol UDP (no VLAN, 20-byte IP header): checksum at 40.
            if (frame.size() >= 42 && frame[12] == 0x08 && frame[13] == 0x00 && frame[23] == 17) {
                ++counts->udp;
                counts->udp_checksum_zero += frame[40] == 0 && frame[41] == 0;
            }
        }
        if (ext.length != 0) {
            joined.assign(frame.begin(), frame.end());
            joined.insert(joined.end(), ext.data, ext.data + ext.length);
            frame = joined;
        }
        if (loss.uniform(1'000'000) < p * 1e6) continue;
        to.host.on_receive(frame, now);
    }
}

void drain(side& s, itest::plan_receiver& r) {
    received_message m;
    while (s.e.poll_received(m)) {
        EXPECT_TRUE(r.on_message(m)) << r.last_error();
        s.e.release(m.handle);
    }
}

// a sends plan to b (which knows a only by IP: ARP first) over 1% loss both ways, the first
// 20 steps clean; every message must arrive verified, exactly once.
void run_plan(side& a, side& b, const char* plan_text, std::uint64_t seed,
              wire_counts* counts = nullptr) {
    const auto plan = itest::parse_plan(plan_text);
    const peer_id to_b = a.e.add_peer({}, ip_b);  // MAC left to the host stack
    itest::plan_sender sender(a.e, to_b, plan, seed);
    itest::plan_receiver receiver(plan, seed);
    uet::rng loss(seed + 4);
    std::uint64_t now = 1'000'000;
    for (int step = 0; step < 400000 && !(sender.complete() && receiver.complete()); ++step) {
        now += 5'000;
        sender.step(now);
        transfer(a, b, now, loss, step < 20 ? 0.0 : 0.01, 9216, counts);
        transfer(b, a, now, loss, 0.01);
        drain(b, receiver);
    }
    ASSERT_TRUE(sender.complete()) << sender.progress();
    ASSERT_TRUE(receiver.complete()) << receiver.progress();
    EXPECT_EQ(sender.failures(), 0u);
    EXPECT_EQ(receiver.errors(), 0u) << receiver.last_error();
}

TEST(engine_handler, every_mode_arrives_verified_over_lossy_wire_with_arp) {
    side a(ip_a, 1), b(ip_b, 2);
    run_plan(a, b, "uud:1k*20,rud:1k*20,rud:1m*2,rod:64k*8,rudi:200k*3", 7);
    EXPECT_GT(a.e.counters().pds.retransmits[0] + a.e.counters().pds.retransmits[1] +
                  a.e.counters().pds.retransmits[2],
              0u);
    EXPECT_GT(a.host.neighbors().stats().requests_sent, 0u);
    EXPECT_EQ(b.host.stats()[host::host_drop::not_our_mac], 0u);
    EXPECT_EQ(a.handler.stats().tx_too_large, 0u);
    // Every frame was built in the runtime's slot: no copy of a frame after the engine's.
    EXPECT_EQ(a.handler.stats().bytes_copied_tx, 0u);
    EXPECT_GE(a.handler.stats().frames_tx, 1000u);
}

TEST(engine_handler, payloads_in_registered_memory_go_out_by_reference) {
    side a(ip_a, 1, true), b(ip_b, 2, true);
    // Large payloads by reference (retransmissions too), small ones and the 100-byte tails of
    // messages copied; the receiver sees the same bytes either way.
    wire_counts counts;
    run_plan(a, b, "uud:1k*20,rud:1k*20,rud:1m*2,rod:64k*8,rudi:200k*3,rud:100*20", 9, &counts);
    EXPECT_EQ(b.e.counters().rejected(wire::reject_reason::bad_udp_checksum), 0u);
    EXPECT_EQ(counts.bad_region, 0u);
    // Frames the host stack held for ARP at the start went out later as copies.
    EXPECT_LE(counts.by_reference, a.handler.stats().frames_by_reference);
    EXPECT_GT(a.host.neighbors().stats().requests_sent, 0u);
    EXPECT_GT(counts.by_reference, 1000u);
    EXPECT_LT(counts.by_reference, counts.frames);  // ACKs, small payloads: copied
    EXPECT_EQ(a.handler.stats().bytes_copied_tx, 0u);
}

TEST(engine_handler, without_udp_checksum_every_frame_carries_zero_and_arrives) {
    side a(ip_a, 1, true, false), b(ip_b, 2, false, false);
    wire_counts counts;
    run_plan(a, b, "uud:1k*10,rud:1k*10,rud:1m*2,rod:64k*4,rudi:200k*2", 5, &counts);
    EXPECT_GT(counts.udp, 1000u);
    EXPECT_EQ(counts.udp_checksum_zero, counts.udp);
    EXPECT_GT(counts.by_reference, 0u);
}

// With reference_min_bytes the engine never offers a shorter payload by reference, and runs of
// small sends (their frames copied from the run's first) mix with referenced ones intact.
TEST(engine_handler, payloads_under_the_reference_minimum_are_never_offered) {
    side a(ip_a, 1, true, false, 256), b(ip_b, 2, false, false);
    shortest_offered = SIZE_MAX;
    wire_counts counts;
    run_plan(a, b, "rud:32*300,rud:1k*20,rud:100*300,rud:300*50,rud:64k*4,rud:32*300", 11, &counts);
    EXPECT_GT(counts.by_reference, 0u);
    EXPECT_EQ(counts.bad_region, 0u);
    EXPECT_GE(shortest_offered, 256u);
    EXPECT_NE(shortest_offered, SIZE_MAX);
    EXPECT_GT(a.e.counters().frames_sent_in_runs, 600u);
}

TEST(engine_handler, frames_larger_than_the_slot_are_dropped_and_counted) {
    side a(ip_a, 1), b(ip_b, 2);
    a.host.neighbors().add_static(ip_b, {{0x02, 0, 0, 0, 0, 2}});
    std::vector<std::uint8_t> data(1400, 5);
    ASSERT_TRUE(a.e.post_send(a.e.add_peer({}, ip_b), delivery_mode::rud, data, 1).ok());
    uet::rng loss(1);
    transfer(a, b, 1'000'000, loss, 0.0, 512);
    EXPECT_GT(a.handler.stats().tx_too_large, 0u);
    EXPECT_EQ(a.handler.stats().frames_tx, 0u);
    EXPECT_EQ(b.e.counters().frames_rx, 0u);
}

TEST(messages, detect_corruption_and_plan_violations) {
    const auto plan = itest::parse_plan("rod:1k*3,uud:64*1");
    std::vector<std::uint8_t> m0(1024), m1(1024);
    itest::fill_message(m0, 1, 0, delivery_mode::rod);
    itest::fill_message(m1, 1, 1, delivery_mode::rod);
    itest::message_header h;
    EXPECT_EQ(itest::check_message(m0, h), itest::message_error::none);
    auto bad = m0;
    bad[700] ^= 1;
    EXPECT_EQ(itest::check_message(bad, h), itest::message_error::bad_checksum);

    itest::plan_receiver r(plan, 1);
    received_message rm;
    rm.mode = delivery_mode::rod;
    rm.data = m1;
    EXPECT_FALSE(r.on_message(rm));  // index 0 skipped
    rm.data = m0;
    EXPECT_TRUE(r.on_message(rm));
    EXPECT_FALSE(r.on_message(rm));  // twice
    EXPECT_EQ(r.errors(), 2u);
    EXPECT_FALSE(r.complete());
    EXPECT_THROW(itest::parse_plan("rud:16*1"), std::invalid_argument);
    EXPECT_THROW(itest::parse_plan("xyz:1k*1"), std::invalid_argument);
}

}  // namespace
