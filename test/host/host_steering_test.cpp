// Software steering classification, device-string parsing, EAL argument defaults, back-off.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "dpdk/device.hpp"
#include "dpdk/eal.hpp"
#include "host/backoff.hpp"
#include "host/frame_handler.hpp"
#include "host/steering.hpp"
#include "wire/frame.hpp"

namespace {

using namespace uet;
using host::traffic_class;

std::vector<std::uint8_t> udp_frame(std::uint16_t dport, bool vlan = false) {
    wire::frame_spec s;
    s.src_ip = 0x0a000001;
    s.dst_ip = 0x0a000002;
    s.dst_port = dport;
    if (vlan) s.vlan = wire::vlan_tag{0, false, 5, 0};
    std::vector<std::uint8_t> payload(10, 1), f(200);
    f.resize(wire::build_udp_frame(s, payload, f));
    return f;
}

traffic_class cls(const std::vector<std::uint8_t>& f) {
    return host::classify(f, {}).cls;
}

TEST(steering, classifies) {
    EXPECT_EQ(cls(udp_frame(4793)), traffic_class::uet);
    EXPECT_EQ(cls(udp_frame(4791)), traffic_class::roce);
    EXPECT_EQ(cls(udp_frame(53)), traffic_class::other_udp);
    EXPECT_EQ(cls(udp_frame(4793, true)), traffic_class::uet);
    EXPECT_EQ(host::classify(udp_frame(4793), {}).dst_ip, 0x0a000002u);
    auto frag = udp_frame(4793);
    frag[20] |= 0x20;  // MF
    EXPECT_EQ(cls(frag), traffic_class::other_ip);
    auto icmp = udp_frame(4793);
    icmp[23] = 1;
    EXPECT_EQ(cls(icmp), traffic_class::icmp);
    auto v6 = udp_frame(4793);
    v6[12] = 0x86;
    v6[13] = 0xdd;
    EXPECT_EQ(cls(v6), traffic_class::other_ethertype);
    for (std::size_t n : {0u, 13u, 20u, 33u, 41u}) {
        auto cut = udp_frame(4793);
        cut.resize(n);
        EXPECT_EQ(cls(cut), traffic_class::runt) << n;
    }
    wire::frame_spec s;
    std::vector<std::uint8_t> arp(64);
    arp.resize(wire::build_arp_frame(s, wire::arp_packet{}, arp));
    EXPECT_EQ(cls(arp), traffic_class::arp);
    host::steering_config custom;
    custom.uet_port = 5000;
    EXPECT_EQ(host::classify(udp_frame(5000), custom).cls, traffic_class::uet);
    EXPECT_TRUE(host::steer_to_stack(traffic_class::icmp));
    EXPECT_FALSE(host::steer_to_stack(traffic_class::other_udp));
}

// classify() answers the common UET frame inline: on every frame it must agree with
// classify_general(), class, L3 offset and destination address, whichever path answers.
TEST(steering, inline_answer_agrees_with_the_general_one) {
    std::uint64_t seed = 0x5eed;
    auto next = [&seed] {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        return static_cast<std::uint32_t>(seed >> 33);
    };
    const host::steering_config configs[] = {{}, {5000, 4791}, {4793, 4793}};
    const std::vector<std::uint8_t> bases[] = {udp_frame(4793), udp_frame(4791), udp_frame(5000),
                                               udp_frame(4793, true)};
    // The bytes the inline test looks at, and one beyond each end of the headers it needs.
    const std::size_t hot[] = {12, 13, 14, 20, 21, 23, 30, 33, 36, 37, 41, 42};
    unsigned uet_frames = 0, other_frames = 0;
    for (int i = 0; i < 40000; ++i) {
        auto f = bases[next() % std::size(bases)];
        const unsigned flips = next() % 4;
        for (unsigned k = 0; k < flips; ++k) {
            const std::size_t at =
                next() % 3 == 0 ? next() % f.size() : hot[next() % std::size(hot)];
            if (at < f.size())
                f[at] = static_cast<std::uint8_t>(next() % 3 == 0 ? next()
                                                                  : f[at] ^ (1u << (next() % 8)));
        }
        if (next() % 8 == 0) f.resize(next() % (f.size() + 1));
        for (const auto& cfg : configs) {
            const auto fast = host::classify(f, cfg);
            const auto general = host::classify_general(f, cfg);
            ASSERT_EQ(fast.cls, general.cls) << i;
            ASSERT_EQ(fast.l3_offset, general.l3_offset) << i;
            ASSERT_EQ(fast.dst_ip, general.dst_ip) << i;
            (general.cls == traffic_class::uet ? uet_frames : other_frames) += 1;
        }
    }
    EXPECT_GT(uet_frames, 10000u);  // both paths were taken, often
    EXPECT_GT(other_frames, 10000u);
}

TEST(device, parses_every_form) {
    auto d = dpdk::parse_device("net_memif0,role=server,socket=/tmp/x.sock");
    ASSERT_TRUE(d);
    EXPECT_EQ(d->name, "net_memif0");
    EXPECT_EQ(d->args, "role=server,socket=/tmp/x.sock");
    d = dpdk::parse_device("eth0");
    ASSERT_TRUE(d);
    EXPECT_EQ(d->name, "net_af_packet_eth0");
    EXPECT_TRUE(d->args.starts_with("iface=eth0,qpairs=1"));
    d = dpdk::parse_device("xdp:ens1f0");
    ASSERT_TRUE(d);
    EXPECT_EQ(d->devargs(), "net_af_xdp_ens1f0,iface=ens1f0");
    d = dpdk::parse_device("01:00.1");
    ASSERT_TRUE(d);
    EXPECT_EQ(d->type, dpdk::device_spec::kind::pci);
    EXPECT_EQ(d->name, "0000:01:00.1");
    EXPECT_FALSE(dpdk::parse_device(""));
    EXPECT_FALSE(dpdk::parse_device("a,b"));
    EXPECT_FALSE(dpdk::parse_device("waytoolonginterfacename"));
    EXPECT_FALSE(dpdk::parse_device("xdp:"));
}

bool has(const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
}

TEST(eal_args, safe_defaults_unless_overridden) {
    dpdk::eal_options o;
    auto a = dpdk::build_eal_args(o, 42, {0, 1});
    EXPECT_EQ(a[0], "uet");
    EXPECT_TRUE(has(a, "--no-huge"));
    EXPECT_TRUE(has(a, "--no-pci"));
    EXPECT_TRUE(has(a, "--no-shconf"));  // --in-memory is refused with --no-huge
    EXPECT_TRUE(has(a, "--file-prefix=uet-42"));
    EXPECT_TRUE(has(a, "--lcores=0@(0,1)"));
    EXPECT_TRUE(has(a, "-m"));
    o.args = {"-l", "0-1", "-a", "0000:01:00.0", "--socket-mem", "1024", "--file-prefix=mine"};
    a = dpdk::build_eal_args(o, 42, {0, 1});
    EXPECT_FALSE(has(a, "--no-huge"));
    EXPECT_FALSE(has(a, "--no-pci"));
    EXPECT_FALSE(has(a, "-m"));
    EXPECT_TRUE(has(a, "--in-memory"));
    EXPECT_FALSE(has(a, "--file-prefix=uet-42"));
    EXPECT_FALSE(has(a, "--lcores=0@(0,1)"));
    EXPECT_TRUE(has(a, "--file-prefix=mine"));
}

TEST(backoff, spins_pauses_yields_sleeps) {
    host::backoff_config c;
    c.spin_polls = 2;
    c.pause_polls = 2;
    c.yield_polls = 2;
    host::idle_backoff b(c);
    std::vector<host::idle_action> seen;
    for (int i = 0; i < 8; ++i)
        seen.push_back(b.after_poll(false));
    using A = host::idle_action;
    EXPECT_EQ(seen, (std::vector<A>{A::spin, A::spin, A::pause, A::pause, A::yield, A::yield,
                                    A::sleep, A::sleep}));
    EXPECT_EQ(b.after_poll(true), A::spin);
    EXPECT_EQ(b.after_poll(false), A::spin);
    EXPECT_EQ(b.sleep_for(100, 120), 20u);  // never past the deadline
    EXPECT_EQ(b.sleep_for(100, host::no_deadline), c.sleep_ns);
    b.set_enabled(false);
    for (int i = 0; i < 100; ++i)
        EXPECT_EQ(b.after_poll(false), A::spin);
}

TEST(busy_meter, splits_time_between_poll_starts_by_whether_the_poll_worked) {
    host::busy_meter m;
    m.poll_started(1000);  // the first start only opens an interval
    m.poll_ended(true);
    m.poll_started(1300);  // 300 ns after a poll that moved frames
    m.poll_ended(false);
    m.poll_started(1350);  // 50 ns after an empty poll
    m.poll_ended(false);
    m.poll_started(1450);  // 100 ns idle, back-off included
    m.poll_ended(true);
    EXPECT_EQ(m.busy_ns(), 300u);
    EXPECT_EQ(m.idle_ns(), 150u);
    m.poll_started(1450);  // a clock that did not move adds nothing
    m.poll_started(1400);  // nor one that went back
    EXPECT_EQ(m.busy_ns() + m.idle_ns(), 450u);
    // A poll not yet ended counts as idle when the next one starts (it moved nothing known).
    m.poll_started(2000);
    EXPECT_EQ(m.idle_ns(), 150u + 600u);
}

}  // namespace
