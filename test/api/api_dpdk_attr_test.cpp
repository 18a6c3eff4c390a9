// api_dpdk_attr: the dpdk provider refuses bad attributes with errc::invalid_argument and a
// sentence naming the field, before it starts DPDK (so this runs without a port); unknown
// providers are unsupported. And a peer that dies does not leave operations waiting for its
// answers (both providers share this endpoint code; the pipe shows it in virtual time).
#include <algorithm>
#include <cstdio>
#include <string>

#include "api_helpers.hpp"

namespace uet::test {
namespace {

fabric_attr dpdk_fabric() {
    fabric_attr a;
    a.provider = "dpdk";
    a.mtu = 1344;
    a.dpdk.device = "net_null0";
    a.dpdk.address = "10.0.0.1/24";
    return a;
}

// Opening must fail with invalid_argument and a last_error() containing `says`.
void expect_refused(const fabric_attr& a, const std::string& says) {
    auto f = fabric::open(a);
    ASSERT_FALSE(f);
    EXPECT_EQ(f.error(), errc::invalid_argument);
    EXPECT_NE(fabric::last_error().find(says), std::string::npos)
        << "last_error: " << fabric::last_error();
}

TEST(dpdk_attr, bad_addresses_are_refused_with_the_field_named) {
    for (const char* bad : {"", "10.0.0.1", "10.0.0.1/", "10.0.0.1/33", "10.0.0.1/0", "10.0.0/24",
                            "10.0.0.256/24", "10.0.0.1/24x", "0.0.0.0/8", "224.0.0.1/4"}) {
        auto a = dpdk_fabric();
        a.dpdk.address = bad;
        expect_refused(a, "dpdk.address");
    }
}

TEST(dpdk_attr, gateway_must_be_on_the_subnet) {
    auto a = dpdk_fabric();
    a.dpdk.gateway = "10.1.0.254";
    expect_refused(a, "dpdk.gateway");
    a.dpdk.gateway = "10.0.0.1";  // ourselves
    expect_refused(a, "dpdk.gateway");
    a.dpdk.gateway = "ten";
    expect_refused(a, "dpdk.gateway");
}

TEST(dpdk_attr, neighbours_are_ip_equals_mac_on_the_subnet) {
    for (const char* bad :
         {"10.0.0.2", "10.0.0.2=", "10.0.0.2=02:00:00:00:00", "x=02:00:00:00:00:02",
          "10.0.0.2=01:00:5e:00:00:01", "10.9.0.2=02:00:00:00:00:02"}) {
        auto a = dpdk_fabric();
        a.dpdk.neighbors = {"10.0.0.3=02:00:00:00:00:03", bad};
        expect_refused(a, "dpdk.neighbors");
    }
}

TEST(dpdk_attr, device_mtu_and_timers_are_checked) {
    auto a = dpdk_fabric();
    a.dpdk.device = "";
    expect_refused(a, "dpdk.device");
    a = dpdk_fabric();
    a.dpdk.port_mtu = 100;
    expect_refused(a, "dpdk.port_mtu");
    a = dpdk_fabric();
    a.mtu = 9000;  // no port carries 9000 payload bytes plus the headers
    expect_refused(a, "fabric_attr.mtu");
    a = dpdk_fabric();
    a.dpdk.rto_ns = 60'000'000'000ull;
    expect_refused(a, "dpdk.rto_ns");
    a = dpdk_fabric();
    a.dpdk.max_retransmits = 100000;
    expect_refused(a, "dpdk.max_retransmits");
    a = dpdk_fabric();
    a.dpdk.ack_every = 257;  // more than the window: ACKs only when it is full
    expect_refused(a, "dpdk.ack_every");
}

TEST(dpdk_attr, unknown_providers_are_unsupported_and_pipe_mtu_is_checked) {
    fabric_attr a;
    a.provider = "verbs";
    auto f = fabric::open(a);
    ASSERT_FALSE(f);
    EXPECT_EQ(f.error(), errc::unsupported);
    EXPECT_NE(fabric::last_error().find("verbs"), std::string::npos);
    a = fabric_attr{};
    a.mtu = 16;
    EXPECT_EQ(fabric::open(a).error(), errc::invalid_argument);
    EXPECT_NE(fabric::last_error().find("fabric_attr.mtu"), std::string::npos);
    ASSERT_TRUE(fabric::open(fabric_attr{}));
    EXPECT_TRUE(fabric::last_error().empty());
}

// A capture file that cannot be created fails the open and names the field and the path; one
// that can be gets every frame of the fabric (each once on the pipe).
TEST(capture_file, is_checked_and_counts_every_frame) {
    fabric_attr a;
    a.capture_file = "/nonexistent-dir/run.pcap";
    EXPECT_EQ(fabric::open(a).error(), errc::invalid_argument);
    EXPECT_NE(fabric::last_error().find("fabric_attr.capture_file '/nonexistent-dir/run.pcap'"),
              std::string::npos);
    a.capture_file = ::testing::TempDir() + "api_capture_file.pcap";
    {
        world w(a, 2, endpoint_attr{.job_id = 3});
        const auto data = pattern(20000, 1);
        std::vector<std::byte> in(data.size());
        ASSERT_FALSE(w.eps[1].recv(in, nullptr));
        ASSERT_FALSE(w.eps[0].send(w.peers[1], as_bytes_of(data), nullptr));
        wait_ok(w.cqs[1]);
        wait_ok(w.cqs[0]);
        EXPECT_EQ(in, data);
        const fabric_stats st = w.fab.stats();
        EXPECT_EQ(st.captured_frames, st.frames);
        EXPECT_GE(st.captured_frames, 3u);
        EXPECT_FALSE(st.capture_failed);
    }
    std::remove(a.capture_file.c_str());
}

// A send deferred by the target (no receive posted: NO_MATCH, waiting for its RTR) when the
// target closes: once a later operation to that peer reaches the retry limit, the deferred send
// fails too instead of waiting forever for an RTR that cannot come.
TEST(dead_peer, operations_waiting_for_its_answers_fail_with_it) {
    world w(fabric_attr{}, 2, endpoint_attr{.job_id = 3});
    const auto big = pattern(256 << 10, 5);  // above the deferrable threshold
    int deferred = 1, write = 2;
    ASSERT_FALSE(w.eps[0].send(w.peers[1], as_bytes_of(big), &deferred));
    for (int i = 0; i < 1'000'000 && w.eps[1].counters().deferred == 0; ++i)
        ASSERT_TRUE(w.fab.progress());
    ASSERT_EQ(w.eps[1].counters().deferred, 1u);
    w.eps[1].close();
    const auto small = pattern(100, 6);
    ASSERT_FALSE(w.eps[0].write(w.peers[1], as_bytes_of(small), 0, 1, &write));
    std::vector<void*> failed;
    for (int i = 0; i < 2; ++i) {
        completion c;
        const std::error_code ec = w.cqs[0].wait(c);
        ASSERT_TRUE(ec == errc::retry_limit || ec == errc::peer_unreachable) << ec.message();
        failed.push_back(c.context);
    }
    EXPECT_NE(std::find(failed.begin(), failed.end(), &deferred), failed.end());
    EXPECT_NE(std::find(failed.begin(), failed.end(), &write), failed.end());
}

}  // namespace
}  // namespace uet::test
