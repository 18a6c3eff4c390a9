// Ethernet, 802.1Q, ARP, IPv4, UDP, the Internet checksum and whole-frame build/parse.
// Golden byte vectors are written by hand from the public header layouts (IEEE 802.3/802.1Q,
// RFC 826, RFC 791, RFC 768); checksum known answers come from RFC 1071, the Wikipedia IPv4
// checksum example, a ConnectX-4 Lx capture and the scapy RoCE test (see each test).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "wire/eth.hpp"
#include "wire/fields.hpp"
#include "wire/frame.hpp"
#include "wire/ipv4.hpp"
#include "wire_test_helpers.hpp"

namespace {

using namespace uet::wire;
using namespace uet::wire_test;
using bytes = std::vector<std::uint8_t>;

constexpr mac_address mac1{{0x02, 0x00, 0x00, 0x00, 0x00, 0x01}};
constexpr mac_address mac2{{0x02, 0x00, 0x00, 0x00, 0x00, 0x02}};

TEST(wire_sizes, match_the_public_layouts) {
    EXPECT_EQ(eth_header::wire_size, 14u);
    EXPECT_EQ(vlan_tag::wire_size, 4u);
    EXPECT_EQ(arp_packet::wire_size, 28u);
    EXPECT_EQ(ipv4_header::wire_size, 20u);
    EXPECT_EQ(udp_header::wire_size, 8u);
}

TEST(mac, formats_and_parses) {
    mac_address m{{0x02, 0xab, 0x00, 0x10, 0xfe, 0x01}};
    EXPECT_EQ(m.to_string(), "02:ab:00:10:fe:01");
    EXPECT_EQ(mac_address::parse("02:AB:00:10:fe:01"), m);
    EXPECT_EQ(mac_address::parse("02-ab-00-10-fe-01"), m);
    EXPECT_FALSE(mac_address::parse("02:ab:00:10:fe"));
    EXPECT_FALSE(mac_address::parse("02:ab:00-10:fe:01"));
    EXPECT_FALSE(mac_address::parse("02:ab:00:10:fe:0g"));
    EXPECT_FALSE(mac_address::parse("02.ab.00.10.fe.01"));
    EXPECT_TRUE(mac_address::broadcast().is_broadcast());
    EXPECT_TRUE(mac_address::broadcast().is_multicast());
    EXPECT_FALSE(m.is_multicast());
}

// ---- Ethernet ----

constexpr std::array<std::uint8_t, 14> eth_wire = {
    0x02, 0x00, 0x00, 0x00, 0x00, 0x02,  // destination MAC 02:00:00:00:00:02
    0x02, 0x00, 0x00, 0x00, 0x00, 0x01,  // source MAC 02:00:00:00:00:01
    0x08, 0x00,                          // ethertype IPv4
};

TEST(eth, golden_encode_decode) {
    eth_header h{mac2, mac1, ethertype_ipv4};
    std::array<std::uint8_t, 14> out{};
    ASSERT_EQ(encode(h, out), 14u);
    EXPECT_EQ(out, eth_wire);
    eth_header d;
    ASSERT_EQ(decode(eth_wire, d), reject_reason::none);
    EXPECT_EQ(d.dst, mac2);
    EXPECT_EQ(d.src, mac1);
    EXPECT_EQ(d.ethertype, 0x0800);
    expect_truncations<eth_header>(eth_wire);
    expect_encode_too_small(h);
}

TEST(eth, visit_names_fields) {
    recorder r;
    visit(eth_header{mac2, mac1, ethertype_ipv4}, r);
    EXPECT_EQ(r.lines, (std::vector<std::string>{"eth.dst=[6]", "eth.src=[6]",
                                                 "eth.ethertype=2048(IPv4)", "eth.end"}));
}

// ---- 802.1Q ----

constexpr std::array<std::uint8_t, 4> vlan_wire = {
    0xb1, 0x23,  // TCI: PCP 5 (101b), DEI 1, VID 0x123
    0x08, 0x06,  // inner ethertype ARP
};

TEST(vlan, golden_encode_decode) {
    vlan_tag t{5, true, 0x123, ethertype_arp};
    std::array<std::uint8_t, 4> out{};
    ASSERT_EQ(encode(t, out), 4u);
    EXPECT_EQ(out, vlan_wire);
    vlan_tag d;
    ASSERT_EQ(decode(vlan_wire, d), reject_reason::none);
    EXPECT_EQ(d.pcp, 5);
    EXPECT_TRUE(d.dei);
    EXPECT_EQ(d.vid, 0x123);
    EXPECT_EQ(d.ethertype, ethertype_arp);
    expect_truncations<vlan_tag>(vlan_wire);
    expect_encode_too_small(t);
    recorder r;
    visit(d, r);
    EXPECT_EQ(r.lines, (std::vector<std::string>{"vlan.pcp=5", "vlan.dei=1", "vlan.vid=291",
                                                 "vlan.ethertype=2054(ARP)", "vlan.end"}));
}

// ---- ARP ----

constexpr std::array<std::uint8_t, 28> arp_wire = {
    0x00, 0x01,                          // hardware type Ethernet
    0x08, 0x00,                          // protocol type IPv4
    0x06, 0x04,                          // hardware / protocol address lengths
    0x00, 0x01,                          // op request
    0x02, 0x00, 0x00, 0x00, 0x00, 0x01,  // sender MAC
    0x0a, 0x00, 0x00, 0x01,              // sender IP 10.0.0.1
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // target MAC (unknown)
    0x0a, 0x00, 0x00, 0x02,              // target IP 10.0.0.2
};

TEST(arp, golden_encode_decode) {
    arp_packet a{arp_op_request, mac1, 0x0a000001, mac_address{}, 0x0a000002};
    std::array<std::uint8_t, 28> out{};
    ASSERT_EQ(encode(a, out), 28u);
    EXPECT_EQ(out, arp_wire);
    arp_packet d;
    ASSERT_EQ(decode(arp_wire, d), reject_reason::none);
    EXPECT_EQ(d.op, arp_op_request);
    EXPECT_EQ(d.sha, mac1);
    EXPECT_EQ(d.spa, 0x0a000001u);
    EXPECT_EQ(d.tha, mac_address{});
    EXPECT_EQ(d.tpa, 0x0a000002u);
    expect_truncations<arp_packet>(arp_wire);
    expect_encode_too_small(a);
}

TEST(arp, rejects_other_types) {
    auto bad = [](std::size_t off, std::uint8_t v) {
        auto w = arp_wire;
        w[off] = v;
        arp_packet d;
        return decode(w, d);
    };
    EXPECT_EQ(bad(1, 0x06), reject_reason::bad_arp);  // htype IEEE 802
    EXPECT_EQ(bad(2, 0x86), reject_reason::bad_arp);  // ptype 0x86dd
    EXPECT_EQ(bad(4, 0x08), reject_reason::bad_arp);  // hlen
    EXPECT_EQ(bad(5, 0x10), reject_reason::bad_arp);  // plen
    EXPECT_EQ(bad(7, 0x03), reject_reason::bad_arp);  // op RARP request
    EXPECT_EQ(bad(7, 0x02), reject_reason::none);     // op reply
}

// ---- Internet checksum ----

TEST(checksum, rfc1071_example) {
    // RFC 1071 section 3: the words 0001 f203 f4f5 f6f7 sum to ddf2 (one's complement).
    const std::array<std::uint8_t, 8> d = {0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7};
    EXPECT_EQ(internet_checksum(d), static_cast<std::uint16_t>(~0xddf2));
    // Piecewise, with an odd-length last piece padded with a zero byte.
    std::uint32_t s = checksum_partial(std::span(d).first(4));
    s = checksum_partial(std::span(d).subspan(4, 3), s);
    const std::array<std::uint8_t, 8> padded = {0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0x00};
    EXPECT_EQ(checksum_finish(s), internet_checksum(padded));
}

TEST(checksum, large_buffers_fold) {
    std::vector<std::uint8_t> ff(65536, 0xff);
    EXPECT_EQ(internet_checksum(ff), 0);
    std::vector<std::uint8_t> z(1001, 0);
    EXPECT_EQ(internet_checksum(z), 0xffff);
}

// The word-at-a-time sum against the definition: big-endian 16-bit words, end-around carry.
TEST(checksum, matches_word_by_word_definition_for_every_length) {
    std::mt19937 rng(11);
    std::vector<std::uint8_t> buf(2100);
    for (auto& b : buf)
        b = static_cast<std::uint8_t>(rng());
    for (std::size_t len = 0; len <= buf.size(); len += (len < 80 ? 1 : 37)) {
        for (std::size_t start = 0; start < 8; start += 2) {  // sums start on a word boundary
            if (start + len > buf.size()) continue;
            const std::uint32_t seed = rng() & 0x3ffff;
            std::uint32_t ref = seed;
            for (std::size_t i = 0; i < len; i += 2) {
                const std::uint32_t hi = buf[start + i];
                const std::uint32_t lo = i + 1 < len ? buf[start + i + 1] : 0;
                ref += (hi << 8) | lo;
                ref = (ref & 0xffff) + (ref >> 16);
            }
            const auto got = checksum_partial(std::span(buf).subspan(start, len), seed);
            ASSERT_EQ(checksum_finish(got), checksum_finish(ref)) << "len " << len;
        }
    }
}

// The copy that sums: same bytes out, same partial sum as checksum_partial, for every length,
// misalignment of source and destination, and seed.
TEST(checksum, fixed_ipv4_header_sum_matches_the_general_one) {
    std::uint64_t x = 88172645463325252ull;  // xorshift: deterministic headers
    std::array<std::uint8_t, 20> h{};
    for (int k = 0; k < 20000; ++k) {
        for (auto& b : h) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            b = static_cast<std::uint8_t>(k % 3 == 0 ? 0xff : x);  // all-ones words too
        }
        ASSERT_EQ(ipv4_header_checksum(h.data()), internet_checksum(h)) << k;
    }
    h.fill(0);
    EXPECT_EQ(ipv4_header_checksum(h.data()), internet_checksum(h));
}

TEST(checksum, copy_and_sum_matches_copy_then_sum) {
    std::mt19937 rng(13);
    std::vector<std::uint8_t> src(2100), dst(2140);
    for (auto& b : src)
        b = static_cast<std::uint8_t>(rng());
    for (std::size_t len = 0; len <= 2000; len += (len < 100 ? 1 : 29)) {
        for (std::size_t from = 0; from < 4; ++from) {
            const std::size_t to = (from * 7 + len) % 16;
            std::fill(dst.begin(), dst.end(), 0xa5);
            const std::uint32_t seed = rng() & 0x3ffff;
            const auto in = std::span<const std::uint8_t>(src).subspan(from, len);
            const std::uint32_t got = checksum_copy(dst.data() + to, in, seed);
            ASSERT_EQ(checksum_finish(got), checksum_finish(checksum_partial(in, seed)))
                << "len " << len;
            ASSERT_TRUE(std::equal(in.begin(), in.end(), dst.begin() + to)) << "len " << len;
            ASSERT_EQ(dst[to + len], 0xa5) << "wrote past the end, len " << len;
            if (to > 0) {
                ASSERT_EQ(dst[to - 1], 0xa5);
            }
        }
    }
}

// A UDP frame finished from a payload summed while copied equals the one summed afterwards,
// whatever the parity of the offset where the summed part starts.
TEST(udp, presummed_payload_gives_the_same_frame) {
    std::mt19937 rng(17);
    frame_spec fs;
    fs.src_mac = {{2, 0, 0, 0, 0, 1}};
    fs.dst_mac = {{2, 0, 0, 0, 0, 2}};
    fs.src_ip = 0x0a000001;
    fs.dst_ip = 0x0a000002;
    fs.src_port = 0xc123;
    fs.dst_port = uet_udp_port;
    const std::size_t hdr = frame_header_size(fs, true);
    for (std::size_t len = 0; len <= 1500; len += (len < 40 ? 1 : 53)) {
        for (std::size_t prefix = 0; prefix <= std::min<std::size_t>(len, 5); ++prefix) {
            bytes payload(len);
            for (auto& b : payload)
                b = static_cast<std::uint8_t>(rng());
            bytes ref(hdr + len), got(hdr + len, 0x5a);
            ASSERT_EQ(build_udp_frame(fs, payload, ref), hdr + len);
            std::copy(payload.begin(), payload.begin() + prefix, got.begin() + hdr);
            const std::uint32_t sum = checksum_copy(
                got.data() + hdr + prefix, std::span<const std::uint8_t>(payload).subspan(prefix));
            ASSERT_EQ(finish_udp_frame(fs, len, got, prefix, sum), hdr + len);
            ASSERT_EQ(got, ref) << "len " << len << " prefix " << prefix;
            l2l4_view v;
            ASSERT_EQ(parse_l2l4(got, v), reject_reason::none);
        }
    }
}

TEST(checksum, incremental_update_matches_recompute) {
    std::mt19937 rng(7);
    for (int i = 0; i < 2000; ++i) {
        std::array<std::uint8_t, 20> h{};
        for (auto& b : h)
            b = static_cast<std::uint8_t>(rng());
        h[10] = h[11] = 0;
        std::uint16_t c = internet_checksum(h);
        std::uint16_t old_word = static_cast<std::uint16_t>((h[8] << 8) | h[9]);
        h[8] = static_cast<std::uint8_t>(rng());  // e.g. a TTL rewrite
        std::uint16_t new_word = static_cast<std::uint16_t>((h[8] << 8) | h[9]);
        std::uint16_t full = internet_checksum(h);
        std::uint16_t inc = checksum_update16(c, old_word, new_word);
        // 0x0000 and 0xffff are the same value in one's complement.
        EXPECT_TRUE(inc == full || (inc ^ full) == 0xffff) << i;
    }
}

// ---- IPv4 ----

// The worked example on Wikipedia's "Internet checksum" / IPv4 header checksum page.
constexpr std::array<std::uint8_t, 20> ipv4_wire = {
    0x45,                    // version 4, IHL 5
    0x00,                    // DSCP 0, ECN 0
    0x00, 0x73,              // total length 115
    0x00, 0x00,              // identification 0
    0x40, 0x00,              // flags DF, fragment offset 0
    0x40,                    // TTL 64
    0x11,                    // protocol UDP
    0xb8, 0x61,              // header checksum (known answer)
    0xc0, 0xa8, 0x00, 0x01,  // source 192.168.0.1
    0xc0, 0xa8, 0x00, 0xc7,  // destination 192.168.0.199
};

// The IPv4 header of a RoCEv2 CNP captured on a Mellanox ConnectX-4 Lx (published in scapy's
// test/contrib/roce.uts): a hardware-computed checksum, with DSCP 48 and ECN ECT(0).
constexpr std::array<std::uint8_t, 20> ipv4_cx4_wire = {
    0x45, 0xc2,              // version 4, IHL 5; TOS 0xc2 = DSCP 48, ECN 2 (ECT(0))
    0x00, 0x3c,              // total length 60
    0x71, 0x8c,              // identification
    0x40, 0x00,              // DF
    0x40, 0x11,              // TTL 64, UDP
    0x91, 0x61,              // header checksum (hardware)
    0x0a, 0x00, 0x11, 0x01,  // 10.0.17.1
    0x0a, 0x00, 0x12, 0x01,  // 10.0.18.1
};

TEST(ipv4, golden_encode_decode) {
    ipv4_header h;
    h.total_length = 115;
    h.df = true;
    h.ttl = 64;
    h.protocol = ip_proto_udp;
    h.checksum = 0xb861;
    h.src = 0xc0a80001;
    h.dst = 0xc0a800c7;
    std::array<std::uint8_t, 20> out{};
    ASSERT_EQ(encode(h, out), 20u);
    EXPECT_EQ(out, ipv4_wire);

    // The checksum helper reproduces the known answer.
    out[10] = out[11] = 0;
    ASSERT_TRUE(ipv4_fill_checksum(out));
    EXPECT_EQ(out, ipv4_wire);

    ipv4_header d;
    ASSERT_EQ(decode(ipv4_wire, d), reject_reason::none);
    EXPECT_EQ(d.version, 4);
    EXPECT_EQ(d.ihl, 5);
    EXPECT_EQ(d.dscp, 0);
    EXPECT_EQ(d.ecn, 0);
    EXPECT_EQ(d.total_length, 115);
    EXPECT_EQ(d.id, 0);
    EXPECT_TRUE(d.df);
    EXPECT_FALSE(d.mf);
    EXPECT_EQ(d.frag_offset, 0);
    EXPECT_EQ(d.ttl, 64);
    EXPECT_EQ(d.protocol, 17);
    EXPECT_EQ(d.checksum, 0xb861);
    EXPECT_EQ(d.src, 0xc0a80001u);
    EXPECT_EQ(d.dst, 0xc0a800c7u);
    expect_truncations<ipv4_header>(ipv4_wire);
    expect_encode_too_small(h);
}

TEST(ipv4, hardware_checksum_dscp_ecn) {
    ipv4_header d;
    ASSERT_EQ(decode(ipv4_cx4_wire, d), reject_reason::none);
    EXPECT_EQ(d.dscp, 48);
    EXPECT_EQ(d.ecn, 2);
    EXPECT_EQ(tos_ecn(0xc2), ecn_codepoint::ect0);
    EXPECT_EQ(make_tos(48, ecn_codepoint::ect0), 0xc2);
    EXPECT_EQ(d.id, 0x718c);
    EXPECT_EQ(ipv4_to_string(d.src), "10.0.17.1");
    auto w = ipv4_cx4_wire;
    w[10] = w[11] = 0;
    ASSERT_TRUE(ipv4_fill_checksum(w));
    EXPECT_EQ(w, ipv4_cx4_wire);
}

TEST(ipv4, ecn_and_dscp_helpers) {
    EXPECT_STREQ(to_string(ecn_codepoint::not_ect), "Not-ECT");
    EXPECT_STREQ(to_string(ecn_codepoint::ect1), "ECT(1)");
    EXPECT_STREQ(to_string(ecn_codepoint::ect0), "ECT(0)");
    EXPECT_STREQ(to_string(ecn_codepoint::ce), "CE");
    EXPECT_TRUE(is_ect(ecn_codepoint::ect1));
    EXPECT_FALSE(is_ect(ecn_codepoint::ce));
    EXPECT_EQ(tos_dscp(make_tos(46, 3)), 46);
    EXPECT_EQ(tos_ecn(make_tos(46, 3)), ecn_codepoint::ce);
    EXPECT_EQ(make_tos(0xff, 0xff), 0xff);  // out-of-range bits are masked
}

TEST(ipv4, rejections) {
    auto with = [](std::size_t off, std::uint8_t v, bool fix_checksum) {
        std::array<std::uint8_t, 24> w{};
        std::copy(ipv4_wire.begin(), ipv4_wire.end(), w.begin());
        w[off] = v;
        if (fix_checksum) ipv4_fill_checksum(w);
        ipv4_header d;
        return decode(std::span(w).first(20), d);
    };
    EXPECT_EQ(with(0, 0x65, false), reject_reason::bad_ip_version);
    EXPECT_EQ(with(0, 0x44, false), reject_reason::bad_ip_ihl);
    EXPECT_EQ(with(0, 0x46, false), reject_reason::truncated);  // options beyond the buffer
    EXPECT_EQ(with(3, 19, true), reject_reason::bad_ip_total_length);
    EXPECT_EQ(with(8, 0x3f, false), reject_reason::bad_ip_checksum);  // TTL changed
    EXPECT_EQ(with(11, 0x60, false), reject_reason::bad_ip_checksum);
    EXPECT_EQ(with(8, 0x3f, true), reject_reason::none);
}

TEST(ipv4, options_are_skipped_but_checked) {
    std::array<std::uint8_t, 24> w{};
    std::copy(ipv4_wire.begin(), ipv4_wire.end(), w.begin());
    w[0] = 0x46;                                             // IHL 6: one word of options
    w[20] = 0x01, w[21] = 0x01, w[22] = 0x01, w[23] = 0x00;  // NOP NOP NOP EOL
    ASSERT_TRUE(ipv4_fill_checksum(w));
    ipv4_header d;
    ASSERT_EQ(decode(w, d), reject_reason::none);
    EXPECT_EQ(d.header_length(), 24u);
    for (std::size_t n = 20; n < 24; ++n)
        EXPECT_EQ(decode(std::span(w).first(n), d), reject_reason::truncated);
}

TEST(ipv4, visit_names_fields) {
    ipv4_header d;
    ASSERT_EQ(decode(ipv4_cx4_wire, d), reject_reason::none);
    recorder r;
    visit(d, r);
    EXPECT_EQ(r.lines, (std::vector<std::string>{
                           "ipv4.version=4", "ipv4.ihl=5", "ipv4.dscp=48", "ipv4.ecn=2(ECT(0))",
                           "ipv4.total_length=60", "ipv4.id=29068", "ipv4.df=1", "ipv4.mf=0",
                           "ipv4.frag_offset=0", "ipv4.ttl=64", "ipv4.protocol=17(UDP)",
                           "ipv4.checksum=37217", "ipv4.src=167776513(10.0.17.1)",
                           "ipv4.dst=167776769(10.0.18.1)", "ipv4.end"}));
}

// ---- UDP ----

// A 2-byte datagram from 10.0.0.1 to 10.0.0.2, checksum worked by hand:
// pseudo-header 0a00+0001+0a00+0002+0011+000a = 141e; UDP 1234+12b9+000a+0000+6869 = 8d60;
// 141e+8d60 = a17e; complement 5e81.
constexpr std::array<std::uint8_t, 10> udp_wire = {
    0x12, 0x34,  // source port 4660
    0x12, 0xb9,  // destination port 4793 (UET)
    0x00, 0x0a,  // length 10
    0x5e, 0x81,  // checksum
    0x68, 0x69,  // payload "hi"
};

TEST(udp, golden_encode_decode) {
    udp_header h{0x1234, uet_udp_port, 10, 0x5e81};
    std::array<std::uint8_t, 8> out{};
    ASSERT_EQ(encode(h, out), 8u);
    EXPECT_TRUE(std::equal(out.begin(), out.end(), udp_wire.begin()));
    udp_header d;
    ASSERT_EQ(decode(udp_wire, d), reject_reason::none);
    EXPECT_EQ(d.sport, 0x1234);
    EXPECT_EQ(d.dport, 4793);
    EXPECT_EQ(d.length, 10);
    EXPECT_EQ(d.checksum, 0x5e81);
    std::array<std::uint8_t, 8> hdr{};
    std::copy_n(udp_wire.begin(), 8, hdr.begin());
    expect_truncations<udp_header>(hdr);
    expect_encode_too_small(h);
    recorder r;
    visit(d, r);
    EXPECT_EQ(r.lines,
              (std::vector<std::string>{"udp.sport=4660", "udp.dport=4793", "udp.length=10",
                                        "udp.checksum=24193", "udp.end"}));
}

TEST(udp, checksum) {
    EXPECT_EQ(udp_checksum(0x0a000001, 0x0a000002, udp_wire), 0x5e81);
    EXPECT_TRUE(udp_checksum_ok(0x0a000001, 0x0a000002, udp_wire));
    EXPECT_FALSE(udp_checksum_ok(0x0a000001, 0x0a000003, udp_wire));  // other pseudo-header
    auto w = udp_wire;
    w[9] ^= 1;
    EXPECT_FALSE(udp_checksum_ok(0x0a000001, 0x0a000002, w));
    w[6] = w[7] = 0;  // no checksum: accepted, as IPv4 allows
    EXPECT_TRUE(udp_checksum_ok(0x0a000001, 0x0a000002, w));
    EXPECT_FALSE(udp_checksum_ok(0x0a000001, 0x0a000002, std::span(w).first(7)));
    udp_header d;
    w[5] = 7;  // length below the header
    EXPECT_EQ(decode(w, d), reject_reason::bad_udp_length);
}

TEST(udp, checksum_zero_is_sent_as_all_ones) {
    // Find a payload whose checksum computes to 0 and check it is sent as 0xffff.
    std::array<std::uint8_t, 10> w = udp_wire;
    w[6] = w[7] = 0;
    // Choose the payload so the folded sum is 0xffff: sum without payload, then fill the gap.
    w[8] = w[9] = 0;
    std::uint16_t c = udp_checksum(0x0a000001, 0x0a000002, w);  // = ~sum
    w[8] = static_cast<std::uint8_t>(c >> 8);
    w[9] = static_cast<std::uint8_t>(c);
    EXPECT_EQ(udp_checksum(0x0a000001, 0x0a000002, w), 0xffff);
    w[6] = w[7] = 0xff;
    EXPECT_TRUE(udp_checksum_ok(0x0a000001, 0x0a000002, w));
}

TEST(constants, ports) {
    EXPECT_EQ(uet_udp_port, 4793);
    EXPECT_EQ(roce_udp_port, 4791);
    EXPECT_EQ(ip_proto_uet, 253);
}

// ---- frames ----

frame_spec spec(bool vlan) {
    frame_spec s;
    s.src_mac = mac1;
    s.dst_mac = mac2;
    if (vlan) s.vlan = vlan_tag{3, false, 100, 0};
    s.src_ip = 0x0a000001;
    s.dst_ip = 0x0a000002;
    s.dscp = 26;
    s.ecn = 1;
    s.ttl = 17;
    s.ip_id = 0x4242;
    s.src_port = 0xc123;
    s.dst_port = uet_udp_port;
    return s;
}

bytes payload(std::size_t n) {
    bytes p(n);
    for (std::size_t i = 0; i < n; ++i)
        p[i] = static_cast<std::uint8_t>(i * 13 + 1);
    return p;
}

TEST(frame, udp_round_trip) {
    for (bool vlan : {false, true}) {
        SCOPED_TRACE(vlan ? "vlan" : "untagged");
        auto s = spec(vlan);
        auto p = payload(33);
        bytes f(200);
        std::size_t n = build_udp_frame(s, p, f);
        ASSERT_EQ(n, (vlan ? 18u : 14u) + 20 + 8 + 33);
        EXPECT_EQ(frame_header_size(s, true), n - 33);
        f.resize(n);
        l2l4_view v;
        ASSERT_EQ(parse_l2l4(f, v), reject_reason::none);
        EXPECT_EQ(v.eth.dst, mac2);
        EXPECT_EQ(v.eth.src, mac1);
        EXPECT_EQ(v.vlan.has_value(), vlan);
        if (vlan) {
            EXPECT_EQ(v.eth.ethertype, ethertype_vlan);
            EXPECT_EQ(v.vlan->vid, 100);
            EXPECT_EQ(v.vlan->pcp, 3);
            EXPECT_EQ(v.vlan->ethertype, ethertype_ipv4);
        }
        EXPECT_EQ(v.l3, l2l4_view::l3_kind::ipv4);
        EXPECT_EQ(v.ip.dscp, 26);
        EXPECT_EQ(v.ip.ecn, 1);
        EXPECT_EQ(v.ip.ttl, 17);
        EXPECT_EQ(v.ip.id, 0x4242);
        EXPECT_TRUE(v.ip.df);
        EXPECT_EQ(v.ip.total_length, 20 + 8 + 33);
        ASSERT_TRUE(v.udp);
        EXPECT_EQ(v.udp->sport, 0xc123);
        EXPECT_EQ(v.udp->dport, 4793);
        EXPECT_NE(v.udp->checksum, 0);
        EXPECT_EQ(v.ip_packet.size(), 61u);
        EXPECT_EQ(bytes(v.l4_payload.begin(), v.l4_payload.end()), p);

        // Every truncation is refused as such, and a short output buffer gives 0.
        for (std::size_t k = 0; k < n; ++k) {
            l2l4_view t;
            EXPECT_EQ(parse_l2l4(std::span(f).first(k), t), reject_reason::truncated) << k;
            bytes small(k);
            EXPECT_EQ(build_udp_frame(s, p, small), 0u) << k;
        }
    }
}

// The frame builder stores the L2/IPv4 headers at fixed offsets; they must be the bytes the
// field-by-field encoders write, for every combination of the fields it sets.
TEST(frame, builder_writes_what_the_encoders_write) {
    for (bool vlan : {false, true}) {
        for (bool df : {false, true}) {
            for (std::uint8_t dscp : {0, 26, 46, 63}) {
                for (std::uint8_t ecn : {0, 1, 2, 3}) {
                    auto s = spec(vlan);
                    s.df = df;
                    s.dscp = dscp;
                    s.ecn = ecn;
                    s.ttl = static_cast<std::uint8_t>(dscp + 1);
                    s.ip_id = static_cast<std::uint16_t>(dscp * 977 + ecn);
                    const auto p = payload(dscp + 5u);
                    bytes f(300);
                    const std::size_t n = build_udp_frame(s, p, f);
                    ASSERT_NE(n, 0u);
                    bytes want(300);
                    eth_header eth{s.dst_mac, s.src_mac, vlan ? ethertype_vlan : ethertype_ipv4};
                    std::size_t at = encode(eth, want);
                    if (vlan) {
                        vlan_tag tag = *s.vlan;
                        tag.ethertype = ethertype_ipv4;
                        at += encode(tag, std::span(want).subspan(at));
                    }
                    ipv4_header ip;
                    ip.dscp = dscp;
                    ip.ecn = ecn;
                    ip.total_length = static_cast<std::uint16_t>(20 + 8 + p.size());
                    ip.id = s.ip_id;
                    ip.df = df;
                    ip.ttl = s.ttl;
                    ip.protocol = ip_proto_udp;
                    ip.src = s.src_ip;
                    ip.dst = s.dst_ip;
                    ASSERT_EQ(encode(ip, std::span(want).subspan(at)), 20u);
                    ASSERT_TRUE(ipv4_fill_checksum(std::span(want).subspan(at, 20)));
                    EXPECT_TRUE(std::equal(want.begin(), want.begin() + static_cast<long>(at + 20),
                                           f.begin()))
                        << "vlan " << vlan << " df " << df << " dscp " << int(dscp) << " ecn "
                        << int(ecn);
                }
            }
        }
    }
}

TEST(frame, header_template_writes_what_the_builder_writes) {
    std::uint64_t x = 88172645463325252ull;
    for (bool df : {false, true}) {
        for (std::uint8_t dscp : {0, 26, 63}) {
            for (std::uint8_t ecn : {0, 2, 3}) {
                auto s = spec(false);
                s.df = df;
                s.dscp = dscp;
                s.ecn = ecn;
                s.ttl = static_cast<std::uint8_t>(dscp + 1);
                s.udp_checksum = false;
                udp_header_template t;
                ASSERT_TRUE(t.build(s));
                for (int k = 0; k < 200; ++k) {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    s.ip_id = static_cast<std::uint16_t>(x);
                    s.src_port = static_cast<std::uint16_t>(x >> 16);
                    // Lengths up to the largest, with all-ones IDs and ports among them.
                    std::size_t len = (x >> 32) % (udp_header_template::max_udp_payload + 1);
                    if (k == 0) len = udp_header_template::max_udp_payload;
                    if (k == 1) s.ip_id = s.src_port = 0xffff;
                    bytes want(udp_header_template::size + len);
                    ASSERT_EQ(finish_udp_frame(s, len, want), want.size());
                    bytes got(udp_header_template::size, 0xee);
                    t.write(got.data(), s.ip_id, s.src_port, len);
                    ASSERT_TRUE(std::equal(got.begin(), got.end(), want.begin()))
                        << "df " << df << " dscp " << int(dscp) << " ecn " << int(ecn) << " len "
                        << len << " id " << s.ip_id;
                }
            }
        }
    }
    udp_header_template t;
    EXPECT_FALSE(t.build(spec(true))) << "no VLAN tag in a template";
}

TEST(frame, udp_checksum_can_be_omitted) {
    auto s = spec(false);
    s.udp_checksum = false;
    auto p = payload(10);
    bytes f(100);
    f.resize(build_udp_frame(s, p, f));
    l2l4_view v;
    ASSERT_EQ(parse_l2l4(f, v), reject_reason::none);
    EXPECT_EQ(v.udp->checksum, 0);
}

TEST(frame, ethernet_padding_ignored) {
    auto s = spec(false);
    auto p = payload(4);
    bytes f(60, 0xee);
    std::size_t n = build_udp_frame(s, p, f);
    ASSERT_EQ(n, 46u);
    // f keeps 14 bytes of trailing "padding" after the IP packet.
    l2l4_view v;
    ASSERT_EQ(parse_l2l4(f, v), reject_reason::none);
    EXPECT_EQ(v.ip_packet.size(), 32u);
    EXPECT_EQ(v.l4_payload.size(), 4u);
}

TEST(frame, ip_protocol_253) {
    auto s = spec(true);
    auto p = payload(21);
    bytes f(100);
    std::size_t n = build_ip_frame(s, ip_proto_uet, p, f);
    ASSERT_EQ(n, 18u + 20 + 21);
    f.resize(n);
    l2l4_view v;
    ASSERT_EQ(parse_l2l4(f, v), reject_reason::none);
    EXPECT_EQ(v.ip.protocol, 253);
    EXPECT_FALSE(v.udp);
    EXPECT_EQ(bytes(v.l4_payload.begin(), v.l4_payload.end()), p);
    for (std::size_t k = 0; k < n; ++k) {
        l2l4_view t;
        EXPECT_EQ(parse_l2l4(std::span(f).first(k), t), reject_reason::truncated) << k;
    }
}

TEST(frame, arp) {
    for (bool vlan : {false, true}) {
        auto s = spec(vlan);
        s.dst_mac = mac_address::broadcast();
        arp_packet a{arp_op_request, mac1, 0x0a000001, {}, 0x0a000002};
        bytes f(100);
        std::size_t n = build_arp_frame(s, a, f);
        ASSERT_EQ(n, (vlan ? 18u : 14u) + 28);
        f.resize(n);
        // Golden: the untagged frame is the Ethernet header with type ARP and arp_wire.
        if (!vlan) {
            EXPECT_TRUE(std::equal(arp_wire.begin(), arp_wire.end(), f.begin() + 14));
            EXPECT_EQ(f[12], 0x08);
            EXPECT_EQ(f[13], 0x06);
        }
        l2l4_view v;
        ASSERT_EQ(parse_l2l4(f, v), reject_reason::none);
        EXPECT_EQ(v.l3, l2l4_view::l3_kind::arp);
        EXPECT_EQ(v.arp.tpa, 0x0a000002u);
        EXPECT_TRUE(v.eth.dst.is_broadcast());
        f.resize(60, 0);  // minimum-size padding is ignored
        EXPECT_EQ(parse_l2l4(f, v), reject_reason::none);
        for (std::size_t k = 0; k < n; ++k) {
            l2l4_view t;
            EXPECT_EQ(parse_l2l4(std::span(f).first(k), t), reject_reason::truncated) << k;
        }
    }
}

// Builds a valid UDP frame, lets mutate() change it, and parses it.
template <class F>
reject_reason parse_mutated(F mutate, bool fix_ip_checksum = true) {
    auto s = spec(false);
    auto p = payload(16);
    bytes f(100);
    f.resize(build_udp_frame(s, p, f));
    mutate(f);
    if (fix_ip_checksum) ipv4_fill_checksum(std::span(f).subspan(14));
    l2l4_view v;
    return parse_l2l4(f, v);
}

TEST(frame, rejections) {
    // Offsets in an untagged frame: IP at 14, UDP at 34, payload at 42.
    EXPECT_EQ(parse_mutated([](bytes& f) { f[12] = 0x86, f[13] = 0xdd; }),
              reject_reason::unsupported_ethertype);
    EXPECT_EQ(parse_mutated([](bytes& f) { f[12] = 0x88, f[13] = 0xa8; }),  // QinQ
              reject_reason::unsupported_ethertype);
    EXPECT_EQ(parse_mutated([](bytes& f) { f[14] = 0x65; }), reject_reason::bad_ip_version);
    EXPECT_EQ(parse_mutated([](bytes& f) { f[14] = 0x43; }), reject_reason::bad_ip_ihl);
    EXPECT_EQ(parse_mutated([](bytes& f) { f[17] += 1; }), reject_reason::truncated);
    EXPECT_EQ(parse_mutated([](bytes& f) { f[16] = 0, f[17] = 19; }),
              reject_reason::bad_ip_total_length);
    EXPECT_EQ(parse_mutated([](bytes& f) { f[20] |= 0x20; }), reject_reason::ip_fragment);  // MF
    EXPECT_EQ(parse_mutated([](bytes& f) { f[21] = 1; }), reject_reason::ip_fragment);  // offset
    EXPECT_EQ(parse_mutated([](bytes& f) { f[22] -= 1; }, false), reject_reason::bad_ip_checksum);
    EXPECT_EQ(parse_mutated([](bytes& f) { f[23] = 6; }), reject_reason::unsupported_ip_protocol);
    EXPECT_EQ(parse_mutated([](bytes& f) { f[39] -= 1; }), reject_reason::bad_udp_length);
    EXPECT_EQ(parse_mutated([](bytes& f) { f[39] += 1; }), reject_reason::bad_udp_length);
    EXPECT_EQ(parse_mutated([](bytes& f) { f[39] = 7; }), reject_reason::bad_udp_length);
    EXPECT_EQ(parse_mutated([](bytes& f) { f[45] ^= 0x10; }), reject_reason::bad_udp_checksum);
    EXPECT_EQ(parse_mutated([](bytes& f) { f[41] ^= 0x01; }), reject_reason::bad_udp_checksum);
    EXPECT_EQ(parse_mutated([](bytes& f) { f[45] ^= 0x10, f[40] = f[41] = 0; }),
              reject_reason::none);  // checksum 0: not checked
    EXPECT_EQ(parse_mutated([](bytes& f) { f[12] = 0x08, f[13] = 0x06; }, false),
              reject_reason::bad_arp);  // IPv4 bytes read as ARP
}

// Untagged IPv4 frames without options take a fast path in parse_l2l4; behind an 802.1Q tag
// the same bytes take the general one. Both must give the same reason and the same view for
// every mutation of the IP and UDP headers and every truncation.
TEST(frame, untagged_fast_path_parses_as_the_general_path) {
    std::mt19937 rng(4242);
    const auto p = payload(40);
    bytes plain(200), tagged(200);
    plain.resize(build_udp_frame(spec(false), p, plain));
    tagged.resize(build_udp_frame(spec(true), p, tagged));
    ASSERT_EQ(plain.size() + 4, tagged.size());
    std::size_t accepted = 0;
    for (int i = 0; i < 20000; ++i) {
        bytes f = plain;
        const int flips = static_cast<int>(rng() % 3);
        for (int k = 0; k < flips; ++k) {
            // Header bytes mostly (IP 14..33, UDP 34..41), the payload sometimes.
            const std::size_t at = 14 + rng() % (rng() % 4 ? 28 : f.size() - 14);
            f[at] = static_cast<std::uint8_t>(rng() % 2 ? rng() : f[at] ^ (1u << (rng() % 8)));
        }
        if (rng() % 2) ipv4_fill_checksum(std::span(f).subspan(14));
        if (rng() % 4 == 0) {
            if (rng() % 2) f[14] = 0x45, f[23] = 17;  // keep it on the fast path
            ipv4_fill_checksum(std::span(f).subspan(14));
        }
        if (rng() % 8 == 0) f.resize(rng() % (f.size() + 1));
        bytes t(tagged.begin(), tagged.begin() + 18);
        if (f.size() > 14)
            t.insert(t.end(), f.begin() + 14, f.end());
        else
            t.resize(f.size());
        l2l4_view a, b;
        const reject_reason ra = parse_l2l4(f, a);
        const reject_reason rb = parse_l2l4(t, b);
        ASSERT_EQ(ra, rb) << "iteration " << i;
        if (ra != reject_reason::none) continue;
        ++accepted;
        EXPECT_FALSE(a.vlan);
        EXPECT_EQ(a.eth.ethertype, ethertype_ipv4);
        EXPECT_EQ(a.eth.src, b.eth.src);
        EXPECT_EQ(a.eth.dst, b.eth.dst);
        EXPECT_EQ(a.l3, b.l3);
        const auto ip_fields = [](const ipv4_header& h) {
            return std::tuple(h.version, h.ihl, h.dscp, h.ecn, h.total_length, h.id, h.df, h.mf,
                              h.frag_offset, h.ttl, h.protocol, h.checksum, h.src, h.dst);
        };
        EXPECT_EQ(ip_fields(a.ip), ip_fields(b.ip));
        ASSERT_EQ(a.udp.has_value(), b.udp.has_value());
        if (a.udp) {
            EXPECT_EQ(a.udp->sport, b.udp->sport);
            EXPECT_EQ(a.udp->dport, b.udp->dport);
            EXPECT_EQ(a.udp->length, b.udp->length);
            EXPECT_EQ(a.udp->checksum, b.udp->checksum);
        }
        EXPECT_EQ(bytes(a.ip_packet.begin(), a.ip_packet.end()),
                  bytes(b.ip_packet.begin(), b.ip_packet.end()));
        EXPECT_EQ(bytes(a.l4_payload.begin(), a.l4_payload.end()),
                  bytes(b.l4_payload.begin(), b.l4_payload.end()));
    }
    EXPECT_GT(accepted, 1000u);  // the comparison covered accepted frames, not only rejections
}

TEST(frame, scapy_rocev2_known_answer) {
    // scapy test/contrib/roce.uts "RoCE layer": a UC_SEND_ONLY packet whose IP checksum (0xb4d5)
    // and UDP checksum (0xaca2, over the ICRC too) scapy computed independently of this code.
    const bytes f = {
        0x24, 0x8a, 0x07, 0xa8, 0xfa, 0x22, 0x24, 0x8a, 0x07, 0xa8, 0xfa, 0x22, 0x08,
        0x00, 0x45, 0x01, 0x00, 0x40, 0x04, 0x78, 0x40, 0x00, 0x40, 0x11, 0xb4, 0xd5,  // IPv4
        0xc0, 0xa8, 0x00, 0x07, 0xc0, 0xa8, 0x00, 0x07,                                // .7 -> .7
        0xc0, 0x00, 0x12, 0xb7, 0x00, 0x2c, 0xac, 0xa2,                                // UDP
        0x24, 0x60, 0xff, 0xff, 0x00, 0x00, 0x00, 0xd3, 0x00, 0xcf, 0x17, 0x10,        // BTH
        0x46, 0x30, 0x81, 0x8b, 0xe2, 0x89, 0x35, 0xd9, 0x0e, 0x9a, 0x95, 0x50,        // payload
        0x54, 0x01, 0xbe, 0x88, 0x5e, 0x50, 0x00, 0x00,                                // and pad
        0x78, 0xf3, 0x53, 0xf3,                                                        // ICRC
        0x00, 0x00, 0x00, 0x00,  // scapy's trailing placeholder, beyond IP total length
    };
    l2l4_view v;
    ASSERT_EQ(parse_l2l4(f, v), reject_reason::none);
    EXPECT_EQ(v.udp->dport, roce_udp_port);
    EXPECT_EQ(v.l4_payload.size(), 36u);
    EXPECT_EQ(v.ip_packet.size(), 64u);
}

TEST(frame, random_bytes_never_crash) {
    std::mt19937 rng(12345);
    std::size_t accepted = 0;
    for (int i = 0; i < 20000; ++i) {
        bytes f(rng() % 160);
        for (auto& b : f)
            b = static_cast<std::uint8_t>(rng());
        // Steer half of them past the first checks so the deeper decoders see random input.
        if (f.size() > 24 && (i & 1)) {
            f[12] = 0x08;
            f[13] = (i & 2) ? 0x00 : 0x06;
            f[14] = static_cast<std::uint8_t>(0x45 + (rng() % 3));
            if (f.size() > 34) ipv4_fill_checksum(std::span(f).subspan(14));
        }
        l2l4_view v;
        if (parse_l2l4(f, v) == reject_reason::none) {
            ++accepted;
            // Views never point outside the frame.
            EXPECT_GE(v.l4_payload.data(), f.data());
            EXPECT_LE(v.l4_payload.data() + v.l4_payload.size(), f.data() + f.size());
        }
        eth_header e;
        vlan_tag t;
        arp_packet a;
        ipv4_header ip;
        udp_header u;
        (void)decode(f, e);
        (void)decode(f, t);
        (void)decode(f, a);
        (void)decode(f, ip);
        (void)decode(f, u);
    }
    SUCCEED() << accepted << " random frames accepted";
}

TEST(frame, mutated_frames_never_crash) {
    std::mt19937 rng(99);
    auto s = spec(true);
    auto p = payload(40);
    bytes base(200);
    base.resize(build_udp_frame(s, p, base));
    for (int i = 0; i < 20000; ++i) {
        bytes f = base;
        int flips = 1 + static_cast<int>(rng() % 4);
        for (int k = 0; k < flips; ++k)
            f[rng() % f.size()] = static_cast<std::uint8_t>(rng());
        f.resize(rng() % (f.size() + 1));
        l2l4_view v;
        (void)parse_l2l4(f, v);
    }
}

}  // namespace
