// Answers in ACKs. UET answers each RUD/ROD request with a SES response; most answers are
// RC_OK without data, and sending each as a message of its own costs a frame each way plus its
// ACK. With engine_config::answers_in_acks the target instead lets its PDS ACK say it: every ACK
// carries a RESPONSE header (RC_OK) whose modified_length counts the requests of that PDC that
// were, or will be, answered by a response message of their own (an error, data, or an answer
// the caller gave only after the ACK left). The initiator takes a fully acknowledged request as
// answered OK once it has received as many response messages for that PDC's requests as the
// ACK announced; until then the request waits, acknowledged, in its PDC's undecided list.
//
// Why this is exact: an ACK is built only after every request delivered on its PDC has been
// either answered OK (no message) or counted, so a request the ACK covers that needs a message
// has its ordinal within the ACK's count. The initiator counts a response message only once its
// request is fully acknowledged: every message it counts then has an ordinal within the largest
// count announced, so when the two are equal every announced message has arrived, and an
// acknowledged request without one was answered OK. (A response message may overtake the ACK
// that announces it, and messages counted after an ACK may arrive before it: counting those at
// once would let the count catch up while an announced message is still on its way.)
#include <algorithm>

#include "engine/answer_tracker_inline.hpp"
#include "engine/engine_impl.hpp"

namespace uet {

namespace {

// Serial-number order (RFC 1982) on 32-bit counts.
bool at_least(std::uint32_t a, std::uint32_t b) {
    return static_cast<std::int32_t>(a - b) >= 0;
}

// Every response message the ACKs of p announced has been counted.
bool answers_settled(const pds::pdc& p) {
    return at_least(p.answers_received, p.answers_announced);
}

std::uint64_t wait_ns(const engine_config& cfg, const pds::pdc_params& params) {
    return cfg.answer_wait_ns != 0 ? cfg.answer_wait_ns
                                   : params.rto_max_ns * (std::uint64_t{cfg.max_retransmits} + 1);
}

}  // namespace

answer_tracker::answer_tracker(const engine_config& cfg, const pds::pdc_params& params)
    : answers_in_acks_(cfg.answers_in_acks),
      max_pending_messages_(cfg.max_pending_messages),
      mpr_(cfg.mpr),
      answer_wait_ns_(wait_ns(cfg, params)),
      // Each entry holds at least one answer still owed; owed_room() stops requests well before
      // the map is full, with room left for an announce on every PDC.
      announced_(cfg.answers_in_acks ? std::size_t{cfg.max_pending_messages} + cfg.max_pdcs : 0),
      held_(cfg.max_pdcs) {}

// ---- target ----

std::uint32_t answer_tracker::next_stamp() noexcept {
    if (++owed_stamp_ == 0) owed_stamp_ = 1;  // 0 names no PDC's requests
    return owed_stamp_;
}

inline pds::pdc* answer_tracker::owed_on(std::uint64_t token, pdc_table& pdcs) noexcept {
    const auto index = static_cast<std::uint32_t>(token);
    const auto stamp = static_cast<std::uint32_t>(token >> 32);
    if (stamp == 0 || index >= pdcs.size()) return nullptr;
    pds::pdc& p = pdcs[index];
    if (p.owed_stamp != stamp || p.answers_owed == 0) return nullptr;
    return &p;
}

void answer_tracker::post_announced(std::uint64_t token) {
    const auto stamp = static_cast<std::uint32_t>(token >> 32);
    if (stamp == 0) return;
    const auto left = announced_.find(stamp);
    if (!left) return;  // the PDC went before its ACK announced it: nobody counts it
    --announced_unposted_;
    if (*left > 1)
        announced_.insert(stamp, *left - 1);
    else
        announced_.erase(stamp);
}

void answer_tracker::announce(pds::pdc& p) {
    if (p.answers_owed == 0) return;
    // Rare (the API answers before its next transmit()): the requests owed now will be answered
    // by messages, which their stamp, noted here, tells post_response.
    if (announced_.insert(p.owed_stamp, p.answers_owed)) announced_unposted_ += p.answers_owed;
    p.answers_as_messages += p.answers_owed;
    p.answers_owed = 0;
    p.owed_stamp = next_stamp();
}

void answer_tracker::forget(pds::pdc& p) {
    p.answers_owed = 0;
    p.owed_stamp = 0;
}

wire::ses_response answer_tracker::ack_header(const pds::pdc& p) const {
    wire::ses_response r;
    r.opcode = wire::ses_response_opcode::response;
    r.return_code = wire::ses_return_code::ok;
    r.modified_length = p.answers_as_messages;
    return r;
}

status answer_tracker::post_response(engine_impl& e, const received_message& request,
                                     const ses_fields& ses, std::span<const std::uint8_t> data,
                                     std::uint64_t context) {
    if (ses.return_code == wire::ses_return_code::ok && data.empty() &&
        answer_ok_in_ack(e, request))
        return {};
    // A message. Answers owed now are counted in the next ACK; an announced one takes the pool
    // room kept for it; any other is outside the count (the feature is off, the answer always
    // is a message, or its PDC is gone).
    pds::pdc* counted_on = owed_on(request.answer_token, e.pdcs_);
    if (counted_on)
        --counted_on->answers_owed;
    else
        post_announced(request.answer_token);
    pds::pdc* origin = ses.return_code == wire::ses_return_code::ok
                           ? nullptr
                           : target_of_origin(request.request_pdc, e.pdcs_);
    const status st =
        origin && !origin->validated
            ? hold(e, *origin, request.from, request.mode, ses, data, context)
            : send_queue::post_message(e, request.from, request.mode, ses, data, context, nullptr);
    if (st.ok()) {
        ++e.core_.counters.answers_as_messages;
        if (counted_on) ++counted_on->answers_as_messages;
    }
    return st;
}

// ---- held answers ----

pds::pdc* answer_tracker::target_of_origin(std::uint32_t origin, pdc_table& pdcs) noexcept {
    const std::uint32_t index = (origin & 0xffff) - 1;
    if (origin == 0 || index >= pdcs.size()) return nullptr;
    pds::pdc& p = pdcs[index];
    if (p.state == pds::pdc_state::free || p.role != pds::pdc_role::target ||
        p.local_id != origin >> 16)
        return nullptr;
    return &p;
}

status answer_tracker::hold(engine_impl& e, pds::pdc& origin, peer_id to, delivery_mode mode,
                            const ses_fields& ses, std::span<const std::uint8_t> data,
                            std::uint64_t context) {
    held_answers& held = held_[origin.index];
    // A real initiator sends at most its window (mpr packets) before our ACK lets it drop SYN,
    // so more requests than that on an unvalidated PDC are forged. And answers held in all
    // stop at a quarter of the pool, which only a flood of forged requests reaches. Beyond
    // either, the answer is not kept: counted as if its PDC had gone unvalidated.
    if (held.count >= mpr_ || held_answers_ >= max_pending_messages_ / 4) {
        e.core_.count_drop(drop_reason::unvalidated_reply);
        return {};
    }
    std::uint32_t m = ses::no_index;
    if (const status st = e.admit_message(to, mode, ses, data, context, m); !st) return st;
    held.queue.push(e.msgs_.pool(), m);
    ++held.count;
    ++held_answers_;
    return {};
}

void answer_tracker::drop_held(engine_impl& e, pds::pdc& p) {
    held_answers& held = held_[p.index];
    while (!held.queue.empty()) {
        e.core_.count_drop(drop_reason::unvalidated_reply);
        e.complete_message(held.queue.pop(e.msgs_.pool()), status{status_code::peer_unreachable});
    }
    held_answers_ -= held.count;
    held.count = 0;
}

// An OK answer without data owed on a PDC whose ACK has not announced it goes in that ACK.
bool answer_tracker::answer_ok_in_ack(engine_impl& e, const received_message& request) {
    pds::pdc* p = owed_on(request.answer_token, e.pdcs_);
    if (p == nullptr) return false;
    --p->answers_owed;
    ++e.core_.counters.answers_in_acks;
    return true;
}

// ---- initiator ----

void answer_tracker::count_answer_message(pds::pdc& p, std::uint64_t now) {
    ++p.answers_received;
    p.last_answer_ns = now;
}

// The wait restarts while announced messages keep arriving.
std::uint64_t answer_tracker::undecided_deadline(const message_pool& msgs,
                                                 const pds::pdc& p) const noexcept {
    return std::max(msgs[p.undecided_head].undecided_since, p.last_answer_ns) + answer_wait_ns();
}

void answer_tracker::on_ack_header(pds::pdc& p, const wire::uet_packet& pkt) {
    ack_has_answers_ = false;
    if (!pkt.ses) return;
    const auto* r = std::get_if<wire::ses_response>(&*pkt.ses);
    if (!r || r->opcode != wire::ses_response_opcode::response ||
        r->return_code != wire::ses_return_code::ok)
        return;
    ack_has_answers_ = true;
    // ACKs may arrive out of order: the count only grows.
    if (at_least(r->modified_length, p.answers_announced)) p.answers_announced = r->modified_length;
}

inline void answer_tracker::on_request_acked(engine_impl& e, pds::pdc& p, std::uint32_t index) {
    ses::tx_message& m = e.msgs_[index];
    if (m.fields.response || ses::answer_needs_message(m.fields.opcode))
        return e.complete_message(index, status{});  // its answer is a message, not counted
    if (m.answered_by_message) {
        count_answer_message(p, e.core_.now);
        return e.complete_message(index, status{});
    }
    if (!ack_has_answers_) return e.end_message(index, status{}, false);
    if (answers_settled(p)) return e.end_message(index, status{}, true);
    m.undecided = true;
    m.undecided_since = e.core_.now;
    m.next_undecided = none;
    if (p.undecided_tail == none)
        p.undecided_head = index;
    else
        e.msgs_[p.undecided_tail].next_undecided = index;
    p.undecided_tail = index;
}

// An ACK covered more packets of these messages: each ends once all of its are acknowledged.
// An unsignaled request the ACK answers (nearly every one of a stream of small sends, ends_counted)
// ends here, its counters added once for the list: on_request_acked()'s answer, without its
// cases (~20 instructions a message less). Whether the ACK's answers settle the PDC's holds for the
// list until on_request_acked() counts an answer that came as a message.
void answer_tracker::on_data_acked(engine_impl& e, pds::pdc& p,
                                   std::span<const pds::acked_message> runs) noexcept {
    bool settled = ack_has_answers_ && answers_settled(p);
    std::uint64_t answered = 0;
    for (const pds::acked_message& r : runs) {
        ses::tx_message& m = e.msgs_[r.message];
        if (!m.in_use) continue;
        m.packets_done += r.packets;
        if (m.packets_done < m.packets_total) continue;
        if (settled && m.ends_counted) {
            e.release_message(r.message);
            ++answered;
            continue;
        }
        on_request_acked(e, p, r.message);
        settled = ack_has_answers_ && answers_settled(p);
    }
    e.msgs_.add_unsignaled_ended(answered);
    e.core_.counters.messages_completed += answered;
    e.core_.counters.answered_by_ack += answered;
}

void ack_listener::on_data_acked(pds::pdc& p, std::span<const pds::acked_message> runs) noexcept {
    e.answers_.on_data_acked(e, p, runs);
}

void answer_tracker::unlink_undecided(message_pool& msgs, pds::pdc& p, std::uint32_t index) {
    std::uint32_t prev = none;
    for (std::uint32_t i = p.undecided_head; i != none; prev = i, i = msgs[i].next_undecided) {
        if (i != index) continue;
        const std::uint32_t next = msgs[i].next_undecided;
        if (prev == none)
            p.undecided_head = next;
        else
            msgs[prev].next_undecided = next;
        if (p.undecided_tail == i) p.undecided_tail = prev;
        msgs[i].undecided = false;
        return;
    }
}

void answer_tracker::on_answer_message(engine_impl& e, std::uint32_t peer, std::uint8_t mode,
                                       std::uint16_t id) {
    const auto found = e.msgs_.find_request(ses::message_key{peer, mode, id});
    if (!found) return;
    const std::uint32_t index = *found;
    ses::tx_message& m = e.msgs_[index];
    if (!m.in_use || m.answered_by_message || ses::answer_needs_message(m.fields.opcode)) return;
    m.answered_by_message = true;
    m.ends_counted = false;
    // Counted only once the request is acknowledged (on_request_acked counts it then).
    if (!m.undecided || m.owner == none) return;
    pds::pdc& p = e.pdcs_[m.owner];
    unlink_undecided(e.msgs_, p, index);
    count_answer_message(p, e.core_.now);
    e.complete_message(index, status{});
    settle(e, p, e.core_.now);
}

void answer_tracker::settle(engine_impl& e, pds::pdc& p, std::uint64_t now) {
    while (p.undecided_head != none) {
        const bool settled = answers_settled(p);
        if (!settled && now < undecided_deadline(e.msgs_, p)) return;
        const std::uint32_t index = p.undecided_head;
        ses::tx_message& m = e.msgs_[index];
        p.undecided_head = m.next_undecided;
        if (p.undecided_head == none) p.undecided_tail = none;
        m.undecided = false;
        // Waited too long for the announced messages: the caller waits for this request's
        // own response message (and gives up on it in its own time).
        if (!settled) ++e.core_.counters.answer_waits_expired;
        e.complete_message(index, status{}, settled);
    }
}

// ---- the engine's calls (flattened: engine.cpp's poll_received says why) ----

[[gnu::flatten]] bool engine::answer_ok_in_ack(const received_message& request) {
    return impl_->answers_.answer_ok_in_ack(*impl_, request);
}
[[gnu::flatten]] bool engine::release_answering_ok(const received_message& request) {
    if (!impl_->answers_.answer_ok_in_ack(*impl_, request)) return false;
    impl_->release(request.handle);
    return true;
}

}  // namespace uet
