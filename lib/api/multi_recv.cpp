// Multi-receive buffers: posting one, filling it from the messages held for a receive and the
// sends deferred for want of room, the messages that wait for room in the completion queue, and
// its release.
#include "api/multi_recv.hpp"

#include "api/api_impl.hpp"
#include "api/multi_recv_inline.hpp"
#include "api/responder_inline.hpp"

namespace uet::detail {

using wire::ses_opcode;

errc multi_recv::post(endpoint_impl& ep, std::uint32_t index, std::span<std::byte> buf,
                      std::uint32_t source, void* context) {
    op& o = ep.ops[index];
    o.kind = op_kind::recv;
    o.context = context;
    o.dst = buf.data();
    o.len = buf.size();
    o.rule = ses::match_rule{false, 0, 0, source};
    o.multi = true;
    o.flags = completion_flags::recv | completion_flags::multi_recv;  // its releasing entry's
    if (!ep.queues.post(false, index)) {
        ep.ops.release(index);
        ep.cq->unreserve();
        return errc::again;
    }
    ++count_;
    fill_from_held(ep, index);
    if (ep.ops[index].in_use && !ep.rdv.empty()) ask_deferred(ep, index);
    return {};
}

void multi_recv::wait_for_room(endpoint_impl& ep, received_message& m) {
    // Never full: the engine hands over at most max_rx_messages at once (each holds its buffer
    // until released), and this holds as many.
    if (!waiting_for_room_.push(m)) return ep.rdv.defer(ep, m, false);
    ++ep.counters.kept_for_queue_room;
    // Answered now, as a message held unexpected is: the answer does not wait for the reader.
    ep.responses.answer_ok(ep, m, static_cast<std::uint32_t>(m.data.size()));
}

bool multi_recv::place_waiting(endpoint_impl& ep) {
    bool any = false;
    while (ep.eng && !waiting_for_room_.empty() && ep.cq->has_spare_room()) {
        const std::uint32_t w = waiting_for_room_.first();
        received_message m = waiting_for_room_.at(w);
        const std::uint32_t node = ep.queues.find_first(
            false, [&](std::uint32_t i) { return ep.ops[i].rule.matches(false, 0, m.from); });
        if (node == recv_queues::none) {
            // Its buffer went and no receive is posted: it is held as any other, if it may be.
            if (!ep.queues.room_for(m.data.size(), ep.attr)) break;
            ep.queues.hold(m, true, false, 0);
            ++ep.counters.unexpected;
        } else if (const std::uint32_t recv = ep.queues.at(false, node); !ep.ops[recv].multi) {
            ep.queues.take_at(false, node);
            ep.deliver_held(recv, m, true);
        } else if (!place(ep, recv, node, m, true)) {
            continue;  // that buffer was released for want of room: the next may take it
        }
        waiting_for_room_.take_at(w);
        any = true;
    }
    return any;
}

void multi_recv::ask_deferred(endpoint_impl& ep, std::uint32_t index) {
    const ses::match_rule rule = ep.ops[index].rule;
    while (auto d = ep.rdv.take_for_multi(ep, rule)) {
        ses_fields f = ep.request_fields(ses_opcode::deferrable_rtr);
        f.memory_key = (std::uint64_t{d->initiator_token} << 32) | ep.ops.token_of(index);
        if (!ep.records.spare() ||
            ep.post_rtr(none, d->peer, f) != endpoint_impl::post_result::posted) {
            ep.rdv.put_back(*d);  // asked again by the next buffer posted
            return;
        }
        ++ep.counters.ready_to_receive;
    }
}

void multi_recv::release(endpoint_impl& ep, std::uint32_t index, std::uint32_t node) {
    ep.queues.take_at(false, node);
    --count_;
    op& o = ep.ops[index];
    if (o.msg_len == 0) o.dst = nullptr;  // no message of its own: an entry of length 0
    ep.finish(index);
}

void multi_recv::fill_from_held(endpoint_impl& ep, std::uint32_t index) {
    if (ep.queues.held_empty()) return;
    const std::uint32_t node =
        ep.queues.find_first(false, [&](std::uint32_t i) { return i == index; });
    const ses::match_rule rule = ep.ops[index].rule;
    while (ep.ops[index].in_use) {
        const std::uint32_t h = ep.queues.find_held([&](const held_message& held) {
            return held.msg.ses->opcode == ses_opcode::send &&
                   rule.matches(held.tagged, held.tag, held.msg.from);
        });
        if (h == recv_queues::none) return;
        held_message held = ep.queues.held_at(h);
        if (!place(ep, index, node, held.msg, held.answered)) return;  // it stays held
        ep.queues.take_held_at(h);
    }
}

}  // namespace uet::detail
