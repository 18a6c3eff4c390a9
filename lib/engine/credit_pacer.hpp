// The RCCC receiver's side of credit: one pull pacer for this engine's port, shared by every
// target PDC that wants credit, on the timer wheel; and, on the initiator, the CTRL CREDIT
// packets that carry the grants.
#pragma once

#include <cstdint>
#include <memory>

#include "cc/rccc.hpp"
#include "core/timer_wheel.hpp"
#include "engine/rx_context.hpp"
#include "pds/pdc.hpp"
#include "wire/uet_packet.hpp"

namespace uet {

class engine_impl;

class credit_pacer {
  public:
    explicit credit_pacer(const cc::rccc_params& params);

    // The sender wants credit up to `target` (cumulative): queued at the pacer.
    void on_credit_target(engine_impl& e, pds::pdc& p, std::uint32_t target, std::uint64_t now);
    void arm(timer_wheel& timers, std::uint64_t now);
    void on_timer(engine_impl& e, std::uint64_t now);
    // A target PDC freed: off the pacer's queue.
    void forget(pds::pdc& p) { pacer_->forget(p.credit_rx); }
    // A CTRL CREDIT for one of our initiator PDCs.
    void on_credit(engine_impl& e, const rx_context& rx, const wire::pds_ctrl& c);

  private:
    std::unique_ptr<cc::rccc_pacer> pacer_;
    timer_node timer_;
};

}  // namespace uet
