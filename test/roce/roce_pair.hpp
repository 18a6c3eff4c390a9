// Two RoCEv2 engines with one queue pair each, connected by hand (ibv_modify_qp, as perftest
// does without rdma_cm), and the links that carry their frames. No gtest here: the fuzz harness
// builds the same pair.
#pragma once

#include <cstdint>
#include <vector>

#include "roce/requester.hpp"
#include "roce_engine/engine.hpp"
#include "roce_link.hpp"
#include "roce_memory.hpp"

namespace uet::roce::test {

// The attributes both QPs of a pair take unless a test changes them.
inline qp_attr pair_attr() {
    qp_attr at;
    at.access = access_remote_write | access_remote_read | access_remote_atomic;
    at.mtu = path_mtu::mtu_1024;
    at.max_rd_atomic = at.max_dest_rd_atomic = 8;
    at.min_rnr_timer = 1;  // 10 us
    at.timeout = 5;        // 131 us
    return at;
}

// RESET -> INIT -> RTR -> RTS with `at` facing the peer; false when a transition is refused.
inline bool bring_up(engine& e, qpn_t self, qp_attr at) {
    at.state = qp_state::init;
    if (!e.modify_qp(self, at, attr_state | attr_pkey_index | attr_port | attr_access_flags))
        return false;
    at.state = qp_state::rtr;
    if (!e.modify_qp(self, at,
                     attr_state | attr_av | attr_path_mtu | attr_dest_qpn | attr_rq_psn |
                         attr_max_dest_rd_atomic | attr_min_rnr_timer))
        return false;
    at.state = qp_state::rts;
    return static_cast<bool>(e.modify_qp(self, at,
                                         attr_state | attr_sq_psn | attr_max_qp_rd_atomic |
                                             attr_retry_cnt | attr_rnr_retry | attr_timeout));
}

// QP `a` on A and `b` on B at RTS facing each other, A's send PSNs from just below the 24-bit
// wrap. `at_a` and `at_b` give each end's own attributes; the addresses and PSNs are set here.
inline bool connect_pair(engine& A, qpn_t a, engine& B, qpn_t b, qp_attr at_a = pair_attr(),
                         qp_attr at_b = pair_attr()) {
    constexpr psn_t psn_a = 0xfffff0, psn_b = 0x123456;
    at_a.dest_qpn = b;
    at_a.peer_ip = B.config().ip;
    at_a.peer_mac = B.config().mac;
    at_a.sq_psn = psn_a;
    at_a.rq_psn = psn_b;
    at_b.dest_qpn = a;
    at_b.peer_ip = A.config().ip;
    at_b.peer_mac = A.config().mac;
    at_b.sq_psn = psn_b;
    at_b.rq_psn = psn_a;
    return bring_up(A, a, at_a) && bring_up(B, b, at_b);
}

// A work request of `length` bytes at `local`, to (rkey, va) for WRITEs, READs and atomics.
inline send_wr make_wr(std::uint64_t id, wr_opcode op, std::uint8_t* local, std::uint32_t length,
                       std::uint32_t rkey = 0, std::uint64_t va = 0) {
    send_wr w;
    w.wr_id = id;
    w.opcode = op;
    w.local = local;
    w.length = length;
    w.rkey = rkey;
    w.remote_va = va;
    return w;
}

// Engines A (ip_a) and B (ip_b) with one QP each, connected; the links carry frames each way
// once per step.
struct engine_pair {
    memory_target mem_a, mem_b;
    engine A, B;
    qpn_t a = 0, b = 0;
    wire_link ab, ba;
    std::uint64_t now = 0;
    bool connected = false;

    explicit engine_pair(retransmit_mode mode, qp_attr at_a = pair_attr(),
                         qp_attr at_b = pair_attr())
        : A(config_of(ip_a, mac_a, mode, 1), mem_a), B(config_of(ip_b, mac_b, mode, 2), mem_b) {
        a = A.create_qp();
        b = B.create_qp();
        connected = a != 0 && b != 0 && connect_pair(A, a, B, b, at_a, at_b);
    }

    qp& qa() { return *A.find(a); }
    qp& qb() { return *B.find(b); }

    void step(std::uint64_t dt = 2'000) {
        ab.carry(A, B, now);
        ba.carry(B, A, now);
        now += dt;
    }
    // A's send-side completions so far, appended to `done`; how many were new.
    std::size_t poll(std::vector<work_completion>& done) {
        work_completion wc[32];
        std::size_t total = 0;
        for (std::size_t n; (n = A.poll_completions(wc)) != 0; total += n)
            done.insert(done.end(), wc, wc + n);
        return total;
    }
    // Steps until A has `count` completions in `done`, or `limit` ns passed.
    bool run_until_done(std::vector<work_completion>& done, std::size_t count,
                        std::uint64_t limit = 100'000'000) {
        for (const std::uint64_t end = now + limit; done.size() < count && now < end;) {
            step();
            poll(done);
        }
        return done.size() >= count;
    }
};

}  // namespace uet::roce::test
