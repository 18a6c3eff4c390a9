// Every uet-perf test end to end over the pipe provider, server and client state machines in one
// thread, with --verify; a corruption that verification must catch; mismatched settings; a
// server that never answers (virtual time: the timeout costs no wall time); Ctrl-C mid-run.
#include <gtest/gtest.h>

#include <array>
#include <string>

#include "context.hpp"
#include "perf_harness.hpp"

namespace uet::perf {

// The side's private parts a teardown test needs (side befriends it).
struct side_access {
    static void handle_error(side& sd, const completion& c) { sd.handle_error(c); }
    static std::uint32_t multi_buffers_posted(const side& sd) {
        std::uint32_t n = 0;
        for (std::uint8_t st : sd.multi_state_)
            n += st == side::multi_posted;
        return n;
    }
};

namespace {

using test::pipe_pair;
using test::pipe_settings;

constexpr test_kind all_tests[] = {
    test_kind::write_bw,  test_kind::read_bw,  test_kind::send_bw,  test_kind::atomic_bw,
    test_kind::write_lat, test_kind::read_lat, test_kind::send_lat, test_kind::atomic_lat,
};

void expect_clean(const pipe_pair& p, std::uint64_t n, std::size_t rows) {
    ASSERT_FALSE(p.client->failed()) << p.client->error();
    ASSERT_FALSE(p.server->failed()) << p.server->error();
    EXPECT_FALSE(p.client->verify_failed()) << p.client->verify_summary();
    const settings& s = p.client->config();
    if (s.verify) {
        EXPECT_EQ(p.client->verify_summary().rfind("OK (", 0), 0u) << p.client->verify_summary();
    }
    if (is_bw(s.test)) {
        ASSERT_EQ(p.client->bw_rows().size(), rows);
        ASSERT_EQ(p.server->bw_rows().size(), rows);  // the server printed the same rows
        for (const bw_row& r : p.client->bw_rows()) {
            EXPECT_EQ(r.iterations, n);
            EXPECT_GT(r.avg_bps, 0);
            EXPECT_GE(r.peak_bps, r.avg_bps);
            EXPECT_GT(r.msg_rate, 0);
        }
    } else {
        ASSERT_EQ(p.client->lat_rows().size(), rows);
        for (const lat_row& r : p.client->lat_rows()) {
            EXPECT_EQ(r.iterations, n);
            EXPECT_GT(r.t_min, 0);
            EXPECT_LE(r.t_min, r.t_typical);
            EXPECT_LE(r.t_typical, r.t_max);
            EXPECT_LE(r.p99, r.p999);
        }
    }
}

class perf_every_test : public ::testing::TestWithParam<test_kind> {};

TEST_P(perf_every_test, runs_and_verifies_every_byte) {
    for (std::uint64_t size : {std::uint64_t{3}, std::uint64_t{8}, std::uint64_t{5000}}) {
        if (is_atomic(GetParam()) && size != 8) continue;
        SCOPED_TRACE("size " + std::to_string(size));
        settings s = pipe_settings(GetParam(), size, 40);
        s.tx_depth = is_bw(s.test) ? 16 : 1;
        pipe_pair p(s, s);
        p.run();
        expect_clean(p, 40, 1);
    }
}

TEST_P(perf_every_test, catches_a_corrupted_iteration) {
    settings s = pipe_settings(GetParam(), 256, 30);
    s.tx_depth = is_bw(s.test) ? 8 : 1;
    s.corrupt_iteration = 17;
    pipe_pair p(s, s);
    p.run();
    ASSERT_FALSE(p.client->failed()) << p.client->error();
    EXPECT_TRUE(p.client->verify_failed());
    EXPECT_EQ(p.client->verify_summary().rfind("FAILED: ", 0), 0u) << p.client->verify_summary();
    EXPECT_TRUE(p.server->verify_failed());  // the server reports the same verdict
}

INSTANTIATE_TEST_SUITE_P(all_tests, perf_every_test, ::testing::ValuesIn(all_tests),
                         [](const auto& info) { return std::string(name_of(info.param)); });

// Every bandwidth test, every size (atomics: 8 bytes), both directions, n iterations each.
void run_bw_all_sizes_bidirectional(std::uint64_t n, std::uint32_t depth, bool verify) {
    for (test_kind t :
         {test_kind::write_bw, test_kind::read_bw, test_kind::send_bw, test_kind::atomic_bw}) {
        SCOPED_TRACE(std::string(name_of(t)));
        settings s = pipe_settings(t, 8, n);
        s.verify = verify;
        s.all_sizes = !is_atomic(t);
        s.bidirectional = true;
        s.tx_depth = depth;
        pipe_pair p(s, s);
        p.run();
        expect_clean(p, n, is_atomic(t) ? 1 : 23);
    }
}

TEST(perf_e2e, all_sizes_bidirectional) {
    run_bw_all_sizes_bidirectional(6, 4, true);
}

// Without --verify the bandwidth tests take perftest's cycle buffer on both sides (see
// layout_for): every size, both directions, a deep queue whose operations share the slots, and
// every remote offset inside the peer's region (a write or read beyond it would fail the run).
TEST(perf_e2e, cycle_buffer_without_verify) {
    run_bw_all_sizes_bidirectional(40, 16, false);
}

// -Q 7: of 100 operations, every 7th and the last ask for an entry (15), the other 85 end
// without one, counted by the endpoint; the run completes every one of them either way.
TEST(perf_e2e, cq_moderation_counts_the_unsignaled_operations) {
    for (test_kind t :
         {test_kind::write_bw, test_kind::read_bw, test_kind::send_bw, test_kind::atomic_bw}) {
        SCOPED_TRACE(std::string(name_of(t)));
        settings s = pipe_settings(t, 8, 100);
        s.tx_depth = 16;
        s.verify = false;  // -Q needs the cycle buffer
        s.cq_mod = 7;
        pipe_pair p(s, s);
        p.run();
        expect_clean(p, 100, 1);
        EXPECT_EQ(p.cli->ep.silent_completions(), 85u);
        EXPECT_EQ(p.srv->ep.silent_completions(), 0u);  // the server initiates nothing here
    }
}

// -l and --recv_post_list: send_bw's sends and receives go in lists (a last list shorter when -n
// is not a multiple of -l), both directions; with --verify every message is checked where it
// landed; on the cycle buffer, -Q 8: every 8th send of 100 and the last ask for an entry (13),
// the other 87 end without one. In -D mode the receivers' leftover receives are drained.
TEST(perf_e2e, post_lists_post_every_send_once) {
    for (const bool verify : {true, false}) {
        SCOPED_TRACE(verify ? "--verify" : "cycle buffer");
        settings s = pipe_settings(test_kind::send_bw, verify ? 300 : 8, 100);
        s.tx_depth = 16;
        s.verify = verify;
        s.bidirectional = verify;
        s.post_list = verify ? 7 : 8;
        s.cq_mod = verify ? 1 : 8;
        s.recv_post_list = 5;
        pipe_pair p(s, s);
        p.run();
        expect_clean(p, 100, 1);
        if (!verify) {
            EXPECT_EQ(p.cli->ep.silent_completions(), 87u);
            EXPECT_EQ(p.cli->ep.counters().unsignaled_sends, 87u);
        }
    }
    settings s = pipe_settings(test_kind::send_bw, 64, 1);
    s.duration_ms = 20;
    s.tx_depth = 16;
    s.post_list = 4;
    s.cq_mod = 4;
    s.recv_post_list = 3;
    pipe_pair p(s, s);
    p.run();
    ASSERT_FALSE(p.client->failed()) << p.client->error();
    ASSERT_FALSE(p.server->failed()) << p.server->error();
    EXPECT_FALSE(p.client->verify_failed()) << p.client->verify_summary();
    EXPECT_GT(p.client->bw_rows().at(0).iterations, 0u);
}

TEST(perf_e2e, other_delivery_modes) {
    for (delivery m : {delivery::rod, delivery::rudi}) {
        settings s = pipe_settings(test_kind::send_bw, 3000, 50);
        s.mode = m;
        s.tx_depth = 8;
        pipe_pair p(s, s);
        p.run();
        expect_clean(p, 50, 1);
    }
}

// -A CMP_AND_SWAP: where operations run in the order posted (UET ROD; one RoCE RC queue pair),
// every compare-and-swap on a slot succeeds, each fetches the value its predecessor swapped in
// and the slots end as FETCH_AND_ADD's would; a corrupted swap breaks the chain and is caught.
TEST(perf_e2e, compare_and_swap_in_posting_order) {
    for (const bool roce : {false, true})
        for (test_kind t : {test_kind::atomic_bw, test_kind::atomic_lat})
            for (const bool corrupt : {false, true}) {
                SCOPED_TRACE(std::string(roce ? "roce " : "rod ") + std::string(name_of(t)) +
                             (corrupt ? " --corrupt" : ""));
                settings s = pipe_settings(t, 8, 600);
                s.compare_and_swap = true;
                if (roce)
                    s.transport = transport::roce_rc;
                else
                    s.mode = delivery::rod;
                s.tx_depth = is_bw(t) ? 16 : 1;
                s.corrupt_iteration = corrupt ? 3 : 0;
                pipe_pair p(s, s);
                p.run();
                if (!corrupt) {
                    expect_clean(p, 600, 1);
                    continue;
                }
                ASSERT_FALSE(p.client->failed()) << p.client->error();
                EXPECT_EQ(p.client->verify_summary().rfind("FAILED: compare-and-swap ", 0), 0u)
                    << p.client->verify_summary();
            }
}

// --pdcs 4: the bandwidth tests spread their operations over four RUD PDCs to the server,
// every byte verified, and the client's engine opened (at least) four of them.
TEST(perf_e2e, parallel_pdcs) {
    for (test_kind t : {test_kind::write_bw, test_kind::send_bw, test_kind::read_bw}) {
        SCOPED_TRACE(std::string(name_of(t)));
        settings s = pipe_settings(t, 20'000, 64);
        s.tx_depth = 16;
        s.pdcs = 4;
        pipe_pair p(s, s);
        p.run();
        expect_clean(p, 64, 1);
        EXPECT_GE(p.cli->ep.counters().pdcs_opened, 4u);
    }
}

TEST(perf_e2e, duration_mode_drains_leftover_receives) {
    // -D: the receivers post ahead without knowing the count; the drain messages must fill what
    // is left so the next size starts clean (two sizes, both directions, both tests with receives).
    // With --multi-recv nothing is posted per message, so nothing is left over: no drain is owed.
    for (bool multi : {false, true})
        for (test_kind t : {test_kind::send_bw, test_kind::send_lat}) {
            SCOPED_TRACE(std::string(name_of(t)) + (multi ? " --multi-recv" : ""));
            settings s = pipe_settings(t, 64, 1);
            s.duration_ms = 20;
            s.bidirectional = is_bw(t);
            s.tx_depth = is_bw(t) ? 8 : 1;
            s.all_sizes = false;
            s.multi_recv = multi;
            pipe_pair p(s, s);
            p.run();
            ASSERT_FALSE(p.client->failed()) << p.client->error();
            ASSERT_FALSE(p.server->failed()) << p.server->error();
            EXPECT_FALSE(p.client->verify_failed()) << p.client->verify_summary();
            const std::uint64_t n = is_bw(t) ? p.client->bw_rows().at(0).iterations
                                             : p.client->lat_rows().at(0).iterations;
            EXPECT_GT(n, 0u);
            if (!multi) continue;
            EXPECT_EQ(p.srv->sd->run().rx_done, n);
            EXPECT_EQ(p.srv->sd->run().drain_owed, 0u);
            EXPECT_EQ(p.cli->sd->run().drain_owed, 0u);
        }
}

// --multi-recv: the receiving side of send_bw (both sides with -b) and both sides of send_lat
// take every message in two multi-receive buffers, posted once and again on each release, and
// --verify checks each message where its completion says it is. The sizes have buffers that end
// exactly full (1024, 32768: the last message's entry releases the buffer) and with a tail too
// short for another message (1000: an entry of length 0 releases it), released many times over,
// and ones that never fill a buffer (3, 8). No receive per message, nothing unexpected (a buffer
// holds a whole tx depth), no drain message owed.
TEST(perf_e2e, multi_recv_takes_every_message_in_two_buffers) {
    constexpr std::uint64_t n = 300;
    for (test_kind t : {test_kind::send_bw, test_kind::send_lat}) {
        for (std::uint64_t size : {3, 8, 1000, 1024, 32768}) {
            for (bool bidir : {false, true}) {
                if (bidir && !is_bw(t)) continue;
                SCOPED_TRACE(std::string(name_of(t)) + " size " + std::to_string(size) +
                             (bidir ? " -b" : ""));
                settings s = pipe_settings(t, size, n);
                s.tx_depth = is_bw(t) ? 16 : 1;
                s.bidirectional = bidir;
                s.multi_recv = true;
                pipe_pair p(s, s);
                p.run();
                expect_clean(p, n, 1);
                for (const station* st : {p.srv.get(), p.cli.get()}) {
                    const size_run& r = st->sd->run();
                    const bool receives = st == p.srv.get() || bidir || !is_bw(t);
                    EXPECT_EQ(r.multi, receives);
                    EXPECT_EQ(r.rx_posted, 0u);  // no plain receive
                    EXPECT_EQ(r.rx_done, receives ? n : 0);
                    EXPECT_EQ(r.drain_owed, 0u);
                    EXPECT_EQ(st->ep.counters().unexpected, 0u);
                }
            }
        }
    }
}

TEST(perf_e2e, multi_recv_catches_a_corrupted_message) {
    for (test_kind t : {test_kind::send_bw, test_kind::send_lat}) {
        SCOPED_TRACE(std::string(name_of(t)));
        settings s = pipe_settings(t, 1000, 200);
        s.tx_depth = is_bw(t) ? 8 : 1;
        s.multi_recv = true;
        s.corrupt_iteration = 77;
        pipe_pair p(s, s);
        p.run();
        ASSERT_FALSE(p.client->failed()) << p.client->error();
        EXPECT_TRUE(p.client->verify_failed());
        EXPECT_EQ(p.client->verify_summary().rfind("FAILED: message 76: wrong byte", 0), 0u)
            << p.client->verify_summary();
        EXPECT_TRUE(p.server->verify_failed());
    }
}

// -a with --multi-recv: multi-receive buffers below 64 KiB, plain receives (and their drain
// protocol) from there up, both directions; the buffers stay posted across the sizes.
TEST(perf_e2e, multi_recv_all_sizes_falls_back_to_plain_receives_from_64_kib) {
    for (test_kind t : {test_kind::send_bw, test_kind::send_lat}) {
        SCOPED_TRACE(std::string(name_of(t)));
        settings s = pipe_settings(t, 8, 6);
        s.all_sizes = true;
        s.bidirectional = is_bw(t);
        s.tx_depth = is_bw(t) ? 4 : 1;
        s.multi_recv = true;
        pipe_pair p(s, s);
        p.run();
        expect_clean(p, 6, 23);
        const size_run& last = p.srv->sd->run();  // 8 MiB: plain receives
        EXPECT_FALSE(last.multi);
        EXPECT_EQ(last.rx_done, last.rx_posted);
        EXPECT_GE(last.rx_posted, 6u);
    }
}

// The buffers outlive the sizes and are still posted at the end: closing the endpoint cancels
// them, which is the end of the run, not a failure.
TEST(perf_e2e, multi_recv_buffers_cancelled_at_close_are_no_failure) {
    settings s = pipe_settings(test_kind::send_bw, 1000, 100);
    s.tx_depth = 8;
    s.multi_recv = true;
    pipe_pair p(s, s);
    p.run();
    expect_clean(p, 100, 1);
    side& sd = *p.srv->sd;
    const std::uint32_t posted = side_access::multi_buffers_posted(sd);
    EXPECT_EQ(posted, multi_recv_buffers);
    p.srv->ep.close();
    std::uint32_t cancelled = 0;
    std::array<completion, 8> batch;
    for (int guard = 0; guard < 100 && p.srv->cq.size() > 0; ++guard) {
        p.srv->cq.read(batch);
        completion c;
        while (p.srv->cq.read_error(c)) {
            if (detail::kind_of(c.context) != detail::ctx_multi_rx) continue;
            EXPECT_EQ(c.error, errc::canceled);
            side_access::handle_error(sd, c);
            ++cancelled;
        }
    }
    EXPECT_EQ(cancelled, posted);
    EXPECT_EQ(sd.error(), "");
    EXPECT_EQ(side_access::multi_buffers_posted(sd), 0u);
}

// A receiver that falls behind: the client sends while the server does not poll (its messages
// pile up unread in the library: held for want of room in the queue, then unexpected, then
// answered NO_MATCH), then both run on. With plain receives the library asks the deferred sends
// again once receives are posted; with only multi-receive buffers posted it must do the same
// (an RTR per deferred eager send when a buffer is posted), or the run stalls with sends that
// never complete.
TEST(perf_e2e, multi_recv_receiver_that_falls_behind_gets_every_message) {
    for (bool multi : {false, true}) {
        SCOPED_TRACE(multi ? "--multi-recv" : "plain receives");
        settings s = pipe_settings(test_kind::send_bw, 1000, 3000);
        s.verify = false;  // -Q 100: the sender runs ahead of the receiver
        s.multi_recv = multi;
        pipe_pair p(s, s);
        for (std::uint64_t guard = 0; p.cli->sd->run().posted == 0 && guard < 1'000'000; ++guard) {
            p.server->step(p.fab.now_ns());
            p.client->step(p.fab.now_ns());
            p.fab.progress();
        }
        for (int i = 0; i < 200; ++i) {  // the server does not poll meanwhile
            p.client->step(p.fab.now_ns());
            p.fab.progress();
        }
        p.run();
        expect_clean(p, 3000, 1);
    }
}

TEST(perf_e2e, multi_recv_on_one_side_only_is_refused) {
    settings c = pipe_settings(test_kind::send_bw, 64, 10);
    settings s = c;
    c.multi_recv = true;
    pipe_pair p(c, s);
    p.run();
    ASSERT_TRUE(p.client->failed());
    EXPECT_EQ(p.client->error(),
              "the server refused the run: settings differ: --multi-recv: client on, server off");
}

TEST(perf_e2e, mismatched_settings_are_refused) {
    settings c = pipe_settings(test_kind::write_bw, 4096, 10);
    settings s = c;
    s.size = 8192;
    pipe_pair p(c, s);
    p.run();
    ASSERT_TRUE(p.client->failed());
    EXPECT_EQ(p.client->error(),
              "the server refused the run: settings differ: -s: client 4096, server 8192");
    ASSERT_TRUE(p.server->failed());
    EXPECT_NE(p.server->error().find("settings differ: -s: client 4096, server 8192"),
              std::string::npos);
    EXPECT_TRUE(p.client->bw_rows().empty());
}

TEST(perf_e2e, different_job_is_refused_by_the_transport) {
    settings c = pipe_settings(test_kind::send_lat, 8, 10);
    settings s = c;
    s.job_id = 99;
    pipe_pair p(c, s);
    p.run();
    ASSERT_TRUE(p.client->failed());
    EXPECT_NE(p.client->error().find("runs another uet job: both sides need the same -p"),
              std::string::npos)
        << p.client->error();
}

TEST(perf_e2e, silent_server_times_out_with_a_clear_error) {
    // The server's endpoint exists (the transport acknowledges), but nobody answers HELLO.
    settings s = pipe_settings(test_kind::write_bw, 64, 10);
    pipe_pair p(s, s, false);
    p.run();
    ASSERT_TRUE(p.client->failed());
    EXPECT_EQ(p.client->error(), "no answer from 10.0.0.1:4793 after 10 s (waiting for HELLO_ACK)");
}

// A client that failed prints the failure where the verdict goes, in the text and in the JSON:
// never "Verify: OK (0 checks)" before its error.
TEST(perf_e2e, a_failed_run_prints_no_verify_ok) {
    settings s = pipe_settings(test_kind::write_bw, 64, 10);
    s.out_json = true;
    pipe_pair p(s, s, false);  // nobody answers the HELLO
    p.run();
    ASSERT_TRUE(p.client->failed());
    EXPECT_EQ(p.client->verify_summary(),
              "not completed: no answer from 10.0.0.1:4793 after 10 s (waiting for HELLO_ACK)");
    std::string out;
    EXPECT_EQ(finish(*p.client, p.cli->ep, nullptr, out), 1);
    EXPECT_EQ(out.find("Verify: OK"), std::string::npos) << out;
    EXPECT_NE(out.find(" Verify: not completed: no answer from 10.0.0.1:4793 after 10 s (waiting "
                       "for HELLO_ACK)\n"),
              std::string::npos)
        << out;
}

TEST(perf_e2e, absent_server_is_reported_unreachable) {
    settings s = pipe_settings(test_kind::send_lat, 8, 10);
    s.timeout_s = 1000;  // the transport gives up first
    pipe_pair p(s, endpoint_address{0x0a0000fe, 4793});
    p.run();
    ASSERT_TRUE(p.client->failed());
    EXPECT_EQ(p.client->error().rfind("no answer from 10.0.0.254:4793: ", 0), 0u)
        << p.client->error();
}

TEST(perf_e2e, interrupt_ends_the_size_cleanly_and_reports_it) {
    settings s = pipe_settings(test_kind::write_bw, 1024, 1'000'000'000);
    s.all_sizes = false;
    s.tx_depth = 8;
    pipe_pair p(s, s);
    std::uint64_t guard = 0;
    // Step until some writes completed, then Ctrl-C.
    while (p.client->bw_rows().empty() && !p.client->finished() && ++guard < 10'000'000) {
        p.server->step(p.fab.now_ns());
        p.client->step(p.fab.now_ns());
        p.fab.progress();
        if (p.cli->sd->run().completed >= 100 && !p.client->was_interrupted())
            p.client->interrupt();
    }
    p.run();
    ASSERT_FALSE(p.client->failed()) << p.client->error();
    ASSERT_FALSE(p.server->failed()) << p.server->error();
    ASSERT_EQ(p.client->bw_rows().size(), 1u);
    EXPECT_GE(p.client->bw_rows()[0].iterations, 100u);
    EXPECT_LT(p.client->bw_rows()[0].iterations, 1'000'000'000u);
    EXPECT_FALSE(p.client->verify_failed()) << p.client->verify_summary();
}

TEST(perf_e2e, interrupted_server_tells_the_client) {
    settings s = pipe_settings(test_kind::send_bw, 1024, 1'000'000'000);
    s.tx_depth = 8;
    pipe_pair p(s, s);
    std::uint64_t guard = 0;
    while (p.cli->sd->run().completed < 50 && !p.client->finished() && ++guard < 10'000'000) {
        p.server->step(p.fab.now_ns());
        p.client->step(p.fab.now_ns());
        p.fab.progress();
    }
    p.server->interrupt();
    p.run();
    ASSERT_TRUE(p.server->failed());
    EXPECT_EQ(p.server->error(), "interrupted");
    ASSERT_TRUE(p.client->failed());
    EXPECT_EQ(p.client->error(), "the server stopped the run: the server was interrupted (Ctrl-C)");
}

}  // namespace
}  // namespace uet::perf
