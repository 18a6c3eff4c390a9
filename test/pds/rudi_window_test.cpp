// RUDI's packets in flight (lib/pds/rudi.hpp): ids that name one use of one slot, the FIFO of
// retransmissions, and the RTO's estimate.
#include "pds/rudi.hpp"

#include <gtest/gtest.h>

namespace uet::pds {
namespace {

TEST(rudi_window, a_stale_id_finds_nothing) {
    rudi_window w;
    w.resize(4);
    const std::uint32_t i = w.take(7, 0, 100);
    const std::uint32_t first_id = w[i].pkt_id;
    EXPECT_EQ(first_id & 0xffff, i);
    w[i].st = rudi_packet::state::in_flight;
    EXPECT_EQ(w.find(first_id, true), i);
    w.release(i);
    EXPECT_EQ(w.find(first_id, false), rudi_window::no_packet);  // freed
    // Its slot taken again: the old id (a late response) names nothing, the new one the slot.
    std::uint32_t again = rudi_window::no_packet;
    for (int k = 0; k < 4 && again != i; ++k)
        again = w.take(8, 0, 100);
    ASSERT_EQ(again, i);
    w[i].st = rudi_packet::state::in_flight;
    EXPECT_NE(w[i].pkt_id, first_id);
    EXPECT_EQ(w.find(first_id, false), rudi_window::no_packet);
    EXPECT_EQ(w.find(w[i].pkt_id, false), i);
    EXPECT_EQ(w.find(w[i].pkt_id | 0xfff0, false), rudi_window::no_packet);  // index out of range
}

TEST(rudi_window, retransmissions_leave_in_order_once_each) {
    rudi_window w;
    w.resize(8);
    std::uint32_t a = w.take(1, 0, 10), b = w.take(1, 10, 10), c = w.take(1, 20, 10);
    for (std::uint32_t i : {a, b, c})
        w[i].st = rudi_packet::state::in_flight;
    EXPECT_FALSE(w.retransmit_pending());
    w.queue_retransmit(b, retx_cause::nack);
    w.queue_retransmit(a, retx_cause::timeout);
    w.queue_retransmit(b, retx_cause::timeout);  // already queued: not twice
    EXPECT_EQ(w[b].cause, retx_cause::timeout);
    w.queue_retransmit(c, retx_cause::nack);
    w[c].st = rudi_packet::state::in_flight;  // answered in the meantime: skipped
    EXPECT_TRUE(w.retransmit_pending());
    EXPECT_EQ(w.pop_retransmit(), b);
    EXPECT_EQ(w.pop_retransmit(), a);
    EXPECT_EQ(w.pop_retransmit(), rudi_window::no_packet);
    EXPECT_FALSE(w.retransmit_pending());
}

TEST(rudi_window, release_message_frees_only_its_packets) {
    rudi_window w;
    w.resize(3);
    const std::uint32_t a = w.take(1, 0, 10), b = w.take(2, 0, 10), c = w.take(1, 10, 10);
    for (std::uint32_t i : {a, b, c})
        w[i].st = rudi_packet::state::in_flight;
    EXPECT_FALSE(w.has_room());
    int cancelled = 0;
    w.release_message(1, [&](timer_node&) { ++cancelled; });
    EXPECT_EQ(cancelled, 2);
    EXPECT_EQ(w[a].st, rudi_packet::state::free);
    EXPECT_EQ(w[c].st, rudi_packet::state::free);
    EXPECT_EQ(w[b].st, rudi_packet::state::in_flight);
    EXPECT_TRUE(w.has_room());
}

TEST(rtt_estimate, rto_follows_rfc6298_within_bounds_and_doubles_per_retry) {
    rtt_estimate e;
    EXPECT_EQ(e.rto(1000, 64000, 0), 1000u);  // no sample: the floor
    e.sample(4000);                           // first sample: srtt 4000, rttvar 2000
    EXPECT_EQ(e.srtt_ns, 4000u);
    EXPECT_EQ(e.rttvar_ns, 2000u);
    EXPECT_EQ(e.rto(1000, 64000, 0), 12000u);
    EXPECT_EQ(e.rto(1000, 64000, 2), 48000u);
    EXPECT_EQ(e.rto(1000, 64000, 3), 64000u);  // capped
    e.sample(2000);                            // rttvar (3*2000 + 2000)/4, srtt (7*4000 + 2000)/8
    EXPECT_EQ(e.rttvar_ns, 2000u);
    EXPECT_EQ(e.srtt_ns, 3750u);
}

}  // namespace
}  // namespace uet::pds
