// Answering requests for us, and serving the RMA and atomic requests on our regions. A request of
// another job is answered BAD_JOB_ID and counted before anything else is looked at
// (endpoint_impl::on_message); keys, access and bounds are checked before a byte of a region is
// touched.
#include <cstring>

#include "api/api_impl.hpp"
#include "api/responder_inline.hpp"

namespace uet::detail {

namespace {

using wire::ses_opcode;
using wire::ses_return_code;

// Fetched-values buffers: one per fetching atomic whose response is in flight.
constexpr std::uint32_t response_buffer_count = 1024;
// Holds of registered regions: one per read response in flight, as many as the engine takes
// messages (engine_config_for's max_pending_messages).
constexpr std::uint32_t region_hold_count = 8192;

std::size_t element_size(wire::ses_atomic_datatype t) {
    using wire::ses_atomic_datatype;
    switch (t) {
        case ses_atomic_datatype::int8:
        case ses_atomic_datatype::uint8:
            return 1;
        case ses_atomic_datatype::int16:
        case ses_atomic_datatype::uint16:
            return 2;
        case ses_atomic_datatype::int32:
        case ses_atomic_datatype::uint32:
        case ses_atomic_datatype::float_:
            return 4;
        case ses_atomic_datatype::int64:
        case ses_atomic_datatype::uint64:
        case ses_atomic_datatype::double_:
            return 8;
        default:
            return 0;
    }
}

}  // namespace

responder::responder()
    : buffers_(response_buffer_count * max_atomic_bytes), holds_(region_hold_count) {
    free_buffers_.reserve(response_buffer_count);
    for (std::uint32_t i = response_buffer_count; i-- > 0;)
        free_buffers_.push_back(i);
}

std::uint32_t responder::hold_region(endpoint_impl& ep, std::uint64_t key) {
    return holds_.take(ep.domain->regions, ep.domain->regions.hold(key));
}

void responder::release_region(endpoint_impl& ep, std::uint32_t hold) {
    holds_.release(ep.domain->regions, hold);
}

void responder::release_regions(endpoint_impl& ep) {
    holds_.release_all(ep.domain->regions);
}

void responder::respond(endpoint_impl& ep, const received_message& m, ses_return_code rc,
                        std::span<const std::uint8_t> data, std::uint32_t modified,
                        std::uint32_t buffer) {
    if (rc == ses_return_code::ok && data.empty() && buffer == none)
        return answer_ok(ep, m, modified);
    if (m.mode == delivery_mode::uud) return;  // datagrams are not answered
    respond_as_message(ep, m, rc, data, modified, buffer);
}

bool responder::respond_as_message(endpoint_impl& ep, const received_message& m, ses_return_code rc,
                                   std::span<const std::uint8_t> data, std::uint32_t modified,
                                   std::uint32_t buffer, std::uint32_t send,
                                   std::uint32_t region_hold) {
    ses_fields f;
    f.response = true;
    f.return_code = rc;
    f.job_id = m.ses->job_id;
    f.message_id = m.message_id;
    f.request_length = modified;
    const std::uint64_t context = send != none ? response_context | op_context | send
                                  : region_hold != none
                                      ? response_context | region_context | region_hold
                                      : response_context | buffer;
    const status st = ep.eng->post_response(m, f, data, context);
    if (!st.ok()) {
        ++ep.counters.unanswerable;
        if (buffer != none) free_buffers_.push_back(buffer);
        if (region_hold != none) release_region(ep, region_hold);
    }
    return st.ok();
}

// ---- RMA and atomics on our regions ----

inline std::uint8_t* responder::place_write(endpoint_impl& ep, const ses_fields& f,
                                            std::uint32_t offset, std::uint32_t length) noexcept {
    std::uint8_t* where = nullptr;
    // on_write's checks, of the whole message's range (every packet carries it: a write that
    // does not fit writes nothing, as before), against the table as it is now. A request of
    // another job writes nothing either (on_message answers it BAD_JOB_ID).
    if (f.job_id == ep.attr.job_id && offset <= f.request_length &&
        length <= f.request_length - offset &&
        ep.domain->regions.check(f.memory_key, ep.attr.job_id, f.buffer_offset, f.request_length,
                                 ses::mr_remote_write, where) == ses_return_code::ok)
        return where + offset;
    ++ep.counters.write_packets_refused;
    return nullptr;
}

std::uint8_t* endpoint_impl::place_write(std::uint32_t, const ses_fields& f, std::uint32_t offset,
                                         std::uint32_t length) noexcept {
    return responses.place_write(*this, f, offset, length);
}

void responder::on_write(endpoint_impl& ep, received_message& m) {
    const std::size_t length = m.placed ? m.ses->request_length : m.data.size();
    std::uint8_t* where = nullptr;
    ses_return_code rc =
        ep.domain->regions.check(m.ses->memory_key, ep.attr.job_id, m.ses->buffer_offset, length,
                                 ses::mr_remote_write, where);
    if (m.placed && m.placement_failed && rc == ses_return_code::ok) {
        // Some packet was refused, yet the message's range checks now. Keys are never reused
        // (a random salt per registration), so this is not a region deregistered mid-message
        // (that fails the check above): some packet named another job, key or offset than
        // the one whose fields the message carries (hostile or corrupt). Its bytes are not
        // all in place: answer as for a key that does not name the region.
        rc = ses_return_code::bad_mkey;
    }
    if (rc == ses_return_code::ok) {
        if (m.placed)
            ++ep.counters.writes_placed_directly;  // already in the region
        else if (!m.data.empty())
            std::memcpy(where, m.data.data(), m.data.size());
        if (m.ses->hd) {
            completion c;
            c.flags = completion_flags::rma | completion_flags::remote_write |
                      completion_flags::remote_cq_data;
            c.len = length;
            c.data = m.ses->header_data;
            c.from = ep.peers.peer_of(ep, m.from);
            ep.cq->push_unreserved(c);
        }
    } else {
        ++ep.counters.rejected_key;
    }
    respond(ep, m, rc, {}, rc == ses_return_code::ok ? static_cast<std::uint32_t>(length) : 0);
    ep.eng->release(m.handle);
}

void responder::on_read(endpoint_impl& ep, received_message& m) {
    const std::uint32_t length = m.ses->request_length;
    std::uint8_t* where = nullptr;
    ses_return_code rc =
        length > chunk_bytes
            ? ses_return_code::too_long
            : ep.domain->regions.check(m.ses->memory_key, ep.attr.job_id, m.ses->buffer_offset,
                                       length, ses::mr_remote_read, where);
    ep.eng->release(m.handle);
    if (rc != ses_return_code::ok) {
        ++ep.counters.rejected_key;
        return respond(ep, m, rc);
    }
    // Zero copy: the response's packets are cut straight from the region. A rendezvous send's
    // region is its buffer, which the send keeps until the response is done with; an
    // application's region is held, so that deregistering it waits for the response.
    if (length == 0 || m.mode == delivery_mode::uud)
        return respond(ep, m, rc, {where, length}, length);
    const std::uint32_t send = ep.rdv.send_of(m.ses->memory_key);
    if (send != none) {
        if (respond_as_message(ep, m, rc, {where, length}, length, none, send))
            ++ep.ops[send].reads_served;
        return;
    }
    const std::uint32_t hold = hold_region(ep, m.ses->memory_key);
    if (hold == none) return respond(ep, m, ses_return_code::dropped);
    respond_as_message(ep, m, rc, {where, length}, length, none, none, hold);
}

void responder::on_atomic(endpoint_impl& ep, received_message& m) {
    const bool cas = m.ses->cas.has_value();
    const bool fetching = m.ses->opcode == ses_opcode::fetching_atomic;
    if (!cas && !m.ses->atomic) {
        respond(ep, m, ses_return_code::amo_unsupported_op);
        return ep.eng->release(m.handle);
    }
    const wire::ses_atomic_extension ext = cas ? m.ses->cas->atomic : *m.ses->atomic;
    const std::size_t size = element_size(ext.atomic_datatype);
    const auto operand =
        cas ? std::span<const std::uint8_t>(m.ses->cas->swap_value.data(), size) : m.data;
    ses_return_code rc = ses_return_code::ok;
    if (size == 0)
        rc = ses_return_code::amo_unsupported_dt;
    else if (operand.empty() || operand.size() % size != 0 || operand.size() > max_atomic_bytes)
        rc = ses_return_code::amo_unsupported_size;
    std::uint8_t* where = nullptr;
    if (rc == ses_return_code::ok) {
        rc = ep.domain->regions.check(m.ses->memory_key, ep.attr.job_id, m.ses->buffer_offset,
                                      operand.size(), ses::mr_remote_atomic, where);
        if (rc != ses_return_code::ok) ++ep.counters.rejected_key;
    }
    std::uint32_t buffer = none;
    if (rc == ses_return_code::ok && fetching) {
        if (free_buffers_.empty()) {
            rc = ses_return_code::dropped;
        } else {
            buffer = free_buffers_.back();
            free_buffers_.pop_back();
        }
    }
    std::uint8_t* fetched =
        buffer == none ? nullptr : &buffers_[std::size_t{buffer} * max_atomic_bytes];
    if (rc == ses_return_code::ok)
        rc = apply_atomic(ext, cas ? m.ses->cas->compare_value.data() : nullptr, where, operand,
                          fetched);
    if (rc != ses_return_code::ok && buffer != none) {
        free_buffers_.push_back(buffer);
        buffer = none;
    }
    const auto length = static_cast<std::uint32_t>(operand.size());
    if (buffer != none)
        respond(ep, m, rc, {fetched, length}, length, buffer);
    else
        respond(ep, m, rc, {}, rc == ses_return_code::ok ? length : 0);
    ep.eng->release(m.handle);
}

}  // namespace uet::detail
