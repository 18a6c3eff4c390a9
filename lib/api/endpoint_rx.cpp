// The endpoint's target side and the answers to its own requests: received sends matched with
// their receives (or held, deferred, placed in multi-receive buffers), RTRs, and the completions
// and responses of our requests (requests.cpp). Every request for us is answered exactly once, by
// responder.cpp, which also serves RMA and atomics on our regions.
#include <algorithm>
#include <cstring>

#include "api/api_impl.hpp"
#include "api/multi_recv_inline.hpp"
#include "api/requests_inline.hpp"
#include "api/responder_inline.hpp"
#include "core/small_copy.hpp"

namespace uet::detail {

namespace {

using wire::ses_opcode;
using wire::ses_return_code;
constexpr std::uint32_t posted_none = recv_queues::none;

bool is_send(ses_opcode op) {
    switch (op) {
        case ses_opcode::send:
        case ses_opcode::tagged_send:
        case ses_opcode::datagram_send:
        case ses_opcode::deferrable_send:
        case ses_opcode::deferrable_tsend:
        case ses_opcode::rendezvous_send:
        case ses_opcode::rendezvous_tsend:
            return true;
        default:
            return false;
    }
}

bool is_tagged(ses_opcode op) {
    return op == ses_opcode::tagged_send || op == ses_opcode::deferrable_tsend ||
           op == ses_opcode::rendezvous_tsend;
}

}  // namespace

bool endpoint_impl::process() {
    return eng && process(domain->fabric->net->now());
}

bool endpoint_impl::process(std::uint64_t poll_now) {
    if (!eng) return false;
    now = poll_now;
    bool any = false;
    std::size_t n;
    while ((n = eng->poll_send_completions(completions)) > 0) {
        any = true;
        for (std::size_t i = 0; i < n && eng; ++i)
            requests.on_send_completion(*this, completions[i]);
    }
    if (ops.kept() != 0 && eng) unsignaled.count_ended(*this);
    // Messages that waited for room in the queue go first: they are older.
    if (multi_recvs.waiting()) any |= multi_recvs.place_waiting(*this);
    // Taken a batch at a time: one engine call per batch rather than per message.
    std::size_t got;
    while (eng && (got = eng->poll_received(received)) > 0) {
        any = true;
        for (std::size_t i = 0; i < got && eng; ++i)
            on_message(received[i]);
    }
    retry_stalled();
    if (eng) requests.due_scan(*this, now);
    return any;
}

std::uint64_t answer_timeout(const engine_config& c) noexcept {
    return std::max<std::uint64_t>(c.rto_max_ns, c.rto_ns) * (c.max_retransmits + 1) * 4;
}

void endpoint_impl::retry_stalled() {
    if (stalled.empty() || !records.spare()) return;
    // pump() may stall an operation again: it then goes back on the list.
    stalled_retry.swap(stalled);
    for (std::uint32_t index : stalled_retry)
        if (ops[index].in_use) pump(index);
    stalled_retry.clear();
}

// An unsignaled send whose end needs its operation after all (it failed, or its answer comes as a
// message): adopted now from what the engine kept (unless a response or an RTR adopted it
// first), then ended as any send's message.
// Here rather than in unsignaled.cpp: it ends as request_tracker::on_send_message_done, forced
// inline into process().
void unsignaled_sends::on_completion(endpoint_impl& ep, const send_completion& c) {
    const ses::tx_message& m = ep.eng->message(c.message);
    const std::uint64_t context = m.unsignaled ? op_context | adopt(ep, c.message) : m.context;
    ep.eng->release_unsignaled_message(c.message);
    ep.requests.on_send_message_done(ep, send_completion{context, c.result, c.answered});
}

// ---- requests for us ----

inline void endpoint_impl::on_message(received_message& m) {
    if (m.ses->response) return requests.on_response(*this, m);
    if (m.ses->job_id != attr.job_id) {
        ++counters.rejected_job;
        responses.respond(*this, m, ses_return_code::bad_job_id);
        eng->release(m.handle);
        return;
    }
    const ses_opcode op = m.ses->opcode;
    if (is_send(op)) return on_send_request(m);
    switch (op) {
        case ses_opcode::write:
            return responses.on_write(*this, m);
        case ses_opcode::read:
            return responses.on_read(*this, m);
        case ses_opcode::atomic:
        case ses_opcode::fetching_atomic:
            return responses.on_atomic(*this, m);
        case ses_opcode::deferrable_rtr:
            return rdv.on_rtr(*this, m);
        default:
            responses.respond(*this, m, ses_return_code::unsupported_op);
            eng->release(m.handle);
    }
}

inline void endpoint_impl::on_send_request(received_message& m) {
    const bool tagged = is_tagged(m.ses->opcode);
    const std::uint64_t tag = tagged ? m.ses->memory_key : 0;
    const auto target_token = static_cast<std::uint32_t>(m.ses->buffer_offset);
    if (target_token != 0) {
        // Sent again after our RTR: it goes to the receive the RTR promised it. One that names
        // no receive kept for it (a multi-receive buffer asked for it) matches as any message.
        const std::uint32_t index = ops.op_of_token(target_token);
        if (index != none && ops[index].reserved && ops[index].reserved_peer == m.from &&
            ops[index].reserved_token == m.ses->buffer_offset >> 32) {
            ops[index].reserved = false;
            return deliver(index, m, false);
        }
    }
    const bool eager = m.ses->opcode == ses_opcode::send;  // what a multi-receive buffer takes
    for (;;) {
        const std::uint32_t node = queues.find_first(tagged, [&](std::uint32_t i) {
            return ops[i].rule.matches(tagged, tag, m.from) && (eager || !ops[i].multi);
        });
        if (node == posted_none) break;
        const std::uint32_t recv = queues.at(tagged, node);
        if (!ops[recv].multi) [[likely]] {
            queues.take_at(tagged, node);
            return deliver(recv, m, false);
        }
        // Each message of a multi-receive buffer needs an entry beyond the reserved ones; while
        // the queue has none (the application has at least its capacity to read), or older
        // messages wait for one, it waits too.
        if (!cq->has_spare_room() || multi_recvs.waiting())
            return multi_recvs.wait_for_room(*this, m);
        if (multi_recvs.place(*this, recv, node, m, false)) return;
        // The buffer was released for want of room: the next receive may take the message.
    }
    const bool deferrable = m.ses->opcode == ses_opcode::deferrable_send ||
                            m.ses->opcode == ses_opcode::deferrable_tsend;
    const bool room = queues.room_for(m.data.size(), attr);
    if (!deferrable && room) {
        // A rendezvous is answered once its data has been pulled.
        const bool answer = !m.ses->rendezvous.has_value();
        if (answer)
            responses.respond(*this, m, ses_return_code::ok, {},
                              static_cast<std::uint32_t>(m.data.size()));
        queues.hold(m, answer, tagged, tag);
        ++counters.unexpected;
        return;
    }
    if (m.mode == delivery_mode::uud) {
        eng->release(m.handle);  // a datagram with nowhere to go
        return;
    }
    rdv.defer(*this, m, tagged);
}

std::size_t endpoint_impl::take_single_packet_messages(
    std::uint32_t from, const ses_fields& common, std::uint32_t length,
    std::span<const wire::next_request_fields> own) noexcept {
    endpoint_impl& ep = *this;
    const bool tagged = common.opcode == ses_opcode::tagged_send;
    if ((common.opcode != ses_opcode::send && !tagged) || common.job_id != ep.attr.job_id ||
        ep.multi_recvs.waiting())
        return 0;
    const peer_addr peer = ep.peers.peer_of(ep, from);
    std::size_t k = 0;
    for (; k < own.size(); ++k) {
        const wire::next_request_fields& x = own[k];
        // A resend after an RTR (a target token) goes to its reserved receive: on_send_request.
        if (static_cast<std::uint32_t>(x.buffer_offset) != 0) break;
        const std::uint64_t tag = tagged ? x.memory_key : 0;
        const std::uint32_t node = ep.queues.find_first(
            tagged, [&](std::uint32_t i) { return ep.ops[i].rule.matches(tagged, tag, from); });
        if (node == posted_none) break;
        const std::uint32_t index = ep.queues.at(tagged, node);
        op& o = ep.ops[index];
        if (o.multi || length > o.len) break;
        ep.queues.take_at(tagged, node);
        o.msg_len = length;
        o.msg_from = peer;
        o.msg_tag = tag;
        copy_payload(o.dst, x.payload, length);
        ep.finish(index);
    }
    return k;
}

inline void endpoint_impl::deliver(std::uint32_t index, received_message& m, bool answered) {
    op& o = ops[index];
    const bool tagged = is_tagged(m.ses->opcode);
    const std::size_t total = message_length(m);
    o.msg_len = total;
    o.msg_from = peers.peer_of(*this, m.from);
    o.msg_tag = tagged ? m.ses->memory_key : 0;
    if (total > o.len) {
        // Nothing is placed: the receive fails with the overflow, the sender with TOO_LONG.
        fail(o, errc::truncated);
        o.olen = total - o.len;
        if (!answered) responses.respond(*this, m, ses_return_code::too_long);
        eng->release(m.handle);
        return finish(index);
    }
    copy_payload(o.dst, m.data.data(), m.data.size());
    if (m.ses->rendezvous && total > m.data.size()) return rdv.start_pull(*this, index, m);
    if (answered)
        eng->release(m.handle);
    else
        responses.answer_ok_and_release(*this, m, static_cast<std::uint32_t>(total));
    finish(index);
}

// A message held as unexpected, for the receive just posted (endpoint.cpp), and multi_recv's.
void endpoint_impl::deliver_held(std::uint32_t index, received_message& m, bool answered) {
    deliver(index, m, answered);
}

}  // namespace uet::detail
