// One RC queue pair: its verbs attributes, its send queue, and the requester's sequence state.
// Plain data that the requester, completer and responder (free functions over `qp&`) share;
// time is passed in on every call, and nothing here touches a frame.
#pragma once

#include <array>
#include <cstdint>

#include "core/psn.hpp"
#include "roce/counters.hpp"
#include "roce/delivery.hpp"
#include "roce/ooo.hpp"
#include "roce/qp_fsm.hpp"
#include "roce/send_queue.hpp"
#include "roce/verbs.hpp"

namespace uet::roce {

// Sizes fixed when the QP is created (ibv_qp_cap's role).
struct qp_limits {
    std::uint32_t sq_depth = 256;          // work requests posted and not yet completed
    std::uint32_t max_outstanding = 1024;  // PSNs sent and not yet acknowledged
    std::uint32_t ack_req_every = 16;      // AckReq on every Nth packet besides message ends
    // Both ends agree on the mode when they connect (ooo.hpp).
    retransmit_mode mode = retransmit_mode::go_back_n;
    std::uint64_t reorder_window_ns = 20'000;  // a NAK for a PSN sent more recently is ignored
    std::uint32_t ooo_nak_threshold = 8;       // a hole is NAKed this many PSNs below the highest
    std::uint64_t nak_repeat_ns = 50'000;      // and again at most this often
};

struct requester_state {
    psn_t next_psn = 0;  // the PSN of the next new packet
    psn_t una = 0;       // the oldest PSN not yet acknowledged
    // [resend_psn, resend_end): PSNs to send again, in order, before anything new (go-back-N).
    psn_t resend_psn = 0, resend_end = 0;
    std::uint32_t rd_atomic_in_flight = 0;  // READs and atomics sent and not acknowledged
    std::uint32_t since_ack_req = 0;        // packets since the last AckReq
    std::uint64_t retry_deadline = 0;       // local ACK timeout; 0 when not running
    std::uint8_t retries_left = 0;          // timeouts left before retry_exc_err
    std::uint8_t rnr_retries_left = 0;      // RNR NAKs left before rnr_retry_exc_err
    std::uint64_t rnr_until = 0;            // nonzero: sending waits after an RNR NAK

    bool resending() const noexcept { return resend_psn != resend_end; }
};

// A READ being answered, or an atomic's answer: responses go out in PSN order.
struct response_job {
    psn_t first_psn = 0;
    std::uint32_t npkts = 1;
    std::uint32_t sent = 0;  // response packets sent
    const std::uint8_t* source = nullptr;
    std::uint32_t length = 0;
    std::uint32_t hold = no_hold;  // the target's hold on source's region (read_source)
    bool atomic = false;
    std::uint64_t original = 0;  // an atomic's result
    bool repeat = false;         // answers a duplicate request
};

// An atomic's result kept by PSN, so that a duplicate is answered again, never executed twice.
struct atomic_memo {
    psn_t psn = 0;
    std::uint64_t original = 0;
    bool valid = false;
};

struct responder_state {
    psn_t epsn = 0;         // the next PSN expected
    std::uint32_t msn = 0;  // messages completed (24 bits on the wire)
    bool nak_sent = false;  // a sequence or RNR NAK for epsn is out: later packets drop
    enum class open_message : std::uint8_t { none, send, write };
    open_message open = open_message::none;
    recv_slot recv;                // the open SEND's receive
    std::uint32_t received = 0;    // bytes of the open SEND so far
    std::uint32_t write_rkey = 0;  // the open WRITE's region
    std::uint64_t write_va = 0;    // and where its next byte goes
    std::uint32_t write_left = 0;
    std::uint32_t write_length = 0;  // the open WRITE's DMA length (for remote_data)
    // The acknowledgement to send: cumulative, so a later one replaces an earlier one.
    bool ack_due = false;
    psn_t ack_psn = 0;
    std::uint8_t ack_syndrome = 0;
    std::array<response_job, max_rd_atomic_limit> jobs;
    std::uint32_t job_head = 0, job_tail = 0;
    std::array<atomic_memo, max_rd_atomic_limit> memo;
    std::uint32_t memo_next = 0;

    std::uint32_t jobs_queued() const noexcept { return job_tail - job_head; }
};

struct qp {
    explicit qp(qpn_t number, const qp_limits& l = {}) : qpn(number), limits(l), sq(l.sq_depth) {
        if (out_of_order()) ooo.resize(l.max_outstanding);
    }

    qpn_t qpn;
    std::uint64_t context = 0;  // the layer above's name for this QP
    qp_limits limits;
    qp_attr attr;
    send_queue sq;
    requester_state req;
    responder_state rsp;
    qp_counters counters;
    wc_status error = wc_status::success;  // why the QP entered ERR
    ooo_state ooo;                         // sized in out-of-order mode only

    std::uint32_t mtu() const noexcept { return static_cast<std::uint32_t>(attr.mtu); }
    bool out_of_order() const noexcept { return limits.mode == retransmit_mode::out_of_order; }
};

// ibv_modify_qp: the state machine's checks, then what each transition starts. Entering RTR
// starts the responder at rq_psn, entering RTS the requester at sq_psn with fresh retry counts;
// RESET forgets every work request, and drops the READ responses queued (their holds go back
// to `d`, drop_responses).
fsm_result modify_qp(qp& q, const qp_attr& wanted, std::uint32_t mask, delivery_target& d) noexcept;

// Drops the READ responses and atomic answers queued, giving each READ's hold back to `d`
// (delivery_target::read_done): the QP is reset or destroyed.
void drop_responses(qp& q, delivery_target& d) noexcept;

}  // namespace uet::roce
