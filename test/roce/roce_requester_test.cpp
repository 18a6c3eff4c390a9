// The requester alone: work requests in, request packets out, checked packet by packet.
#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "roce/psn24.hpp"
#include "roce/requester.hpp"
#include "roce_test_qp.hpp"

namespace {

using namespace uet::roce;
using test::connect;
using test::connected_attr;
using uet::psn_t;
using uet::wire::roce_opcode;

std::array<std::uint8_t, 1 << 20> buffer{};

send_wr wr_of(wr_opcode op, std::uint32_t length, std::uint64_t id = 1) {
    send_wr w;
    w.wr_id = id;
    w.opcode = op;
    w.local = buffer.data();
    w.length = length;
    w.remote_va = 0x1000;
    w.rkey = 0x77;
    w.imm = 0xdeadbeef;
    return w;
}

std::vector<req_packet> drain(qp& q, req_stop& stop, std::uint64_t now = 1000) {
    std::vector<req_packet> out;
    req_packet p;
    while (next_request(q, now, p, stop))
        out.push_back(p);
    return out;
}

TEST(roce_requester, segments_a_send_into_first_middle_last) {
    qp q(5);
    connect(q, connected_attr(100));
    ASSERT_EQ(post_send(q, wr_of(wr_opcode::send, 10000)), post_error::none);
    req_stop stop{};
    const auto p = drain(q, stop);
    ASSERT_EQ(p.size(), 3u);
    EXPECT_EQ(stop, req_stop::empty);
    EXPECT_EQ(p[0].opcode, roce_opcode::rc_send_first);
    EXPECT_EQ(p[1].opcode, roce_opcode::rc_send_middle);
    EXPECT_EQ(p[2].opcode, roce_opcode::rc_send_last);
    for (std::uint32_t i = 0; i < 3; ++i) {
        EXPECT_EQ(p[i].psn, 100 + i);
        EXPECT_EQ(p[i].offset, i * 4096);
        EXPECT_EQ(p[i].payload, buffer.data() + i * 4096);
        EXPECT_FALSE(p[i].has_reth);
        EXPECT_FALSE(p[i].resend);
    }
    EXPECT_EQ(p[2].length, 10000u - 8192u);
    EXPECT_FALSE(p[0].ack_req);
    EXPECT_FALSE(p[1].ack_req);
    EXPECT_TRUE(p[2].ack_req);  // the end of a message asks for an ACK
    EXPECT_EQ(q.req.next_psn, 103u);
    EXPECT_EQ(q.counters.tx_packets, 3u);
    EXPECT_EQ(q.counters.tx_bytes, 10000u);
    // The local ACK timeout runs from the first packet.
    EXPECT_EQ(q.req.retry_deadline, 1000 + ack_timeout_ns(14));
}

TEST(roce_requester, writes_carry_reth_first_and_immediate_last) {
    qp q(5);
    connect(q, connected_attr(7));
    ASSERT_EQ(post_send(q, wr_of(wr_opcode::write_imm, 9000)), post_error::none);
    ASSERT_EQ(post_send(q, wr_of(wr_opcode::write, 100)), post_error::none);
    ASSERT_EQ(post_send(q, wr_of(wr_opcode::send_imm, 0)), post_error::none);
    req_stop stop{};
    const auto p = drain(q, stop);
    ASSERT_EQ(p.size(), 5u);
    EXPECT_EQ(p[0].opcode, roce_opcode::rc_rdma_write_first);
    ASSERT_TRUE(p[0].has_reth);
    EXPECT_EQ(p[0].reth.va, 0x1000u);
    EXPECT_EQ(p[0].reth.rkey, 0x77u);
    EXPECT_EQ(p[0].reth.dma_len, 9000u);
    EXPECT_FALSE(p[0].has_imm);
    EXPECT_EQ(p[1].opcode, roce_opcode::rc_rdma_write_middle);
    EXPECT_FALSE(p[1].has_reth);
    EXPECT_EQ(p[2].opcode, roce_opcode::rc_rdma_write_last_with_immediate);
    ASSERT_TRUE(p[2].has_imm);
    EXPECT_EQ(p[2].imm, 0xdeadbeefu);
    EXPECT_EQ(p[2].length, 9000u - 8192u);
    EXPECT_EQ(p[3].opcode, roce_opcode::rc_rdma_write_only);
    EXPECT_TRUE(p[3].has_reth);
    EXPECT_EQ(p[3].reth.dma_len, 100u);
    EXPECT_FALSE(p[3].has_imm);
    EXPECT_EQ(p[4].opcode, roce_opcode::rc_send_only_with_immediate);
    EXPECT_EQ(p[4].length, 0u);
    EXPECT_TRUE(p[4].has_imm);
}

TEST(roce_requester, a_read_reserves_a_psn_per_response_packet) {
    qp q(5);
    connect(q, connected_attr(10));
    ASSERT_EQ(post_send(q, wr_of(wr_opcode::read, 10000)), post_error::none);
    send_wr cas = wr_of(wr_opcode::cmp_swap, 8);
    cas.compare_add = 5;
    cas.swap = 9;
    ASSERT_EQ(post_send(q, cas), post_error::none);
    send_wr faa = wr_of(wr_opcode::fetch_add, 8);
    faa.compare_add = 3;
    ASSERT_EQ(post_send(q, faa), post_error::none);
    req_stop stop{};
    const auto p = drain(q, stop);
    ASSERT_EQ(p.size(), 3u);
    EXPECT_EQ(p[0].opcode, roce_opcode::rc_rdma_read_request);
    EXPECT_EQ(p[0].psn, 10u);
    EXPECT_EQ(p[0].length, 0u);
    EXPECT_EQ(p[0].reth.dma_len, 10000u);
    EXPECT_TRUE(p[0].ack_req);
    EXPECT_EQ(p[0].wqe->last_psn, 12u);
    EXPECT_EQ(p[1].opcode, roce_opcode::rc_compare_swap);
    EXPECT_EQ(p[1].psn, 13u);
    EXPECT_EQ(p[1].atomic.compare, 5u);
    EXPECT_EQ(p[1].atomic.swap_add, 9u);
    EXPECT_EQ(p[2].opcode, roce_opcode::rc_fetch_add);
    EXPECT_EQ(p[2].psn, 14u);
    EXPECT_EQ(p[2].atomic.swap_add, 3u);
    EXPECT_EQ(q.req.rd_atomic_in_flight, 3u);
}

TEST(roce_requester, stops_at_max_rd_atomic_and_at_the_window) {
    qp q(5, qp_limits{.sq_depth = 64, .max_outstanding = 4, .ack_req_every = 16});
    qp_attr a = connected_attr();
    a.max_rd_atomic = 2;
    connect(q, a);
    for (int i = 0; i < 3; ++i)
        ASSERT_EQ(post_send(q, wr_of(wr_opcode::read, 8)), post_error::none);
    req_stop stop{};
    EXPECT_EQ(drain(q, stop).size(), 2u);
    EXPECT_EQ(stop, req_stop::rd_atomic);

    qp w(6, qp_limits{.sq_depth = 64, .max_outstanding = 4, .ack_req_every = 16});
    connect(w, connected_attr());
    ASSERT_EQ(post_send(w, wr_of(wr_opcode::write, 6 * 4096)), post_error::none);
    EXPECT_EQ(drain(w, stop).size(), 4u);
    EXPECT_EQ(stop, req_stop::window);
    w.req.una += 2;  // two acknowledged
    EXPECT_EQ(drain(w, stop).size(), 2u);
    EXPECT_EQ(stop, req_stop::empty);
}

TEST(roce_requester, asks_for_an_ack_every_nth_packet) {
    qp q(5);
    connect(q, connected_attr(0));
    ASSERT_EQ(post_send(q, wr_of(wr_opcode::write, 40 * 4096)), post_error::none);
    req_stop stop{};
    const auto p = drain(q, stop);
    ASSERT_EQ(p.size(), 40u);
    for (std::size_t i = 0; i < p.size(); ++i)
        EXPECT_EQ(p[i].ack_req, i == 15 || i == 31 || i == 39) << i;
}

TEST(roce_requester, goes_back_n_in_psn_order_and_rereads_the_rest_of_a_read) {
    qp q(5);
    connect(q, connected_attr(100));
    ASSERT_EQ(post_send(q, wr_of(wr_opcode::send, 3 * 4096, 1)), post_error::none);   // 100-102
    ASSERT_EQ(post_send(q, wr_of(wr_opcode::read, 3 * 4096, 2)), post_error::none);   // 103-105
    ASSERT_EQ(post_send(q, wr_of(wr_opcode::write, 2 * 4096, 3)), post_error::none);  // 106-107
    req_stop stop{};
    ASSERT_EQ(drain(q, stop).size(), 6u);

    go_back(q, 101, resend_cause::psn_nak);
    ASSERT_EQ(post_send(q, wr_of(wr_opcode::send, 10, 4)), post_error::none);
    auto p = drain(q, stop);
    ASSERT_EQ(p.size(), 6u);
    EXPECT_EQ(p[0].opcode, roce_opcode::rc_send_middle);
    EXPECT_EQ(p[0].psn, 101u);
    EXPECT_EQ(p[1].opcode, roce_opcode::rc_send_last);
    EXPECT_EQ(p[2].opcode, roce_opcode::rc_rdma_read_request);
    EXPECT_EQ(p[2].psn, 103u);
    EXPECT_EQ(p[2].reth.dma_len, 3u * 4096);
    EXPECT_EQ(p[3].opcode, roce_opcode::rc_rdma_write_first);
    EXPECT_EQ(p[3].psn, 106u);
    EXPECT_EQ(p[4].opcode, roce_opcode::rc_rdma_write_last);
    for (int i = 0; i < 5; ++i) {
        EXPECT_TRUE(p[i].resend) << i;
        EXPECT_TRUE(p[i].ack_req) << i;  // every resend asks for an ACK
    }
    EXPECT_EQ(p[5].opcode, roce_opcode::rc_send_only);  // then new work
    EXPECT_EQ(p[5].psn, 108u);
    EXPECT_FALSE(p[5].resend);
    EXPECT_EQ(q.counters.go_back_rounds, 1u);
    EXPECT_EQ(q.counters.resent(resend_cause::psn_nak), 7u);

    // The first response of the READ arrived: it is asked again for the rest only.
    q.req.una = 104;
    go_back(q, 104, resend_cause::timeout);
    p = drain(q, stop);
    ASSERT_EQ(p.size(), 4u);
    EXPECT_EQ(p[0].opcode, roce_opcode::rc_rdma_read_request);
    EXPECT_EQ(p[0].psn, 104u);
    EXPECT_EQ(p[0].reth.va, 0x1000u + 4096);
    EXPECT_EQ(p[0].reth.dma_len, 2u * 4096);
    EXPECT_EQ(p[1].psn, 106u);
    EXPECT_EQ(p[3].psn, 108u);

    // Nothing before una goes again, and a go-back past the last PSN sent is nothing.
    go_back(q, 50, resend_cause::timeout);
    EXPECT_EQ(drain(q, stop).front().psn, 104u);
    const auto rounds = q.counters.go_back_rounds;
    go_back(q, q.req.next_psn, resend_cause::timeout);
    EXPECT_EQ(q.counters.go_back_rounds, rounds);
    EXPECT_TRUE(drain(q, stop).empty());
}

TEST(roce_requester, psns_wrap_at_24_bits_on_the_wire) {
    qp q(5);
    connect(q, connected_attr(0xfffffe));
    ASSERT_EQ(post_send(q, wr_of(wr_opcode::write, 4 * 4096)), post_error::none);
    req_stop stop{};
    const auto p = drain(q, stop);
    ASSERT_EQ(p.size(), 4u);
    const std::uint32_t wire[] = {0xfffffe, 0xffffff, 0, 1};
    for (int i = 0; i < 4; ++i)
        EXPECT_EQ(to_wire(p[i].psn), wire[i]);
    go_back(q, extend(0xffffff, q.req.una), resend_cause::psn_nak);
    const auto r = drain(q, stop);
    ASSERT_EQ(r.size(), 3u);
    EXPECT_EQ(to_wire(r[0].psn), 0xffffffu);
    EXPECT_EQ(r[0].opcode, roce_opcode::rc_rdma_write_middle);
}

TEST(roce_requester, refuses_what_ibv_post_send_refuses) {
    qp q(5, qp_limits{.sq_depth = 2});
    EXPECT_EQ(post_send(q, wr_of(wr_opcode::send, 1)), post_error::not_ready);  // RESET
    connect(q, connected_attr());
    EXPECT_EQ(post_send(q, wr_of(wr_opcode::fetch_add, 4)), post_error::bad_atomic);
    send_wr mis = wr_of(wr_opcode::cmp_swap, 8);
    mis.remote_va = 0x1004;
    EXPECT_EQ(post_send(q, mis), post_error::bad_atomic);
    send_wr none = wr_of(wr_opcode::send, 8);
    none.local = nullptr;
    EXPECT_EQ(post_send(q, none), post_error::no_buffer);
    send_wr huge = wr_of(wr_opcode::write, 0);
    huge.length = (1u << 31) + 1;
    EXPECT_EQ(post_send(q, huge), post_error::bad_length);
    EXPECT_EQ(post_send(q, wr_of(wr_opcode::send, 1)), post_error::none);
    EXPECT_EQ(post_send(q, wr_of(wr_opcode::send, 1)), post_error::none);
    EXPECT_EQ(post_send(q, wr_of(wr_opcode::send, 1)), post_error::queue_full);
    EXPECT_STRNE(to_string(post_error::bad_atomic), "unknown");

    // After an RNR NAK the requester waits.
    q.req.rnr_until = 5000;
    req_stop stop{};
    EXPECT_TRUE(drain(q, stop).empty());
    EXPECT_EQ(stop, req_stop::rnr_wait);
}

}  // namespace

namespace {

TEST(roce_requester_ooo, every_write_packet_carries_its_reth_and_the_immediate_follows) {
    qp_limits l;
    l.mode = retransmit_mode::out_of_order;
    qp q(5, l);
    connect(q, connected_attr(0));
    ASSERT_EQ(post_send(q, wr_of(wr_opcode::write_imm, 9000)), post_error::none);
    req_stop stop{};
    const auto p = drain(q, stop);
    ASSERT_EQ(p.size(), 4u);
    for (std::uint32_t i = 0; i < 3; ++i) {
        EXPECT_EQ(p[i].opcode, roce_opcode::rc_rdma_write_only) << i;
        ASSERT_TRUE(p[i].has_reth);
        EXPECT_EQ(p[i].reth.va, 0x1000u + i * 4096);
        EXPECT_EQ(p[i].reth.dma_len, p[i].length);
        EXPECT_FALSE(p[i].has_imm);
    }
    EXPECT_EQ(p[2].length, 9000u - 8192);
    EXPECT_EQ(p[3].opcode, roce_opcode::rc_rdma_write_only_with_immediate);
    EXPECT_EQ(p[3].length, 0u);
    EXPECT_EQ(p[3].reth.dma_len, 0u);
    EXPECT_TRUE(p[3].has_imm);
    EXPECT_TRUE(p[3].ack_req);

    // A NAK's PSN goes again alone, once older than the reorder window.
    resend_from(q, 1, resend_cause::psn_nak, 1000 + q.limits.reorder_window_ns - 1);
    EXPECT_TRUE(drain(q, stop, 1000 + q.limits.reorder_window_ns).empty());
    resend_from(q, 1, resend_cause::psn_nak, 1000 + q.limits.reorder_window_ns);
    resend_from(q, 1, resend_cause::psn_nak, 1000 + q.limits.reorder_window_ns);  // once
    const auto r = drain(q, stop, 1000 + q.limits.reorder_window_ns);
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].psn, 1u);
    EXPECT_TRUE(r[0].resend);
    EXPECT_EQ(r[0].reth.va, 0x1000u + 4096);

    // A READ must fit in the window, whose rings track its responses.
    send_wr big = wr_of(wr_opcode::read, 0);
    big.length = (q.limits.max_outstanding + 1) * 4096;
    EXPECT_EQ(post_send(q, big), post_error::read_beyond_window);
}

}  // namespace
