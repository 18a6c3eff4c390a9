// The connection manager over frames: connect() brings a QP pair to RTS through REQ/REP/RTU,
// under loss, with duplicate and crossing requests; REJ for a job, mode or resource the peer
// refuses; a peer that never answers; DREQ/DREP; and CM datagrams that lie.
#include <gtest/gtest.h>

#include <limits>
#include <random>
#include <vector>

#include "roce_engine/engine.hpp"
#include "roce_link.hpp"
#include "roce_memory.hpp"
#include "roce_workload.hpp"
#include "tshark.hpp"
#include "wire/roce.hpp"
#include "wire/roce_cm.hpp"

namespace {

using namespace uet::roce;
using namespace uet::roce::test;
using uet::wire::cm_attribute;

// Offsets in a CM frame: BTH opcode after Ethernet, IPv4 and UDP; the MAD's attribute ID after
// BTH and DETH.
constexpr std::size_t opcode_at = 14 + 20 + 8;
constexpr std::size_t attribute_at = opcode_at + 12 + 8 + 16;

bool is_cm(std::span<const std::uint8_t> f, cm_attribute a) {
    return f.size() > attribute_at + 1 &&
           f[opcode_at] == static_cast<std::uint8_t>(uet::wire::roce_opcode::ud_send_only) &&
           ((f[attribute_at] << 8) | f[attribute_at + 1]) == static_cast<int>(a);
}

engine_config cm_config_of(std::uint32_t ip, mac_address mac, std::uint64_t seed,
                           retransmit_mode mode = retransmit_mode::go_back_n) {
    engine_config c = config_of(ip, mac, mode, seed);
    c.cm.timeout_ns = 50'000;
    c.cm.retries = 5;
    c.cm.ack_timeout = 5;  // 131 us
    return c;
}

struct pair_of_engines {
    memory_target mem_a, mem_b;
    engine A, B;
    wire_link ab, ba;
    std::uint64_t now = 0;

    pair_of_engines(const engine_config& ca, const engine_config& cb)
        : A(ca, mem_a), B(cb, mem_b) {}

    void step(std::uint64_t dt = 5'000) {
        ab.carry(A, B, now);
        ba.carry(B, A, now);
        now += dt;
    }
    // Steps until `done` or `limit` ns passed.
    template <typename Done>
    bool run_until(Done&& done, std::uint64_t limit = 50'000'000) {
        for (const std::uint64_t end = now + limit; now < end;) {
            if (done()) return true;
            step();
        }
        return done();
    }
    qpn_t connect_a_to_b(std::uint64_t context = 7) {
        return A.connect({ip_b, mac_b, 0}, context, now);
    }
    // A SEND of src from A's QP `a` into a receive B posts for it; true once it arrived.
    bool send_and_wait(qpn_t a, std::vector<std::uint8_t>& src, std::vector<std::uint8_t>& dst) {
        mem_b.receives.push_back({dst.data(), static_cast<std::uint32_t>(dst.size()), 0, 1});
        send_wr w;
        w.opcode = wr_opcode::send;
        w.local = src.data();
        w.length = static_cast<std::uint32_t>(src.size());
        if (A.post_send(a, w) != post_error::none) return false;
        return run_until([&] { return !mem_b.arrivals.empty(); });
    }
    // The QP B made for A's request, once B reported it.
    qpn_t passive_qpn() const {
        for (const auto& e : mem_b.events)
            if (e.what == qp_event::established) return e.qpn;
        return 0;
    }
};

TEST(roce_cm, connect_brings_both_ends_to_rts_facing_each_other) {
    engine_config cb = cm_config_of(ip_b, mac_b, 2);
    cb.cm.mtu = path_mtu::mtu_2048;  // the passive side's smaller MTU wins
    pair_of_engines p(cm_config_of(ip_a, mac_a, 1), cb);
    const qpn_t a = p.connect_a_to_b();
    ASSERT_NE(a, 0u);
    EXPECT_EQ(p.A.find(a)->attr.state, qp_state::init);
    EXPECT_EQ(p.A.find(a)->context, 7u);
    ASSERT_TRUE(p.run_until([&] { return p.mem_a.count(qp_event::established) == 1; }));
    p.step();  // the RTU
    const qpn_t b = p.passive_qpn();
    ASSERT_NE(b, 0u);
    const qp& qa = *p.A.find(a);
    const qp& qb = *p.B.find(b);
    EXPECT_EQ(qa.attr.state, qp_state::rts);
    EXPECT_EQ(qb.attr.state, qp_state::rts);
    EXPECT_EQ(qa.attr.dest_qpn, b);
    EXPECT_EQ(qb.attr.dest_qpn, a);
    EXPECT_EQ(qa.attr.sq_psn, qb.attr.rq_psn);
    EXPECT_EQ(qb.attr.sq_psn, qa.attr.rq_psn);
    EXPECT_EQ(qa.attr.mtu, path_mtu::mtu_2048);
    EXPECT_EQ(qb.attr.mtu, path_mtu::mtu_2048);
    EXPECT_EQ(qb.attr.peer_ip, ip_a);
    EXPECT_EQ(qb.attr.peer_mac, mac_a);
    EXPECT_EQ(p.mem_a.events.size(), 1u);
    EXPECT_EQ(p.mem_b.events.size(), 1u);
    EXPECT_EQ(p.A.cm().established, 1u);
    EXPECT_EQ(p.B.cm().established, 1u);
    EXPECT_EQ(p.A.cm().resent + p.B.cm().resent, 0u);
    // Nothing is left to resend: both ends are idle.
    EXPECT_EQ(p.A.next_deadline(), std::numeric_limits<std::uint64_t>::max());
    EXPECT_EQ(p.B.next_deadline(), std::numeric_limits<std::uint64_t>::max());
}

class roce_cm_lossy : public ::testing::TestWithParam<retransmit_mode> {};

// Every CM message may be lost; the connection still forms exactly once, and work runs on it.
TEST_P(roce_cm_lossy, connects_once_under_loss_and_carries_work) {
    const retransmit_mode mode = GetParam();
    std::uint64_t resent = 0;
    for (std::uint64_t seed = 1; seed <= 8; ++seed) {
        engine_config ca = cm_config_of(ip_a, mac_a, seed, mode);
        engine_config cb = cm_config_of(ip_b, mac_b, seed + 100, mode);
        ca.cm.retries = cb.cm.retries = 15;  // a 30% loss must not end the attempt
        pair_of_engines p(ca, cb);
        p.ab.rng.seed(seed);
        p.ba.rng.seed(seed * 31);
        p.ab.loss = p.ba.loss = 0.3;
        const qpn_t a = p.connect_a_to_b();
        ASSERT_TRUE(p.run_until([&] { return p.mem_a.count(qp_event::established) == 1; }))
            << "seed " << seed;
        p.ab.loss = p.ba.loss = 0.02;
        workload work(p.mem_b);
        std::mt19937_64 rng(seed);
        work.generate(40, rng, 6000);
        std::vector<work_completion> done;
        std::size_t posted = 0;
        ASSERT_TRUE(p.run_until([&] {
            while (posted < work.wrs().size() &&
                   p.A.post_send(a, work.wrs()[posted]) == post_error::none)
                ++posted;
            work.refill_receives(16, 6000);
            work_completion wc[16];
            const std::size_t n = p.A.poll_completions(wc);
            done.insert(done.end(), wc, wc + n);
            return done.size() == work.wrs().size();
        })) << "seed "
            << seed;
        work.check(done);
        // One passive QP, reported once, in RTS (on the RTU or on the first request).
        EXPECT_EQ(p.mem_b.count(qp_event::established), 1u) << "seed " << seed;
        EXPECT_EQ(p.mem_a.events.size(), 1u);
        EXPECT_EQ(p.B.find(p.passive_qpn())->attr.state, qp_state::rts);
        EXPECT_EQ(p.B.cm().established, 1u);
        resent += p.A.cm().resent + p.B.cm().resent;
    }
    EXPECT_GT(resent, 0u);  // the loss reached the exchange
}

INSTANTIATE_TEST_SUITE_P(modes, roce_cm_lossy,
                         ::testing::Values(retransmit_mode::go_back_n,
                                           retransmit_mode::out_of_order),
                         [](const auto& info) {
                             return std::string(info.param == retransmit_mode::go_back_n ? "gbn"
                                                                                         : "ooo");
                         });

TEST(roce_cm, a_duplicate_req_gets_the_same_rep_and_no_second_qp) {
    pair_of_engines p(cm_config_of(ip_a, mac_a, 1), cm_config_of(ip_b, mac_b, 2));
    p.connect_a_to_b();
    std::array<tx_frame, 8> out{};
    ASSERT_EQ(p.A.transmit(p.now, out), 1u);
    ASSERT_TRUE(is_cm(out[0].data, cm_attribute::req));
    const std::vector<std::uint8_t> req(out[0].data.begin(), out[0].data.end());
    const std::span<const std::uint8_t> one[] = {req};
    p.B.receive_burst(one, p.now);
    p.B.receive_burst(one, p.now);
    std::vector<std::vector<std::uint8_t>> reps;
    const std::size_t n = p.B.transmit(p.now, out);
    for (std::size_t i = 0; i < n; ++i)
        if (is_cm(out[i].data, cm_attribute::rep))
            reps.emplace_back(out[i].data.begin(), out[i].data.end());
    ASSERT_EQ(reps.size(), 2u);
    // The same MAD (the BTH's PSN, the IP ID and so the ICRC differ).
    EXPECT_TRUE(std::equal(reps[0].begin() + opcode_at + 20, reps[0].end() - 4,
                           reps[1].begin() + opcode_at + 20));
    EXPECT_EQ(p.B.cm().resent, 1u);
    std::size_t qps = 0;
    for (qpn_t q = 0; q < 0x1000000 && qps < 3; ++q)
        qps += p.B.find(q) != nullptr;
    EXPECT_EQ(qps, 1u);
}

TEST(roce_cm, a_lost_rtu_is_covered_by_the_first_request) {
    pair_of_engines p(cm_config_of(ip_a, mac_a, 1), cm_config_of(ip_b, mac_b, 2));
    p.ab.drop_if = [](std::span<const std::uint8_t> f) { return is_cm(f, cm_attribute::rtu); };
    const qpn_t a = p.connect_a_to_b();
    ASSERT_TRUE(p.run_until([&] { return p.mem_a.count(qp_event::established) == 1; }));
    p.step();
    EXPECT_EQ(p.mem_b.count(qp_event::established), 0u);
    std::vector<std::uint8_t> src(100, 3), dst(100);
    ASSERT_TRUE(p.send_and_wait(a, src, dst));
    EXPECT_EQ(p.mem_b.count(qp_event::established), 1u);
    EXPECT_EQ(dst, src);
    // B's REP timer stopped with the request: no REP goes out again, and a late RTU is stale.
    const std::uint64_t resent = p.B.cm().resent;
    for (int i = 0; i < 40; ++i)
        p.step();
    EXPECT_EQ(p.B.cm().resent, resent);
}

TEST(roce_cm, crossing_requests_make_two_connected_pairs) {
    pair_of_engines p(cm_config_of(ip_a, mac_a, 1), cm_config_of(ip_b, mac_b, 2));
    const qpn_t a = p.connect_a_to_b();
    const qpn_t b = p.B.connect({ip_a, mac_a, 0}, 9, p.now);
    ASSERT_TRUE(p.run_until([&] {
        return p.mem_a.count(qp_event::established) == 2 &&
               p.mem_b.count(qp_event::established) == 2;
    }));
    EXPECT_EQ(p.A.find(a)->attr.state, qp_state::rts);
    EXPECT_EQ(p.B.find(b)->attr.state, qp_state::rts);
    EXPECT_NE(p.A.find(a)->attr.dest_qpn, b);  // each active QP has its own passive one
    EXPECT_NE(p.B.find(b)->attr.dest_qpn, a);
}

struct refusal {
    const char* name;
    void (*change)(engine_config&);
    std::uint16_t reason;
    uet::wire::cm_refusal why;
};

class roce_cm_refused : public ::testing::TestWithParam<refusal> {};

TEST_P(roce_cm_refused, the_active_qp_fails_with_the_reject_reason) {
    engine_config cb = cm_config_of(ip_b, mac_b, 2);
    GetParam().change(cb);
    pair_of_engines p(cm_config_of(ip_a, mac_a, 1), cb);
    std::uint8_t why = 0xff;
    p.ba.drop_if = [&](std::span<const std::uint8_t> f) {
        if (is_cm(f, cm_attribute::rej)) why = f[attribute_at + 8 + 84 + 7];
        return false;
    };
    const qpn_t a = p.connect_a_to_b();
    ASSERT_TRUE(p.run_until([&] { return !p.mem_a.events.empty(); }));
    ASSERT_EQ(p.mem_a.events.size(), 1u);
    EXPECT_EQ(p.mem_a.events[0].what, qp_event::rejected);
    EXPECT_EQ(p.mem_a.events[0].detail, GetParam().reason);
    EXPECT_EQ(why, static_cast<std::uint8_t>(GetParam().why));
    EXPECT_EQ(p.A.find(a)->attr.state, qp_state::err);
    EXPECT_EQ(p.A.cm().rejects_received, 1u);
    EXPECT_EQ(p.B.cm().rejects_sent, 1u);
    EXPECT_TRUE(p.mem_b.events.empty());
    // The refused attempt is over: no REQ goes out again.
    EXPECT_EQ(p.A.next_deadline(), std::numeric_limits<std::uint64_t>::max());
}

INSTANTIATE_TEST_SUITE_P(
    reasons, roce_cm_refused,
    ::testing::Values(
        refusal{"job", [](engine_config& c) { c.cm.job_id = 42; }, 28, uet::wire::cm_refusal::job},
        refusal{"mode", [](engine_config& c) { c.qp.mode = retransmit_mode::out_of_order; }, 28,
                uet::wire::cm_refusal::mode},
        refusal{"not_listening", [](engine_config& c) { c.cm.listen = false; }, 8,
                uet::wire::cm_refusal::not_listening},
        refusal{"no_qp", [](engine_config& c) { c.max_qps = 0; }, 1, uet::wire::cm_refusal::none}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(roce_cm, a_peer_that_never_answers_fails_the_qp_with_retry_exc_err) {
    pair_of_engines p(cm_config_of(ip_a, mac_a, 1), cm_config_of(ip_b, mac_b, 2));
    p.ab.loss = 1;
    const qpn_t a = p.connect_a_to_b();
    ASSERT_TRUE(p.run_until([&] { return !p.mem_a.events.empty(); }));
    EXPECT_EQ(p.mem_a.events[0].what, qp_event::error);
    EXPECT_EQ(p.A.find(a)->error, wc_status::retry_exc_err);
    EXPECT_EQ(p.A.cm().resent, 5u);  // cm.retries
    EXPECT_EQ(p.A.cm().timeouts, 1u);
    // Not before the retries ran out: six sends, 50 us apart.
    EXPECT_GE(p.now, 6 * 50'000u);
}

TEST(roce_cm, a_passive_qp_whose_peer_went_away_is_dropped_unreported) {
    pair_of_engines p(cm_config_of(ip_a, mac_a, 1), cm_config_of(ip_b, mac_b, 2));
    p.ba.loss = 1;  // B's REPs never arrive
    p.connect_a_to_b();
    ASSERT_TRUE(p.run_until([&] { return p.B.cm().timeouts == 1; }));
    EXPECT_TRUE(p.mem_b.events.empty());
    std::size_t qps = 0;
    for (qpn_t q = 0; q < 0x1000000; ++q)
        qps += p.B.find(q) != nullptr;
    EXPECT_EQ(qps, 0u);
}

TEST(roce_cm, disconnect_flushes_both_ends_and_closes_with_drep) {
    pair_of_engines p(cm_config_of(ip_a, mac_a, 1), cm_config_of(ip_b, mac_b, 2));
    p.ab.loss = p.ba.loss = 0;
    const qpn_t a = p.connect_a_to_b();
    ASSERT_TRUE(p.run_until([&] { return p.mem_b.count(qp_event::established) == 1; }));
    const qpn_t b = p.passive_qpn();
    // A READ the peer will never answer: the DREQ flushes it.
    std::vector<std::uint8_t> buf(64);
    send_wr w;
    w.opcode = wr_opcode::read;
    w.local = buf.data();
    w.length = 64;
    w.rkey = 1;
    w.wr_id = 5;
    p.ab.drop_if = [](std::span<const std::uint8_t> f) { return f[opcode_at] == 0x0c; };
    ASSERT_EQ(p.A.post_send(a, w), post_error::none);
    p.step();
    EXPECT_FALSE(p.A.disconnect(a + 1000, p.now));
    ASSERT_TRUE(p.A.disconnect(a, p.now));
    EXPECT_FALSE(p.A.disconnect(a, p.now));  // once
    EXPECT_EQ(p.A.find(a)->attr.state, qp_state::err);
    work_completion wc[2];
    ASSERT_EQ(p.A.poll_completions(wc), 1u);
    EXPECT_EQ(wc[0].wr_id, 5u);
    EXPECT_EQ(wc[0].status, wc_status::wr_flush_err);
    ASSERT_TRUE(p.run_until([&] { return p.mem_b.count(qp_event::disconnected) == 1; }));
    EXPECT_EQ(p.B.find(b)->attr.state, qp_state::err);
    p.step();  // the DREP
    EXPECT_EQ(p.A.next_deadline(), std::numeric_limits<std::uint64_t>::max());
    EXPECT_EQ(p.B.cm().disconnected, 1u);
    // destroy_qp after a disconnect sends nothing more.
    const std::uint64_t sent = p.A.cm().sent;
    EXPECT_TRUE(p.A.destroy_qp(a));
    p.step();
    EXPECT_EQ(p.A.cm().sent, sent);
}

TEST(roce_cm, destroying_a_connected_qp_disconnects_the_peer) {
    pair_of_engines p(cm_config_of(ip_a, mac_a, 1), cm_config_of(ip_b, mac_b, 2));
    const qpn_t a = p.connect_a_to_b();
    ASSERT_TRUE(p.run_until([&] { return p.mem_b.count(qp_event::established) == 1; }));
    p.ab.loss = 0.5;  // the DREQ is sent again until a DREP comes back
    ASSERT_TRUE(p.A.destroy_qp(a));
    EXPECT_EQ(p.A.find(a), nullptr);
    ASSERT_TRUE(p.run_until([&] { return p.mem_b.count(qp_event::disconnected) == 1; }));
    p.ab.loss = 0;
    ASSERT_TRUE(p.run_until(
        [&] { return p.A.next_deadline() == std::numeric_limits<std::uint64_t>::max(); }));
    EXPECT_EQ(p.A.cm().timeouts, 0u);
}

TEST(roce_cm, datagrams_that_lie_are_counted_and_dropped) {
    pair_of_engines p(cm_config_of(ip_a, mac_a, 1), cm_config_of(ip_b, mac_b, 2));
    p.connect_a_to_b();
    std::array<tx_frame, 8> out{};
    ASSERT_EQ(p.A.transmit(p.now, out), 1u);
    const std::vector<std::uint8_t> req(out[0].data.begin(), out[0].data.end());
    const auto feed = [&](std::vector<std::uint8_t> f) {
        const std::span<const std::uint8_t> one[] = {f};
        p.B.receive_burst(one, p.now);
    };
    // Rebuilt with another Q_Key, another QP, or a message for no connection: each dropped.
    uet::wire::roce_packet rp;
    uet::wire::l2l4_view v;
    ASSERT_EQ(uet::wire::parse_l2l4(req, v), uet::wire::reject_reason::none);
    ASSERT_EQ(uet::wire::decode_roce(v.l4_payload, v.ip_packet, rp),
              uet::wire::reject_reason::none);
    const auto rebuild = [&](auto&& change) {
        uet::wire::roce_packet_spec s;
        s.bth = rp.bth;
        s.deth = rp.deth;
        std::vector<std::uint8_t> mad(rp.payload.begin(), rp.payload.end());
        change(s, mad);
        s.payload = mad;
        uet::wire::frame_spec f;
        f.src_mac = mac_a;
        f.dst_mac = mac_b;
        f.src_ip = ip_a;
        f.dst_ip = ip_b;
        f.src_port = 0xc000;
        f.dst_port = 4791;
        std::vector<std::uint8_t> frame(512);
        frame.resize(uet::wire::build_roce_frame(f, s, frame));
        return frame;
    };
    feed(rebuild([](auto& s, auto&) { s.deth->q_key = 0x1234; }));
    EXPECT_EQ(p.B.counters().dropped(roce_drop::bad_qkey), 1u);
    feed(rebuild([](auto& s, auto&) { s.bth.dest_qp = 5; }));
    EXPECT_EQ(p.B.counters().dropped(roce_drop::wrong_qpn), 1u);
    feed(rebuild([](auto&, auto& mad) { mad[17] = 0x14; }));  // an RTU for nothing
    EXPECT_EQ(p.B.counters().dropped(roce_drop::cm_unexpected), 1u);
    feed(rebuild([](auto&, auto& mad) { mad[1] = 0x04; }));  // not the CM's class
    EXPECT_EQ(p.B.counters().rejected(uet::wire::reject_reason::not_cm_mad), 1u);
    EXPECT_TRUE(p.mem_b.events.empty());
    // Random changes to the REQ: never an assertion, and at most the one connection it asked for.
    std::mt19937_64 rng(5);
    for (int i = 0; i < 2000; ++i) {
        std::vector<std::uint8_t> junk = req;
        junk[14 + rng() % (junk.size() - 14)] ^= static_cast<std::uint8_t>(1 + rng() % 255);
        feed(junk);
    }
    std::size_t qps = 0;
    for (qpn_t q = 0; q < 0x1000000 && qps < 3; ++q)
        qps += p.B.find(q) != nullptr;
    EXPECT_LE(qps, 1u);
}

// The whole life of a connection as tshark reads it: REQ, REP, RTU, a SEND on the new QP from
// the PSN the REQ announced, DREQ and DREP; nothing malformed, no expert warning.
TEST(roce_cm, the_exchange_dissects_clean_in_tshark) {
    ASSERT_TRUE(uet::test::have_tshark()) << "tshark not found (apt-get install tshark)";
    pair_of_engines p(cm_config_of(ip_a, mac_a, 1), cm_config_of(ip_b, mac_b, 2));
    std::vector<std::vector<std::uint8_t>> wire;
    p.ab.capture = p.ba.capture = &wire;
    const qpn_t a = p.connect_a_to_b();
    ASSERT_TRUE(p.run_until([&] { return p.mem_b.count(qp_event::established) == 1; }));
    const qpn_t b = p.passive_qpn();
    std::vector<std::uint8_t> src(300, 9), dst(300);
    ASSERT_TRUE(p.send_and_wait(a, src, dst));
    p.step();
    ASSERT_TRUE(p.A.disconnect(a, p.now));
    ASSERT_TRUE(p.run_until([&] { return p.mem_b.count(qp_event::disconnected) == 1; }));
    p.step();

    const char* const fields[] = {"infiniband.bth.opcode",
                                  "infiniband.bth.destqp",
                                  "infiniband.bth.psn",
                                  "infiniband.mad.attributeid",
                                  "infiniband.cm.req.localqpn",
                                  "infiniband.cm.req.startpsn",
                                  "infiniband.cm.rep.localqpn",
                                  "_ws.malformed",
                                  "_ws.expert"};
    const auto r = uet::test::tshark_fields(wire, "roce_cm_exchange.pcap", fields);
    ASSERT_TRUE(r.ok) << r.command;
    ASSERT_EQ(r.rows.size(), wire.size());
    const auto number = [](const std::string& s) { return std::stoul(s, nullptr, 0); };
    std::vector<std::string> cm;
    std::string req_psn;
    bool send_seen = false;
    for (const auto& row : r.rows) {
        ASSERT_EQ(row.size(), std::size(fields));
        EXPECT_EQ(row[7], "");
        EXPECT_EQ(row[8], "");
        if (row[0] == "100") {  // UD SEND only: a CM message
            cm.push_back(row[3]);
            if (row[3] == "0x0010") {
                EXPECT_EQ(number(row[4]), a);
                req_psn = row[5];
            }
            if (row[3] == "0x0013") {
                EXPECT_EQ(number(row[6]), b);
            }
        } else if (row[0] == "4") {  // RC SEND only
            send_seen = true;
            EXPECT_EQ(number(row[1]), b);
            EXPECT_EQ(number(row[2]), number(req_psn));
        }
    }
    EXPECT_TRUE(send_seen);
    EXPECT_EQ(cm, (std::vector<std::string>{"0x0010", "0x0013", "0x0014", "0x0015", "0x0016"}));
}

}  // namespace
