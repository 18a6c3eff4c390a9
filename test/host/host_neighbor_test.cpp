// neighbor_table: ARP request/reply, cache expiry, static entries, the pending-frame bound,
// retry and give-up, the gateway route.
#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "host/neighbor.hpp"
#include "wire/frame.hpp"

namespace {

using namespace uet;
using host::neighbor_table;

constexpr std::uint32_t ip(int a, int b, int c, int d) {
    return (std::uint32_t(a) << 24) | (b << 16) | (c << 8) | d;
}
const wire::mac_address our_mac{{0x02, 0, 0, 0, 0, 1}};
const wire::mac_address peer_mac{{0x02, 0, 0, 0, 0, 2}};

host::interface_config iface() {
    return {our_mac, ip(10, 0, 0, 1), 24, ip(10, 0, 0, 254)};
}

// Decodes the next output frame as ARP; returns false if there is none or it is not ARP.
bool next_arp(neighbor_table& t, std::uint64_t now, wire::arp_packet& arp,
              wire::eth_header* eth = nullptr) {
    std::vector<std::uint8_t> buf(9216);
    const std::size_t n = t.poll_output(now, buf);
    if (n == 0) return false;
    wire::l2l4_view v;
    if (wire::parse_l2l4(std::span(buf).first(n), v) != wire::reject_reason::none) return false;
    if (eth) *eth = v.eth;
    arp = v.arp;
    return v.l3 == wire::l2l4_view::l3_kind::arp;
}

wire::arp_packet reply_from_peer() {
    wire::arp_packet r;
    r.op = wire::arp_op_reply;
    r.sha = peer_mac;
    r.spa = ip(10, 0, 0, 2);
    r.tha = our_mac;
    r.tpa = ip(10, 0, 0, 1);
    return r;
}

TEST(neighbor, routes_off_subnet_via_gateway) {
    neighbor_table t(iface());
    EXPECT_EQ(t.next_hop(ip(10, 0, 0, 9)), ip(10, 0, 0, 9));
    EXPECT_EQ(t.next_hop(ip(10, 0, 1, 9)), ip(10, 0, 0, 254));
    host::interface_config no_gw = iface();
    no_gw.gateway = 0;
    neighbor_table t2(no_gw);
    EXPECT_EQ(t2.next_hop(ip(192, 168, 0, 1)), 0u);
}

TEST(neighbor, request_reply_and_lookup) {
    neighbor_table t(iface());
    EXPECT_FALSE(t.resolve(ip(10, 0, 0, 2), 0));
    wire::arp_packet arp;
    wire::eth_header eth;
    ASSERT_TRUE(next_arp(t, 0, arp, &eth));
    EXPECT_EQ(arp.op, wire::arp_op_request);
    EXPECT_EQ(arp.tpa, ip(10, 0, 0, 2));
    EXPECT_TRUE(eth.dst.is_broadcast());
    EXPECT_FALSE(next_arp(t, 1, arp));  // no second request before retry_ns
    t.on_arp(reply_from_peer(), 10);
    ASSERT_TRUE(t.lookup(ip(10, 0, 0, 2), 10).has_value());
    EXPECT_EQ(*t.lookup(ip(10, 0, 0, 2), 10), peer_mac);
    EXPECT_TRUE(t.resolve(ip(10, 0, 0, 2), 11));
}

TEST(neighbor, retries_then_gives_up_and_drops_pending) {
    host::neighbor_config cfg;
    cfg.retry_ns = 100;
    cfg.max_requests = 3;
    neighbor_table t(iface(), cfg);
    wire::mac_address mac;
    const std::vector<std::uint8_t> frame(100, 0xab);
    EXPECT_EQ(t.send_or_hold(ip(10, 0, 0, 2), frame, 0, mac), neighbor_table::send_result::queued);
    wire::arp_packet arp;
    int requests = 0;
    for (std::uint64_t now = 0; now < 2000; now += 10) {
        while (next_arp(t, now, arp))
            ++requests;
    }
    EXPECT_EQ(requests, 3);
    EXPECT_EQ(t.stats()[host::neighbor_drop::unresolved], 1u);
    EXPECT_EQ(t.state_of(ip(10, 0, 0, 2)), neighbor_table::state::free);
}

TEST(neighbor, pending_queue_is_bounded_and_released_in_order_with_macs) {
    host::neighbor_config cfg;
    cfg.pending_per_neighbor = 3;
    neighbor_table t(iface(), cfg);
    wire::mac_address mac;
    for (std::uint8_t i = 0; i < 5; ++i) {
        std::vector<std::uint8_t> frame(60, i);
        const auto r = t.send_or_hold(ip(10, 0, 0, 2), frame, 0, mac);
        EXPECT_EQ(
            r, i < 3 ? neighbor_table::send_result::queued : neighbor_table::send_result::dropped);
    }
    EXPECT_EQ(t.stats()[host::neighbor_drop::pending_full], 2u);
    wire::arp_packet arp;
    ASSERT_TRUE(next_arp(t, 0, arp));  // the request
    t.on_arp(reply_from_peer(), 5);
    std::vector<std::uint8_t> out(9216);
    for (std::uint8_t i = 0; i < 3; ++i) {
        const std::size_t n = t.poll_output(6, out);
        ASSERT_EQ(n, 60u);
        EXPECT_EQ(std::vector<std::uint8_t>(out.begin(), out.begin() + 6),
                  std::vector<std::uint8_t>(peer_mac.octets.begin(), peer_mac.octets.end()));
        EXPECT_EQ(std::vector<std::uint8_t>(out.begin() + 6, out.begin() + 12),
                  std::vector<std::uint8_t>(our_mac.octets.begin(), our_mac.octets.end()));
        EXPECT_EQ(out[20], i);  // arrival order kept
    }
    EXPECT_EQ(t.poll_output(7, out), 0u);
    EXPECT_EQ(t.send_or_hold(ip(10, 0, 0, 2), std::vector<std::uint8_t>(60), 8, mac),
              neighbor_table::send_result::ready);
    EXPECT_EQ(mac, peer_mac);
}

TEST(neighbor, entries_expire) {
    host::neighbor_config cfg;
    cfg.reachable_ns = 1000;
    neighbor_table t(iface(), cfg);
    t.resolve(ip(10, 0, 0, 2), 0);
    t.on_arp(reply_from_peer(), 0);
    EXPECT_TRUE(t.lookup(ip(10, 0, 0, 2), 999).has_value());
    EXPECT_FALSE(t.lookup(ip(10, 0, 0, 2), 1000).has_value());
    EXPECT_FALSE(t.resolve(ip(10, 0, 0, 2), 1001));  // resolving again
    wire::arp_packet arp;
    EXPECT_TRUE(next_arp(t, 1001, arp));
}

// poll_output runs on every transmit burst, so aging walks the table only when the earliest
// expiry is due; every entry still expires on time, and next_deadline names the next one.
TEST(neighbor, aging_by_deadline_still_expires_every_entry) {
    host::neighbor_config cfg;
    cfg.reachable_ns = 1000;
    neighbor_table t(iface(), cfg);
    std::vector<std::uint8_t> buf(9216);
    for (std::uint8_t k = 2; k <= 5; ++k) {
        EXPECT_FALSE(t.resolve(ip(10, 0, 0, k), 0));
        EXPECT_GT(t.poll_output(0, buf), 0u);  // the request
    }
    for (std::uint8_t k = 2; k <= 5; ++k) {
        wire::arp_packet r = reply_from_peer();
        r.sha.octets[5] = k;
        r.spa = ip(10, 0, 0, k);
        t.on_arp(r, k * 100u);
    }
    EXPECT_EQ(t.size(), 4u);
    EXPECT_EQ(t.poll_output(500, buf), 0u);
    EXPECT_EQ(t.next_deadline(), 1200u);
    EXPECT_EQ(t.poll_output(1199, buf), 0u);
    EXPECT_EQ(t.stats().expired, 0u);
    EXPECT_EQ(t.poll_output(1250, buf), 0u);
    EXPECT_EQ(t.stats().expired, 1u);
    EXPECT_FALSE(t.lookup(ip(10, 0, 0, 2), 1250).has_value());
    EXPECT_TRUE(t.lookup(ip(10, 0, 0, 3), 1250).has_value());
    EXPECT_EQ(t.next_deadline(), 1300u);
    EXPECT_EQ(t.poll_output(10'000, buf), 0u);
    EXPECT_EQ(t.stats().expired, 4u);
    EXPECT_EQ(t.size(), 0u);
    EXPECT_EQ(t.next_deadline(), std::numeric_limits<std::uint64_t>::max());
}

TEST(neighbor, static_entries_never_expire_nor_change) {
    host::neighbor_config cfg;
    cfg.reachable_ns = 10;
    neighbor_table t(iface(), cfg);
    const wire::mac_address fixed{{0x02, 9, 9, 9, 9, 9}};
    t.add_static(ip(10, 0, 0, 2), fixed);
    t.on_arp(reply_from_peer(), 5);
    EXPECT_EQ(t.stats()[host::neighbor_drop::static_protected], 1u);
    EXPECT_EQ(*t.lookup(ip(10, 0, 0, 2), 1'000'000), fixed);
}

TEST(neighbor, answers_requests_for_our_address_only) {
    neighbor_table t(iface());
    wire::arp_packet req;
    req.op = wire::arp_op_request;
    req.sha = peer_mac;
    req.spa = ip(10, 0, 0, 2);
    req.tpa = ip(10, 0, 0, 7);  // someone else
    t.on_arp(req, 0);
    wire::arp_packet out;
    EXPECT_FALSE(next_arp(t, 0, out));
    EXPECT_EQ(t.stats()[host::neighbor_drop::arp_not_for_us], 1u);
    EXPECT_FALSE(t.lookup(ip(10, 0, 0, 2), 0).has_value());  // not learned either
    req.tpa = ip(10, 0, 0, 1);
    t.on_arp(req, 0);
    wire::eth_header eth;
    ASSERT_TRUE(next_arp(t, 0, out, &eth));
    EXPECT_EQ(out.op, wire::arp_op_reply);
    EXPECT_EQ(out.sha, our_mac);
    EXPECT_EQ(out.spa, ip(10, 0, 0, 1));
    EXPECT_EQ(out.tpa, ip(10, 0, 0, 2));
    EXPECT_EQ(eth.dst, peer_mac);
    EXPECT_EQ(*t.lookup(ip(10, 0, 0, 2), 0), peer_mac);  // the requester was learned
}

TEST(neighbor, refuses_hostile_senders) {
    neighbor_table t(iface());
    wire::arp_packet bad = reply_from_peer();
    bad.sha = wire::mac_address::broadcast();
    t.on_arp(bad, 0);
    bad = reply_from_peer();
    bad.spa = ip(10, 0, 0, 1);  // claims our address
    t.on_arp(bad, 0);
    EXPECT_EQ(t.stats()[host::neighbor_drop::arp_bad_sender], 2u);
    t.on_arp(reply_from_peer(), 0);  // unsolicited
    EXPECT_EQ(t.stats()[host::neighbor_drop::arp_unsolicited], 1u);
    EXPECT_EQ(t.size(), 0u);
}

TEST(neighbor, table_full_evicts_oldest_learned_entry) {
    host::neighbor_config cfg;
    cfg.max_neighbors = 2;
    neighbor_table t(iface(), cfg);
    for (int i = 2; i <= 3; ++i) {
        t.resolve(ip(10, 0, 0, i), 0);
        auto r = reply_from_peer();
        r.spa = ip(10, 0, 0, i);
        t.on_arp(r, static_cast<std::uint64_t>(i));
    }
    EXPECT_FALSE(t.resolve(ip(10, 0, 0, 4), 10));
    EXPECT_EQ(t.state_of(ip(10, 0, 0, 2)), neighbor_table::state::free);  // evicted
    EXPECT_EQ(t.state_of(ip(10, 0, 0, 4)), neighbor_table::state::incomplete);
}

}  // namespace
