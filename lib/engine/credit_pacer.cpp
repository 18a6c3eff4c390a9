// RCCC credit: the receiver's pull pacer and the grants it sends, the sender's CTRL CREDIT.
#include "engine/credit_pacer.hpp"

#include <algorithm>

#include "engine/engine_impl.hpp"

namespace uet {

credit_pacer::credit_pacer(const cc::rccc_params& params)
    : pacer_(std::make_unique<cc::rccc_pacer>(params)), timer_(make_cookie(timer_kind::pacer, 0)) {}

// RCCC receiver: the sender wants credit up to `target` (cumulative): queue it at the pacer.
void credit_pacer::on_credit_target(engine_impl& e, pds::pdc& p, std::uint32_t target,
                                    std::uint64_t now) {
    p.credit_mode = true;
    p.credit_rx.on_credit_target(target);
    pacer_->on_demand(p.credit_rx, now);
    arm(e.core_.timers, e.core_.now);
}

void credit_pacer::arm(timer_wheel& timers, std::uint64_t now) {
    const std::uint64_t due = pacer_->next_deadline();
    if (due == cc::rccc_pacer::idle) return;
    if (!timer_.scheduled() || timer_.deadline() > due) timers.schedule(timer_, std::max(due, now));
}

// Grants are due: one pull each, round robin over the PDCs that want credit, sent in CTRL
// CREDIT packets (ACKs carry the same cumulative value when they go out anyway).
void credit_pacer::on_timer(engine_impl& e, std::uint64_t now) {
    while (auto grant = pacer_->poll(now)) {
        pds::pdc& p = e.pdcs_[grant->receiver->cookie()];
        if (p.state == pds::pdc_state::free || p.role != pds::pdc_role::target) continue;
        e.acks_.send_credit(e, p, grant->credit_field);
    }
    arm(e.core_.timers, e.core_.now);
}

void credit_pacer::on_credit(engine_impl& e, const rx_context& rx, const wire::pds_ctrl& c) {
    if (rx.peer == transient_peer) return e.core_.count_drop(drop_reason::unknown_source);
    pds::pdc* p = e.pdcs_.by_local_id(c.dpdcid);
    if (!p || p->role != pds::pdc_role::initiator || p->peer != rx.peer ||
        (p->state != pds::pdc_state::syn_sent && c.spdcid != p->remote_id))
        return e.core_.count_drop(drop_reason::unknown_pdc);
    ++p->counters.rx_packets;
    p->counters.rx_bytes += rx.frame_bytes;
    p->cc->on_credit(c.payload & cc::credit::field_mask, rx.now);
    e.core_.tx_ready = true;
}

}  // namespace uet
