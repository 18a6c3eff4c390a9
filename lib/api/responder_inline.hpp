// The answers of nearly every received send, forced inline into their deliveries: for the
// translation units that deliver (endpoint_rx.cpp) and responder.cpp.
#pragma once

#include "api/api_impl.hpp"

namespace uet::detail {

// Nearly every answer: OK, no data, in the ACK (no response fields to build for it).
inline void responder::answer_ok(endpoint_impl& ep, const received_message& m,
                                 std::uint32_t modified) {
    if (m.mode == delivery_mode::uud || ep.eng->answer_ok_in_ack(m)) return;  // datagrams: none
    respond_as_message(ep, m, wire::ses_return_code::ok, {}, modified, none);
}

inline void responder::answer_ok_and_release(endpoint_impl& ep, const received_message& m,
                                             std::uint32_t modified) {
    if (m.mode != delivery_mode::uud && ep.eng->release_answering_ok(m)) return;
    answer_ok(ep, m, modified);  // as a message (its fields are read before the release)
    ep.eng->release(m.handle);
}

}  // namespace uet::detail
