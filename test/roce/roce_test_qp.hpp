// Queue pairs for the lib/roce tests, brought to a state through the verbs transitions.
#pragma once

#include <gtest/gtest.h>

#include "roce/qp.hpp"
#include "roce_memory.hpp"

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

// RESET -> INIT -> RTR -> RTS with `a` through `modify(attr, mask)` (roce::connect_rc).
template <typename Modify>
void connect_with(Modify&& modify, const qp_attr& a) {
    ASSERT_TRUE(connect_rc(modify, a));
}

// These transitions drop no READ responses: the target is never called.
inline void connect(qp& q, const qp_attr& a) {
    memory_target none;
    connect_with(
        [&q, &none](const qp_attr& x, std::uint32_t mask) { return modify_qp(q, x, mask, none); },
        a);
}

}  // namespace uet::roce::test
