// uet-perf output: the table layout and units, latency statistics, the JSON parsed back, and
// the control messages' codec (including hostile input).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <numeric>
#include <sstream>
#include <vector>

#include "control.hpp"
#include "pattern.hpp"
#include "report.hpp"

namespace uet::perf {
namespace {

std::vector<std::string> words(const std::string& line) {
    std::istringstream in(line);
    std::vector<std::string> w;
    for (std::string s; in >> s;)
        w.push_back(s);
    return w;
}

TEST(perf_report, bw_table_has_perftest_columns_and_units) {
    EXPECT_EQ(words(bw_header(false)),
              (std::vector<std::string>{"#bytes", "#iterations", "BW", "peak[MiB/sec]", "BW",
                                        "average[MiB/sec]", "MsgRate[Mpps]"}));
    EXPECT_NE(bw_header(true).find("BW average[Gb/sec]"), std::string::npos);
    // 65536-byte messages, 1.25e9 bytes/s average = 1192.09 MiB/s = 10 Gb/s.
    const bw_row r{65536, 5000, 2.5e9, 1.25e9, 1.25e9 / 65536};
    auto w = words(bw_line(r, false));
    ASSERT_EQ(w.size(), 5u);
    EXPECT_EQ(w[0], "65536");
    EXPECT_EQ(w[1], "5000");
    EXPECT_EQ(w[2], "2384.19");
    EXPECT_EQ(w[3], "1192.09");
    EXPECT_EQ(w[4], "0.019073");
    w = words(bw_line(r, true));
    EXPECT_EQ(w[2], "20.00");
    EXPECT_EQ(w[3], "10.00");
}

TEST(perf_report, latency_statistics_and_table) {
    std::vector<std::uint64_t> ns(1000);
    std::iota(ns.begin(), ns.end(), 1);
    for (auto& v : ns)
        v *= 1000;  // 1 .. 1000 usec, shuffled below
    std::swap(ns[0], ns[999]);
    const lat_row r = lat_stats(8, ns);
    EXPECT_EQ(r.iterations, 1000u);
    EXPECT_DOUBLE_EQ(r.t_min, 1);
    EXPECT_DOUBLE_EQ(r.t_max, 1000);
    EXPECT_DOUBLE_EQ(r.t_typical, 501);  // the median (upper)
    EXPECT_DOUBLE_EQ(r.t_avg, 500.5);
    EXPECT_NEAR(r.t_stdev, 288.675, 0.001);
    EXPECT_DOUBLE_EQ(r.p99, 990);
    EXPECT_DOUBLE_EQ(r.p999, 999);
    const auto h = words(lat_header());
    EXPECT_EQ(h.front(), "#bytes");
    EXPECT_NE(lat_header().find("t_typical[usec]"), std::string::npos);
    EXPECT_NE(lat_header().find("99.9% percentile[usec]"), std::string::npos);
    const auto w = words(lat_line(r));
    ASSERT_EQ(w.size(), 9u);
    EXPECT_EQ(w[0], "8");
    EXPECT_EQ(w[1], "1000");
    EXPECT_EQ(w[4], "501.00");
    EXPECT_EQ(w[8], "999.00");
}

TEST(perf_report, json_has_perftest_keys) {
    settings s;
    s.test = test_kind::write_bw;
    s.report_gbits = true;
    const run_info info{"pipe", "dev0", "10.0.0.2:4793", "10.0.0.1:4793", 1, 2, ""};
    const bw_row r{65536, 5000, 2.5e9, 1.25e9, 19073.5};
    auto j = nlohmann::json::parse(to_json(s, info, std::span(&r, 1), {}, "OK (3 checks)"));
    EXPECT_EQ(j["test_info"]["test"], "RDMA_Write BW Test");
    EXPECT_EQ(j["test_info"]["Device"], "dev0");
    EXPECT_EQ(j["test_info"]["TX_depth"], 128);
    EXPECT_EQ(j["test_info"]["Mtu"], 4096);
    EXPECT_EQ(j["test_info"]["Connection_type"], "RUD");
    EXPECT_EQ(j["results"]["MsgSize"], 65536);
    EXPECT_EQ(j["results"]["n_iterations"], 5000);
    EXPECT_DOUBLE_EQ(j["results"]["BW_peak"].get<double>(), 20.0);
    EXPECT_DOUBLE_EQ(j["results"]["BW_average"].get<double>(), 10.0);
    EXPECT_NEAR(j["results"]["MsgRate"].get<double>(), 0.019074, 1e-6);
    EXPECT_EQ(j["results"]["verify"], "OK (3 checks)");

    s.test = test_kind::send_lat;
    const lat_row l[2] = {{2, 1000, 1, 9, 2, 2.5, 0.5, 7, 9}, {4, 1000, 1, 9, 3, 3.5, 0.5, 8, 9}};
    j = nlohmann::json::parse(to_json(s, info, {}, l, "off"));
    ASSERT_TRUE(j["results"].is_array());  // -a: one object per size
    ASSERT_EQ(j["results"].size(), 2u);
    EXPECT_EQ(j["results"][1]["MsgSize"], 4);
    EXPECT_DOUBLE_EQ(j["results"][1]["t_typical"].get<double>(), 3);
    EXPECT_DOUBLE_EQ(j["results"][0]["99%"].get<double>(), 7);
    EXPECT_DOUBLE_EQ(j["results"][0]["99.9%"].get<double>(), 9);
    for (const char* k : {"t_min", "t_max", "t_avg", "t_stdev"})
        EXPECT_TRUE(j["results"][0].contains(k)) << k;
}

TEST(perf_report, settings_block_names_the_run) {
    settings s;
    s.test = test_kind::read_lat;
    s.mode = delivery::rod;
    s.verify = true;
    const std::string b = settings_block(s, {"dpdk", "net_memif0", "a", "b", 0, 0, ""});
    EXPECT_NE(b.find("RDMA_Read Latency Test"), std::string::npos);
    EXPECT_NE(b.find("Delivery mode   : ROD"), std::string::npos);
    EXPECT_NE(b.find("Verify          : ON"), std::string::npos);
    EXPECT_NE(b.find("Device         : net_memif0"), std::string::npos);
}

// perftest's habit: the header names what the run used, the defaults too.
TEST(perf_report, settings_block_names_the_congestion_control_and_path_policy) {
    settings s;
    const std::string d = settings_block(s, {});
    EXPECT_NE(d.find("Congestion ctl : nscc\n"), std::string::npos) << d;
    EXPECT_NE(d.find(" Load balancing  : reps "), std::string::npos) << d;
    s.cc = congestion_control::none;
    s.lb = path_policy::static_path;
    const std::string p2p = settings_block(s, {});
    EXPECT_NE(p2p.find("Congestion ctl : none\n"), std::string::npos) << p2p;
    EXPECT_NE(p2p.find(" Load balancing  : static "), std::string::npos) << p2p;
}

TEST(perf_report, settings_block_shows_the_cq_moderation_in_effect) {
    settings s;
    s.test = test_kind::send_bw;
    s.size = 8;
    EXPECT_NE(settings_block(s, {}).find("CQ Moderation   : 100\n"), std::string::npos);
    EXPECT_NE(to_json(s, {}, {}, {}, "").find("\"CQ_Moderation\": 100,"), std::string::npos);
    s.verify = true;
    EXPECT_NE(settings_block(s, {}).find("CQ Moderation   : 1\n"), std::string::npos);
    s.test = test_kind::send_lat;
    EXPECT_EQ(settings_block(s, {}).find("CQ Moderation"), std::string::npos);
}

// --multi-recv in the settings block and the JSON: the send tests say ON or OFF (with the buffers
// and, under -a, where plain receives take over); the other tests have no receives to say it of.
TEST(perf_report, settings_block_and_json_say_how_sends_are_received) {
    settings s;
    s.test = test_kind::send_bw;
    s.size = 8;
    EXPECT_NE(settings_block(s, {}).find(" Multi-receive   : OFF\n"), std::string::npos);
    EXPECT_NE(to_json(s, {}, {}, {}, "").find("\"Multi_recv\": \"OFF\","), std::string::npos);
    s.multi_recv = true;
    EXPECT_NE(settings_block(s, {}).find(" Multi-receive   : ON, 2 buffers of 65536[B]\n"),
              std::string::npos)
        << settings_block(s, {});
    EXPECT_EQ(nlohmann::json::parse(to_json(s, {}, {}, {}, ""))["test_info"]["Multi_recv"], "ON");
    s.all_sizes = true;
    s.tx_depth = 16;
    EXPECT_NE(settings_block(s, {}).find(" Multi-receive   : ON, 2 buffers of 524288[B] (plain "
                                         "receives from 65536[B])\n"),
              std::string::npos)
        << settings_block(s, {});
    s.test = test_kind::send_lat;
    s.all_sizes = false;
    s.multi_recv = false;
    EXPECT_NE(settings_block(s, {}).find(" Multi-receive   : OFF\n"), std::string::npos);
    s.test = test_kind::write_bw;
    EXPECT_EQ(settings_block(s, {}).find("Multi-receive"), std::string::npos);
    EXPECT_EQ(to_json(s, {}, {}, {}, "").find("Multi_recv"), std::string::npos);
}

TEST(perf_control, round_trip_and_hello) {
    settings s;
    s.test = test_kind::send_bw;
    s.size = 1234;
    s.bidirectional = true;
    s.verify = true;
    s.mode = delivery::rudi;
    const ctrl_msg m = make_hello(s, {0x0a000002, 4793}, 0xabc, 4096, 0x1234'5678'9abc'def0);
    ctrl_buffer buf;
    const std::size_t n = encode(m, buf);
    std::string why;
    const auto back = decode(std::span(buf.data(), n), why);
    ASSERT_TRUE(back) << why;
    EXPECT_EQ(back->nonce, 0x1234'5678'9abc'def0u);  // every message carries the session's
    const auto h = read_hello(*back, why);
    ASSERT_TRUE(h) << why;
    EXPECT_EQ(compare_settings(h->s, s), "");
    EXPECT_EQ(h->client.ip, 0x0a000002u);
    EXPECT_EQ(h->key, 0xabcu);
    settings other = s;
    other.size = 99;
    EXPECT_EQ(compare_settings(s, other), "settings differ: -s: client 1234, server 99");
    other = s;
    other.mode = delivery::rud;
    EXPECT_EQ(compare_settings(s, other), "settings differ: --mode: client rudi, server rud");
    // --multi-recv travels too (both sides print it; the receiver acts on it).
    EXPECT_FALSE(h->s.multi_recv);
    other = s;
    other.multi_recv = true;
    const auto mh = read_hello(make_hello(other, {1, 2}, 3, 4, 5), why);
    ASSERT_TRUE(mh) << why;
    EXPECT_TRUE(mh->s.multi_recv);
    EXPECT_EQ(compare_settings(other, s), "settings differ: --multi-recv: client on, server off");
    // A server started with the point-to-point baseline refuses a client on the defaults
    // (NSCC with REPS), and says which option to pass.
    other = s;
    other.cc = congestion_control::none;
    other.lb = path_policy::static_path;
    EXPECT_EQ(compare_settings(s, other), "settings differ: --cc: client nscc, server none");
    other.cc = s.cc;
    EXPECT_EQ(compare_settings(s, other), "settings differ: --lb: client reps, server static");
}

TEST(perf_control, hostile_input_is_refused_with_a_reason) {
    ctrl_msg m;
    m.kind = ctrl_kind::abort;
    m.text = "why";
    ctrl_buffer buf;
    const std::size_t n = encode(m, buf);
    std::string why;
    EXPECT_FALSE(decode(std::span(buf.data(), 10), why));
    EXPECT_NE(why.find("at least"), std::string::npos);
    ctrl_buffer bad = buf;
    bad[0] = std::byte{0};
    EXPECT_FALSE(decode(std::span(bad.data(), n), why));
    EXPECT_NE(why.find("magic"), std::string::npos);
    bad = buf;
    bad[4] = std::byte{9};
    EXPECT_FALSE(decode(std::span(bad.data(), n), why));
    EXPECT_NE(why.find("version"), std::string::npos);
    bad = buf;
    bad[5] = std::byte{200};
    EXPECT_FALSE(decode(std::span(bad.data(), n), why));
    EXPECT_NE(why.find("kind"), std::string::npos);
    // A text length beyond the bytes received.
    EXPECT_FALSE(decode(std::span(buf.data(), n - 1), why));
    EXPECT_NE(why.find("does not fit"), std::string::npos);
    // A HELLO with a setting out of range.
    settings s;
    ctrl_msg h = make_hello(s, {1, 2}, 3, 4, 5);
    h.v[5] = 0;  // tx depth 0
    EXPECT_FALSE(read_hello(h, why));
    EXPECT_NE(why.find("malformed HELLO"), std::string::npos);
    h = make_hello(s, {1, 2}, 3, 4, 5);
    h.v[19] = 2;  // --multi-recv neither on nor off
    EXPECT_FALSE(read_hello(h, why));
    // A HELLO without a session: 0 is no nonce (a server would bind to nothing anyone proves).
    EXPECT_FALSE(read_hello(make_hello(s, {1, 2}, 3, 4, 0), why));
    EXPECT_NE(why.find("nonce"), std::string::npos);
}

TEST(perf_pattern, every_byte_matters) {
    std::vector<std::byte> b(100);
    for (std::size_t len : {std::size_t{1}, std::size_t{7}, std::size_t{8}, std::size_t{100}}) {
        const std::span<std::byte> s(b.data(), len);
        fill_pattern(s, 41);
        EXPECT_FALSE(check_pattern(s, 41));
        for (std::size_t i = 0; i < len; ++i) {
            s[i] ^= std::byte{1};
            EXPECT_TRUE(check_pattern(s, 41)) << "len " << len << " byte " << i;
            s[i] ^= std::byte{1};
        }
    }
}

}  // namespace
}  // namespace uet::perf
