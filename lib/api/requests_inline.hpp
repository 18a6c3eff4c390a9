// The forced-inline ends of our requests, for process() (endpoint_rx.cpp) and requests.cpp.
#pragma once

#include "api/api_impl.hpp"

namespace uet::detail {

inline void request_tracker::on_send_completion(endpoint_impl& ep, const send_completion& c) {
    if (c.unsignaled) [[unlikely]]
        return ep.unsignaled.on_completion(ep, c);
    if (c.context & response_context) {
        // A read response cut from a rendezvous send's buffer: response_context | op_context |
        // the send (responder::on_read).
        if (c.context & op_context) [[unlikely]]
            return ep.rdv.read_served(ep, static_cast<std::uint32_t>(c.context), c.result);
        if (c.context & region_context)
            return ep.responses.release_region(ep, static_cast<std::uint32_t>(c.context));
        const auto buffer = static_cast<std::uint32_t>(c.context);
        if (buffer != none) ep.responses.free_buffer(buffer);
        return;
    }
    if (c.context & op_context) return on_send_message_done(ep, c);
    const auto rec = static_cast<std::uint32_t>(c.context);
    if (rec >= ep.records.size() || !ep.records[rec].in_use) return;
    on_record_done(ep, rec, c);
}

// A send's message without a record: done with it when the ACK answered it (or nothing will),
// else as a record's from here on.
inline void request_tracker::on_send_message_done(endpoint_impl& ep, const send_completion& c) {
    const auto index = static_cast<std::uint32_t>(c.context);
    if (index >= ep.ops.size() || !ep.ops[index].in_use) return;
    op& o = ep.ops[index];
    // Its answer came first, as a message: it has its record.
    if (o.record != none) return on_record_done(ep, o.record, c);
    if (c.result.ok() && (c.answered || ep.mode == delivery_mode::uud)) [[likely]] {
        ep.records.unpromise(1);
        --o.in_flight;
        ep.advance_op(index);
        return;
    }
    on_record_done(ep, record_for_op(ep, index), c);
}

inline void request_tracker::finish_record(endpoint_impl& ep, std::uint32_t rec) {
    message_record& r = ep.records[rec];
    ep.records.release(rec);
    if (r.op != none) {
        // A send's next message (after an RTR) starts without one again.
        if (ep.ops[r.op].record == rec) ep.ops[r.op].record = none;
        --ep.ops[r.op].in_flight;
        ep.advance_op(r.op);
    } else if (r.rtr_recv != none && r.error != errc{}) {
        // The initiator no longer has the send: the receive waits for another message.
        op& o = ep.ops[r.rtr_recv];
        o.reserved = false;
        if (!ep.queues.post(o.tagged, r.rtr_recv)) {
            ep.fail(o, errc::canceled);
            ep.finish(r.rtr_recv);
        }
    }
}

inline void request_tracker::due_scan(endpoint_impl& ep, std::uint64_t now) {
    if (now < next_answer_scan_) return;
    // A scan of every record, a few times per answer timeout: cheap, and nothing per packet.
    expire_answers(ep, now);
    next_answer_scan_ = now + answer_timeout(ep.eng->config()) / 8;
}

}  // namespace uet::detail
