#include "roce/qp.hpp"

#include <utility>

namespace uet::roce {

void drop_responses(qp& q, delivery_target& d) noexcept {
    responder_state& r = q.rsp;
    for (; r.job_head != r.job_tail; ++r.job_head) {
        response_job& j = r.jobs[r.job_head % r.jobs.size()];
        if (j.hold != no_hold) d.read_done(q, std::exchange(j.hold, no_hold));
    }
}

fsm_result modify_qp(qp& q, const qp_attr& wanted, std::uint32_t mask,
                     delivery_target& d) noexcept {
    const qp_state before = q.attr.state;
    const fsm_result r = modify(q.attr, wanted, mask);
    if (!r) return r;
    const qp_state now = q.attr.state;
    if (now == qp_state::rtr && before == qp_state::init) {
        drop_responses(q, d);
        q.rsp = responder_state{};
        q.rsp.epsn = q.attr.rq_psn;
        if (q.out_of_order()) {
            q.ooo.rxw.reset(q.ooo.rx_bits, q.attr.rq_psn);
            q.ooo.released = q.attr.rq_psn;
        }
    }
    if (now == qp_state::rts && before == qp_state::rtr) {
        requester_state& s = q.req;
        s = requester_state{};
        s.next_psn = s.una = s.resend_psn = s.resend_end = q.attr.sq_psn;
        s.retries_left = q.attr.retry_cnt;
        s.rnr_retries_left = q.attr.rnr_retry;
    }
    if (now == qp_state::reset) {
        q.sq.clear();
        q.req = requester_state{};
        drop_responses(q, d);
        q.rsp = responder_state{};
        q.error = wc_status::success;
    }
    return r;
}

}  // namespace uet::roce
