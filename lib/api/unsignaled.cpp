// Unsignaled sends whose end needs their operation: adopted from what the engine kept.
#include <algorithm>

#include "api/api_impl.hpp"

namespace uet::detail {

void unsignaled_sends::configure(const endpoint_impl& ep, const endpoint_attr& at,
                                 const engine_config& ec) {
    // RUD/ROD with answers in ACKs (0: none). post_send() has refused what exceeds
    // max_message_size before it asks post().
    if (ec.answers_in_acks && (ep.mode == delivery_mode::rud || ep.mode == delivery_mode::rod))
        limit_ = std::min(
            {at.deferrable_threshold, at.rendezvous_threshold, std::size_t{chunk_bytes} + 1});
    common_ = {ep.request_fields(wire::ses_opcode::send),
               ep.request_fields(wire::ses_opcode::tagged_send)};
}

std::uint32_t unsignaled_sends::adopt(endpoint_impl& ep, std::uint32_t message) {
    const ses::tx_message& m = ep.eng->message(message);
    ep.ops.unkeep(1);  // the slot kept for it is the one taken
    ++ep.counters.unsignaled_sends_adopted;
    const std::uint32_t index = ep.ops.allocate();
    op& o = ep.ops[index];
    o.kind = op_kind::send;
    o.context = reinterpret_cast<void*>(static_cast<std::uintptr_t>(m.context));
    o.engine_peer = m.peer;
    o.peer = ep.peers.peer_of(ep, m.peer);
    o.silent = true;
    o.opcode = m.fields.opcode;
    o.tagged = m.fields.opcode == wire::ses_opcode::tagged_send;
    o.tag = o.tagged ? m.fields.memory_key : 0;
    o.flags = o.tagged ? completion_flags::send | completion_flags::tagged : completion_flags::send;
    o.src = reinterpret_cast<const std::byte*>(m.data);
    o.len = m.length;
    o.message_id = m.message_id;
    o.unsignaled_token = static_cast<std::uint32_t>(m.fields.buffer_offset >> 32);
    // Its message is in flight (or its end is being told), holding the record promised for it
    // and the CQ entry reserved, as post_send_message's would.
    o.in_flight = 1;
    o.issued = true;
    return index;
}

std::uint32_t unsignaled_sends::adopt_in_flight(endpoint_impl& ep, std::uint32_t message) {
    const std::uint32_t index = adopt(ep, message);
    ep.eng->make_loud(message, op_context | index);
    return index;
}

void unsignaled_sends::adopt_all(endpoint_impl& ep) {
    count_ended(ep);
    for (std::uint32_t q = ep.eng->next_unsignaled_message(0); q != none;
         q = ep.eng->next_unsignaled_message(q + 1))
        adopt(ep, q);
}

void unsignaled_sends::count_ended(endpoint_impl& ep) {
    const std::uint64_t n = ep.eng->take_unsignaled_ended();
    ep.ops.unkeep(n);
    ep.records.unpromise(n);
    ep.cq->unreserve(n);
    ep.silent_completions += n;
}

// The send an unsignaled restart token names (a target's RTR for a deferred unsignaled send): its
// operation, adopted now if the engine still has the send unsignaled. Rare: a scan of both.
std::uint32_t unsignaled_sends::op_of_token(endpoint_impl& ep, std::uint32_t token,
                                            std::uint32_t engine_peer) {
    if (const std::uint32_t index = ep.ops.find_send_by_unsignaled_token(token, engine_peer);
        index != none)
        return index;
    for (std::uint32_t q = ep.eng->next_unsignaled_message(0); q != none;
         q = ep.eng->next_unsignaled_message(q + 1)) {
        const ses::tx_message& m = ep.eng->message(q);
        if (m.peer == engine_peer &&
            static_cast<std::uint32_t>(m.fields.buffer_offset >> 32) == token)
            return adopt_in_flight(ep, q);
    }
    return none;
}

}  // namespace uet::detail
