// uet-perf option parsing: perftest's habits, the UET options, and clear errors.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "options.hpp"
#include "runner.hpp"
#include "traffic.hpp"

namespace uet::perf {
namespace {

parse_result parse(std::initializer_list<const char*> args) {
    std::vector<const char*> argv{"uet-perf"};
    argv.insert(argv.end(), args);
    return parse_options(static_cast<int>(argv.size()), argv.data());
}

TEST(perf_options, perftest_habits_on_a_client) {
    const auto r = parse({"write_bw", "-s", "4096", "-n", "100", "-t", "64", "-m", "2048", "-b",
                          "-F", "--report_gbits", "-p", "77", "--provider", "pipe"});
    ASSERT_EQ(r.error, "");
    EXPECT_EQ(r.s.test, test_kind::write_bw);
    EXPECT_EQ(r.s.size, 4096u);
    EXPECT_EQ(r.s.iterations, 100u);
    EXPECT_EQ(r.s.tx_depth, 64u);
    EXPECT_EQ(r.s.mtu, 2048u);
    EXPECT_TRUE(r.s.bidirectional);
    EXPECT_TRUE(r.s.report_gbits);
    EXPECT_EQ(r.s.job_id, 77u);
    EXPECT_FALSE(r.s.is_client());
}

TEST(perf_options, server_address_makes_a_client_and_uet_options_parse) {
    const auto r = parse({"send_lat",
                          "--dev",
                          "net_memif0,role=client,socket=/tmp/x.sock",
                          "--ip",
                          "10.9.0.2/24",
                          "--gw",
                          "10.9.0.254",
                          "--mode=rod",
                          "--cc",
                          "rccc",
                          "--lb",
                          "bitmap",
                          "--eal",
                          "-l 1",
                          "--verify",
                          "--stats",
                          "--out_json_file",
                          "/tmp/r.json",
                          "--pcap",
                          "/tmp/c.pcap",
                          "10.9.0.1"});
    ASSERT_EQ(r.error, "");
    EXPECT_TRUE(r.s.is_client());
    EXPECT_EQ(r.s.server, "10.9.0.1");
    EXPECT_EQ(r.s.mode, delivery::rod);
    EXPECT_EQ(r.s.cc, congestion_control::rccc);
    EXPECT_EQ(r.s.lb, path_policy::bitmap);
    EXPECT_EQ(r.s.eal, "-l 1");
    EXPECT_TRUE(r.s.out_json);
    EXPECT_EQ(r.s.out_json_file, "/tmp/r.json");
    EXPECT_EQ(r.s.pcap_file, "/tmp/c.pcap");
    // Latency tests: perftest's 1000 iterations and one operation in flight.
    EXPECT_EQ(r.s.iterations, 1000u);
    EXPECT_EQ(r.s.tx_depth, 1u);
    // dpdk without -m: an MTU that fits a 1500-byte port with the headers.
    EXPECT_EQ(r.s.mtu, 1344u);
    EXPECT_EQ(r.s.mtu, largest_dpdk_mtu(1500));
}

// Safe on a shared fabric by default (the API's: NSCC with REPS spraying); the fixed-window,
// one-path baseline of point-to-point benchmarks stays one option pair away.
TEST(perf_options, congestion_control_and_spraying_by_default) {
    const auto d = parse({"write_bw", "--provider", "pipe"});
    ASSERT_EQ(d.error, "");
    EXPECT_EQ(d.s.cc, congestion_control::nscc);
    EXPECT_EQ(d.s.lb, path_policy::reps);
    EXPECT_EQ(d.s.cc, endpoint_attr{}.cc);
    EXPECT_EQ(d.s.lb, endpoint_attr{}.lb);
    const auto p2p = parse({"write_bw", "--provider", "pipe", "--cc", "none", "--lb=static"});
    ASSERT_EQ(p2p.error, "");
    EXPECT_EQ(p2p.s.cc, congestion_control::none);
    EXPECT_EQ(p2p.s.lb, path_policy::static_path);
}

TEST(perf_options, time_stages_is_its_own_option_and_shows_the_counters) {
    const auto stats = parse({"send_bw", "--provider", "pipe", "--stats"});
    ASSERT_EQ(stats.error, "");
    EXPECT_TRUE(stats.s.stats);
    EXPECT_FALSE(stats.s.time_stages);  // the clock reads are not paid for the counters
    const auto stages = parse({"send_bw", "--provider", "pipe", "--time-stages"});
    ASSERT_EQ(stages.error, "");
    EXPECT_TRUE(stages.s.time_stages);
    EXPECT_TRUE(stages.s.stats);  // they are printed with the counters
}

TEST(perf_options, zero_copy_threshold) {
    EXPECT_EQ(parse({"write_bw", "--provider", "pipe"}).s.zero_copy_min, 1024u);
    const auto off = parse({"write_bw", "--provider", "pipe", "--zero-copy-min", "0"});
    ASSERT_EQ(off.error, "");
    EXPECT_EQ(off.s.zero_copy_min, 0u);
    EXPECT_EQ(parse({"write_bw", "--provider", "pipe", "--zero-copy-min=512"}).s.zero_copy_min,
              512u);
    EXPECT_NE(parse({"write_bw", "--provider", "pipe", "--zero-copy-min", "x"})
                  .error.find("--zero-copy-min must be a number of bytes"),
              std::string::npos);
}

TEST(perf_options, ack_every) {
    EXPECT_EQ(parse({"write_bw", "--provider", "pipe"}).s.ack_every, 0u);  // the default
    const auto some = parse({"write_bw", "--provider", "pipe", "--ack-every", "64"});
    ASSERT_EQ(some.error, "");
    EXPECT_EQ(some.s.ack_every, 64u);
    EXPECT_EQ(parse({"write_bw", "--provider", "pipe", "--ack-every=256"}).s.ack_every, 256u);
    for (const char* bad : {"0", "257", "x"})
        EXPECT_NE(parse({"write_bw", "--provider", "pipe", "--ack-every", bad})
                      .error.find("--ack-every must be 1 .. 256 packets"),
                  std::string::npos)
            << bad;
}

TEST(perf_options, cq_moderation) {
    EXPECT_EQ(parse({"send_bw", "--provider", "pipe"}).s.cq_mod, 100u);  // perftest's default
    EXPECT_EQ(parse({"send_bw", "--provider", "pipe", "-Q", "1"}).s.cq_mod, 1u);
    const auto some = parse({"write_bw", "--provider", "pipe", "--cq-mod=8"});
    ASSERT_EQ(some.error, "");
    EXPECT_EQ(some.s.cq_mod, 8u);
    for (const char* bad : {"0", "4097", "x"})
        EXPECT_NE(
            parse({"write_bw", "--provider", "pipe", "-Q", bad}).error.find("-Q: CQ moderation"),
            std::string::npos)
            << bad;
    // In effect: at most the depth; 1 where operations have buffers of their own, and for
    // latency tests.
    settings s;
    s.test = test_kind::send_bw;
    s.tx_depth = 16;
    EXPECT_EQ(cq_mod_for(s, 8), 16u);
    s.tx_depth = 128;
    EXPECT_EQ(cq_mod_for(s, 8), 100u);
    s.verify = true;
    EXPECT_EQ(cq_mod_for(s, 8), 1u);
    s.verify = false;
    s.distinct_buffers = true;
    EXPECT_EQ(cq_mod_for(s, 8), 1u);
    s.distinct_buffers = false;
    s.test = test_kind::send_lat;
    EXPECT_EQ(cq_mod_for(s, 8), 1u);
}

// perftest's -l / --post_list and --recv_post_list: send_bw only; -Q becomes the list's length
// unless given, and must then divide it; a list is at most the depth.
TEST(perf_options, post_lists) {
    const auto plain = parse({"send_bw", "--provider", "pipe"});
    EXPECT_EQ(plain.s.post_list, 1u);
    EXPECT_EQ(plain.s.recv_post_list, 1u);
    const auto lists = parse({"send_bw", "--provider", "pipe", "-l", "32", "--recv_post_list=16"});
    ASSERT_EQ(lists.error, "");
    EXPECT_EQ(lists.s.post_list, 32u);
    EXPECT_EQ(lists.s.recv_post_list, 16u);
    EXPECT_EQ(lists.s.cq_mod, 32u);
    const auto both = parse({"send_bw", "--provider", "pipe", "--post_list", "64", "-Q", "16"});
    ASSERT_EQ(both.error, "");
    EXPECT_EQ(both.s.cq_mod, 16u);
    const auto errors = {
        std::pair{parse({"send_bw", "--provider", "pipe", "-l", "64", "-Q", "10"}),
                  "-l 64 must be a multiple of -Q 10"},
        std::pair{parse({"write_bw", "--provider", "pipe", "-l", "8"}), "send_bw only"},
        std::pair{parse({"send_lat", "--provider", "pipe", "--recv_post_list", "8"}),
                  "send_bw's only"},
        std::pair{parse({"send_bw", "--provider", "pipe", "-l", "256"}),
                  "longer than the tx depth (-t 128)"},
        std::pair{parse({"send_bw", "--provider", "pipe", "-t", "8", "--recv_post_list", "9"}),
                  "longer than the depth (-t 8)"},
        std::pair{parse({"send_bw", "--provider", "pipe", "-s", "8", "--multi-recv",
                         "--recv_post_list", "4"}),
                  "exclude each other"},
        std::pair{parse({"send_bw", "--provider", "pipe", "-l", "0"}), "-l: post list length"},
    };
    for (const auto& [r, says] : errors)
        EXPECT_NE(r.error.find(says), std::string::npos) << r.error << " / " << says;
}

TEST(perf_options, zero_copy_switch) {
    EXPECT_EQ(parse({"write_bw", "--provider", "pipe"}).s.zero_copy, zero_copy_policy::automatic);
    EXPECT_EQ(parse({"write_bw", "--provider", "pipe", "--zero-copy"}).s.zero_copy,
              zero_copy_policy::on);
    const auto off = parse({"write_bw", "--provider", "pipe", "--no-zero-copy"});
    ASSERT_EQ(off.error, "");
    EXPECT_EQ(off.s.zero_copy, zero_copy_policy::off);
    EXPECT_NE(parse({"write_bw", "--provider", "pipe", "--zero-copy=1"})
                  .error.find("--zero-copy takes no value"),
              std::string::npos);
}

TEST(perf_options, default_mtu_follows_the_port_within_its_limit) {
    const auto jumbo = parse({"write_bw", "--dev", "eth0", "--ip", "10.0.0.1/24", "--port-mtu",
                              "9000", "--trust-link-mtu"});
    ASSERT_EQ(jumbo.error, "");
    EXPECT_EQ(jumbo.s.mtu, 8192u);  // what -m and the HELLO accept, not 8832
    const auto mid =
        parse({"write_bw", "--dev", "eth0", "--ip", "10.0.0.1/24", "--port-mtu", "4000"});
    EXPECT_EQ(mid.s.mtu, 3840u);
}

TEST(perf_options, udp_checksum_switch) {
    EXPECT_EQ(parse({"write_bw", "--provider", "pipe"}).s.udp_checksum, checksum_policy::automatic);
    EXPECT_EQ(parse({"write_bw", "--provider", "pipe", "--udp-checksum"}).s.udp_checksum,
              checksum_policy::on);
    const auto off = parse({"write_bw", "--provider", "pipe", "--no-udp-checksum"});
    ASSERT_EQ(off.error, "");
    EXPECT_EQ(off.s.udp_checksum, checksum_policy::off);
}

TEST(perf_options, all_sizes_and_defaults) {
    const auto r = parse({"read_bw", "-a", "--provider", "pipe"});
    ASSERT_EQ(r.error, "");
    const auto sizes = r.s.sizes();
    ASSERT_EQ(sizes.size(), 23u);
    EXPECT_EQ(sizes.front(), 2u);
    EXPECT_EQ(sizes.back(), 8u << 20);
    EXPECT_EQ(r.s.iterations, 5000u);
    EXPECT_EQ(r.s.tx_depth, 128u);
    EXPECT_EQ(r.s.mtu, 4096u);
    const auto a = parse({"atomic_lat", "--provider", "pipe"});
    ASSERT_EQ(a.error, "");
    EXPECT_EQ(a.s.size, 8u);
    EXPECT_FALSE(a.s.compare_and_swap);
    const auto cas = parse(
        {"atomic_bw", "--provider", "pipe", "--mode", "rod", "--verify", "-A", "CMP_AND_SWAP"});
    ASSERT_EQ(cas.error, "");
    EXPECT_TRUE(cas.s.compare_and_swap);
    EXPECT_EQ(title_of(cas.s), "Atomic CMP_AND_SWAP BW Test");
    EXPECT_EQ(title_of(a.s), "Atomic FETCH_AND_ADD Latency Test");
}

TEST(perf_options, duration_and_help) {
    const auto r = parse({"send_bw", "-D", "2.5", "--provider", "pipe"});
    ASSERT_EQ(r.error, "");
    EXPECT_EQ(r.s.duration_ms, 2500u);
    EXPECT_TRUE(parse({"write_bw", "--help"}).s.help);
}

// --multi-recv: the send tests only, below the size that goes as deferrable sends (-a falls back
// to plain receives from there), and buffers that hold a whole tx depth of the largest size.
TEST(perf_options, multi_recv_for_the_send_tests_below_the_deferrable_size) {
    for (const char* test : {"send_bw", "send_lat"}) {
        const auto r = parse({test, "--provider", "pipe", "-s", "8", "--multi-recv"});
        ASSERT_EQ(r.error, "") << test;
        EXPECT_TRUE(r.s.multi_recv);
        EXPECT_TRUE(multi_recv_for(r.s, 8));
        EXPECT_EQ(multi_recv_buffer_bytes(r.s), multi_recv_min_bytes);  // 64 KiB at least
    }
    EXPECT_FALSE(parse({"send_bw", "--provider", "pipe", "-s", "8"}).s.multi_recv);
    EXPECT_EQ(multi_recv_buffer_bytes(parse({"send_bw", "--provider", "pipe", "-s", "8"}).s), 0u);
    EXPECT_EQ(multi_recv_below, 65536u);

    const auto largest = parse({"send_bw", "--provider", "pipe", "-s", "65535", "--multi-recv"});
    ASSERT_EQ(largest.error, "");
    EXPECT_TRUE(multi_recv_for(largest.s, 65535));
    // A tx depth of the size, in whole cache lines: 128 x 65535 rounded up to 64.
    EXPECT_EQ(multi_recv_buffer_bytes(largest.s), (128u * 65535 + 63) / 64 * 64);

    const auto all =
        parse({"send_bw", "--provider", "pipe", "-a", "-t", "16", "--multi-recv", "-b"});
    ASSERT_EQ(all.error, "");
    EXPECT_TRUE(multi_recv_for(all.s, 2));
    EXPECT_TRUE(multi_recv_for(all.s, 32768));
    EXPECT_FALSE(multi_recv_for(all.s, 65536));  // plain receives from here
    EXPECT_FALSE(multi_recv_for(all.s, 8u << 20));
    EXPECT_EQ(multi_recv_buffer_bytes(all.s), 16u * 32768);  // the largest size below 64 KiB

    const auto lat = parse({"send_lat", "--provider", "pipe", "-a", "--multi-recv"});
    ASSERT_EQ(lat.error, "");
    EXPECT_EQ(multi_recv_buffer_bytes(lat.s), multi_recv_min_bytes);  // depth 2 x 32768

    for (const char* test :
         {"write_bw", "read_bw", "atomic_bw", "write_lat", "read_lat", "atomic_lat"}) {
        const auto r = parse({test, "--provider", "pipe", "--multi-recv"});
        EXPECT_NE(r.error.find("--multi-recv applies to send_bw and send_lat only"),
                  std::string::npos)
            << test << ": got '" << r.error << "'";
    }
    // The default size (65536) and larger ones are deferrable sends: refused with the reason.
    for (std::initializer_list<const char*> args :
         {std::initializer_list<const char*>{"send_bw", "--provider", "pipe", "--multi-recv"},
          {"send_bw", "--provider", "pipe", "--multi-recv", "-s", "65536"},
          {"send_lat", "--provider", "pipe", "--multi-recv", "-s", "1000000"}}) {
        const auto r = parse(args);
        EXPECT_NE(r.error.find("multi-receive buffers do not take: give -s below 65536"),
                  std::string::npos)
            << "got '" << r.error << "'";
    }
    EXPECT_NE(parse({"send_bw", "--provider", "pipe", "-s", "8", "--multi-recv=1"})
                  .error.find("--multi-recv takes no value"),
              std::string::npos);
}

struct bad_case {
    std::vector<const char*> args;
    const char* says;
};

// perftest's buffers: a page cycled in cache-line steps, one buffer above half a page; own
// buffers with --verify, --distinct-buffers and the latency tests. Every slot lies within the
// region the run registers and within the local buffers.
TEST(perf_options, buffer_layout_follows_perftests_cycle_buffer) {
    auto layout = [](std::initializer_list<const char*> args, std::uint64_t size) {
        const auto r = parse(args);
        EXPECT_EQ(r.error, "");
        return layout_for(r.s, size);
    };
    buffer_layout l = layout({"write_bw", "--provider", "pipe"}, 8);
    EXPECT_TRUE(l.shared);
    EXPECT_EQ(l.stride, 64u);
    EXPECT_EQ(l.count, 64u);
    EXPECT_EQ(l.offset_of(63), 63u * 64);
    EXPECT_EQ(l.offset_of(64), 0u);
    l = layout({"send_bw", "--provider", "pipe"}, 100);
    EXPECT_EQ(l.stride, 128u);
    EXPECT_EQ(l.count, 32u);
    l = layout({"read_bw", "--provider", "pipe"}, 2048);
    EXPECT_EQ(l.count, 2u);
    l = layout({"write_bw", "--provider", "pipe"}, 2049);
    EXPECT_EQ(l.count, 1u);
    EXPECT_EQ(l.offset_of(5), 0u);
    l = layout({"write_bw", "--provider", "pipe", "--distinct-buffers"}, 65536);
    EXPECT_FALSE(l.shared);
    EXPECT_EQ(l.offset_of(3), 3u * 65536);
    EXPECT_FALSE(layout({"write_bw", "--provider", "pipe", "--verify"}, 8).shared);
    EXPECT_FALSE(layout({"write_lat", "--provider", "pipe"}, 8).shared);

    for (const char* test : {"write_bw", "read_bw", "send_bw"}) {
        const auto r = parse({test, "-a", "-t", "128", "--provider", "pipe"});
        ASSERT_EQ(r.error, "");
        const std::uint64_t region = region_bytes_for(r.s);
        for (std::uint64_t size : r.s.sizes()) {
            const buffer_layout b = layout_for(r.s, size);
            const std::uint32_t depth = depth_for(r.s, size);
            for (std::uint64_t k = 0; k < std::max<std::uint64_t>(depth, 2 * b.count); ++k)
                ASSERT_LE(b.offset_of(k) + size, region)
                    << test << " size " << size << " slot " << k;
        }
    }
}

// The initiator's region slot and offset advance per post without a division: the same as
// offset_of(k % slots) for every k, in both layouts, with slots above, at and below the cycle.
TEST(perf_options, slot_cursor_matches_the_layouts_offsets) {
    const buffer_layout distinct{false, 96, 0};
    const buffer_layout cycle{true, 64, 64};
    for (const buffer_layout& l : {distinct, cycle}) {
        for (const std::uint64_t slots : {1, 7, 64, 128, 200}) {
            slot_cursor c;
            for (std::uint64_t k = 0; k < 1000; ++k) {
                ASSERT_EQ(c.slot, k % slots) << "slots " << slots << " k " << k;
                ASSERT_EQ(c.offset, l.offset_of(k % slots)) << "slots " << slots << " k " << k;
                c.advance(slots, l);
            }
        }
    }
}

TEST(perf_options, roce_queue_pairs_and_their_scheduler) {
    const auto r = parse({"write_bw",
                          "--provider",
                          "pipe",
                          "--transport",
                          "roce",
                          "--qps",
                          "4",
                          "--qp-sched",
                          "cast-wrr",
                          "--qp-split-min",
                          "4096",
                          "--qp-update-us",
                          "20",
                          "--qp-reset-ms",
                          "0",
                          "--qp-weight",
                          "0.25",
                          "--qp-wrr",
                          "-u",
                          "10",
                          "--retry_count",
                          "3",
                          "--rnr_retry",
                          "2",
                          "--min_rnr_timer",
                          "4"});
    ASSERT_EQ(r.error, "");
    EXPECT_EQ(r.s.qp_sched.qps, 4u);
    EXPECT_EQ(r.s.qp_sched.scheduler, qp_scheduler::cast_wrr);
    EXPECT_EQ(r.s.qp_sched.split_data_min, 4096u);
    EXPECT_EQ(r.s.qp_sched.update_interval_us, 20u);
    EXPECT_EQ(r.s.qp_sched.reset_interval_ms, 0u);
    EXPECT_EQ(r.s.qp_sched.weight, 0.25);
    EXPECT_EQ(r.s.qp_sched.wrr_enable, true);
    EXPECT_EQ(r.s.roce.ack_timeout, 10u);
    EXPECT_EQ(r.s.roce.retry_cnt, 3u);
    EXPECT_EQ(r.s.roce.rnr_retry, 2u);
    EXPECT_EQ(r.s.roce.min_rnr_timer, 4u);
    // Left out, each comes from its NCCL variable in the library.
    const auto d = parse({"write_bw", "--provider", "pipe", "--transport", "roce"});
    ASSERT_EQ(d.error, "");
    EXPECT_FALSE(d.s.qp_sched.qps.has_value());
    EXPECT_FALSE(d.s.qp_sched.scheduler.has_value());
}

// --tss takes its key from a file or UET_TSS_KEY, never from the command line.
TEST(perf_options, tss_key_from_a_file_or_the_environment) {
    const std::string hex(64, 'a');
    const std::string dir = ::testing::TempDir();
    const auto write = [&](const std::string& name, const std::string& bytes) {
        std::FILE* f = std::fopen((dir + name).c_str(), "wb");
        std::fwrite(bytes.data(), 1, bytes.size(), f);
        std::fclose(f);
        return dir + name;
    };
    const std::string raw = write("tss_raw.key", std::string(32, '\x5a'));
    const std::string text = write("tss_hex.key", hex + "\n");
    const std::string short_key = write("tss_short.key", std::string(31, 'x'));
    ::unsetenv("UET_TSS_KEY");

    auto r = parse({"write_bw", "--provider", "pipe", "--tss", "--tss-key-file", raw.c_str()});
    ASSERT_EQ(r.error, "");
    EXPECT_TRUE(r.s.tss);
    EXPECT_EQ(r.s.tss_sdi, 1u);
    ASSERT_EQ(r.s.tss_key_bytes.bytes().size(), 32u);
    EXPECT_EQ(r.s.tss_key_bytes.bytes()[0], std::byte{0x5a});

    r = parse({"write_bw", "--provider", "pipe", "--tss", "--tss-sdi", "16777215", "--tss-key-file",
               text.c_str()});
    ASSERT_EQ(r.error, "");
    EXPECT_EQ(r.s.tss_sdi, 0xffffffu);
    EXPECT_EQ(r.s.tss_key_bytes.bytes()[31], std::byte{0xaa});

    r = parse({"write_bw", "--provider", "pipe", "--tss", "--tss-key-file", short_key.c_str()});
    EXPECT_NE(r.error.find("holds 31 bytes"), std::string::npos) << r.error;
    r = parse({"write_bw", "--provider", "pipe", "--tss", "--tss-key-file",
               (dir + "tss_none.key").c_str()});
    EXPECT_NE(r.error.find("--tss-key-file"), std::string::npos) << r.error;
    r = parse({"write_bw", "--provider", "pipe", "--tss"});
    EXPECT_NE(r.error.find("UET_TSS_KEY"), std::string::npos) << r.error;
    r = parse({"write_bw", "--provider", "pipe", "--tss-sdi", "3"});
    EXPECT_NE(r.error.find("with --tss only"), std::string::npos) << r.error;
    r = parse({"write_bw", "--provider", "pipe", "--tss", "--tss-sdi", "16777216"});
    EXPECT_NE(r.error.find("24 bits"), std::string::npos) << r.error;
    r = parse({"write_bw", "--provider", "pipe", "--tss", "--tss-epoch", "65535", "--tss-key-file",
               raw.c_str()});
    ASSERT_EQ(r.error, "");
    EXPECT_EQ(r.s.tss_epoch, 0xffffu);
    EXPECT_EQ(endpoint_attr_for(r.s).tss.epoch, 0xffffu);
    r = parse({"write_bw", "--provider", "pipe", "--tss", "--tss-epoch", "65536"});
    EXPECT_NE(r.error.find("16 bits"), std::string::npos) << r.error;
    r = parse({"write_bw", "--provider", "pipe", "--tss-epoch", "3"});
    EXPECT_NE(r.error.find("with --tss only"), std::string::npos) << r.error;

    ::setenv("UET_TSS_KEY", ("  " + hex + "\n").c_str(), 1);
    r = parse({"write_bw", "--provider", "pipe", "--tss"});
    EXPECT_EQ(r.error, "");
    EXPECT_EQ(r.s.tss_key_bytes.bytes().size(), 32u);
    ::setenv("UET_TSS_KEY", hex.substr(1).c_str(), 1);
    r = parse({"write_bw", "--provider", "pipe", "--tss"});
    EXPECT_NE(r.error.find("64 hex digits"), std::string::npos) << r.error;
    ::setenv("UET_TSS_KEY", ("g" + hex.substr(1)).c_str(), 1);
    EXPECT_FALSE(tss_key::from_hex(std::getenv("UET_TSS_KEY")));
    r = parse({"write_bw", "--provider", "pipe", "--tss", "--transport", "roce"});
    EXPECT_NE(r.error.find("--transport uet only"), std::string::npos) << r.error;
    ::unsetenv("UET_TSS_KEY");
    for (const std::string& f : {raw, text, short_key})
        std::remove(f.c_str());
}

TEST(perf_options, errors_say_what_is_wrong) {
    const std::vector<bad_case> cases{
        {{}, "no test given"},
        {{"write_bandwidth"}, "unknown test 'write_bandwidth'"},
        {{"write_bw", "--provider", "pipe", "-s", "abc"}, "-s: message size"},
        {{"write_bw", "--provider", "pipe", "-s", "0"}, "-s: message size"},
        {{"write_bw", "--provider", "pipe", "-s"}, "-s needs a value"},
        {{"write_bw", "--provider", "pipe", "-n", "-5"}, "-n: iterations"},
        {{"write_bw", "--provider", "pipe", "-t", "0"}, "-t: tx depth"},
        {{"write_bw", "--provider", "pipe", "-m", "10"}, "-m: MTU"},
        {{"write_bw", "--provider", "pipe", "-D", "0"}, "-D: duration"},
        {{"write_bw", "--provider", "pipe", "-a", "-s", "64"}, "-a and -s exclude each other"},
        {{"write_bw", "--provider", "pipe", "-D", "1", "-n", "5"}, "-D and -n exclude"},
        {{"write_bw", "--provider", "pipe", "--bogus"}, "unknown option '--bogus'"},
        {{"write_bw", "--provider", "pipe", "--mode", "fast"}, "--mode must be"},
        {{"write_bw", "--provider", "pipe", "--cc", "cubic"}, "--cc must be"},
        {{"write_bw", "--provider", "pipe", "--lb", "ecmp"}, "--lb must be"},
        {{"write_bw", "--provider", "pipe", "--pdcs", "4", "--mode", "rod"},
         "parallel PDCs carry RUD only"},
        {{"write_bw", "--provider", "pipe", "--pdcs", "17"}, "--pdcs must be 1 .. 16"},
        {{"write_bw", "--provider", "pipe", "--mode", "uud"}, "uud carries sends only"},
        {{"send_lat", "--provider", "pipe", "-t", "8"}, "latency tests keep one"},
        {{"send_lat", "--provider", "pipe", "-b"}, "-b applies to bandwidth tests"},
        {{"atomic_bw", "--provider", "pipe", "-s", "16"}, "8-byte operands"},
        {{"atomic_bw", "--provider", "pipe", "-A", "CAS"},
         "-A must be CMP_AND_SWAP or FETCH_AND_ADD, not 'CAS'"},
        {{"write_bw", "--provider", "pipe", "-A", "FETCH_AND_ADD"}, "-A applies to atomic_bw"},
        {{"atomic_bw", "--provider", "pipe", "-A", "CMP_AND_SWAP", "--verify"},
         "needs operations executed in the order posted"},
        {{"atomic_lat", "--provider", "pipe", "--transport", "roce", "--qps", "2", "-A",
          "CMP_AND_SWAP", "--verify"},
         "needs operations executed in the order posted"},
        {{"write_bw", "--provider", "pipe", "--corrupt", "3"}, "--corrupt needs --verify"},
        {{"write_bw", "--provider", "pipe", "--multi-recv"}, "applies to send_bw and send_lat"},
        {{"send_bw", "--provider", "pipe", "--multi-recv"}, "give -s below 65536"},
        {{"write_bw", "--provider", "pipe", "10.0.0.1"}, "give no address"},
        {{"write_bw", "--dev", "eth0", "--ip", "10.0.0.1/24", "10.0.0"}, "server address must be"},
        {{"write_bw", "--dev", "eth0", "--ip", "10.0.0.1"}, "--ip wants"},
        {{"write_bw", "--ip", "10.0.0.1/24"}, "--dev is required"},
        {{"write_bw", "--dev", "eth0"}, "--ip A.B.C.D/LEN is required"},
        {{"write_bw", "--provider", "pipe", "--report_gbits=yes"}, "takes no value"},
        {{"write_bw", "--provider", "pipe", "--qps", "4"}, "--transport roce only"},
        {{"write_bw", "--provider", "pipe", "-u", "10"}, "--transport roce only"},
        {{"write_bw", "--provider", "pipe", "--transport", "roce", "--qps", "0"},
         "--qps: queue pairs per connection must be 1 .. 128"},
        {{"write_bw", "--provider", "pipe", "--transport", "roce", "--qp-sched", "best"},
         "--qp-sched must be rr, stripe, cast or cast-wrr"},
        {{"write_bw", "--provider", "pipe", "--transport", "roce", "--qp-weight", "2"},
         "--qp-weight must be 0"},
        {{"write_bw", "--provider", "pipe", "--transport", "roce", "--retry_count", "8"},
         "--retry_count must be 0 .. 7"},
        {{"write_bw", "--provider", "pipe", "--transport", "roce", "-u", "32"},
         "-u: QP timeout must be 0 .. 31"},
        {{"write_bw", "--provider", "pipe", "--transport", "roce", "--pdcs", "2"}, "takes --qps"},
    };
    for (const auto& c : cases) {
        std::vector<const char*> argv{"uet-perf"};
        argv.insert(argv.end(), c.args.begin(), c.args.end());
        const auto r = parse_options(static_cast<int>(argv.size()), argv.data());
        EXPECT_NE(r.error.find(c.says), std::string::npos)
            << "args " << (c.args.empty() ? "" : c.args.back()) << ": got '" << r.error << "'";
    }
}

}  // namespace
}  // namespace uet::perf
