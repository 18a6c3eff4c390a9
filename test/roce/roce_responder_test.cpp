// The responder alone: request packets made by hand, what it places, acknowledges and refuses.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "roce/psn24.hpp"
#include "roce/responder.hpp"
#include "roce_memory.hpp"
#include "roce_test_qp.hpp"

namespace {

using namespace uet::roce;
using test::memory_target;
using uet::wire::aeth_header;
using uet::wire::aeth_kind;
using uet::wire::aeth_nak_code;
using uet::wire::roce_opcode;

std::vector<std::uint8_t> bytes(std::size_t n, std::uint8_t seed) {
    std::vector<std::uint8_t> v(n);
    for (std::size_t i = 0; i < n; ++i)
        v[i] = static_cast<std::uint8_t>(seed + i * 13);
    return v;
}

req_in packet(roce_opcode op, std::uint32_t psn, std::span<const std::uint8_t> payload = {},
              bool ack_req = false) {
    req_in r;
    r.opcode = op;
    r.psn = psn;
    r.payload = payload;
    r.ack_req = ack_req;
    return r;
}

std::uint8_t nak(aeth_nak_code c) {
    return aeth_header::make_syndrome(aeth_kind::nak, static_cast<std::uint8_t>(c));
}

class roce_responder : public ::testing::Test {
  protected:
    void SetUp() override { test::connect(q, test::connected_attr(0, 1000)); }
    qp q{9};
    memory_target mem;
};

TEST_F(roce_responder, places_a_send_past_the_skipped_header_and_acks_on_request) {
    std::vector<std::uint8_t> rb(20000);
    mem.receives.push_back({rb.data(), 20000, 16, 42});
    const auto data = bytes(9000, 1);
    const std::span<const std::uint8_t> d(data);
    EXPECT_EQ(on_request(q, packet(roce_opcode::rc_send_first, 1000, d.subspan(0, 4096)), 0, mem),
              rsp_verdict::accepted);
    EXPECT_EQ(
        on_request(q, packet(roce_opcode::rc_send_middle, 1001, d.subspan(4096, 4096)), 0, mem),
        rsp_verdict::accepted);
    ack_out ack;
    EXPECT_FALSE(take_ack(q, ack));  // no AckReq yet
    req_in last = packet(roce_opcode::rc_send_last_with_immediate, 1002, d.subspan(8192), true);
    last.has_imm = true;
    last.imm = 0x55;
    EXPECT_EQ(on_request(q, last, 0, mem), rsp_verdict::accepted);
    ASSERT_EQ(mem.arrivals.size(), 1u);
    EXPECT_EQ(mem.arrivals[0].cookie, 42u);
    EXPECT_EQ(mem.arrivals[0].length, 9000u - 16);
    EXPECT_TRUE(mem.arrivals[0].with_imm);
    EXPECT_EQ(mem.arrivals[0].imm, 0x55u);
    EXPECT_EQ(std::memcmp(rb.data(), data.data() + 16, 9000 - 16), 0);
    ASSERT_TRUE(take_ack(q, ack));
    EXPECT_EQ(ack.psn, 1002u);
    EXPECT_EQ(ack.syndrome, ack_syndrome);
    EXPECT_EQ(ack.msn, 1u);
    EXPECT_FALSE(take_ack(q, ack));  // taken once
}

TEST_F(roce_responder, no_receive_gives_an_rnr_nak_and_the_same_psn_is_taken_later) {
    const auto data = bytes(100, 2);
    EXPECT_EQ(on_request(q, packet(roce_opcode::rc_send_only, 1000, data, true), 0, mem),
              rsp_verdict::rnr);
    ack_out ack;
    ASSERT_TRUE(take_ack(q, ack));
    EXPECT_EQ(ack.psn, 1000u);
    EXPECT_EQ(ack.syndrome, aeth_header::make_syndrome(aeth_kind::rnr_nak, 1));
    EXPECT_EQ(q.rsp.epsn, 1000u);
    EXPECT_EQ(q.counters.dropped(roce_drop::no_receive), 1u);
    std::vector<std::uint8_t> rb(100);
    mem.receives.push_back({rb.data(), 100, 0, 7});
    EXPECT_EQ(on_request(q, packet(roce_opcode::rc_send_only, 1000, data, true), 0, mem),
              rsp_verdict::accepted);
    EXPECT_EQ(rb, data);
}

TEST_F(roce_responder, writes_land_in_the_region_and_a_bad_rkey_ends_the_qp) {
    const std::uint32_t rkey = mem.add_region(10000, access_remote_write);
    const auto data = bytes(5000, 3);
    uet::wire::reth_header reth{100, rkey, 5000};
    req_in first = packet(roce_opcode::rc_rdma_write_first, 1000,
                          std::span<const std::uint8_t>(data).subspan(0, 4096));
    first.reth = &reth;
    EXPECT_EQ(on_request(q, first, 0, mem), rsp_verdict::accepted);
    req_in last = packet(roce_opcode::rc_rdma_write_last_with_immediate, 1001,
                         std::span<const std::uint8_t>(data).subspan(4096), true);
    last.has_imm = true;
    last.imm = 9;
    EXPECT_EQ(on_request(q, last, 0, mem), rsp_verdict::accepted);
    EXPECT_EQ(std::memcmp(mem.regions[0].bytes.data() + 100, data.data(), 5000), 0);
    ASSERT_EQ(mem.remote_imms.size(), 1u);
    EXPECT_EQ(mem.remote_imms[0], 9u);

    uet::wire::reth_header bad{9000, rkey, 5000};  // out of the region
    req_in only = packet(roce_opcode::rc_rdma_write_only, 1002, {}, true);
    only.reth = &bad;
    EXPECT_EQ(on_request(q, only, 0, mem), rsp_verdict::nak);
    ack_out ack;
    ASSERT_TRUE(take_ack(q, ack));
    EXPECT_EQ(ack.psn, 1002u);
    EXPECT_EQ(ack.syndrome, nak(aeth_nak_code::remote_access_error));
    EXPECT_EQ(q.attr.state, qp_state::err);
    EXPECT_EQ(q.error, wc_status::rem_access_err);
    EXPECT_EQ(on_request(q, packet(roce_opcode::rc_send_only, 1003), 0, mem), rsp_verdict::dropped);
    EXPECT_EQ(q.counters.dropped(roce_drop::qp_not_ready), 1u);
}

TEST_F(roce_responder, reads_stream_responses_and_hold_the_ack_behind_them) {
    const std::uint32_t rkey = mem.add_region(20000, access_remote_read);
    for (std::size_t i = 0; i < 20000; ++i)
        mem.regions[0].bytes[i] = static_cast<std::uint8_t>(i);
    uet::wire::reth_header reth{1000, rkey, 10000};
    req_in read = packet(roce_opcode::rc_rdma_read_request, 1000, {}, true);
    read.reth = &reth;
    EXPECT_EQ(on_request(q, read, 0, mem), rsp_verdict::accepted);
    EXPECT_EQ(q.rsp.epsn, 1003u);  // three response PSNs
    std::vector<std::uint8_t> rb(10);
    mem.receives.push_back({rb.data(), 10, 0, 1});
    const auto data = bytes(10, 4);
    EXPECT_EQ(on_request(q, packet(roce_opcode::rc_send_only, 1003, data, true), 0, mem),
              rsp_verdict::accepted);
    ack_out ack;
    EXPECT_FALSE(take_ack(q, ack));  // the READ's responses go first
    resp_packet r;
    const roce_opcode want[] = {roce_opcode::rc_rdma_read_response_first,
                                roce_opcode::rc_rdma_read_response_middle,
                                roce_opcode::rc_rdma_read_response_last};
    for (int k = 0; k < 3; ++k) {
        ASSERT_TRUE(next_response(q, r, mem));
        EXPECT_EQ(r.opcode, want[k]);
        EXPECT_EQ(r.psn, 1000u + k);
        EXPECT_EQ(r.has_aeth, k != 1);
        EXPECT_EQ(r.payload, mem.regions[0].bytes.data() + 1000 + k * 4096);
        EXPECT_EQ(r.length, k == 2 ? 10000u - 8192 : 4096u);
    }
    EXPECT_FALSE(next_response(q, r, mem));
    ASSERT_TRUE(take_ack(q, ack));
    EXPECT_EQ(ack.psn, 1003u);

    // A duplicate READ (the requester asks again from its second response) runs again.
    uet::wire::reth_header again{1000 + 4096, rkey, 10000 - 4096};
    req_in dup = packet(roce_opcode::rc_rdma_read_request, 1001, {}, true);
    dup.reth = &again;
    EXPECT_EQ(on_request(q, dup, 0, mem), rsp_verdict::duplicate);
    ASSERT_TRUE(next_response(q, r, mem));
    EXPECT_EQ(r.opcode, roce_opcode::rc_rdma_read_response_first);
    EXPECT_EQ(r.psn, 1001u);
}

// Every READ whose source the target held gives the hold back exactly once, when its last
// response is built; a zero-length READ and an atomic hold nothing.
TEST_F(roce_responder, a_read_gives_its_hold_back_once_at_its_last_response) {
    const std::uint32_t rkey = mem.add_region(3 * 4096, access_remote_read | access_remote_atomic);
    uet::wire::reth_header reth{0, rkey, 3 * 4096};
    req_in read = packet(roce_opcode::rc_rdma_read_request, 1000, {}, true);
    read.reth = &reth;
    ASSERT_EQ(on_request(q, read, 0, mem), rsp_verdict::accepted);
    ASSERT_EQ(mem.returned.size(), 1u);
    resp_packet r;
    ASSERT_TRUE(next_response(q, r, mem));
    // Asked again from the start while its second response is queued: a second job, held too.
    ASSERT_EQ(on_request(q, read, 0, mem), rsp_verdict::duplicate);
    ASSERT_EQ(mem.returned.size(), 2u);
    uet::wire::reth_header empty{0, rkey, 0};
    req_in none = packet(roce_opcode::rc_rdma_read_request, 1003, {}, true);
    none.reth = &empty;
    ASSERT_EQ(on_request(q, none, 0, mem), rsp_verdict::accepted);
    uet::wire::atomic_eth_header a{8, rkey, 1, 0};
    req_in faa = packet(roce_opcode::rc_fetch_add, 1004, {}, true);
    faa.atomic = &a;
    ASSERT_EQ(on_request(q, faa, 0, mem), rsp_verdict::accepted);
    EXPECT_EQ(mem.returned.size(), 2u);  // neither took a hold
    std::size_t out = 0;
    int packets = 1;  // built so far
    while (next_response(q, r, mem)) {
        ++packets;
        ASSERT_TRUE(mem.holds_out(out));
        // The first job ends with its third packet, the repeat with its sixth.
        EXPECT_EQ(mem.returned[0], packets >= 3 ? 1u : 0u) << packets;
        EXPECT_EQ(mem.returned[1], packets >= 6 ? 1u : 0u) << packets;
    }
    EXPECT_EQ(packets, 8);  // 3 + 3 + the empty READ's + the atomic's
    ASSERT_TRUE(mem.holds_out(out));
    EXPECT_EQ(out, 0u);
}

// A QP that enters ERR with READs queued still sends their responses (the fatal NAK waits
// behind them); the holds come back once, whether the responses go out or a reset drops them.
TEST_F(roce_responder, a_qp_in_error_gives_its_holds_back_once) {
    const std::uint32_t rkey = mem.add_region(4 * 4096, access_remote_read);
    uet::wire::reth_header reth{0, rkey, 2 * 4096};
    req_in read = packet(roce_opcode::rc_rdma_read_request, 1000, {}, true);
    read.reth = &reth;
    ASSERT_EQ(on_request(q, read, 0, mem), rsp_verdict::accepted);
    read.psn = 1002;
    ASSERT_EQ(on_request(q, read, 0, mem), rsp_verdict::accepted);
    read.psn = 1004;
    ASSERT_EQ(on_request(q, read, 0, mem), rsp_verdict::accepted);
    // A WRITE to a region it may not write: remote access error, the QP goes to ERR.
    uet::wire::reth_header bad{0, rkey, 16};
    const auto data = bytes(16, 1);
    req_in write = packet(roce_opcode::rc_rdma_write_only, 1006, data, true);
    write.reth = &bad;
    ASSERT_EQ(on_request(q, write, 0, mem), rsp_verdict::nak);
    ASSERT_EQ(q.attr.state, qp_state::err);
    ASSERT_EQ(mem.returned.size(), 3u);
    // The first READ's responses go out; the second is half sent when the QP is reset.
    resp_packet r;
    for (int k = 0; k < 3; ++k)
        ASSERT_TRUE(next_response(q, r, mem));
    EXPECT_EQ(mem.returned, (std::vector<std::uint32_t>{1, 0, 0}));
    qp_attr reset;
    reset.state = qp_state::reset;
    ASSERT_TRUE(modify_qp(q, reset, attr_state, mem));
    EXPECT_EQ(mem.returned, (std::vector<std::uint32_t>{1, 1, 1}));
    EXPECT_FALSE(next_response(q, r, mem));
    // Nothing is left to give back: neither another reset nor dropping again returns a hold.
    ASSERT_TRUE(modify_qp(q, reset, attr_state, mem));
    drop_responses(q, mem);
    std::size_t out = 0;
    ASSERT_TRUE(mem.holds_out(out));
    EXPECT_EQ(out, 0u);
}

TEST_F(roce_responder, an_atomic_runs_once_and_its_duplicate_is_answered_from_the_cache) {
    const std::uint32_t rkey = mem.add_region(64, access_remote_atomic);
    uet::wire::atomic_eth_header a{16, rkey, 5, 0};
    req_in faa = packet(roce_opcode::rc_fetch_add, 1000, {}, true);
    faa.atomic = &a;
    EXPECT_EQ(on_request(q, faa, 0, mem), rsp_verdict::accepted);
    EXPECT_EQ(on_request(q, faa, 0, mem), rsp_verdict::duplicate);
    EXPECT_EQ(mem.atomics_run, 1u);
    resp_packet r;
    for (int k = 0; k < 2; ++k) {
        ASSERT_TRUE(next_response(q, r, mem));
        EXPECT_EQ(r.opcode, roce_opcode::rc_atomic_acknowledge);
        EXPECT_EQ(r.psn, 1000u);
        EXPECT_EQ(r.original, 0u);
        EXPECT_TRUE(r.has_atomic_ack);
    }
    std::uint64_t v;
    std::memcpy(&v, mem.regions[0].bytes.data() + 16, 8);
    EXPECT_EQ(v, 5u);
    // Once the cache has moved on, a duplicate is dropped rather than run again.
    for (std::uint32_t k = 1; k <= max_rd_atomic_limit; ++k) {
        faa.psn = 1000 + k;
        ASSERT_EQ(on_request(q, faa, 0, mem), rsp_verdict::accepted) << k;
        while (next_response(q, r, mem)) {
        }
    }
    faa.psn = 1000;
    EXPECT_EQ(on_request(q, faa, 0, mem), rsp_verdict::dropped);
    EXPECT_EQ(q.counters.dropped(roce_drop::atomic_dup_evicted), 1u);
    EXPECT_EQ(mem.atomics_run, 1u + max_rd_atomic_limit);
}

TEST_F(roce_responder, a_gap_is_naked_once_and_what_follows_is_dropped) {
    std::vector<std::uint8_t> rb(100);
    for (int i = 0; i < 3; ++i)
        mem.receives.push_back({rb.data(), 100, 0, 1});
    const auto data = bytes(10, 5);
    EXPECT_EQ(on_request(q, packet(roce_opcode::rc_send_only, 1001, data), 0, mem),
              rsp_verdict::nak);
    EXPECT_EQ(on_request(q, packet(roce_opcode::rc_send_only, 1002, data), 0, mem),
              rsp_verdict::dropped);
    ack_out ack;
    ASSERT_TRUE(take_ack(q, ack));
    EXPECT_EQ(ack.psn, 1000u);
    EXPECT_EQ(ack.syndrome, nak(aeth_nak_code::psn_sequence_error));
    EXPECT_EQ(q.counters.dropped(roce_drop::after_gap), 1u);
    EXPECT_EQ(on_request(q, packet(roce_opcode::rc_send_only, 1000, data), 0, mem),
              rsp_verdict::accepted);
    // A duplicate is acknowledged again, with nothing placed, and does not hide a pending NAK.
    EXPECT_EQ(on_request(q, packet(roce_opcode::rc_send_only, 1002, data), 0, mem),
              rsp_verdict::nak);
    EXPECT_EQ(on_request(q, packet(roce_opcode::rc_send_only, 999, data), 0, mem),
              rsp_verdict::duplicate);
    ASSERT_TRUE(take_ack(q, ack));
    EXPECT_EQ(ack.syndrome, nak(aeth_nak_code::psn_sequence_error));
    EXPECT_EQ(ack.psn, 1001u);
    EXPECT_EQ(on_request(q, packet(roce_opcode::rc_send_only, 999, data), 0, mem),
              rsp_verdict::duplicate);
    ASSERT_TRUE(take_ack(q, ack));
    EXPECT_EQ(ack.psn, 1000u);
    EXPECT_EQ(ack.syndrome, ack_syndrome);
    EXPECT_EQ(mem.arrivals.size(), 1u);
}

TEST_F(roce_responder, out_of_sequence_opcodes_and_forbidden_operations_are_invalid_requests) {
    const auto data = bytes(4096, 6);
    EXPECT_EQ(on_request(q, packet(roce_opcode::rc_send_middle, 1000, data), 0, mem),
              rsp_verdict::nak);
    ack_out ack;
    ASSERT_TRUE(take_ack(q, ack));
    EXPECT_EQ(ack.syndrome, nak(aeth_nak_code::invalid_request));
    EXPECT_EQ(q.attr.state, qp_state::err);
    EXPECT_EQ(q.counters.dropped(roce_drop::bad_opcode_sequence), 1u);

    qp r(10);
    qp_attr a = test::connected_attr(0, 1000);
    a.access = access_remote_write;  // no remote read
    test::connect(r, a);
    const std::uint32_t rkey = mem.add_region(100, access_remote_read);
    uet::wire::reth_header reth{0, rkey, 10};
    req_in read = packet(roce_opcode::rc_rdma_read_request, 1000, {}, true);
    read.reth = &reth;
    EXPECT_EQ(on_request(r, read, 0, mem), rsp_verdict::nak);
    ASSERT_TRUE(take_ack(r, ack));
    EXPECT_EQ(ack.syndrome, nak(aeth_nak_code::invalid_request));
    EXPECT_EQ(r.error, wc_status::rem_inv_req_err);
}

TEST_F(roce_responder, a_send_longer_than_its_receive_fails_the_receive) {
    std::vector<std::uint8_t> rb(100);
    mem.receives.push_back({rb.data(), 100, 0, 5});
    const auto data = bytes(200, 7);
    EXPECT_EQ(on_request(q, packet(roce_opcode::rc_send_only, 1000, data, true), 0, mem),
              rsp_verdict::nak);
    ASSERT_EQ(mem.arrivals.size(), 1u);
    EXPECT_EQ(mem.arrivals[0].status, wc_status::loc_len_err);
    EXPECT_EQ(q.attr.state, qp_state::err);
}

TEST_F(roce_responder, psns_wrap_at_24_bits) {
    qp r(11);
    test::connect(r, test::connected_attr(0, 0xffffff));
    std::vector<std::uint8_t> rb(10);
    for (int i = 0; i < 3; ++i)
        mem.receives.push_back({rb.data(), 10, 0, 1});
    const auto data = bytes(10, 8);
    for (std::uint32_t psn : {0xffffffu, 0u, 1u})
        EXPECT_EQ(on_request(r, packet(roce_opcode::rc_send_only, psn, data, true), 0, mem),
                  rsp_verdict::accepted);
    ack_out ack;
    ASSERT_TRUE(take_ack(r, ack));
    EXPECT_EQ(to_wire(ack.psn), 1u);
    EXPECT_EQ(ack.msn, 3u);
}

}  // namespace

namespace {

qp_limits ooo_limits() {
    qp_limits l;
    l.mode = retransmit_mode::out_of_order;
    l.max_outstanding = 64;
    l.ooo_nak_threshold = 2;
    l.nak_repeat_ns = 1000;
    return l;
}

TEST(roce_responder_ooo, places_writes_early_releases_in_order_and_naks_each_hole) {
    qp q(12, ooo_limits());
    test::connect(q, test::connected_attr(0, 100));
    memory_target mem;
    const std::uint32_t rkey = mem.add_region(100000, access_remote_write);
    const auto data = bytes(4096, 9);
    std::vector<uet::wire::reth_header> reths;
    reths.reserve(8);
    const auto write_only = [&](std::uint32_t psn, bool imm) {
        reths.push_back({static_cast<std::uint64_t>(psn - 100) * 4096, rkey, imm ? 0u : 4096u});
        req_in w = packet(
            imm ? roce_opcode::rc_rdma_write_only_with_immediate : roce_opcode::rc_rdma_write_only,
            psn, imm ? std::span<const std::uint8_t>{} : std::span(data));
        w.reth = &reths.back();
        w.has_imm = imm;
        w.imm = psn;
        return w;
    };
    // 100 is lost; 101, 102, 103 (the immediate of a WRITE) and 104 arrive.
    for (std::uint32_t psn : {101u, 102u})
        EXPECT_EQ(on_request(q, write_only(psn, false), 10, mem), rsp_verdict::accepted);
    EXPECT_EQ(on_request(q, write_only(103, true), 10, mem), rsp_verdict::accepted);
    EXPECT_TRUE(mem.remote_imms.empty());  // waits for 100
    EXPECT_EQ(on_request(q, write_only(104, false), 20, mem), rsp_verdict::accepted);
    EXPECT_EQ(q.counters.placed_early, 4u);
    EXPECT_EQ(std::memcmp(mem.regions[0].bytes.data() + 4096, data.data(), 4096), 0);
    // A SEND beyond the hole is held back.
    EXPECT_EQ(on_request(q, packet(roce_opcode::rc_send_only, 105, data), 20, mem),
              rsp_verdict::dropped);
    EXPECT_EQ(q.counters.dropped(roce_drop::ooo_held_back), 1u);
    // The hole is NAKed once by its PSN, and again only after nak_repeat_ns.
    ack_out ack;
    ASSERT_TRUE(take_ack(q, ack));
    EXPECT_EQ(ack.psn, 100u);
    EXPECT_EQ(ack.syndrome, nak(aeth_nak_code::psn_sequence_error));
    EXPECT_FALSE(take_ack(q, ack));
    EXPECT_EQ(on_request(q, write_only(102, false), 500, mem), rsp_verdict::duplicate);
    EXPECT_TRUE(take_ack(q, ack));  // the duplicate's ACK
    EXPECT_EQ(ack.syndrome, ack_syndrome);
    EXPECT_EQ(ack.psn, 99u);
    EXPECT_FALSE(take_ack(q, ack));
    EXPECT_EQ(on_request(q, write_only(102, false), 2000, mem), rsp_verdict::duplicate);
    ASSERT_TRUE(take_ack(q, ack));
    EXPECT_EQ(ack.psn, 100u);  // NAKed again, nak_repeat_ns later
    // The hole fills: everything up to 104 completes, the immediate in its turn.
    req_in first = write_only(100, false);
    first.ack_req = true;
    EXPECT_EQ(on_request(q, first, 2000, mem), rsp_verdict::accepted);
    ASSERT_EQ(mem.remote_imms.size(), 1u);
    EXPECT_EQ(mem.remote_imms[0], 103u);
    EXPECT_EQ(q.rsp.epsn, 105u);
    while (take_ack(q, ack)) {
    }
    EXPECT_EQ(ack.psn, 104u);  // the cumulative ACK covers what arrived early
    EXPECT_EQ(ack.msn, 5u);
}

}  // namespace
