// The control exchange against hostile and vanishing peers, over the pipe provider (virtual time:
// a timeout costs no wall time, and nothing here reads a wall clock):
//  - control messages from a third endpoint (a replayed HELLO, a forged ABORT or STOP), or from
//    the client's own address with another session's nonce, do nothing to a running test or to a
//    waiting server, and are counted by reason;
//  - a server whose client dies or hangs at any point after it bound to it ends with an error
//    within --timeout (before, it waits for a client as long as it takes);
//  - and such a server prints no "Verify: OK" for the run it could not finish.
#include <gtest/gtest.h>

#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "perf_harness.hpp"

namespace uet::perf {
namespace {

using test::pipe_pair;
using test::pipe_settings;

constexpr std::uint64_t ns_per_s = 1'000'000'000;

// A third endpoint on the same pipe (10.0.0.3): neither the server nor its client.
struct stranger {
    std::unique_ptr<station> st;
    stranger(pipe_pair& p, const settings& s) : st(open_station(p.fab, s, steady_ns).value()) {}
    void send(const station& to, const ctrl_msg& m) { send_to(to.ep.address(), m); }
    void send_to(const endpoint_address& to, const ctrl_msg& m) {
        st->sd->set_peer(st->av.insert(to).value(), 0, 0);
        ASSERT_FALSE(st->sd->send_ctrl(m));
    }
    // A message with the control tag that is no control message: `bytes` of junk.
    void send_junk(const station& to, std::size_t bytes) {
        junk.emplace_back(bytes, std::byte{0x5a});
        const peer_addr p = st->av.insert(to.ep.address()).value();
        ASSERT_FALSE(st->ep.tsend(p, junk.back(), ctrl_tag | 1, nullptr));
    }
    std::vector<std::vector<std::byte>> junk;  // in flight until the stranger's endpoint closes
};

ctrl_msg forged(ctrl_kind k, std::uint64_t nonce, std::string text = {}) {
    ctrl_msg m;
    m.kind = k;
    m.nonce = nonce;
    m.text = std::move(text);
    return m;
}

// The client's HELLO as it went out (make_hello of its settings, address, region and nonce).
ctrl_msg hello_of(const pipe_pair& p) {
    return make_hello(p.client->config(), p.cli->ep.address(), p.cli->sd->region_key(),
                      p.cli->sd->region_size(), p.client->session_nonce());
}

// Steps both roles, as drive_pipe does but without jumping the clock, until `until` holds or
// either role finished.
void step_until(pipe_pair& p, const std::function<bool()>& until) {
    for (std::uint64_t guard = 0; !until() && guard < 10'000'000; ++guard) {
        if (p.server->finished() || p.client->finished()) return;
        p.server->step(p.fab.now_ns());
        p.client->step(p.fab.now_ns());
        p.fab.progress();
    }
}

// Steps the server alone (no client yet) until `until` holds.
void step_server_until(pipe_pair& p, const std::function<bool()>& until) {
    for (std::uint64_t guard = 0; !until() && guard < 1'000'000 && !p.server->finished(); ++guard) {
        p.server->step(p.fab.now_ns());
        p.fab.progress();
    }
}

void expect_clean_run(const pipe_pair& p, std::uint64_t n) {
    ASSERT_FALSE(p.client->failed()) << p.client->error();
    ASSERT_FALSE(p.server->failed()) << p.server->error();
    EXPECT_TRUE(p.client->finished());
    EXPECT_TRUE(p.server->finished());
    EXPECT_EQ(p.client->verify_summary().rfind("OK (", 0), 0u) << p.client->verify_summary();
    ASSERT_EQ(p.client->bw_rows().size(), 1u);
    EXPECT_EQ(p.client->bw_rows()[0].iterations, n);
    ASSERT_EQ(p.server->bw_rows().size(), 1u);  // the server printed the row too
}

// Mid-measurement, a third endpoint replays the client's HELLO and sends HELLO, ABORT and STOP of
// its own to the server (the latter two with the session's nonce) and two tagged messages that
// are no control messages, and ABORT and HELLO_ACK to the client; the client's own address sends a
// HELLO and a STOP of another session. Nothing of it stops or changes the run, and each side counts
// what it dropped, by reason.
TEST(perf_control, messages_from_strangers_do_nothing_to_a_running_test) {
    settings s = pipe_settings(test_kind::write_bw, 1024, 3000);
    s.tx_depth = 8;
    pipe_pair p(s, s);
    stranger x(p, s);
    step_until(p, [&] { return p.cli->sd->run().completed >= 100; });
    ASSERT_TRUE(p.server->bound());
    const std::uint64_t nonce = p.client->session_nonce();
    x.send(*p.srv, hello_of(p));  // a replay: the client's very HELLO, from elsewhere
    settings other = s;
    other.size = 8;
    x.send(*p.srv, make_hello(other, p.cli->ep.address(), 1, 4096, 77));
    x.send(*p.srv, forged(ctrl_kind::abort, nonce, "forged"));
    x.send(*p.srv, forged(ctrl_kind::stop, nonce));
    x.send_junk(*p.srv, 300);   // no magic
    x.send_junk(*p.srv, 5000);  // more than any control message (the receive truncates it)
    x.send(*p.cli, forged(ctrl_kind::abort, nonce, "forged"));
    x.send(*p.cli, forged(ctrl_kind::hello_ack, nonce));
    // From the bound client's own address, another session: a new HELLO, and a STOP.
    ASSERT_FALSE(p.cli->sd->send_ctrl(make_hello(s, p.cli->ep.address(), p.cli->sd->region_key(),
                                                 p.cli->sd->region_size(), nonce + 1)));
    ASSERT_FALSE(p.cli->sd->send_ctrl(forged(ctrl_kind::stop, nonce + 1)));
    p.run();
    expect_clean_run(p, 3000);
    const ctrl_counters& sc = p.server->control_counters();
    EXPECT_EQ(sc.replayed_hello, 3u);  // two from the stranger, one from the client's address
    EXPECT_EQ(sc.from_stranger, 2u);   // ABORT, STOP
    EXPECT_EQ(sc.bad_nonce, 1u);       // the client's address, another session's STOP
    EXPECT_EQ(sc.malformed, 2u);
    const ctrl_counters& cc = p.client->control_counters();
    EXPECT_EQ(cc.from_stranger, 2u);
    EXPECT_EQ(cc.ignored(), 2u);
    // --stats shows them.
    const std::string stats = stats_text(p.srv->ep, sc, nullptr);
    EXPECT_NE(stats.find(" Control messages ignored: from strangers 2, bad nonce 1, replayed "
                         "HELLO 3, malformed 2; HELLOs refused 0, lapsed 0\n"),
              std::string::npos)
        << stats;
}

// Before the client, a third endpoint sends the waiting server a HELLO: a replay of an earlier
// session's naming the client's address, one with other settings (naming the client, or itself),
// one naming an address where nobody is. The server answers each where it points, but binds to
// none: the real client then runs as if nothing had happened.
struct waiting_case {
    const char* name;
    bool other_settings;
    enum { client_address, own_address, nobody } names;
    friend void PrintTo(const waiting_case& c, std::ostream* os) { *os << c.name; }
};

class perf_control_waiting : public ::testing::TestWithParam<waiting_case> {};

TEST_P(perf_control_waiting, a_hello_from_another_address_does_not_hijack_the_server) {
    const waiting_case& c = GetParam();
    settings s = pipe_settings(test_kind::write_bw, 1024, 200);
    s.tx_depth = 8;
    pipe_pair p(s, s);
    stranger x(p, s);
    settings theirs = s;
    if (c.other_settings) theirs.size = 8192;
    endpoint_address named = p.cli->ep.address();
    if (c.names == waiting_case::own_address) named = x.st->ep.address();
    if (c.names == waiting_case::nobody) named = endpoint_address{0x0a0000fe, 4793};
    const std::uint64_t old_nonce = 0x0bad'5e55'1011;
    x.send(*p.srv, make_hello(theirs, named, 1, 1 << 20, old_nonce));
    step_server_until(p, [&] { return p.server->open_offers() == 1; });
    ASSERT_FALSE(p.server->failed()) << p.server->error();
    EXPECT_FALSE(p.server->bound());
    p.run();
    expect_clean_run(p, 200);
    const ctrl_counters& sc = p.server->control_counters();
    EXPECT_EQ(sc.hellos_refused, c.other_settings ? 1u : 0u);
    // The answer to the replay reached the real client, who knew it was not its session's.
    if (c.names == waiting_case::client_address) {
        EXPECT_EQ(p.client->control_counters().bad_nonce, 1u);
    }
}

INSTANTIATE_TEST_SUITE_P(
    hellos, perf_control_waiting,
    ::testing::Values(waiting_case{"replay_naming_the_client", false, waiting_case::client_address},
                      waiting_case{"other_settings_naming_the_client", true,
                                   waiting_case::client_address},
                      waiting_case{"other_settings_naming_itself", true, waiting_case::own_address},
                      waiting_case{"naming_nobody", false, waiting_case::nobody}),
    [](const auto& info) { return std::string(info.param.name); });

// A HELLO naming nobody lapses (its answer undeliverable, or no START within --timeout) and the
// server waits on, unbound, for a client as long as it takes.
TEST(perf_control, a_hello_whose_client_never_answers_lapses) {
    settings s = pipe_settings(test_kind::write_bw, 1024, 10);
    pipe_pair p(s, s);
    stranger x(p, s);
    x.send_to(p.srv->ep.address(), make_hello(s, {0x0a0000fe, 4793}, 1, 1 << 20, 5));
    drive_pipe(p.fab, nullptr, p.server.get());
    EXPECT_FALSE(p.server->finished());
    EXPECT_FALSE(p.server->bound());
    EXPECT_EQ(p.server->open_offers(), 0u);
    EXPECT_EQ(p.server->control_counters().hellos_lapsed, 1u);
    EXPECT_EQ(p.server->deadline(), no_deadline);  // waiting for a client: no timeout
}

// The client dies (its endpoint closed: the process is gone) or hangs (the endpoint still
// answers underneath, nobody drives it) at some point after the server bound to it. The server
// must end with an error within --timeout of that, in virtual time.
struct death_case {
    const char* name;
    test_kind test;
    bool all_sizes;
    bool bidirectional;
    enum { after_ready, mid_run, after_stop, between_sizes } when;
    friend void PrintTo(const death_case& c, std::ostream* os) { *os << c.name; }
};

class perf_control_death : public ::testing::TestWithParam<std::tuple<death_case, bool>> {};

// Drives the server alone, jumping the clock to its deadline when nothing moves (drive_pipe's
// rule). Returns the virtual time at which it finished, or nothing if it would wait forever.
std::optional<std::uint64_t> drive_server_alone(pipe_pair& p, std::uint64_t& skip) {
    std::uint64_t last_activity = ~std::uint64_t{0};
    for (std::uint64_t guard = 0; guard < 50'000'000; ++guard) {
        const std::uint64_t now = p.fab.now_ns() + skip;
        p.server->step(now);
        if (p.server->finished()) return now;
        const bool busy = p.fab.progress();
        if (busy || p.server->activity() != last_activity) {
            last_activity = p.server->activity();
            continue;
        }
        const std::uint64_t d = p.server->deadline();
        if (d == no_deadline) return std::nullopt;
        if (d > now) skip += d - now;
    }
    return std::nullopt;
}

TEST_P(perf_control_death, the_server_ends_within_its_timeout) {
    const auto& [c, closed] = GetParam();
    settings s = pipe_settings(c.test, 1024, is_bw(c.test) ? 2000 : 500);
    s.tx_depth = is_bw(c.test) ? 8 : 1;
    s.bidirectional = c.bidirectional;
    if (c.all_sizes) {
        s.all_sizes = true;
        s.iterations = 6;
        s.tx_depth = 4;
    }
    s.timeout_s = 2;
    s.out_json = true;
    pipe_pair p(s, s);
    const side& cs = *p.cli->sd;
    const side& ss = *p.srv->sd;
    switch (c.when) {
        case death_case::after_ready:
            step_until(p, [&] { return cs.run().posted > 0; });
            break;
        case death_case::mid_run:
            step_until(p, [&] { return cs.run().completed >= 100; });
            break;
        case death_case::after_stop:
            step_until(p, [&] { return ss.run().stopped; });
            break;
        case death_case::between_sizes:
            step_until(p, [&] { return p.client->bw_rows().size() == 1; });
            break;
    }
    ASSERT_FALSE(p.client->failed()) << p.client->error();
    ASSERT_FALSE(p.server->failed()) << p.server->error();
    ASSERT_TRUE(p.server->bound());
    ASSERT_FALSE(p.server->finished());
    const std::uint64_t died_at = p.fab.now_ns();
    if (closed) p.cli->ep.close();  // the process is gone; else it hangs: nobody steps it
    std::uint64_t skip = 0;
    const auto ended_at = drive_server_alone(p, skip);
    ASSERT_TRUE(ended_at) << "the server would wait forever for a dead client";
    ASSERT_TRUE(p.server->failed());
    EXPECT_EQ(p.server->error().rfind("no answer from 10.0.0.2:4793", 0), 0u) << p.server->error();
    // Within --timeout of the death. What was already in flight then may arrive a moment later,
    // and the pipe's clock moves from one event to the next (a retransmission's timer, some
    // milliseconds apart), which may pass the server's deadline before it is stepped: 10 ms of
    // slack, against a timeout of 2 s.
    EXPECT_LE(*ended_at - died_at, static_cast<std::uint64_t>(s.timeout_s * ns_per_s) + 10'000'000)
        << p.server->error();
    // What the server prints at the end: no OK for a run that did not end.
    std::string out;
    EXPECT_EQ(finish(*p.server, p.srv->ep, nullptr, out), 1);
    EXPECT_EQ(out.find("Verify: OK"), std::string::npos) << out;
    EXPECT_NE(out.find(" Verify: not completed: no answer from 10.0.0.2:4793"), std::string::npos)
        << out;
    EXPECT_EQ(out.find("\"verify\": \"OK"), std::string::npos) << out;  // rows of earlier sizes
}

INSTANTIATE_TEST_SUITE_P(
    phases, perf_control_death,
    ::testing::Combine(
        ::testing::Values(
            death_case{"write_bw_after_ready", test_kind::write_bw, false, false,
                       death_case::after_ready},
            death_case{"write_bw_mid_run", test_kind::write_bw, false, false, death_case::mid_run},
            death_case{"read_bw_mid_run", test_kind::read_bw, false, false, death_case::mid_run},
            death_case{"write_bw_both_ways_mid_run", test_kind::write_bw, false, true,
                       death_case::mid_run},
            death_case{"send_lat_mid_run", test_kind::send_lat, false, false, death_case::mid_run},
            death_case{"send_bw_after_stop", test_kind::send_bw, false, true,
                       death_case::after_stop},
            death_case{"write_bw_between_sizes", test_kind::write_bw, true, false,
                       death_case::between_sizes}),
        ::testing::Bool()),
    [](const auto& info) {
        return std::string(std::get<0>(info.param).name) +
               (std::get<1>(info.param) ? "_closed" : "_hung");
    });

}  // namespace
}  // namespace uet::perf
