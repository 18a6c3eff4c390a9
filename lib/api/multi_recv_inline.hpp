// A message's placement in a multi-receive buffer, forced inline where messages are matched
// (endpoint_rx.cpp) and in multi_recv.cpp.
#pragma once

#include "api/api_impl.hpp"
#include "api/responder_inline.hpp"
#include "core/small_copy.hpp"

namespace uet::detail {

inline bool multi_recv::place(endpoint_impl& ep, std::uint32_t index, std::uint32_t node,
                              received_message& m, bool answered) {
    op& o = ep.ops[index];
    const std::size_t len = m.data.size();
    if (len > o.len - o.next_offset) {
        if (o.next_offset != 0) {
            release(ep, index, node);  // an entry of length 0
            return false;
        }
        ep.queues.take_at(false, node);
        --count_;
        ep.deliver_held(index, m, answered);  // too long for the whole buffer: fails it, truncated
        return true;
    }
    std::byte* at = o.dst + o.next_offset;
    copy_payload(at, m.data.data(), len);
    o.next_offset += len;
    const peer_addr from = ep.peers.peer_of(ep, m.from);
    if (answered)
        ep.eng->release(m.handle);
    else
        ep.responses.answer_ok_and_release(ep, m, static_cast<std::uint32_t>(len));
    if (o.len - o.next_offset >= ep.attr.min_multi_recv) {
        completion& c = ep.cq->push_spare();  // process() saw room for it
        c = completion{.context = o.context,
                       .flags = completion_flags::recv,
                       .len = len,
                       .buf = at,
                       .data = 0,
                       .tag = 0,
                       .from = from,
                       .error = no_error,
                       .olen = 0,
                       .prov_errno = 0,
                       .detail = {}};
        return true;
    }
    // Too little left for another message: this one's entry releases the buffer.
    o.msg_len = len;
    o.msg_from = from;
    o.dst = at;
    release(ep, index, node);
    return true;
}

}  // namespace uet::detail
