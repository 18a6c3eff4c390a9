#include "roce/responder.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

#include "roce/psn24.hpp"

namespace uet::roce {

namespace {

using wire::aeth_kind;
using wire::aeth_nak_code;
using wire::roce_opcode;
using open_message = responder_state::open_message;

enum class op_class : std::uint8_t { send, write, read, atomic, other };

struct op_shape {
    op_class cls = op_class::other;
    bool first = false, last = false, imm = false;
};

op_shape shape_of(roce_opcode op) noexcept {
    switch (op) {
        case roce_opcode::rc_send_first:
            return {op_class::send, true, false, false};
        case roce_opcode::rc_send_middle:
            return {op_class::send, false, false, false};
        case roce_opcode::rc_send_last:
            return {op_class::send, false, true, false};
        case roce_opcode::rc_send_last_with_immediate:
            return {op_class::send, false, true, true};
        case roce_opcode::rc_send_only:
            return {op_class::send, true, true, false};
        case roce_opcode::rc_send_only_with_immediate:
            return {op_class::send, true, true, true};
        case roce_opcode::rc_rdma_write_first:
            return {op_class::write, true, false, false};
        case roce_opcode::rc_rdma_write_middle:
            return {op_class::write, false, false, false};
        case roce_opcode::rc_rdma_write_last:
            return {op_class::write, false, true, false};
        case roce_opcode::rc_rdma_write_last_with_immediate:
            return {op_class::write, false, true, true};
        case roce_opcode::rc_rdma_write_only:
            return {op_class::write, true, true, false};
        case roce_opcode::rc_rdma_write_only_with_immediate:
            return {op_class::write, true, true, true};
        case roce_opcode::rc_rdma_read_request:
            return {op_class::read, true, true, false};
        case roce_opcode::rc_compare_swap:
        case roce_opcode::rc_fetch_add:
            return {op_class::atomic, true, true, false};
        default:
            return {};
    }
}

void queue_ack(responder_state& r, psn_t psn, std::uint8_t syndrome) noexcept {
    // Acknowledgements are cumulative, so a later one replaces an earlier one; but an ACK below
    // a pending NAK's PSN says less than the NAK, which stays.
    const auto kind_of = [](std::uint8_t syn) { return static_cast<aeth_kind>((syn >> 5) & 3); };
    if (r.ack_due && kind_of(r.ack_syndrome) != aeth_kind::ack &&
        kind_of(syndrome) == aeth_kind::ack && psn_before(psn, r.ack_psn))
        return;
    r.ack_due = true;
    r.ack_psn = psn;
    r.ack_syndrome = syndrome;
}

// A NAK that ends the connection: the open receive fails, and the QP goes to ERR (its send
// queue is flushed by the completer). The NAK still goes out: take_ack works in ERR.
rsp_verdict fatal(qp& q, psn_t psn, aeth_nak_code code, delivery_target& d,
                  wc_status receive_status) noexcept {
    responder_state& r = q.rsp;
    queue_ack(r, psn,
              wire::aeth_header::make_syndrome(aeth_kind::nak, static_cast<std::uint8_t>(code)));
    ++q.counters.naks_sent[static_cast<std::size_t>(code)];
    if (r.open == open_message::send)
        d.receive_done(q, r.recv.cookie, r.received, false, 0, receive_status);
    r.open = open_message::none;
    q.attr.state = qp_state::err;
    if (q.error == wc_status::success)
        q.error = code == aeth_nak_code::remote_access_error ? wc_status::rem_access_err
                                                             : wc_status::rem_inv_req_err;
    return rsp_verdict::nak;
}

// READs and atomics being answered for the first time: max_dest_rd_atomic bounds these;
// answers repeated for duplicates do not count.
std::uint32_t new_jobs(const responder_state& r) noexcept {
    std::uint32_t n = 0;
    for (std::uint32_t i = r.job_head; i != r.job_tail; ++i)
        n += !r.jobs[i % r.jobs.size()].repeat;
    return n;
}

bool push_job(responder_state& r, const response_job& j) noexcept {
    if (r.jobs_queued() >= r.jobs.size()) return false;
    r.jobs[r.job_tail++ % r.jobs.size()] = j;
    return true;
}

// The responses of a READ of `length` bytes at PSN psn, cut from src (holding its region).
response_job read_job(const qp& q, psn_t psn, std::uint32_t length, const remote_memory& src,
                      bool repeat) noexcept {
    response_job j;
    j.repeat = repeat;
    j.first_psn = psn;
    j.npkts = std::max<std::uint32_t>(1, (length + q.mtu() - 1) / q.mtu());
    j.source = src.where;
    j.length = length;
    j.hold = src.hold;
    return j;
}

// Copies a SEND's payload at message offset `at` into the receive; false when it overflows.
bool place_send(responder_state& r, std::span<const std::uint8_t> payload) noexcept {
    const std::uint32_t at = r.received;
    const auto len = static_cast<std::uint32_t>(payload.size());
    r.received += len;
    const std::uint32_t skip = r.recv.skip;
    if (at + len <= skip) return true;
    const std::uint32_t from = std::max(at, skip) - at;  // first payload byte past the header
    const std::uint32_t dst = at + from - skip;
    if (r.received - skip > r.recv.capacity) return false;
    std::memcpy(r.recv.base + dst, payload.data() + from, len - from);
    return true;
}

rsp_verdict on_duplicate(qp& q, const req_in& in, psn_t psn, const op_shape& s,
                         delivery_target& d) noexcept {
    responder_state& r = q.rsp;
    ++q.counters.duplicates;
    q.counters.count_drop(roce_drop::duplicate);
    if (s.cls == op_class::read && in.reth != nullptr) {
        // Executed again from its own RETH: the requester asks for what it still misses.
        // Already being answered from this PSN on: the responses will come anyway.
        for (std::uint32_t i = r.job_head; i != r.job_tail; ++i) {
            const response_job& q_job = r.jobs[i % r.jobs.size()];
            if (!q_job.atomic && !psn_before(psn, q_job.first_psn + q_job.sent) &&
                psn_before(psn, q_job.first_psn + q_job.npkts))
                return rsp_verdict::duplicate;
        }
        if (r.jobs_queued() >= r.jobs.size()) return rsp_verdict::dropped;
        const remote_memory src =
            in.reth->dma_len == 0 ? remote_memory{}
                                  : d.read_source(q, in.reth->rkey, in.reth->va, in.reth->dma_len);
        if (in.reth->dma_len != 0 && src.where == nullptr) return rsp_verdict::dropped;
        push_job(r, read_job(q, psn, in.reth->dma_len, src, true));
        return rsp_verdict::duplicate;
    }
    if (s.cls == op_class::atomic) {
        for (const atomic_memo& m : r.memo) {
            if (m.valid && m.psn == psn) {
                if (r.jobs_queued() >= r.jobs.size()) return rsp_verdict::dropped;
                response_job j;
                j.repeat = true;
                j.first_psn = psn;
                j.atomic = true;
                j.original = m.original;
                push_job(r, j);
                return rsp_verdict::duplicate;
            }
        }
        q.counters.count_drop(roce_drop::atomic_dup_evicted);
        return rsp_verdict::dropped;
    }
    queue_ack(r, r.epsn - 1, ack_syndrome);
    return rsp_verdict::duplicate;
}

rsp_verdict take_in_order(qp& q, const req_in& in, psn_t psn, const op_shape& s,
                          delivery_target& d) noexcept {
    responder_state& r = q.rsp;
    r.nak_sent = false;

    // Opcode sequence: MIDDLE and LAST continue the open message of their kind; nothing else
    // may arrive while one is open.
    const bool continues = !s.first;
    const open_message kind = s.cls == op_class::send    ? open_message::send
                              : s.cls == op_class::write ? open_message::write
                                                         : open_message::none;
    if (s.cls == op_class::other || (continues && r.open != kind) ||
        (!continues && r.open != open_message::none)) {
        q.counters.count_drop(roce_drop::bad_opcode_sequence);
        return fatal(q, psn, aeth_nak_code::invalid_request, d, wc_status::rem_inv_req_err);
    }
    // The QP's access flags (an opcode the QP does not allow is an invalid request, as rxe).
    const std::uint32_t access = q.attr.access;
    if ((s.cls == op_class::write && !(access & access_remote_write)) ||
        (s.cls == op_class::read && !(access & access_remote_read)) ||
        (s.cls == op_class::atomic && !(access & access_remote_atomic)))
        return fatal(q, psn, aeth_nak_code::invalid_request, d, wc_status::rem_inv_req_err);
    // FIRST and MIDDLE packets are full: anything else is a malformed message.
    const auto len = static_cast<std::uint32_t>(in.payload.size());
    if ((s.cls == op_class::send || s.cls == op_class::write) && !s.last && len != q.mtu())
        return fatal(q, psn, aeth_nak_code::invalid_request, d, wc_status::rem_inv_req_err);

    // Repeated answers may fill every response slot: a new READ or atomic then waits for the
    // requester's resend rather than run without room for its answer.
    if ((s.cls == op_class::read || s.cls == op_class::atomic) &&
        r.jobs_queued() >= r.jobs.size()) {
        q.counters.count_drop(roce_drop::no_response_room);
        return rsp_verdict::dropped;
    }
    switch (s.cls) {
        case op_class::send:
            if (s.first) {
                if (!d.take_receive(q, in.payload, r.recv)) {
                    queue_ack(
                        r, psn,
                        wire::aeth_header::make_syndrome(aeth_kind::rnr_nak, q.attr.min_rnr_timer));
                    ++q.counters.rnr_naks_sent;
                    r.nak_sent = true;  // what follows is dropped until this PSN is taken
                    q.counters.count_drop(roce_drop::no_receive);
                    return rsp_verdict::rnr;
                }
                r.open = open_message::send;
                r.received = 0;
            }
            if (!place_send(r, in.payload))
                return fatal(q, psn, aeth_nak_code::invalid_request, d, wc_status::loc_len_err);
            if (s.last) {
                const std::uint32_t length =
                    r.received > r.recv.skip ? r.received - r.recv.skip : 0;
                d.receive_done(q, r.recv.cookie, length, s.imm, in.imm, wc_status::success);
                r.open = open_message::none;
                ++r.msn;
            }
            break;
        case op_class::write:
            if (s.first) {
                if (in.reth == nullptr)
                    return fatal(q, psn, aeth_nak_code::invalid_request, d,
                                 wc_status::wr_flush_err);
                const remote_memory m =
                    in.reth->dma_len == 0
                        ? remote_memory{}
                        : d.place_write(q, in.reth->rkey, in.reth->va, in.reth->dma_len);
                if (in.reth->dma_len != 0 && m.where == nullptr)
                    return fatal(q, psn, aeth_nak_code::remote_access_error, d,
                                 wc_status::wr_flush_err);
                r.open = open_message::write;
                r.write_rkey = in.reth->rkey;
                r.write_va = in.reth->va;
                r.write_left = r.write_length = in.reth->dma_len;
            }
            if (len > r.write_left || (s.last && len != r.write_left))
                return fatal(q, psn, aeth_nak_code::invalid_request, d, wc_status::wr_flush_err);
            if (len != 0) {
                // Packets of one WRITE come in separate bursts: each is placed where the live
                // region table says, never through a pointer kept from the first.
                std::uint8_t* where = d.write_packet_at(q, r.write_rkey, r.write_va, len);
                if (where == nullptr)
                    return fatal(q, psn, aeth_nak_code::remote_access_error, d,
                                 wc_status::wr_flush_err);
                std::memcpy(where, in.payload.data(), len);
            }
            r.write_va += len;
            r.write_left -= len;
            if (s.last) {
                if (s.imm) d.remote_data(q, in.imm, r.write_length);
                r.open = open_message::none;
                ++r.msn;
            }
            break;
        case op_class::read: {
            if (in.reth == nullptr || new_jobs(r) >= q.attr.max_dest_rd_atomic)
                return fatal(q, psn, aeth_nak_code::invalid_request, d, wc_status::wr_flush_err);
            const remote_memory src =
                in.reth->dma_len == 0
                    ? remote_memory{}
                    : d.read_source(q, in.reth->rkey, in.reth->va, in.reth->dma_len);
            if (in.reth->dma_len != 0 && src.where == nullptr)
                return fatal(q, psn, aeth_nak_code::remote_access_error, d,
                             wc_status::wr_flush_err);
            const response_job j = read_job(q, psn, in.reth->dma_len, src, false);
            push_job(r, j);
            r.epsn = psn + j.npkts;
            ++r.msn;
            return rsp_verdict::accepted;
        }
        case op_class::atomic: {
            if (in.atomic == nullptr || new_jobs(r) >= q.attr.max_dest_rd_atomic ||
                (in.atomic->va & 7) != 0)
                return fatal(q, psn, aeth_nak_code::invalid_request, d, wc_status::wr_flush_err);
            const wr_opcode op = in.opcode == roce_opcode::rc_compare_swap ? wr_opcode::cmp_swap
                                                                           : wr_opcode::fetch_add;
            const atomic_outcome a = d.atomic(q, in.atomic->rkey, in.atomic->va, op,
                                              in.atomic->swap_add, in.atomic->compare);
            if (!a.ok)
                return fatal(q, psn, aeth_nak_code::remote_access_error, d,
                             wc_status::wr_flush_err);
            r.memo[r.memo_next++ % r.memo.size()] = {psn, a.original, true};
            response_job j;
            j.first_psn = psn;
            j.atomic = true;
            j.original = a.original;
            push_job(r, j);
            r.epsn = psn + 1;
            ++r.msn;
            return rsp_verdict::accepted;
        }
        case op_class::other:
            break;
    }
    r.epsn = psn + 1;
    if (in.ack_req) queue_ack(r, psn, ack_syndrome);
    return rsp_verdict::accepted;
}

// Out-of-order mode: a WRITE_ONLY is placed wherever it lands in the window; anything else
// beyond the expected PSN is held back; what is taken is recorded in the arrival bitmap.
rsp_verdict take_out_of_order(qp& q, const req_in& in, psn_t psn, std::int32_t ahead,
                              const op_shape& s, std::uint64_t now, delivery_target& d) noexcept {
    responder_state& r = q.rsp;
    ooo_state& o = q.ooo;
    if (ahead >= static_cast<std::int32_t>(o.rxw.capacity())) {
        q.counters.count_drop(roce_drop::psn_out_of_window);
        return rsp_verdict::dropped;
    }
    if (ahead < 0 || o.rxw.received(psn)) {
        // A duplicate says the requester is resending: a hole due for its NAK again gets it.
        const rsp_verdict v = on_duplicate(q, in, psn, s, d);
        ooo_after_arrival(q, now, d);
        return v;
    }
    rsp_verdict v;
    bool released = false;
    if (ahead == 0) {
        if (s.cls == op_class::read && in.reth != nullptr &&
            (in.reth->dma_len + q.mtu() - 1) / q.mtu() > o.rxw.capacity())
            return fatal(q, psn, aeth_nak_code::invalid_request, d, wc_status::wr_flush_err);
        v = take_in_order(q, in, psn, s, d);
        if (v != rsp_verdict::accepted) return v;
        o.rxw.accept_run(psn, r.epsn - psn);  // a READ takes its response PSNs too
        // Packets placed early behind this one complete now: acknowledged here, as the AckReq
        // among them (a message's last packet) has had its ACK, up to this hole, already.
        released = o.rxw.expected() != r.epsn;
    } else {
        // A NAK that ends the connection acknowledges every PSN before its own, so an early
        // packet the checks refuse is held back: it is refused when its turn comes.
        const bool placeable = ooo_may_place_early(static_cast<std::uint8_t>(in.opcode)) &&
                               (q.attr.access & access_remote_write) && in.reth != nullptr &&
                               in.reth->dma_len == in.payload.size();
        const remote_memory m = placeable && !in.payload.empty()
                                    ? d.place_write(q, in.reth->rkey, in.reth->va, in.reth->dma_len)
                                    : remote_memory{};
        if (!placeable || (!in.payload.empty() && m.where == nullptr)) {
            // The expected PSN is missing: NAK it, so the requester sends it again with what
            // is held back behind it.
            q.counters.count_drop(roce_drop::ooo_held_back);
            ooo_nak_hole(q, r.epsn, now);
            return rsp_verdict::dropped;
        }
        if (m.where != nullptr) std::memcpy(m.where, in.payload.data(), in.payload.size());
        deferred_completion& c = o.deferred[psn & o.mask];
        c.pending = true;
        c.message_end = true;
        c.remote_data = s.imm;
        c.imm = in.imm;
        o.rxw.accept(psn);
        ++q.counters.placed_early;
        v = rsp_verdict::accepted;
    }
    ooo_after_arrival(q, now, d);
    if (in.ack_req || released) queue_ack(r, o.rxw.cack(), ack_syndrome);
    return v;
}

}  // namespace

rsp_verdict on_request(qp& q, const req_in& in, std::uint64_t now, delivery_target& d) noexcept {
    responder_state& r = q.rsp;
    if (!responder_ready(q.attr.state)) {
        q.counters.count_drop(roce_drop::qp_not_ready);
        return rsp_verdict::dropped;
    }
    ++q.counters.rx_packets;
    q.counters.rx_bytes += in.payload.size();
    const op_shape s = shape_of(in.opcode);
    const psn_t psn = extend(in.psn, r.epsn);
    const std::int32_t ahead = psn_distance(r.epsn, psn);
    if (q.out_of_order()) return take_out_of_order(q, in, psn, ahead, s, now, d);
    if (ahead < 0) return on_duplicate(q, in, psn, s, d);
    if (ahead > 0) {
        // Go-back-N: one NAK per expected PSN, then silence until it comes.
        if (!r.nak_sent) {
            r.nak_sent = true;
            queue_ack(
                r, r.epsn,
                wire::aeth_header::make_syndrome(
                    aeth_kind::nak, static_cast<std::uint8_t>(aeth_nak_code::psn_sequence_error)));
            ++q.counters.naks_sent[0];
            return rsp_verdict::nak;
        }
        q.counters.count_drop(roce_drop::after_gap);
        return rsp_verdict::dropped;
    }
    return take_in_order(q, in, psn, s, d);
}

bool take_ack(qp& q, ack_out& out) noexcept {
    responder_state& r = q.rsp;
    ooo_state& o = q.ooo;
    if (o.nak_head != o.nak_tail) {  // out-of-order mode's NAKs of holes, each by its PSN
        out = {o.naks[o.nak_head++ % o.naks.size()],
               wire::aeth_header::make_syndrome(
                   aeth_kind::nak, static_cast<std::uint8_t>(aeth_nak_code::psn_sequence_error)),
               r.msn};
        return true;
    }
    if (!r.ack_due || r.jobs_queued() != 0) return false;
    r.ack_due = false;
    out = {r.ack_psn, r.ack_syndrome, r.msn};
    ++q.counters.acks_sent;
    return true;
}

bool has_response(const qp& q) noexcept {
    return q.rsp.jobs_queued() != 0;
}

bool next_response(qp& q, resp_packet& out, delivery_target& d) noexcept {
    responder_state& r = q.rsp;
    if (r.jobs_queued() == 0) return false;
    response_job& j = r.jobs[r.job_head % r.jobs.size()];
    out = resp_packet{};
    out.msn = r.msn;
    out.syndrome = ack_syndrome;
    if (j.atomic) {
        out.opcode = roce_opcode::rc_atomic_acknowledge;
        out.psn = j.first_psn;
        out.has_aeth = true;
        out.has_atomic_ack = true;
        out.original = j.original;
        ++r.job_head;
        return true;
    }
    const std::uint32_t mtu = q.mtu();
    const std::uint32_t k = j.sent;
    const bool first = k == 0, last = k + 1 == j.npkts;
    out.opcode = first && last ? roce_opcode::rc_rdma_read_response_only
                 : first       ? roce_opcode::rc_rdma_read_response_first
                 : last        ? roce_opcode::rc_rdma_read_response_last
                               : roce_opcode::rc_rdma_read_response_middle;
    out.psn = j.first_psn + k;
    out.has_aeth = first || last;
    const std::uint32_t offset = k * mtu;
    out.payload = j.source ? j.source + offset : nullptr;
    out.length = std::min(mtu, j.length - std::min(j.length, offset));
    if (++j.sent == j.npkts) {
        ++r.job_head;
        // Single-threaded: the caller builds the packet before anything can free the region.
        if (j.hold != no_hold) d.read_done(q, std::exchange(j.hold, no_hold));
    }
    q.counters.tx_packets += 1;
    q.counters.tx_bytes += out.length;
    return true;
}

}  // namespace uet::roce
