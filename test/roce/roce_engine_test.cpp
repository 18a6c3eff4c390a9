// Two RoCEv2 engines joined by frames: QPs connected by hand (the verbs way), a random mix of
// work over a clean and a lossy link in both retransmission modes, ERR and the flush, and what
// the receive path makes of frames that are not what they claim.
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <deque>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "roce_engine/engine.hpp"
#include "roce_link.hpp"
#include "roce_memory.hpp"
#include "roce_pair.hpp"
#include "roce_workload.hpp"
#include "wire/frame.hpp"
#include "wire/ipv4.hpp"
#include "wire/roce.hpp"

namespace {

using namespace uet::roce;
using namespace test;
using uet::psn_t;
using uet::tx_frame;
using uet::wire::mac_address;

class roce_engine_pair : public ::testing::TestWithParam<std::tuple<retransmit_mode, double>> {};

TEST_P(roce_engine_pair, a_mix_of_work_completes_over_frames) {
    const auto [mode, loss] = GetParam();
    memory_target mem_a, mem_b;
    engine A(config_of(ip_a, mac_a, mode, 1), mem_a);
    engine B(config_of(ip_b, mac_b, mode, 2), mem_b);
    const qpn_t a = A.create_qp(), b = B.create_qp();
    ASSERT_NE(a, 0u);
    ASSERT_NE(b, 0u);
    ASSERT_TRUE(connect_pair(A, a, B, b));
    test::workload work(mem_b);
    std::mt19937_64 rng(11);
    work.generate(200, rng, 6000);
    wire_link ab, ba;
    ab.loss = ba.loss = loss;
    std::vector<work_completion> done;
    std::size_t posted = 0;
    std::uint64_t now = 0;
    for (int step = 0; step < 200000 && done.size() < work.wrs().size(); ++step, now += 2000) {
        while (posted < work.wrs().size() && A.post_send(a, work.wrs()[posted]) == post_error::none)
            ++posted;
        work.refill_receives(16, 6000);
        ab.carry(A, B, now);
        ba.carry(B, A, now);
        work_completion wc[16];
        const std::size_t n = A.poll_completions(wc);
        for (std::size_t i = 0; i < n; ++i) {
            EXPECT_EQ(wc[i].qp_num, a);
            done.push_back(wc[i]);
        }
        ASSERT_NE(A.find(a)->attr.state, qp_state::err) << to_string(A.find(a)->error);
    }
    work.check(done);
    // Every frame was RoCEv2 with a good ICRC, for the QP it named, from its peer.
    for (const engine* e : {&A, &B}) {
        for (std::uint64_t r : e->counters().rejects)
            EXPECT_EQ(r, 0u);
        for (std::uint64_t d : e->counters().drops)
            EXPECT_EQ(d, 0u);
        EXPECT_GT(e->counters().frames_tx, 0u);
    }
    if (loss > 0) {
        EXPECT_GT(A.find(a)->counters.resent(resend_cause::psn_nak) +
                      A.find(a)->counters.resent(resend_cause::timeout),
                  0u);
    }
    EXPECT_EQ(A.next_deadline(), std::numeric_limits<std::uint64_t>::max());
}

INSTANTIATE_TEST_SUITE_P(
    modes, roce_engine_pair,
    ::testing::Combine(::testing::Values(retransmit_mode::go_back_n, retransmit_mode::out_of_order),
                       ::testing::Values(0.0, 0.02)),
    [](const auto& info) {
        return std::string(std::get<0>(info.param) == retransmit_mode::go_back_n ? "gbn" : "ooo") +
               (std::get<1>(info.param) > 0 ? "_lossy" : "_clean");
    });

TEST(roce_engine, dcqcn_answers_marks_with_cnps_and_paces_the_sender) {
    memory_target mem_a, mem_b;
    engine_config ca = config_of(ip_a, mac_a, retransmit_mode::go_back_n, 1);
    engine_config cb = config_of(ip_b, mac_b, retransmit_mode::go_back_n, 2);
    ca.dcqcn = cb.dcqcn = true;
    ca.dcqcn_params.line_rate_gbps = cb.dcqcn_params.line_rate_gbps = 10;
    engine A(ca, mem_a), B(cb, mem_b);
    const qpn_t a = A.create_qp(), b = B.create_qp();
    ASSERT_TRUE(connect_pair(A, a, B, b));
    const std::uint32_t rkey = mem_b.add_region(1 << 20, access_remote_write);
    std::vector<std::uint8_t> buf(1 << 20, 5);
    send_wr w;
    w.opcode = wr_opcode::write;
    w.local = buf.data();
    w.length = 64 * 1024;
    w.rkey = rkey;
    wire_link ab, ba;
    ab.mark = 0.01;
    std::size_t done = 0, posted = 0;
    std::uint64_t now = 0;
    for (; now < 200'000'000 && done < 20; now += 1000) {
        while (posted < 20 && A.post_send(a, w) == post_error::none)
            ++posted;
        ab.carry(A, B, now);
        ba.carry(B, A, now);
        work_completion wc[8];
        done += A.poll_completions(wc);
    }
    ASSERT_EQ(done, 20u);
    EXPECT_GT(B.counters().cnps_sent, 0u);
    EXPECT_EQ(A.counters().cnps_received, B.counters().cnps_sent);
    EXPECT_GT(A.counters().paced, 0u);
    // At most one CNP per QP per min_time_between_cnps.
    EXPECT_LE(B.counters().cnps_sent, now / cb.dcqcn_params.min_time_between_cnps_ns + 1);
    // The marks came from A's data only: B never had to slow down.
    EXPECT_EQ(B.counters().cnps_received, 0u);
    EXPECT_EQ(B.counters().paced, 0u);
}

// READs whose responses B has not sent yet hold their regions in B's target; destroying B's QP
// drops the responses and gives each hold back once. A's READs then fail on their own.
TEST(roce_engine, destroying_a_qp_gives_back_the_holds_of_its_read_responses) {
    memory_target mem_a, mem_b;
    engine A(config_of(ip_a, mac_a, retransmit_mode::go_back_n, 1), mem_a);
    engine B(config_of(ip_b, mac_b, retransmit_mode::go_back_n, 2), mem_b);
    const qpn_t a = A.create_qp(), b = B.create_qp();
    ASSERT_TRUE(connect_pair(A, a, B, b));
    const std::uint32_t rkey = mem_b.add_region(1 << 20, access_remote_read);
    std::vector<std::uint8_t> buf(1 << 20);
    send_wr w;
    w.opcode = wr_opcode::read;
    w.local = buf.data();
    w.length = 32 * 1024;  // 32 packets: the three fit the window
    w.rkey = rkey;
    for (int k = 0; k < 3; ++k) {
        w.remote_va = k * w.length;
        ASSERT_EQ(A.post_send(a, w), post_error::none);
    }
    wire_link ab;
    ab.carry(A, B, 0);  // B takes the READs
    ASSERT_EQ(mem_b.returned.size(), 3u);
    std::array<tx_frame, 8> burst{};
    ASSERT_EQ(B.transmit(0, burst), burst.size());  // the first READ's first responses
    std::size_t out = 0;
    ASSERT_TRUE(mem_b.holds_out(out));
    EXPECT_EQ(out, 3u);
    EXPECT_TRUE(B.destroy_qp(b));
    ASSERT_TRUE(mem_b.holds_out(out));
    EXPECT_EQ(out, 0u);
    EXPECT_EQ(mem_b.returned, (std::vector<std::uint32_t>{1, 1, 1}));
}

TEST(roce_engine, a_bad_rkey_fails_the_work_request_and_flushes_the_rest) {
    memory_target mem_a, mem_b;
    engine A(config_of(ip_a, mac_a, retransmit_mode::go_back_n, 1), mem_a);
    engine B(config_of(ip_b, mac_b, retransmit_mode::go_back_n, 2), mem_b);
    const qpn_t a = A.create_qp(), b = B.create_qp();
    ASSERT_TRUE(connect_pair(A, a, B, b));
    std::vector<std::uint8_t> buf(100, 1);
    send_wr w;
    w.opcode = wr_opcode::write;
    w.local = buf.data();
    w.length = 100;
    w.rkey = 77;  // no such region
    for (std::uint64_t id = 1; id <= 3; ++id) {
        w.wr_id = id;
        ASSERT_EQ(A.post_send(a, w), post_error::none);
    }
    wire_link ab, ba;
    std::vector<work_completion> done;
    for (std::uint64_t now = 0; now < 100 * 1000 && done.size() < 3; now += 1000) {
        ab.carry(A, B, now);
        ba.carry(B, A, now);
        work_completion wc[4];
        const std::size_t n = A.poll_completions(wc);
        done.insert(done.end(), wc, wc + n);
    }
    ASSERT_EQ(done.size(), 3u);
    EXPECT_EQ(done[0].wr_id, 1u);
    EXPECT_EQ(done[0].status, wc_status::rem_access_err);
    EXPECT_EQ(done[1].status, wc_status::wr_flush_err);
    EXPECT_EQ(done[2].status, wc_status::wr_flush_err);
    EXPECT_EQ(A.find(a)->attr.state, qp_state::err);
    EXPECT_EQ(B.find(b)->attr.state, qp_state::err);
    // A post in ERR completes at once with a flush error.
    w.wr_id = 9;
    ASSERT_EQ(A.post_send(a, w), post_error::none);
    work_completion wc[2];
    ASSERT_EQ(A.poll_completions(wc), 1u);
    EXPECT_EQ(wc[0].wr_id, 9u);
    EXPECT_EQ(wc[0].status, wc_status::wr_flush_err);
}

// A QP whose window is full has nothing to send until an acknowledgement comes: the engine's
// next deadline is its timer, not now, so a poll loop does not spin on it (nor a simulation stall
// at one instant).
TEST(roce_engine, a_full_window_is_no_work_to_do) {
    for (const auto mode : {retransmit_mode::go_back_n, retransmit_mode::out_of_order}) {
        engine_pair p(mode);
        ASSERT_TRUE(p.connected);
        const std::uint32_t rkey = p.mem_b.add_region(1 << 20, access_remote_write);
        std::vector<std::uint8_t> buf(256 * 1024, 7);
        // 256 packets of 1024 bytes each, twice the window of 128.
        ASSERT_EQ(p.A.post_send(p.a, make_wr(1, wr_opcode::write, buf.data(), 256 * 1024, rkey)),
                  post_error::none);
        std::array<tx_frame, 32> out{};
        std::size_t sent = 0;
        for (std::size_t n; (n = p.A.transmit(0, out)) > 0;)
            sent += n;
        EXPECT_EQ(sent, 128u);
        EXPECT_GT(p.A.next_deadline(), 0u) << to_string(mode);
        std::vector<work_completion> done;
        ASSERT_TRUE(p.run_until_done(done, 1));
        EXPECT_EQ(done[0].status, wc_status::success);
    }
}

// The engine's round robin serves the QPs that have work in turn, whatever idle QPs lie between
// them: two busy QPs with two idle slots between them send one frame each, turn about.
TEST(roce_engine, transmit_takes_the_busy_qps_in_turn_past_idle_slots) {
    memory_target mem_a, mem_b;
    engine A(config_of(ip_a, mac_a, retransmit_mode::go_back_n, 1), mem_a);
    engine B(config_of(ip_b, mac_b, retransmit_mode::go_back_n, 2), mem_b);
    const qpn_t x0 = A.create_qp(), idle1 = A.create_qp(), idle2 = A.create_qp(),
                x3 = A.create_qp();
    ASSERT_NE(idle1 * idle2, 0u);
    ASSERT_TRUE(connect_pair(A, x0, B, B.create_qp()));
    ASSERT_TRUE(connect_pair(A, x3, B, B.create_qp()));
    const std::uint32_t rkey = mem_b.add_region(1 << 20, access_remote_write);
    std::vector<std::uint8_t> buf(64 * 1024, 7);
    for (const qpn_t q : {x0, x3})
        ASSERT_EQ(A.post_send(q, make_wr(q, wr_opcode::write, buf.data(), 64 * 1024, rkey)),
                  post_error::none);
    std::array<tx_frame, 1> out{};
    std::uint32_t to_x0 = 0, to_x3 = 0;  // frames by the QP they name (BTH dest QP of B's end)
    const qpn_t peer_x0 = A.find(x0)->attr.dest_qpn;
    for (int i = 0; i < 40; ++i) {
        ASSERT_EQ(A.transmit(0, out), 1u);
        const std::uint8_t* bth = out[0].data.data() + 14 + 20 + 8;
        const qpn_t dest = qpn_t{bth[5]} << 16 | qpn_t{bth[6]} << 8 | bth[7];
        (dest == peer_x0 ? to_x0 : to_x3) += 1;
    }
    EXPECT_EQ(to_x0, 20u);
    EXPECT_EQ(to_x3, 20u);
}

// Out-of-order mode: a NAK that ends the connection acknowledges the PSNs before its own, so
// the work requests before the bad one complete, even when the bad one arrived ahead of a hole.
TEST(roce_engine, out_of_order_error_naks_acknowledge_what_came_before) {
    engine_pair p(retransmit_mode::out_of_order);
    ASSERT_TRUE(p.connected);
    const std::uint32_t rkey = p.mem_b.add_region(8192, access_remote_write);
    std::vector<std::uint8_t> buf(4096, 3);
    ASSERT_EQ(p.A.post_send(p.a, make_wr(1, wr_opcode::write, buf.data(), 3000, rkey)),
              post_error::none);
    ASSERT_EQ(p.A.post_send(p.a, make_wr(2, wr_opcode::write, buf.data(), 100, rkey + 9)),
              post_error::none);
    // The first packet is lost: the bad WRITE arrives ahead of a hole.
    bool dropped = false;
    p.ab.drop_if = [&](std::span<const std::uint8_t>) { return !std::exchange(dropped, true); };
    std::vector<work_completion> done;
    ASSERT_TRUE(p.run_until_done(done, 2));
    EXPECT_EQ(done[0].status, wc_status::success);
    EXPECT_EQ(done[1].status, wc_status::rem_access_err);
    EXPECT_EQ(p.qb().counters.dropped(roce_drop::ooo_held_back), 1u);
    EXPECT_EQ(std::memcmp(p.mem_b.regions[rkey - 1].bytes.data(), buf.data(), 3000), 0);
}

TEST(roce_engine, out_of_order_rnr_naks_acknowledge_what_came_before) {
    qp_attr at_a = pair_attr();
    at_a.rnr_retry = 0;
    engine_pair p(retransmit_mode::out_of_order, at_a);
    ASSERT_TRUE(p.connected);
    const std::uint32_t rkey = p.mem_b.add_region(8192, access_remote_write);
    std::vector<std::uint8_t> buf(100, 3);
    ASSERT_EQ(p.A.post_send(p.a, make_wr(1, wr_opcode::write, buf.data(), 100, rkey)),
              post_error::none);
    // No receive is posted for the SEND.
    ASSERT_EQ(p.A.post_send(p.a, make_wr(2, wr_opcode::send, buf.data(), 100)), post_error::none);
    std::vector<work_completion> done;
    ASSERT_TRUE(p.run_until_done(done, 2));
    EXPECT_EQ(done[0].status, wc_status::success);
    EXPECT_EQ(done[1].status, wc_status::rnr_retry_exc_err);
}

// Out-of-order mode holds back SENDs beyond a hole; one loss brings them all back at once (the
// responder NAKs the hole, the requester resends it with everything held back behind it),
// not one local ACK timeout per packet.
TEST(roce_engine, out_of_order_one_loss_brings_back_what_was_held_back) {
    engine_pair p(retransmit_mode::out_of_order);
    ASSERT_TRUE(p.connected);
    std::vector<std::uint8_t> buf(2000, 9);
    std::deque<std::vector<std::uint8_t>> receives;
    for (std::uint64_t i = 0; i < 16; ++i) {
        auto& rb = receives.emplace_back(2000);
        p.mem_b.receives.push_back({rb.data(), 2000, 0, i});
        ASSERT_EQ(p.A.post_send(p.a, make_wr(i, wr_opcode::send, buf.data(), 2000)),
                  post_error::none);
    }
    bool dropped = false;
    p.ab.drop_if = [&](std::span<const std::uint8_t>) { return !std::exchange(dropped, true); };
    std::vector<work_completion> done;
    ASSERT_TRUE(p.run_until_done(done, 16));
    for (const work_completion& c : done)
        EXPECT_EQ(c.status, wc_status::success);
    ASSERT_EQ(p.mem_b.arrivals.size(), 16u);
    EXPECT_EQ(p.qb().counters.dropped(roce_drop::ooo_held_back), 31u);
    EXPECT_LE(p.qa().counters.timeouts, 1u);
    EXPECT_EQ(p.qa().counters.go_back_rounds, 0u);
}

// An atomic whose answer is lost keeps its max_rd_atomic credit until it is acknowledged, so
// the responder, which keeps that many results, still has its answer when it is asked again.
TEST(roce_engine, a_lost_atomic_answer_is_answered_again_from_the_responders_results) {
    engine_pair p(retransmit_mode::go_back_n);
    ASSERT_TRUE(p.connected);
    const std::uint32_t rkey = p.mem_b.add_region(8, access_remote_atomic);
    std::vector<std::uint64_t> originals(64);
    for (std::uint64_t i = 0; i < originals.size(); ++i) {
        send_wr w = make_wr(i, wr_opcode::fetch_add, reinterpret_cast<std::uint8_t*>(&originals[i]),
                            8, rkey);
        w.compare_add = 1;
        ASSERT_EQ(p.A.post_send(p.a, w), post_error::none);
    }
    // The first atomic's answer is lost three times over.
    constexpr std::size_t opcode_at = 14 + 20 + 8, psn_at = opcode_at + 9;
    int lost = 0;
    p.ba.drop_if = [&](std::span<const std::uint8_t> f) {
        const bool first_answer =
            f[opcode_at] ==
                static_cast<std::uint8_t>(uet::wire::roce_opcode::rc_atomic_acknowledge) &&
            f[psn_at] == 0xff && f[psn_at + 1] == 0xff && f[psn_at + 2] == 0xf0;
        return first_answer && lost++ < 3;
    };
    std::vector<work_completion> done;
    ASSERT_TRUE(p.run_until_done(done, originals.size()));
    for (std::size_t i = 0; i < done.size(); ++i) {
        EXPECT_EQ(done[i].status, wc_status::success) << i;
        EXPECT_EQ(originals[i], i);
    }
    EXPECT_EQ(lost, 4);
    EXPECT_EQ(p.mem_b.atomics_run, originals.size());
    EXPECT_EQ(p.qb().counters.dropped(roce_drop::atomic_dup_evicted), 0u);
}

// A QP created in the slot of a destroyed one takes another number, so the old QP's peer
// (which has not heard of the destroy) reaches nothing; numbers do not repeat for many turns.
TEST(roce_engine, a_qp_made_after_one_is_destroyed_takes_a_new_number) {
    memory_target mem;
    engine_config c = config_of(ip_b, mac_b, retransmit_mode::go_back_n, 2);
    c.max_qps = 3;
    engine B(c, mem);
    const qpn_t keep = B.create_qp();
    std::set<qpn_t> seen{keep};
    qpn_t last = B.create_qp();
    for (int i = 0; i < 200; ++i) {
        seen.insert(last);
        ASSERT_TRUE(B.destroy_qp(last));
        EXPECT_EQ(B.find(last), nullptr);
        EXPECT_FALSE(B.destroy_qp(last));
        const qpn_t next = B.create_qp();
        ASSERT_NE(next, 0u);
        EXPECT_FALSE(seen.count(next)) << "QPN " << next << " again after " << i << " turns";
        ASSERT_NE(B.find(next), nullptr);
        EXPECT_EQ(B.find(next)->qpn, next);
        EXPECT_LE(next, 0xff0000u);
        EXPECT_GE(next, 0x100u);
        last = next;
    }
    ASSERT_NE(B.find(keep), nullptr);  // the other slot's QP is untouched
}

TEST(roce_engine, frames_that_lie_are_counted_and_dropped) {
    memory_target mem;
    engine B(config_of(ip_b, mac_b, retransmit_mode::go_back_n, 2), mem);
    const qpn_t b = B.create_qp();
    engine A(config_of(ip_a, mac_a, retransmit_mode::go_back_n, 1), mem);
    const qpn_t a = A.create_qp();
    ASSERT_TRUE(connect_pair(A, a, B, b));
    std::vector<std::uint8_t> rb(64);
    mem.receives.push_back({rb.data(), 64, 0, 1});

    // A good SEND frame as A would send it.
    std::vector<std::uint8_t> payload(16, 0xab);
    uet::wire::frame_spec f;
    f.src_mac = mac_a;
    f.dst_mac = mac_b;
    f.src_ip = ip_a;
    f.dst_ip = ip_b;
    f.src_port = 0xc001;
    f.dst_port = 4791;
    f.udp_checksum = false;
    uet::wire::roce_packet_spec s;
    s.bth.opcode = static_cast<std::uint8_t>(uet::wire::roce_opcode::rc_send_only);
    s.bth.dest_qp = b;
    s.bth.psn = 0xfffff0;
    s.bth.ack_req = true;
    s.payload = payload;
    std::vector<std::uint8_t> good(256);
    good.resize(uet::wire::build_roce_frame(f, s, good));
    ASSERT_FALSE(good.empty());

    auto feed = [&](const std::vector<std::uint8_t>& frame) {
        const std::span<const std::uint8_t> one[] = {frame};
        B.receive_burst(one, 1000);
    };
    std::vector<std::uint8_t> bad_icrc = good;
    bad_icrc[bad_icrc.size() - 10] ^= 1;
    feed(bad_icrc);
    EXPECT_EQ(B.counters().rejected(uet::wire::reject_reason::bad_icrc), 1u);

    const auto build = [](const uet::wire::frame_spec& fs, const uet::wire::roce_packet_spec& ps) {
        std::vector<std::uint8_t> frame(256);
        frame.resize(uet::wire::build_roce_frame(fs, ps, frame));
        return frame;
    };
    uet::wire::roce_packet_spec wrong_qp = s;
    wrong_qp.bth.dest_qp = b + 1000;
    feed(build(f, wrong_qp));
    EXPECT_EQ(B.counters().dropped(roce_drop::wrong_qpn), 1u);
    uet::wire::frame_spec stranger = f;
    stranger.src_ip = 0x0a000009;
    feed(build(stranger, s));
    EXPECT_EQ(B.counters().dropped(roce_drop::wrong_source), 1u);
    uet::wire::frame_spec other_port = f;
    other_port.dst_port = 4793;
    feed(build(other_port, s));
    EXPECT_EQ(B.counters().dropped(roce_drop::not_roce), 1u);

    std::vector<std::uint8_t> truncated(good.begin(), good.begin() + 50);
    feed(truncated);
    EXPECT_TRUE(mem.arrivals.empty());

    // Random bytes, and good frames with random bytes changed: counted, never taken.
    std::mt19937_64 rng(3);
    for (int i = 0; i < 3000; ++i) {
        std::vector<std::uint8_t> junk = good;
        if (i % 2) {
            junk.resize(rng() % 200);
            for (auto& byte : junk)
                byte = static_cast<std::uint8_t>(rng());
        } else {
            junk[14 + rng() % (junk.size() - 14)] ^= static_cast<std::uint8_t>(1 + rng() % 255);
        }
        feed(junk);
    }
    // Only the SEND itself got in: a changed bit the ICRC leaves out on purpose (BTH byte 4,
    // FECN and BECN, which a switch may set) still leaves the same SEND; it is taken once.
    ASSERT_LE(mem.arrivals.size(), 1u);
    if (!mem.arrivals.empty()) {
        EXPECT_EQ(mem.arrivals[0].length, 16u);
        EXPECT_EQ(std::vector<std::uint8_t>(rb.begin(), rb.begin() + 16), payload);
    }
    // Every frame is accounted for: rejected or dropped by the engine, or handed to the QP.
    const engine_counters& c = B.counters();
    const qp& q = *B.find(b);
    std::uint64_t counted = q.counters.rx_packets + q.counters.dropped(roce_drop::qp_not_ready);
    for (std::uint64_t r : c.rejects)
        counted += r;
    for (std::uint64_t d : c.drops)
        counted += d;
    EXPECT_EQ(counted, c.frames_rx);

    // The good frame is taken, unless a changed one already was (then it is a duplicate) or
    // broke the QP (a NAK that moved it to ERR).
    if (q.attr.state != qp_state::rts || !mem.arrivals.empty()) return;
    feed(good);
    ASSERT_EQ(mem.arrivals.size(), 1u);
    EXPECT_EQ(mem.arrivals[0].length, 16u);
}

}  // namespace
