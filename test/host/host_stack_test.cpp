// host_stack end to end without DPDK: two stacks joined by an in-memory wire (with loss) resolve
// each other by ARP and run the integration tests' verified exchange; ping is answered; frames
// for other hosts are dropped by reason.
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <vector>

#include "core/rng.hpp"
#include "exchange.hpp"
#include "host/host_stack.hpp"
#include "host/icmp.hpp"
#include "lossy_wire.hpp"
#include "wire/frame.hpp"

namespace {

using namespace uet;

constexpr std::uint32_t ip_a = 0x0a000001, ip_b = 0x0a000002;

struct side {
    side(std::uint32_t ip, std::uint32_t peer, std::uint8_t id, std::uint32_t count)
        : x(make_x(ip, peer, id, count)), host(make_host(ip, id), x) {
        host.on_start({});
    }
    static itest::exchange_config make_x(std::uint32_t ip, std::uint32_t peer, std::uint8_t id,
                                         std::uint32_t count) {
        itest::exchange_config c;
        c.my_ip = ip;
        c.peer_ip = peer;
        c.count = count;
        c.max_frame = 1514;
        c.nonce = id;
        c.rto_ns = 1'000'000;
        return c;
    }
    static host::host_config make_host(std::uint32_t ip, std::uint8_t id) {
        host::host_config h;
        h.iface = {{{0x02, 0, 0, 0, 0, id}}, ip, 24, 0};
        return h;
    }
    itest::exchange x;
    host::host_stack host;
};

TEST(host_stack, exchange_over_lossy_wire_resolves_and_completes) {
    side a(ip_a, ip_b, 1, 2000), b(ip_b, ip_a, 2, 2000);
    test::lossy_wire link(7);
    std::uint64_t now = 0;
    for (int step = 0; step < 200000 && !(a.x.finished(now) && b.x.finished(now)); ++step) {
        now += 10'000;
        link.transfer(a.host, b.host, now, 0.02);
        link.transfer(b.host, a.host, now, 0.02);
    }
    ASSERT_TRUE(a.x.done()) << a.x.progress();
    ASSERT_TRUE(b.x.done()) << b.x.progress();
    EXPECT_EQ(a.x.counters().corrupt, 0u);
    EXPECT_EQ(b.x.counters().corrupt, 0u);
    EXPECT_GT(a.x.counters().retransmits + b.x.counters().retransmits, 0u);
    EXPECT_GT(a.host.neighbors().stats().requests_sent, 0u);
    EXPECT_TRUE(a.host.neighbors().lookup(ip_b, now).has_value());
}

// An endpoint talking to itself (MPI ranks send to their own address): every frame to our own
// address comes back to the inner handler without reaching the wire, where nobody would answer
// ARP for it, and the verified exchange completes.
TEST(host_stack, frames_to_our_own_address_come_back) {
    side a(ip_a, ip_a, 1, 500);
    std::vector<std::vector<std::uint8_t>> bufs(host::burst_size, std::vector<std::uint8_t>(1514));
    std::vector<host::tx_frame> frames(host::burst_size);
    std::size_t sent = 0;
    std::uint64_t now = 0;
    for (int step = 0; step < 20000 && !a.x.finished(now); ++step) {
        now += 10'000;
        for (std::size_t i = 0; i < frames.size(); ++i)
            frames[i].reset(bufs[i], nullptr);
        sent += a.host.on_transmit(now, frames);
    }
    ASSERT_TRUE(a.x.done()) << a.x.progress();
    EXPECT_EQ(a.x.counters().corrupt, 0u);
    EXPECT_EQ(sent, 0u);  // not one frame to the wire: no ARP for ourselves either
    EXPECT_GT(a.host.stats().looped_back, 500u);
    EXPECT_EQ(a.host.stats().loopback_dropped, 0u);
    EXPECT_EQ(a.host.neighbors().stats().requests_sent, 0u);
}

TEST(host_stack, answers_ping_and_drops_others_traffic) {
    side a(ip_a, ip_b, 1, 1);
    std::vector<std::uint8_t> data(32, 7), msg(64), frame(200);
    host::icmp_echo e;
    e.id = 5;
    e.sequence = 1;
    e.data = data;
    const std::size_t m = host::build_icmp_echo(e, msg);
    wire::frame_spec s;
    s.src_mac = {{0x02, 0, 0, 0, 0, 9}};
    s.dst_mac = {{0x02, 0, 0, 0, 0, 1}};
    s.src_ip = 0x0a000009;
    s.dst_ip = ip_a;
    const std::size_t n =
        wire::build_ip_frame(s, host::ip_proto_icmp, std::span(msg).first(m), frame);
    a.host.on_receive(std::span(frame).first(n), 0);
    EXPECT_EQ(a.host.next_deadline(), 0u);
    std::vector<std::uint8_t> out(9216);
    std::vector<host::tx_frame> frames(1);
    frames[0].reset(out, nullptr);
    ASSERT_EQ(a.host.on_transmit(0, frames), 1u);
    host::ipv4_frame_view v;
    ASSERT_EQ(host::parse_ipv4_frame(std::span(out).first(frames[0].length), v),
              host::ipv4_frame_error::none);
    EXPECT_EQ(v.ip.dst, 0x0a000009u);
    EXPECT_EQ(v.eth.dst, s.src_mac);
    EXPECT_EQ(a.host.stats().echo_replies, 1u);

    s.dst_ip = 0x0a000077;  // not ours
    const std::size_t n2 =
        wire::build_ip_frame(s, host::ip_proto_icmp, std::span(msg).first(m), frame);
    a.host.on_receive(std::span(frame).first(n2), 0);
    EXPECT_EQ(a.host.stats()[host::host_drop::not_our_ip], 1u);
    s.dst_mac = {{0x02, 0, 0, 0, 0, 0x55}};  // unicast to another MAC
    const std::size_t n3 =
        wire::build_ip_frame(s, host::ip_proto_icmp, std::span(msg).first(m), frame);
    a.host.on_receive(std::span(frame).first(n3), 0);
    EXPECT_EQ(a.host.stats()[host::host_drop::not_our_mac], 1u);
}

// An inner handler that sends one UDP frame to each address of a script, per burst.
struct scripted : host::frame_handler {
    std::vector<std::uint32_t> to;
    void on_receive(std::span<const std::uint8_t>, std::uint64_t) override {}
    std::size_t on_transmit(std::uint64_t, std::span<host::tx_frame> frames) override {
        const std::size_t n = std::min(frames.size(), to.size());
        for (std::size_t i = 0; i < n; ++i) {
            wire::frame_spec s;
            s.src_ip = ip_a;
            s.dst_ip = to[i];
            const std::uint8_t payload[4] = {1, 2, 3, static_cast<std::uint8_t>(i)};
            frames[i].length = wire::build_udp_frame(s, payload, frames[i].buffer);
        }
        to.clear();
        return n;
    }
    std::uint64_t next_deadline() const override { return host::no_deadline; }
};

// Frames of one burst to several next hops each get their own MAC; one to a next hop without a
// MAC is held even right after frames whose MAC was known.
TEST(host_stack, each_frame_of_a_burst_gets_its_next_hops_mac) {
    constexpr std::uint32_t ip_c = 0x0a000003, ip_d = 0x0a000004, far = 0x0b000001;
    const wire::mac_address mac_b{{0x02, 0, 0, 0, 0, 0xb}}, mac_c{{0x02, 0, 0, 0, 0, 0xc}},
        gw{{0x02, 0, 0, 0, 0, 0x9}};
    scripted inner;
    host::host_config h;
    h.iface = {{{0x02, 0, 0, 0, 0, 1}}, ip_a, 24, 0x0a000009};
    host::host_stack host(h, inner);
    host.on_start({});
    host.neighbors().add_static(ip_b, mac_b);
    host.neighbors().add_static(ip_c, mac_c);
    host.neighbors().add_static(0x0a000009, gw);
    inner.to = {ip_b, ip_b, ip_c, ip_b, far, ip_d, ip_b, ip_d, ip_c};
    std::vector<std::vector<std::uint8_t>> bufs(host::burst_size, std::vector<std::uint8_t>(256));
    std::vector<host::tx_frame> frames(host::burst_size);
    for (std::size_t i = 0; i < frames.size(); ++i)
        frames[i].reset(bufs[i], nullptr);
    const std::size_t n = host.on_transmit(0, frames);
    // ip_d has no MAC: its two frames wait for ARP; the rest go, in order.
    const std::vector<std::pair<std::uint32_t, wire::mac_address>> want = {
        {ip_b, mac_b}, {ip_b, mac_b}, {ip_c, mac_c}, {ip_b, mac_b},
        {far, gw},     {ip_b, mac_b}, {ip_c, mac_c}};
    ASSERT_EQ(n, want.size());
    for (std::size_t i = 0; i < n; ++i) {
        wire::l2l4_view v;
        ASSERT_EQ(wire::parse_l2l4(std::span(frames[i].buffer.data(), frames[i].length), v),
                  wire::reject_reason::none);
        EXPECT_EQ(v.ip.dst, want[i].first) << i;
        EXPECT_EQ(v.eth.dst, want[i].second) << i;
        EXPECT_EQ(v.eth.src, h.iface.mac) << i;
    }
    EXPECT_EQ(host.neighbors().state_of(ip_d), host::neighbor_table::state::incomplete);
}

// An ARP request nobody answers is sent again from the transmit path once its retry time has
// passed, and not before: with a frame held for the address, and with none (a resolution asked
// for alone, which only the table's aging brings due again).
class unanswered_arp : public ::testing::TestWithParam<bool> {};

TEST_P(unanswered_arp, is_repeated_when_its_retry_time_comes) {
    scripted inner;
    host::host_config h;
    h.iface = {{{0x02, 0, 0, 0, 0, 1}}, ip_a, 24, 0};
    host::host_stack host(h, inner);
    host.on_start({});
    std::vector<std::vector<std::uint8_t>> bufs(host::burst_size, std::vector<std::uint8_t>(256));
    std::vector<host::tx_frame> frames(host::burst_size);
    const auto transmit = [&](std::uint64_t now) {
        for (std::size_t i = 0; i < frames.size(); ++i)
            frames[i].reset(bufs[i], nullptr);
        return host.on_transmit(now, frames);
    };
    const auto& stats = host.neighbors().stats();
    if (GetParam()) {
        inner.to = {ip_b};  // held: ip_b has no MAC yet
        EXPECT_EQ(transmit(0), 0u);
    } else {
        host.neighbors().resolve(ip_b, 0);
    }
    EXPECT_EQ(transmit(1), 1u);  // the request
    EXPECT_EQ(stats.requests_sent, 1u);
    const std::uint64_t retry = host::neighbor_config{}.retry_ns;
    EXPECT_EQ(transmit(retry / 2), 0u);
    EXPECT_EQ(stats.requests_sent, 1u);
    EXPECT_EQ(transmit(1 + retry), 1u);  // due again
    EXPECT_EQ(stats.requests_sent, 2u);
    EXPECT_EQ(host.neighbors().state_of(ip_b), host::neighbor_table::state::incomplete);
}

INSTANTIATE_TEST_SUITE_P(host_stack, unanswered_arp, ::testing::Bool(),
                         [](const auto& p) { return p.param ? "frame_held" : "none_held"; });

// A port that classified a frame passes its classification on; the host stack takes it when
// the port looked for the same UDP ports, and looks again itself when not.
TEST(host_stack, takes_the_ports_classification_only_under_the_same_steering) {
    scripted inner;
    host::host_config h;
    h.iface = {{{0x02, 0, 0, 0, 0, 1}}, ip_a, 24, 0};
    host::host_stack host(h, inner);
    host.on_start({});
    wire::frame_spec s;
    s.src_mac = {{0x02, 0, 0, 0, 0, 2}};
    s.dst_mac = h.iface.mac;
    s.src_ip = ip_b;
    s.dst_ip = ip_a;
    s.dst_port = h.steering.uet_port;
    const std::uint8_t payload[16] = {};
    std::vector<std::uint8_t> frame(128);
    frame.resize(wire::build_udp_frame(s, payload, frame));
    const host::classification c = host::classify(frame, h.steering);
    ASSERT_EQ(c.cls, host::traffic_class::uet);
    host.on_receive_classified(frame, c, h.steering, 0);
    EXPECT_EQ(host.stats().to_inner, 1u);
    // The port's word is taken as it is: here it says "some other UDP port".
    host::classification other = c;
    other.cls = host::traffic_class::other_udp;
    host.on_receive_classified(frame, other, h.steering, 0);
    EXPECT_EQ(host.stats()[host::host_drop::other_udp], 1u);
    EXPECT_EQ(host.stats().to_inner, 1u);
    // Under another steering the host stack classifies the frame itself.
    host::steering_config port_steering = h.steering;
    port_steering.uet_port = static_cast<std::uint16_t>(h.steering.uet_port + 1);
    host.on_receive_classified(frame, other, port_steering, 0);
    EXPECT_EQ(host.stats().to_inner, 2u);
    EXPECT_EQ(host.stats().received[host::traffic_class::uet], 2u);
}

// An inner handler that keeps what it is given (a burst's frames with their classification),
// and counts the bursts.
struct recorder : host::frame_handler {
    std::vector<std::vector<std::uint8_t>> got;
    std::vector<host::classification> classes;
    std::size_t bursts = 0;
    void on_receive(std::span<const std::uint8_t> f, std::uint64_t) override {
        got.emplace_back(f.begin(), f.end());
    }
    void on_receive_burst(std::span<const host::rx_frame> frames, const host::steering_config* by,
                          std::uint64_t) override {
        ++bursts;
        EXPECT_NE(by, nullptr);  // the host stack always says how it classified them
        for (const auto& f : frames) {
            got.emplace_back(f.bytes.begin(), f.bytes.end());
            classes.push_back(f.c);
        }
    }
    std::size_t on_transmit(std::uint64_t, std::span<host::tx_frame>) override { return 0; }
    std::uint64_t next_deadline() const override { return host::no_deadline; }
};

// Two host stacks of the same configuration, one given frames one by one and one in bursts,
// and a UDP frame spec from the peer to the UET port.
struct one_and_burst : ::testing::Test {
    one_and_burst() {
        one.on_start({});
        burst.on_start({});
        s.src_mac = {{0x02, 0, 0, 0, 0, 2}};
        s.dst_mac = h.iface.mac;
        s.src_ip = ip_b;
        s.dst_ip = ip_a;
        s.dst_port = h.steering.uet_port;
    }
    static host::host_config config() {
        host::host_config c;
        c.iface = {{{0x02, 0, 0, 0, 0, 1}}, ip_a, 24, 0};
        return c;
    }
    host::host_config h = config();
    recorder one_inner, burst_inner;
    host::host_stack one{h, one_inner}, burst{h, burst_inner};
    wire::frame_spec s;
};

// A burst goes through the host stack as its frames would one by one: the same frames reach the
// inner handler (in one call), the same are answered and dropped, with the same counts; a port's
// classification is taken under the same steering, in a burst too.
TEST_F(one_and_burst, a_burst_is_sorted_as_its_frames_one_by_one) {
    std::vector<std::vector<std::uint8_t>> frames;
    auto add_udp = [&](std::uint8_t tag) {
        const std::uint8_t payload[16] = {tag};
        std::vector<std::uint8_t> f(128);
        f.resize(wire::build_udp_frame(s, payload, f));
        frames.push_back(f);
    };
    add_udp(1);
    add_udp(2);
    s.dst_ip = 0x0a000077;  // not ours
    add_udp(3);
    s.dst_ip = ip_a;
    s.dst_mac = {{0x02, 0, 0, 0, 0, 0x55}};  // unicast to another MAC
    add_udp(4);
    s.dst_mac = h.iface.mac;
    s.dst_port = 9;  // another UDP port
    add_udp(5);
    s.dst_port = h.steering.uet_port;
    std::vector<std::uint8_t> data(32, 7), msg(64), ping(200);
    host::icmp_echo e;
    e.id = 5;
    e.data = data;
    const std::size_t m = host::build_icmp_echo(e, msg);
    ping.resize(wire::build_ip_frame(s, host::ip_proto_icmp, std::span(msg).first(m), ping));
    frames.push_back(ping);
    add_udp(6);
    frames.push_back({1, 2, 3});  // a runt
    add_udp(7);

    std::vector<host::rx_frame> rx;
    for (const auto& f : frames) {
        one.on_receive(f, 0);
        rx.push_back({f, {}, {}});
    }
    burst.on_receive_burst(rx, nullptr, 0);
    EXPECT_EQ(burst_inner.got, one_inner.got);
    EXPECT_EQ(burst_inner.got.size(), 4u);
    EXPECT_EQ(burst_inner.bursts, 1u);
    EXPECT_EQ(burst.stats().drops, one.stats().drops);
    EXPECT_EQ(burst.stats().received.frames, one.stats().received.frames);
    EXPECT_EQ(burst.stats().to_inner, 4u);
    EXPECT_EQ(burst.next_deadline(), 0u);  // the echo reply waits to go out, as for `one`
    EXPECT_EQ(one.next_deadline(), 0u);

    // Classified by the port under the same steering: its word is taken, in a burst too.
    for (auto& f : rx) {
        f.c = host::classify(f.bytes, h.steering);
        if (f.c.cls == host::traffic_class::uet) f.c.cls = host::traffic_class::other_udp;
    }
    burst.on_receive_burst(rx, &h.steering, 0);
    EXPECT_EQ(burst.stats().to_inner, 4u);
    // Before: the frame to port 9; now that one again and the six UET frames the port called
    // other UDP.
    EXPECT_EQ(burst.stats()[host::host_drop::other_udp], 1u + 7u);
}

// The burst path recognises the common UET frame by one masked compare of its first 48 bytes:
// frames a byte or two away from it in those bytes (a field of any kind: MAC, ethertype, IP
// version, fragment bits, protocol, address, port, or one the compare leaves out) and frames
// too short for the compare are sorted as one by one, with classify()'s classification.
TEST_F(one_and_burst, frames_near_the_common_uet_frame_are_sorted_as_one_by_one) {
    const std::uint8_t payload[40] = {9};
    std::vector<std::uint8_t> valid(128);
    valid.resize(wire::build_udp_frame(s, payload, valid));
    uet::rng r(11);
    std::vector<std::vector<std::uint8_t>> frames;
    for (int i = 0; i < 4000; ++i) {
        std::vector<std::uint8_t> f = valid;
        const auto flips = r.next_u64() % 3;
        for (std::uint64_t k = 0; k < flips; ++k)
            f[r.next_u64() % 48] ^= static_cast<std::uint8_t>(1u << (r.next_u64() % 8));
        if (r.next_u64() % 8 == 0) f.resize(42 + r.next_u64() % 6);  // UDP, under 48 bytes
        frames.push_back(std::move(f));
    }
    for (std::size_t at = 0; at < frames.size(); at += host::burst_size) {
        std::vector<host::rx_frame> rx;
        for (std::size_t i = at; i < std::min(frames.size(), at + host::burst_size); ++i) {
            one.on_receive(frames[i], 0);
            rx.push_back({frames[i], {}, {}});
        }
        burst.on_receive_burst(rx, nullptr, 0);
    }
    EXPECT_EQ(burst_inner.got, one_inner.got);
    EXPECT_GT(burst_inner.got.size(), 1000u);
    EXPECT_LT(burst_inner.got.size(), frames.size() - 1000);
    EXPECT_EQ(burst.stats().drops, one.stats().drops);
    EXPECT_EQ(burst.stats().received.frames, one.stats().received.frames);
    EXPECT_EQ(burst.stats().to_inner, one.stats().to_inner);
    ASSERT_EQ(burst_inner.classes.size(), burst_inner.got.size());
    for (std::size_t i = 0; i < burst_inner.got.size(); ++i) {
        const host::classification c = host::classify(burst_inner.got[i], h.steering);
        EXPECT_EQ(burst_inner.classes[i].cls, c.cls);
        EXPECT_EQ(burst_inner.classes[i].l3_offset, c.l3_offset);
        EXPECT_EQ(burst_inner.classes[i].dst_ip, c.dst_ip);
    }
}

}  // namespace
