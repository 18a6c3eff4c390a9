// ICMP echo build/parse and the echo reply frame.
#include <gtest/gtest.h>

#include <vector>

#include "frame.hpp"
#include "icmp.hpp"

namespace {

using namespace uet;

TEST(Icmp, EchoRoundTripAndChecksum) {
    const std::vector<std::uint8_t> data{1, 2, 3, 4, 5};
    runtime::icmp_echo e;
    e.id = 0x1234;
    e.sequence = 7;
    e.data = data;
    std::vector<std::uint8_t> buf(64);
    const std::size_t n = runtime::build_icmp_echo(e, buf);
    ASSERT_EQ(n, 13u);
    runtime::icmp_echo p;
    ASSERT_EQ(runtime::parse_icmp_echo(std::span(buf).first(n), p), runtime::icmp_error::none);
    EXPECT_EQ(p.type, runtime::icmp_echo_request);
    EXPECT_EQ(p.id, 0x1234);
    EXPECT_EQ(p.sequence, 7);
    EXPECT_EQ(std::vector<std::uint8_t>(p.data.begin(), p.data.end()), data);
    buf[9] ^= 1;
    EXPECT_EQ(runtime::parse_icmp_echo(std::span(buf).first(n), p),
              runtime::icmp_error::bad_checksum);
    EXPECT_EQ(runtime::parse_icmp_echo(std::span(buf).first(7), p), runtime::icmp_error::truncated);
    EXPECT_EQ(runtime::build_icmp_echo(e, std::span(buf).first(12)), 0u);
}

TEST(Icmp, RejectsOtherTypes) {
    std::vector<std::uint8_t> msg{3, 1, 0, 0, 0, 0, 0, 0};  // destination unreachable
    const std::uint16_t c = wire::internet_checksum(msg);
    msg[2] = static_cast<std::uint8_t>(c >> 8);
    msg[3] = static_cast<std::uint8_t>(c);
    runtime::icmp_echo p;
    EXPECT_EQ(runtime::parse_icmp_echo(msg, p), runtime::icmp_error::not_echo);
}

TEST(Icmp, ReplyFrameSwapsAddressesAndKeepsData) {
    wire::frame_spec s;
    s.src_mac = {{0x02, 0, 0, 0, 0, 9}};
    s.dst_mac = {{0x02, 0, 0, 0, 0, 1}};
    s.src_ip = 0x0a000009;
    s.dst_ip = 0x0a000001;
    std::vector<std::uint8_t> data(56, 0x5a), msg(64), frame(200), reply(200);
    runtime::icmp_echo e;
    e.id = 42;
    e.sequence = 3;
    e.data = data;
    const std::size_t m = runtime::build_icmp_echo(e, msg);
    const std::size_t n =
        wire::build_ip_frame(s, runtime::ip_proto_icmp, std::span(msg).first(m), frame);
    runtime::ipv4_frame_view v;
    ASSERT_EQ(runtime::parse_ipv4_frame(std::span(frame).first(n), v),
              runtime::ipv4_frame_error::none);
    runtime::icmp_echo req;
    ASSERT_EQ(runtime::parse_icmp_echo(v.payload, req), runtime::icmp_error::none);
    const std::size_t r = runtime::build_echo_reply_frame(v, req, s.dst_mac, s.dst_ip, reply);
    ASSERT_EQ(r, n);
    runtime::ipv4_frame_view rv;
    ASSERT_EQ(runtime::parse_ipv4_frame(std::span(reply).first(r), rv),
              runtime::ipv4_frame_error::none);
    EXPECT_EQ(rv.eth.dst, s.src_mac);
    EXPECT_EQ(rv.eth.src, s.dst_mac);
    EXPECT_EQ(rv.ip.src, s.dst_ip);
    EXPECT_EQ(rv.ip.dst, s.src_ip);
    runtime::icmp_echo rep;
    ASSERT_EQ(runtime::parse_icmp_echo(rv.payload, rep), runtime::icmp_error::none);
    EXPECT_EQ(rep.type, runtime::icmp_echo_reply);
    EXPECT_EQ(rep.id, 42);
    EXPECT_EQ(rep.sequence, 3);
    EXPECT_EQ(std::vector<std::uint8_t>(rep.data.begin(), rep.data.end()), data);
}

TEST(Icmp, FramesThatAreNotPlainIpv4) {
    runtime::ipv4_frame_view v;
    std::vector<std::uint8_t> f(10);
    EXPECT_EQ(runtime::parse_ipv4_frame(f, v), runtime::ipv4_frame_error::truncated);
    f.assign(60, 0);
    f[12] = 0x86;
    f[13] = 0xdd;
    EXPECT_EQ(runtime::parse_ipv4_frame(f, v), runtime::ipv4_frame_error::not_ipv4);
}

}  // namespace
