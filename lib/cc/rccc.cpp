#include "cc/rccc.hpp"

#include <algorithm>

namespace uet::cc {

rccc_params rccc_params::from_link(double gbps, std::uint64_t base_rtt_ns,
                                   std::uint32_t mtu) noexcept {
    rccc_params p;
    p.bytes_per_ns = gbps / 8.0;
    p.pace_fraction = 0.99;  // htsim main_uec: pull rate modifier 0.99
    p.mtu = mtu;
    p.credit_per_pull = 4 * mtu;  // htsim UecSink::_mtus_per_pull = 4 (UEC default)
    const double bdp = p.bytes_per_ns * double(base_rtt_ns);
    // A starting sender may send about one BDP before the first grant can reach it: the pipe
    // is full by the time the receiver's pacing takes over (htsim starts senders with credit).
    p.speculative_bytes = static_cast<std::uint64_t>(bdp);
    p.max_credit = static_cast<std::uint64_t>(1.5 * bdp);  // htsim: credit <= configured maxwnd
    return p;
}

// ---- sender ----

rccc_sender::rccc_sender(const rccc_params& params) noexcept
    : p_(&params), credit_(static_cast<std::int64_t>(params.speculative_bytes)) {}

// The first word from the receiver ends speculation: whatever speculative credit is left is
// dropped, from now on only grants count (htsim stopSpeculating).
void rccc_sender::stop_speculating() noexcept {
    if (!speculating_) return;
    speculating_ = false;
    credit_ = std::min<std::int64_t>(credit_, 0);
}

void rccc_sender::on_ack(std::uint32_t, std::uint64_t, bool, std::uint64_t) noexcept {
    stop_speculating();
}

void rccc_sender::on_nack(std::uint32_t, bool, std::uint64_t) noexcept {
    stop_speculating();
}

void rccc_sender::on_send(std::uint32_t bytes, std::uint64_t) noexcept {
    credit_ -= bytes;
}

// Credit, not the in-flight window, gates a credit sender: a packet leaves only if it is fully
// covered, so the bytes sent never exceed speculative credit plus the grants.
bool rccc_sender::may_send(std::uint64_t, std::uint32_t bytes) const noexcept {
    return credit_ >= static_cast<std::int64_t>(bytes);
}

void rccc_sender::on_credit(std::uint32_t credit_field, std::uint64_t) noexcept {
    stop_speculating();
    const std::int32_t ahead = credit::distance(credit_field, seen_);
    if (ahead <= 0) return;  // stale or duplicate: the cumulative counter already covers it
    seen_ = credit_field & credit::field_mask;
    credit_ += std::int64_t{ahead} * credit::quantum;
    credit_ = std::min(credit_, static_cast<std::int64_t>(p_->max_credit));
}

// Cumulative credit wanted: what we have heard granted plus what the backlog still needs beyond
// the credit in hand, capped at max_credit; while speculating, at least one MTU so the receiver
// learns about us (htsim computePullTarget).
std::uint32_t rccc_sender::credit_target(std::uint64_t backlog_bytes) const noexcept {
    const auto want = static_cast<std::int64_t>(std::min(backlog_bytes, p_->max_credit));
    std::int64_t need = want - credit_;
    if (speculating_ && backlog_bytes > 0) need = std::max<std::int64_t>(need, p_->mtu);
    if (need <= 0) return seen_;
    return credit::advance(seen_, credit::quanta_ceil(static_cast<std::uint64_t>(need)));
}

// ---- receiver ----

void rccc_receiver::on_credit_target(std::uint32_t target_field) noexcept {
    const std::uint32_t t = target_field & credit::field_mask;
    if (credit::distance(t, target_) > 0) target_ = t;
}

std::uint32_t rccc_receiver::demand_quanta() const noexcept {
    const std::int32_t d = credit::distance(target_, granted_);
    return d > 0 ? static_cast<std::uint32_t>(d) : 0;
}

// ---- pacer ----

rccc_pacer::rccc_pacer(const rccc_params& params) noexcept
    : p_(&params), ps_per_byte_(1000.0 / (params.bytes_per_ns * params.pace_fraction)) {}

std::uint64_t rccc_pacer::pull_time_ps(std::uint64_t bytes) const noexcept {
    return static_cast<std::uint64_t>(double(bytes) * ps_per_byte_ + 0.5);
}

void rccc_pacer::push_back(rccc_receiver& r) noexcept {
    r.next_ = nullptr;
    r.queued_ = true;
    if (tail_)
        tail_->next_ = &r;
    else
        head_ = &r;
    tail_ = &r;
}

rccc_receiver* rccc_pacer::pop_front() noexcept {
    rccc_receiver* r = head_;
    head_ = r->next_;
    if (!head_) tail_ = nullptr;
    r->next_ = nullptr;
    r->queued_ = false;
    return r;
}

void rccc_pacer::on_demand(rccc_receiver& r, std::uint64_t now) noexcept {
    if (r.queued_ || r.demand_quanta() == 0) return;
    // An idle pacer starts now; it does not bank the time it spent idle.
    if (!head_) next_ps_ = std::max(next_ps_, now * 1000);
    push_back(r);
}

void rccc_pacer::forget(rccc_receiver& r) noexcept {
    if (!r.queued_) return;
    rccc_receiver* prev = nullptr;
    for (rccc_receiver* it = head_; it; prev = it, it = it->next_) {
        if (it != &r) continue;
        (prev ? prev->next_ : head_) = it->next_;
        if (tail_ == it) tail_ = prev;
        break;
    }
    r.next_ = nullptr;
    r.queued_ = false;
}

std::uint64_t rccc_pacer::next_deadline() const noexcept {
    if (!head_) return idle;
    return (next_ps_ + 999) / 1000;
}

// One pull for the receiver at the head, round robin. The next pull is due one grant's time at
// the paced rate later; a poll that comes late keeps the schedule if it is less than one pull
// late (no drift from the engine's timer granularity) but never banks more than that, so the
// granted rate never exceeds pace_fraction x line rate.
std::optional<credit_grant> rccc_pacer::poll(std::uint64_t now) noexcept {
    const std::uint64_t now_ps = now * 1000;
    if (!head_ || now_ps < next_ps_) return std::nullopt;
    rccc_receiver* r = pop_front();
    const std::uint32_t per_pull = credit::quanta_ceil(p_->credit_per_pull);
    const std::uint32_t quanta = std::min(r->demand_quanta(), per_pull);
    r->granted_ = credit::advance(r->granted_, quanta);
    if (r->demand_quanta() > 0) push_back(*r);
    const std::uint64_t bytes = std::uint64_t{quanta} * credit::quantum;
    const std::uint64_t slack = pull_time_ps(p_->credit_per_pull);
    const std::uint64_t start = now_ps > next_ps_ + slack ? now_ps : next_ps_;
    next_ps_ = start + pull_time_ps(bytes);
    granted_bytes_ += bytes;
    return credit_grant{r, r->granted_, static_cast<std::uint32_t>(bytes)};
}

}  // namespace uet::cc
