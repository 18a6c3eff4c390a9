// The RC queue pair state machine against ibv_modify_qp's rules, the verbs constants, and the
// 24-bit PSN arithmetic.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "roce/counters.hpp"
#include "roce/psn24.hpp"
#include "roce/qp_fsm.hpp"

namespace {

using namespace uet::roce;

constexpr std::uint32_t init_mask = attr_state | attr_pkey_index | attr_port | attr_access_flags;
constexpr std::uint32_t rtr_mask = attr_state | attr_av | attr_path_mtu | attr_dest_qpn |
                                   attr_rq_psn | attr_max_dest_rd_atomic | attr_min_rnr_timer;
constexpr std::uint32_t rts_mask = attr_state | attr_sq_psn | attr_max_qp_rd_atomic |
                                   attr_retry_cnt | attr_rnr_retry | attr_timeout;

qp_attr wanted_attr(qp_state s) {
    qp_attr a;
    a.state = s;
    a.access = access_remote_write | access_remote_read | access_remote_atomic;
    a.mtu = path_mtu::mtu_4096;
    a.dest_qpn = 0x1234;
    a.rq_psn = 0xabcdef;
    a.sq_psn = 0x123456;
    a.max_rd_atomic = 4;
    a.max_dest_rd_atomic = 8;
    a.min_rnr_timer = 12;
    a.timeout = 14;
    a.retry_cnt = 5;
    a.rnr_retry = 7;
    a.peer_ip = 0x0a000002;
    a.udp_sport = 49152;
    return a;
}

// A QP brought to `s` along RESET -> INIT -> RTR -> RTS (-> SQD).
qp_attr qp_in(qp_state s) {
    qp_attr q;
    if (s == qp_state::reset) return q;
    EXPECT_TRUE(modify(q, wanted_attr(qp_state::init), init_mask));
    if (s == qp_state::init) return q;
    EXPECT_TRUE(modify(q, wanted_attr(qp_state::rtr), rtr_mask));
    if (s == qp_state::rtr) return q;
    EXPECT_TRUE(modify(q, wanted_attr(qp_state::rts), rts_mask));
    if (s == qp_state::rts) return q;
    if (s == qp_state::sqd || s == qp_state::err) {
        EXPECT_TRUE(modify(q, wanted_attr(s), attr_state));
    }
    return q;
}

TEST(roce_qp_fsm, connects_reset_init_rtr_rts_and_keeps_the_attributes) {
    const qp_attr q = qp_in(qp_state::rts);
    EXPECT_EQ(q.state, qp_state::rts);
    EXPECT_EQ(q.dest_qpn, 0x1234u);
    EXPECT_EQ(q.rq_psn, 0xabcdefu);
    EXPECT_EQ(q.sq_psn, 0x123456u);
    EXPECT_EQ(q.mtu, path_mtu::mtu_4096);
    EXPECT_EQ(q.max_rd_atomic, 4);
    EXPECT_EQ(q.max_dest_rd_atomic, 8);
    EXPECT_EQ(q.timeout, 14);
    EXPECT_EQ(q.retry_cnt, 5);
    EXPECT_EQ(q.peer_ip, 0x0a000002u);
    EXPECT_EQ(q.udp_sport, 49152);
    EXPECT_TRUE(requester_ready(q.state));
    EXPECT_TRUE(responder_ready(q.state));
    EXPECT_FALSE(requester_ready(qp_state::rtr));
    EXPECT_TRUE(responder_ready(qp_state::rtr));
    EXPECT_FALSE(responder_ready(qp_state::init));
    EXPECT_FALSE(requester_ready(qp_state::err));
    EXPECT_FALSE(responder_ready(qp_state::err));
}

TEST(roce_qp_fsm, each_required_attribute_is_named_when_missing) {
    struct step {
        qp_state from, to;
        std::uint32_t mask;
    };
    for (const step s : {step{qp_state::reset, qp_state::init, init_mask},
                         step{qp_state::init, qp_state::rtr, rtr_mask},
                         step{qp_state::rtr, qp_state::rts, rts_mask}}) {
        for (std::uint32_t bit = 2; bit < (1u << attr_mask_bits); bit <<= 1) {
            if (!(s.mask & bit)) continue;
            qp_attr q = qp_in(s.from);
            const qp_attr before = q;
            const fsm_result r = modify(q, wanted_attr(s.to), s.mask & ~bit);
            EXPECT_EQ(r.error, fsm_error::missing_attribute) << attr_mask_name(bit);
            EXPECT_EQ(r.bits, bit) << attr_mask_name(bit);
            EXPECT_EQ(q.state, before.state);
            EXPECT_EQ(q.dest_qpn, before.dest_qpn);
        }
    }
}

TEST(roce_qp_fsm, refuses_attributes_a_transition_does_not_take) {
    qp_attr q = qp_in(qp_state::reset);
    fsm_result r = modify(q, wanted_attr(qp_state::init), init_mask | attr_sq_psn);
    EXPECT_EQ(r.error, fsm_error::unsupported_attribute);
    EXPECT_STREQ(attr_mask_name(r.bits), "IBV_QP_SQ_PSN");
    EXPECT_EQ(q.state, qp_state::reset);

    // Alternate paths and Q_Keys are not implemented: refused, not ignored.
    q = qp_in(qp_state::init);
    r = modify(q, wanted_attr(qp_state::rtr), rtr_mask | attr_alt_path);
    EXPECT_EQ(r.error, fsm_error::unsupported_attribute);
    EXPECT_EQ(r.bits, attr_alt_path);
    r = modify(q, wanted_attr(qp_state::rtr), rtr_mask | attr_qkey);
    EXPECT_EQ(r.bits, attr_qkey);

    // In RTS the local ACK timeout cannot change (verbs allows it only on the way to RTS).
    q = qp_in(qp_state::rts);
    qp_attr w = wanted_attr(qp_state::rts);
    w.timeout = 20;
    r = modify(q, w, attr_timeout);
    EXPECT_EQ(r.error, fsm_error::unsupported_attribute);
    EXPECT_EQ(q.timeout, 14);
    w.min_rnr_timer = 3;
    EXPECT_TRUE(modify(q, w, attr_min_rnr_timer));
    EXPECT_EQ(q.min_rnr_timer, 3);
    EXPECT_EQ(q.state, qp_state::rts);
}

TEST(roce_qp_fsm, only_verbs_transitions_exist) {
    const qp_state all[] = {qp_state::reset, qp_state::init, qp_state::rtr, qp_state::rts,
                            qp_state::sqd,   qp_state::sqe,  qp_state::err};
    const std::set<std::pair<qp_state, qp_state>> valid = {
        {qp_state::reset, qp_state::init}, {qp_state::init, qp_state::init},
        {qp_state::init, qp_state::rtr},   {qp_state::rtr, qp_state::rts},
        {qp_state::rts, qp_state::rts},    {qp_state::rts, qp_state::sqd},
        {qp_state::sqd, qp_state::rts},    {qp_state::sqd, qp_state::sqd},
        {qp_state::sqe, qp_state::rts},
    };
    for (const qp_state from : all) {
        for (const qp_state to : all) {
            std::uint32_t required = 0, optional = 0;
            const bool exists = transition_masks(from, to, required, optional);
            const bool expected =
                to == qp_state::reset || to == qp_state::err || valid.count({from, to}) != 0;
            EXPECT_EQ(exists, expected) << to_string(from) << " -> " << to_string(to);
        }
    }
    // Any state goes to ERR and to RESET with nothing but the state.
    for (const qp_state from : {qp_state::reset, qp_state::init, qp_state::rtr, qp_state::rts,
                                qp_state::sqd, qp_state::err}) {
        qp_attr q = qp_in(from);
        EXPECT_TRUE(modify(q, wanted_attr(qp_state::err), attr_state)) << to_string(from);
        EXPECT_EQ(q.state, qp_state::err);
        EXPECT_TRUE(modify(q, wanted_attr(qp_state::reset), attr_state));
        EXPECT_EQ(q.state, qp_state::reset);
    }
    // Skipping a state is refused and changes nothing.
    qp_attr q = qp_in(qp_state::init);
    const fsm_result r = modify(q, wanted_attr(qp_state::rts), rts_mask);
    EXPECT_EQ(r.error, fsm_error::bad_transition);
    EXPECT_EQ(q.state, qp_state::init);
    q = qp_in(qp_state::err);
    EXPECT_EQ(modify(q, wanted_attr(qp_state::rts), rts_mask).error, fsm_error::bad_transition);
}

TEST(roce_qp_fsm, out_of_range_values_are_named) {
    struct bad {
        std::uint32_t bit;
        void (*spoil)(qp_attr&);
    };
    const bad cases[] = {
        {attr_path_mtu, [](qp_attr& a) { a.mtu = static_cast<path_mtu>(1000); }},
        {attr_path_mtu, [](qp_attr& a) { a.mtu = static_cast<path_mtu>(8192); }},
        {attr_dest_qpn, [](qp_attr& a) { a.dest_qpn = 1; }},
        {attr_dest_qpn, [](qp_attr& a) { a.dest_qpn = 1u << 24; }},
        {attr_rq_psn, [](qp_attr& a) { a.rq_psn = 1u << 24; }},
        {attr_av, [](qp_attr& a) { a.peer_ip = 0; }},
        {attr_min_rnr_timer, [](qp_attr& a) { a.min_rnr_timer = 32; }},
        {attr_max_dest_rd_atomic, [](qp_attr& a) { a.max_dest_rd_atomic = 17; }},
    };
    for (const bad& c : cases) {
        qp_attr q = qp_in(qp_state::init);
        qp_attr w = wanted_attr(qp_state::rtr);
        c.spoil(w);
        const fsm_result r = modify(q, w, rtr_mask);
        EXPECT_EQ(r.error, fsm_error::bad_value) << attr_mask_name(c.bit);
        EXPECT_EQ(r.bits, c.bit) << attr_mask_name(c.bit);
        EXPECT_EQ(q.state, qp_state::init);
    }
    const bad rts_cases[] = {
        {attr_timeout, [](qp_attr& a) { a.timeout = 32; }},
        {attr_retry_cnt, [](qp_attr& a) { a.retry_cnt = 8; }},
        {attr_rnr_retry, [](qp_attr& a) { a.rnr_retry = 8; }},
        {attr_sq_psn, [](qp_attr& a) { a.sq_psn = 0x1000000; }},
        {attr_max_qp_rd_atomic, [](qp_attr& a) { a.max_rd_atomic = 200; }},
    };
    for (const bad& c : rts_cases) {
        qp_attr q = qp_in(qp_state::rtr);
        qp_attr w = wanted_attr(qp_state::rts);
        c.spoil(w);
        const fsm_result r = modify(q, w, rts_mask);
        EXPECT_EQ(r.error, fsm_error::bad_value) << attr_mask_name(c.bit);
        EXPECT_EQ(r.bits, c.bit);
        EXPECT_EQ(q.state, qp_state::rtr);
        EXPECT_EQ(q.sq_psn, 0u);
    }
    qp_attr q;
    qp_attr w = wanted_attr(qp_state::init);
    w.pkey_index = 1;  // RoCE has the default partition only
    EXPECT_EQ(modify(q, w, init_mask).bits, attr_pkey_index);
    w = wanted_attr(qp_state::init);
    w.access = 1u << 7;
    EXPECT_EQ(modify(q, w, init_mask).bits, attr_access_flags);
    w = wanted_attr(qp_state::init);
    w.port = 2;
    EXPECT_EQ(modify(q, w, init_mask).bits, attr_port);
}

TEST(roce_qp_fsm, cur_state_must_match) {
    qp_attr q = qp_in(qp_state::rtr);
    qp_attr w = wanted_attr(qp_state::rts);
    w.cur_state = qp_state::init;
    fsm_result r = modify(q, w, rts_mask | attr_cur_state);
    EXPECT_EQ(r.error, fsm_error::cur_state_mismatch);
    EXPECT_EQ(q.state, qp_state::rtr);
    w.cur_state = qp_state::rtr;
    EXPECT_TRUE(modify(q, w, rts_mask | attr_cur_state));
    EXPECT_EQ(q.state, qp_state::rts);
}

TEST(roce_verbs, constants_are_verbs_own) {
    static_assert(static_cast<int>(wc_status::wr_flush_err) == 5);
    static_assert(static_cast<int>(wc_status::rem_access_err) == 10);
    static_assert(static_cast<int>(wc_status::retry_exc_err) == 12);
    static_assert(static_cast<int>(wc_status::rnr_retry_exc_err) == 13);
    static_assert(attr_dest_qpn == (1u << 20) && attr_sq_psn == (1u << 16));
    EXPECT_STREQ(to_string(wc_status::retry_exc_err), "transport retry counter exceeded");
    EXPECT_STREQ(to_string(wc_status::wr_flush_err), "Work Request Flushed Error");
    EXPECT_STREQ(attr_mask_name(attr_rq_psn), "IBV_QP_RQ_PSN");
    EXPECT_STREQ(attr_mask_name(1u << 25), "unknown");
    EXPECT_STREQ(attr_mask_name(attr_rq_psn | attr_sq_psn), "unknown");
    EXPECT_STREQ(to_string(qp_state::sqe), "SQE");

    EXPECT_EQ(ack_timeout_ns(0), 0u);  // no timeout
    EXPECT_EQ(ack_timeout_ns(1), 8192u);
    EXPECT_EQ(ack_timeout_ns(14), 4096ull << 14);  // 67.1 ms
    EXPECT_EQ(rnr_timer_ns(0), 655'360'000u);
    EXPECT_EQ(rnr_timer_ns(1), 10'000u);
    EXPECT_EQ(rnr_timer_ns(12), 640'000u);
    EXPECT_EQ(rnr_timer_ns(31), 491'520'000u);
    for (std::uint8_t c = 2; c < 32; ++c)
        EXPECT_GT(rnr_timer_ns(c), rnr_timer_ns(c - 1));

    std::set<std::string> names, texts;
    for (std::size_t i = 0; i < roce_drop_count; ++i) {
        names.insert(drop_name(static_cast<roce_drop>(i)));
        texts.insert(to_string(static_cast<roce_drop>(i)));
    }
    EXPECT_EQ(names.size(), roce_drop_count);
    EXPECT_EQ(texts.size(), roce_drop_count);
    EXPECT_STREQ(drop_name(roce_drop::wrong_qpn), "wrong_qpn");
    EXPECT_STREQ(drop_name(roce_drop::count_), "unknown");
}

TEST(roce_psn24, extends_across_the_24_bit_wrap) {
    EXPECT_EQ(to_wire(0x01000005u), 0x000005u);
    EXPECT_EQ(extend(0x000001, 0x00fffffe), 0x01000001u);  // just past the wrap
    EXPECT_EQ(extend(0xfffffe, 0x01000002), 0x00fffffeu);  // just before it
    EXPECT_EQ(extend(0x000010, 0x00000010), 0x00000010u);  // itself
    EXPECT_EQ(extend(0x000000, 0xffffff00), 0x00000000u);  // the 32-bit wrap too
    EXPECT_EQ(psn24_distance(0, 0x7fffff), 0x7fffff);
    EXPECT_EQ(psn24_distance(0, 0x800000), -0x800000);
    EXPECT_EQ(psn24_distance(0xfffff0, 0x000010), 0x20);
    EXPECT_EQ(psn24_distance(0x000010, 0xfffff0), -0x20);
    // Every wire value within half the space of `near` comes back as itself.
    for (std::uint32_t near : {0u, 0x7fffffu, 0xffffffu, 0x12345678u}) {
        for (std::int32_t d : {-0x800000, -1, 0, 1, 0x7fffff}) {
            const std::uint32_t psn = near + static_cast<std::uint32_t>(d);
            EXPECT_EQ(extend(to_wire(psn), near), psn) << near << " " << d;
        }
    }
}

}  // namespace
