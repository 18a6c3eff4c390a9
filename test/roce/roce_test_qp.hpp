// Queue pairs for the lib/roce tests, brought to a state through the verbs transitions.
#pragma once

#include <gtest/gtest.h>

#include "roce/qp.hpp"

namespace uet::roce::test {

inline qp_attr connected_attr(psn_t sq_psn = 100, psn_t rq_psn = 500) {
    qp_attr a;
    a.access = access_remote_write | access_remote_read | access_remote_atomic;
    a.mtu = path_mtu::mtu_4096;
    a.dest_qpn = 0x22;
    a.rq_psn = rq_psn;
    a.sq_psn = sq_psn;
    a.max_rd_atomic = 4;
    a.max_dest_rd_atomic = 4;
    a.min_rnr_timer = 1;
    a.timeout = 14;
    a.retry_cnt = 7;
    a.rnr_retry = 7;
    a.peer_ip = 0x0a000002;
    return a;
}

// RESET -> INIT -> RTR -> RTS with `a` (its state fields are set here), each step through
// `modify(attr, mask)`: a bare QP's modify_qp, or an engine's.
template <typename Modify>
void connect_with(Modify&& modify, qp_attr a) {
    a.state = qp_state::init;
    ASSERT_TRUE(modify(a, attr_state | attr_pkey_index | attr_port | attr_access_flags));
    a.state = qp_state::rtr;
    ASSERT_TRUE(modify(a, attr_state | attr_av | attr_path_mtu | attr_dest_qpn | attr_rq_psn |
                              attr_max_dest_rd_atomic | attr_min_rnr_timer));
    a.state = qp_state::rts;
    ASSERT_TRUE(modify(a, attr_state | attr_sq_psn | attr_max_qp_rd_atomic | attr_retry_cnt |
                              attr_rnr_retry | attr_timeout));
}

inline void connect(qp& q, const qp_attr& a) {
    connect_with([&q](const qp_attr& x, std::uint32_t mask) { return modify_qp(q, x, mask); }, a);
}

}  // namespace uet::roce::test
