// Our requests: their PDS completion and their response. An operation's message ends once both
// are in; an acknowledged request whose answer never comes fails at its deadline, and those of a
// peer the PDS gave up on fail at once.
#include <algorithm>
#include <cstring>

#include "api/api_impl.hpp"
#include "api/requests_inline.hpp"

namespace uet::detail {

using wire::ses_return_code;

std::uint32_t request_tracker::record_for_op(endpoint_impl& ep, std::uint32_t index) noexcept {
    ep.records.unpromise(1);
    op& o = ep.ops[index];
    o.record = ep.records.take(index, none, o.engine_peer, ep.mode, 0,
                               static_cast<std::uint32_t>(o.len), o.message_id);
    return o.record;
}

void request_tracker::on_record_done(endpoint_impl& ep, std::uint32_t rec,
                                     const send_completion& c) {
    message_record& r = ep.records[rec];
    r.pds_done = true;
    if (!c.result.ok()) {
        const errc e = failure_errc(c.result);
        if (r.op != none) ep.fail(ep.ops[r.op], e);
        r.error = e;
        r.response_done = true;  // none will come
        const std::uint32_t peer = r.peer;
        finish_record(ep, rec);
        fail_peer(ep, peer, e);
        return;
    }
    // The target answered RC_OK in its ACK: no response message comes.
    if (c.answered) r.response_done = true;
    if (r.response_done || !r.expects_response) {
        finish_record(ep, rec);
        return;
    }
    // The answer comes as a message: from now on only our index finds its record.
    if (!r.indexed) ep.records.index(rec);
    const bool rendezvous =
        r.op != none && ep.ops[r.op].kind == op_kind::send && ep.ops[r.op].rendezvous_key != 0;
    if (!rendezvous) r.answer_by = ep.now + answer_timeout(ep.eng->config());
}

// Without this, an operation whose requests were all acknowledged would wait forever for the
// response (or the RTR of a deferred send) of a peer that died: its PDS has nothing left to
// retransmit, so no timer would ever fire for it.
void request_tracker::fail_peer(endpoint_impl& ep, std::uint32_t engine_peer, errc e) {
    for (std::uint32_t rec = 0; rec < ep.records.size(); ++rec) {
        message_record& r = ep.records[rec];
        if (!r.in_use || r.peer != engine_peer || !r.pds_done || r.response_done ||
            !r.expects_response)
            continue;
        if (r.op != none) ep.fail(ep.ops[r.op], e);
        r.error = e;
        r.response_done = true;
        finish_record(ep, rec);
    }
    for (std::uint32_t i = 0; i < ep.ops.size(); ++i) {
        op& o = ep.ops[i];
        if (!o.in_use || o.kind != op_kind::send || !o.deferred || o.engine_peer != engine_peer ||
            o.in_flight != 0)
            continue;
        ep.fail(o, e);
        o.deferred = false;
        ep.progress_op(i);
    }
}

void request_tracker::expire_answers(endpoint_impl& ep, std::uint64_t t) {
    const std::uint64_t timeout = answer_timeout(ep.eng->config());
    for (std::uint32_t rec = 0; rec < ep.records.size(); ++rec) {
        message_record& r = ep.records[rec];
        if (!r.in_use || !r.pds_done || r.response_done || r.answer_by == 0 || t < r.answer_by)
            continue;
        const std::uint64_t heard = r.peer < answered_at_.size() ? answered_at_[r.peer] : 0;
        if (t < heard + timeout) {
            r.answer_by = heard + timeout;
            continue;
        }
        if (r.op != none) ep.fail(ep.ops[r.op], errc::retry_limit);
        r.error = errc::retry_limit;
        r.response_done = true;
        finish_record(ep, rec);
    }
}

// The record of the request a response answers: in our index, or (its PDS completion still to
// come) the context of the engine's message.
std::optional<std::uint32_t> request_tracker::record_answered_by(endpoint_impl& ep,
                                                                 const received_message& response) {
    const auto mode = static_cast<std::uint8_t>(response.mode);
    if (auto found = ep.records.find(response.from, mode, response.message_id)) return found;
    const auto pending = ep.eng->pending_request(response.from, response.mode, response.message_id);
    if (!pending) return std::nullopt;
    // An unsignaled send's answer came before its PDS completion: it needs its operation now.
    const std::uint64_t context = ep.eng->message(*pending).unsignaled
                                      ? op_context | ep.unsignaled.adopt_in_flight(ep, *pending)
                                      : ep.eng->message(*pending).context;
    if (context & op_context) return record_of_send(ep, context, response);
    if (context >= ep.records.size()) return std::nullopt;
    const auto rec = static_cast<std::uint32_t>(context);
    const message_record& r = ep.records[rec];
    if (!r.in_use || r.peer != response.from || r.mode != mode ||
        r.message_id != response.message_id)
        return std::nullopt;
    return rec;
}

// The same for a send's message without a record (op_context): its record, taken now if it has
// none yet (the answer came before the PDS completion).
std::optional<std::uint32_t> request_tracker::record_of_send(endpoint_impl& ep,
                                                             std::uint64_t context,
                                                             const received_message& response) {
    const auto index = static_cast<std::uint32_t>(context);
    if (index >= ep.ops.size()) return std::nullopt;
    const op& o = ep.ops[index];
    if (!o.in_use || o.in_flight == 0 || o.engine_peer != response.from ||
        response.mode != ep.mode || o.message_id != response.message_id)
        return std::nullopt;
    if (o.record != none) return o.record;
    return record_for_op(ep, index);
}

void request_tracker::on_response(endpoint_impl& ep, received_message& m) {
    // Our requests all carry our job; a target echoes the request's in its answer.
    if (m.ses->job_id != ep.attr.job_id) [[unlikely]] {
        ++ep.counters.foreign_responses;
        ep.eng->release(m.handle);
        return;
    }
    const auto found = record_answered_by(ep, m);
    if (!found || ep.records[*found].response_done) {
        ++ep.counters.stale_responses;
        ep.eng->release(m.handle);
        return;
    }
    const std::uint32_t rec = *found;
    message_record& r = ep.records[rec];
    r.response_done = true;
    if (r.peer < answered_at_.size()) answered_at_[r.peer] = ep.now;
    const ses_return_code rc = m.ses->return_code;
    if (r.op == none) {
        if (rc != ses_return_code::ok) r.error = errc_of(rc);
    } else {
        op& o = ep.ops[r.op];
        if (rc == ses_return_code::ok) {
            const bool reads = o.kind == op_kind::read || o.kind == op_kind::recv;
            if (reads && (m.data.size() != r.length || r.offset + r.length > o.len))
                ep.fail(o, errc::remote_error);
            else if (reads && !m.data.empty())
                std::memcpy(o.dst + r.offset, m.data.data(), m.data.size());
            else if (o.kind == op_kind::atomic && o.fetching)
                std::memcpy(o.dst, m.data.data(), std::min(m.data.size(), o.len));
        } else if (rc == ses_return_code::no_match && o.kind == op_kind::send) {
            o.deferred = true;
        } else {
            ep.fail(o, errc_of(rc), static_cast<int>(rc));
        }
    }
    ep.eng->release(m.handle);
    if (r.pds_done) finish_record(ep, rec);
}

}  // namespace uet::detail
