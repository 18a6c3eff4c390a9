// answer_tracker's bodies forced inline where the receive path calls them, once per message.
// Only the translation units that call them include this header.
#pragma once

#include "engine/answer_tracker.hpp"
#include "engine/engine_impl.hpp"

namespace uet {

// The last packet of a RUD/ROD message is in: a response answers one of ours; a request is owed
// an answer (in an ACK, when it needs no message).
inline void answer_tracker::on_message_placed(engine_impl& e, std::uint32_t peer,
                                              delivery_mode mode, const ses::rx_segment& seg,
                                              std::uint32_t slot, pds::pdc* target) {
    if (seg.fields.response)
        return on_answer_message(e, peer, static_cast<std::uint8_t>(mode), seg.message_id);
    e.reassembly_.set_origin(slot, origin_of(*target));
    if (answers_in_acks_ && !ses::answer_needs_message(seg.fields.opcode))
        e.reassembly_.set_tag(slot, owe(*target));
}

}  // namespace uet
