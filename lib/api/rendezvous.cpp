// Rendezvous pulls and deferred sends: the target side of both (the pull, the NO_MATCH deferral,
// the RTR that asks a deferred send again) and the initiator side's RTR.
#include "api/rendezvous.hpp"

#include "api/api_impl.hpp"
#include "api/responder_inline.hpp"

namespace uet::detail {

using wire::ses_opcode;
using wire::ses_return_code;

bool rendezvous::still_there(const endpoint_impl& ep, const deferred_send& d) noexcept {
    return ep.eng && ep.eng->peer_ip(d.peer) == d.ip;
}

bool rendezvous::register_send(endpoint_impl& ep, op& o, std::uint32_t index) {
    // The target pulls the bytes with reads of a region registered for the send's duration;
    // it grants remote reads only, so nothing writes through the pointer.
    o.rendezvous_key =
        ep.domain->regions.add(reinterpret_cast<std::uint8_t*>(const_cast<std::byte*>(o.src)),
                               o.len, ses::mr_remote_read, ep.attr.job_id);
    o.reads_served = 0;
    if (o.rendezvous_key == 0) return false;
    if (sends_.insert(o.rendezvous_key, index)) return true;
    ep.domain->regions.remove(o.rendezvous_key);
    o.rendezvous_key = 0;
    return false;
}

void rendezvous::read_served(endpoint_impl& ep, std::uint32_t index, const status& result) {
    if (index >= ep.ops.size()) return;
    op& o = ep.ops[index];
    if (!o.in_use || o.kind != op_kind::send || o.rendezvous_key == 0 || o.reads_served == 0)
        return;
    --o.reads_served;
    // Fails the send if it waits for its answer, and completes it if that was its last wait.
    if (!result.ok()) ep.requests.fail_peer(ep, o.engine_peer, failure_errc(result));
    // The last one lets a send that is over complete (advance_op finds it so again).
    if (o.in_use && o.reads_served == 0 && o.in_flight == 0) ep.advance_op(index);
}

bool rendezvous::release_send(endpoint_impl& ep, op& o) {
    if (sends_.erase(o.rendezvous_key)) ep.domain->regions.remove(o.rendezvous_key);
    return o.reads_served != 0;
}

void rendezvous::start_pull(endpoint_impl& ep, std::uint32_t index, received_message& m) {
    op& o = ep.ops[index];
    ++ep.counters.rendezvous;
    o.pulling = true;
    o.pull_key = m.ses->rendezvous->rd_memory_key;
    o.pull_offset = m.ses->rendezvous->rd_offset;
    o.origin_peer = m.from;
    o.origin_mode = m.mode;
    o.origin_message_id = m.message_id;
    o.origin_job = m.ses->job_id;
    o.origin_answer_token = m.answer_token;
    o.origin_request_pdc = m.request_pdc;
    o.next_offset = m.data.size();
    ep.eng->release(m.handle);
    ep.pump(index);
}

void rendezvous::end_pull(endpoint_impl& ep, op& o) {
    ses_fields origin_fields;
    origin_fields.job_id = o.origin_job;
    received_message origin;
    origin.from = o.origin_peer;
    origin.mode = o.origin_mode;
    origin.message_id = o.origin_message_id;
    origin.ses = &origin_fields;
    origin.answer_token = o.origin_answer_token;
    origin.request_pdc = o.origin_request_pdc;
    const auto rc = o.error == errc{} ? ses_return_code::ok : ses_return_code::undeliverable;
    ep.responses.respond(ep, origin, rc, {}, static_cast<std::uint32_t>(o.msg_len));
}

void rendezvous::defer(endpoint_impl& ep, received_message& m, bool tagged) {
    const deferred_send d{m.from,
                          ep.eng->peer_ip(m.from),
                          tagged,
                          tagged ? m.ses->memory_key : 0,
                          static_cast<std::uint32_t>(m.ses->buffer_offset >> 32),
                          m.ses->opcode == ses_opcode::send,
                          static_cast<std::uint32_t>(message_length(m))};
    if (deferred_sends_.push(d)) {
        ++ep.counters.deferred;
        ep.responses.respond(ep, m, ses_return_code::no_match);
    } else {
        ep.responses.respond(ep, m, ses_return_code::dropped);
    }
    ep.eng->release(m.handle);
}

bool rendezvous::match_deferred(endpoint_impl& ep, std::uint32_t index,
                                const ses::match_rule& rule) {
    auto d = take_deferred(ep, rule);
    if (!d) return false;
    start_rtr(ep, index, *d);
    return true;
}

namespace {

auto deferred_match(const endpoint_impl& ep, const ses::match_rule& rule) {
    return [&](const deferred_send& d) {
        return rule.matches(d.tagged, d.tag, d.peer) && rendezvous::still_there(ep, d);
    };
}

}  // namespace

const deferred_send* rendezvous::find_deferred(const endpoint_impl& ep,
                                               const ses::match_rule& rule) const noexcept {
    const std::uint32_t node = deferred_sends_.find_first(deferred_match(ep, rule));
    return node == ses::bounded_fifo<deferred_send>::none ? nullptr : &deferred_sends_.at(node);
}

std::optional<deferred_send> rendezvous::take_deferred(const endpoint_impl& ep,
                                                       const ses::match_rule& rule) noexcept {
    return deferred_sends_.take_first(deferred_match(ep, rule));
}

void rendezvous::start_rtr(endpoint_impl& ep, std::uint32_t index, const deferred_send& d) {
    op& o = ep.ops[index];
    o.reserved = true;
    o.reserved_peer = d.peer;
    o.reserved_token = d.initiator_token;
    ses_fields f = ep.request_fields(ses_opcode::deferrable_rtr);
    f.memory_key = (std::uint64_t{d.initiator_token} << 32) | ep.ops.token_of(index);
    ++ep.counters.ready_to_receive;
    if (ep.post_rtr(index, d.peer, f) != endpoint_impl::post_result::posted) {
        // post_recv kept a record free, so only the engine can refuse: wait for another send.
        o.reserved = false;
        if (!ep.queues.post(o.tagged, index)) {
            ep.fail(o, errc::again);
            ep.finish(index);
        }
    }
}

void rendezvous::on_rtr(endpoint_impl& ep, received_message& m) {
    const auto token = static_cast<std::uint32_t>(m.ses->memory_key >> 32);
    const auto target_token = static_cast<std::uint32_t>(m.ses->memory_key);
    std::uint32_t index = ep.ops.op_of_token(token);
    if (index == none && (token & unsignaled_token_bit) != 0)
        index = ep.unsignaled.op_of_token(ep, token, m.from);
    if (index == none || ep.ops[index].kind != op_kind::send ||
        ep.ops[index].engine_peer != m.from || target_token == 0) {
        ep.responses.respond(ep, m, ses_return_code::cancelled);
        ep.eng->release(m.handle);
        return;
    }
    op& o = ep.ops[index];
    o.target_token = target_token;
    o.rtr_seen = true;  // the NO_MATCH answer may still be on its way
    ep.responses.respond(ep, m, ses_return_code::ok);
    ep.eng->release(m.handle);
    if (o.deferred && o.in_flight == 0) ep.progress_op(index);
}

std::optional<deferred_send> rendezvous::take_for_multi(endpoint_impl& ep,
                                                        const ses::match_rule& rule) {
    const auto asked_for = [&](const deferred_send& d) {
        return d.eager && rule.matches(d.tagged, d.tag, d.peer) && still_there(ep, d);
    };
    return deferred_sends_.take_first(asked_for);
}

}  // namespace uet::detail
