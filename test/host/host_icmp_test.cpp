// ICMP echo build/parse and the echo reply frame.
#include <gtest/gtest.h>

#include <vector>

#include "host/icmp.hpp"
#include "wire/frame.hpp"

namespace {

using namespace uet;

TEST(icmp, echo_round_trip_and_checksum) {
    const std::vector<std::uint8_t> data{1, 2, 3, 4, 5};
    host::icmp_echo e;
    e.id = 0x1234;
    e.sequence = 7;
    e.data = data;
    std::vector<std::uint8_t> buf(64);
    const std::size_t n = host::build_icmp_echo(e, buf);
    ASSERT_EQ(n, 13u);
    host::icmp_echo p;
    ASSERT_EQ(host::parse_icmp_echo(std::span(buf).first(n), p), host::icmp_error::none);
    EXPECT_EQ(p.type, host::icmp_echo_request);
    EXPECT_EQ(p.id, 0x1234);
    EXPECT_EQ(p.sequence, 7);
    EXPECT_EQ(std::vector<std::uint8_t>(p.data.begin(), p.data.end()), data);
    buf[9] ^= 1;
    EXPECT_EQ(host::parse_icmp_echo(std::span(buf).first(n), p), host::icmp_error::bad_checksum);
    EXPECT_EQ(host::parse_icmp_echo(std::span(buf).first(7), p), host::icmp_error::truncated);
    EXPECT_EQ(host::build_icmp_echo(e, std::span(buf).first(12)), 0u);
}

TEST(icmp, rejects_other_types) {
    std::vector<std::uint8_t> msg{3, 1, 0, 0, 0, 0, 0, 0};  // destination unreachable
    const std::uint16_t c = wire::internet_checksum(msg);
    msg[2] = static_cast<std::uint8_t>(c >> 8);
    msg[3] = static_cast<std::uint8_t>(c);
    host::icmp_echo p;
    EXPECT_EQ(host::parse_icmp_echo(msg, p), host::icmp_error::not_echo);
}

TEST(icmp, reply_frame_swaps_addresses_and_keeps_data) {
    wire::frame_spec s;
    s.src_mac = {{0x02, 0, 0, 0, 0, 9}};
    s.dst_mac = {{0x02, 0, 0, 0, 0, 1}};
    s.src_ip = 0x0a000009;
    s.dst_ip = 0x0a000001;
    std::vector<std::uint8_t> data(56, 0x5a), msg(64), frame(200), reply(200);
    host::icmp_echo e;
    e.id = 42;
    e.sequence = 3;
    e.data = data;
    const std::size_t m = host::build_icmp_echo(e, msg);
    const std::size_t n =
        wire::build_ip_frame(s, host::ip_proto_icmp, std::span(msg).first(m), frame);
    host::ipv4_frame_view v;
    ASSERT_EQ(host::parse_ipv4_frame(std::span(frame).first(n), v), host::ipv4_frame_error::none);
    host::icmp_echo req;
    ASSERT_EQ(host::parse_icmp_echo(v.payload, req), host::icmp_error::none);
    const std::size_t r = host::build_echo_reply_frame(v, req, s.dst_mac, s.dst_ip, reply);
    ASSERT_EQ(r, n);
    host::ipv4_frame_view rv;
    ASSERT_EQ(host::parse_ipv4_frame(std::span(reply).first(r), rv), host::ipv4_frame_error::none);
    EXPECT_EQ(rv.eth.dst, s.src_mac);
    EXPECT_EQ(rv.eth.src, s.dst_mac);
    EXPECT_EQ(rv.ip.src, s.dst_ip);
    EXPECT_EQ(rv.ip.dst, s.src_ip);
    host::icmp_echo rep;
    ASSERT_EQ(host::parse_icmp_echo(rv.payload, rep), host::icmp_error::none);
    EXPECT_EQ(rep.type, host::icmp_echo_reply);
    EXPECT_EQ(rep.id, 42);
    EXPECT_EQ(rep.sequence, 3);
    EXPECT_EQ(std::vector<std::uint8_t>(rep.data.begin(), rep.data.end()), data);
}

TEST(icmp, frames_that_are_not_plain_ipv4) {
    host::ipv4_frame_view v;
    std::vector<std::uint8_t> f(10);
    EXPECT_EQ(host::parse_ipv4_frame(f, v), host::ipv4_frame_error::truncated);
    f.assign(60, 0);
    f[12] = 0x86;
    f[13] = 0xdd;
    EXPECT_EQ(host::parse_ipv4_frame(f, v), host::ipv4_frame_error::not_ipv4);
}

}  // namespace
