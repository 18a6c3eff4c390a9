// The endpoint's posting side: the public post calls (send, recv, write, read, atomics and their
// list forms), the checks common to every post, and the cutting of operations into engine
// messages (at most chunk_bytes each, chunks_in_flight at a time). The per-post bodies are
// forced inline into the public calls, so they live in this file with them.
#include <algorithm>
#include <cstring>

#include "api/api_impl.hpp"
#include "api/roce_endpoint.hpp"
#include "api/unsignaled_inline.hpp"

namespace uet {
namespace detail {

// ---- checks common to every post ----

inline errc endpoint_impl::check_post(peer_addr peer, bool reserve_cq, std::uint32_t& engine_peer) {
    if (!eng) return errc::endpoint_closed;
    const auto index = static_cast<std::uint64_t>(peer);
    // The common post: to a peer posted to before (address-vector entries and engine peers are
    // never removed or renumbered, so an entry once filled stands).
    if (const std::uint32_t known = peers.engine_peer(index); known != none)
        engine_peer = known;
    else if (const errc e = peers.add(*this, index, engine_peer); e != errc{})
        return e;
    if (reserve_cq && !cq->reserve()) return errc::cq_full;
    return {};
}

inline errc endpoint_impl::source_of(peer_addr from, std::uint32_t& source) {
    source = ses::any_source;
    return from == any_peer ? errc{} : check_post(from, false, source);
}

inline errc endpoint_impl::take_recv_op(std::uint32_t& index) {
    if (!cq->reserve()) return errc::cq_full;
    index = ops.allocate();
    if (index == none || !records.spare()) {
        if (index != none) ops.release(index);
        cq->unreserve();
        return errc::again;
    }
    return {};
}

ses_fields endpoint_impl::request_fields(wire::ses_opcode opcode) const noexcept {
    ses_fields f;
    f.opcode = opcode;
    f.job_id = attr.job_id;
    f.initiator = address.pid;  // our PIDonFEP: the IPv4 header has our FEP
    return f;
}

// ---- posting ----

inline errc endpoint_impl::start_op(op_kind kind, peer_addr peer, bool reserve_cq, void* context,
                                    bool silent, std::uint32_t& index) {
    std::uint32_t engine_peer = none;
    if (const errc e = check_post(peer, reserve_cq, engine_peer); e != errc{}) return e;
    index = ops.allocate();
    if (index == none) {
        if (reserve_cq) cq->unreserve();
        return errc::again;
    }
    op& o = ops[index];
    o.kind = kind;
    o.context = context;
    o.peer = peer;
    o.engine_peer = engine_peer;
    o.silent = silent;
    return {};
}

inline std::error_code endpoint_impl::post_send(peer_addr to, std::span<const std::byte> buf,
                                                bool tagged, std::uint64_t tag, void* context,
                                                bool inject, bool silent) {
    if (!eng) return errc::endpoint_closed;
    if (inject && buf.size() > attr.inject_size) return errc::message_too_long;
    if (buf.size() > attr.max_message_size) return errc::message_too_long;
    if (mode == delivery_mode::uud && buf.size() > mtu) return errc::message_too_long;
    std::uint32_t index = none;
    if (silent && !inject && unsignaled.post(*this, to, buf, tagged, tag, context)) return no_error;
    if (const errc e = start_op(op_kind::send, to, !inject, context, silent, index); e != errc{})
        return e;
    op& o = ops[index];
    o.inject = inject;
    o.tagged = tagged;
    o.tag = tag;
    o.len = buf.size();
    o.src = buf.data();
    o.flags = tagged ? completion_flags::send | completion_flags::tagged : completion_flags::send;
    if (inject) {
        std::byte* copy = ops.inject_buffer(index);
        if (!buf.empty()) std::memcpy(copy, buf.data(), buf.size());
        o.src = copy;
    }
    using wire::ses_opcode;
    if (mode != delivery_mode::uud && buf.size() >= attr.rendezvous_threshold) {
        o.opcode = tagged ? ses_opcode::rendezvous_tsend : ses_opcode::rendezvous_send;
        if (!rdv.register_send(*this, o, index)) {
            ops.release(index);
            if (!inject) cq->unreserve();
            return errc::again;
        }
    } else if (mode != delivery_mode::uud && buf.size() >= attr.deferrable_threshold) {
        o.opcode = tagged ? ses_opcode::deferrable_tsend : ses_opcode::deferrable_send;
    } else {
        o.opcode = tagged ? ses_opcode::tagged_send : ses_opcode::send;
    }
    // What pump() does for a new send, which is always one message: issue it, or wait for
    // room, or finish it with the error issue_send() noted.
    const post_result r = issue_send(o, index);
    if (r == post_result::no_room)
        stalled.push_back(index);
    else if (r == post_result::failed)
        progress_op(index);
    return no_error;
}

// Runs of sends that go unsignaled go to the engine together; any other send, and the one a run
// stopped at, as send() posts it (it goes unsignaled alone if it can, or says why it cannot).
std::error_code endpoint_impl::post_send_list(peer_addr to, std::span<const send_work> list,
                                              bool tagged, std::size_t& posted) {
    const auto flag = [](op_flags set, op_flags f) {
        return (static_cast<unsigned>(set) & static_cast<unsigned>(f)) != 0;
    };
    posted = 0;
    while (posted < list.size()) {
        posted += unsignaled.post_list(*this, to, list.subspan(posted), tagged);
        if (posted == list.size()) break;
        const send_work& w = list[posted];
        if (flag(w.flags, op_flags::multi_recv)) return errc::invalid_argument;
        const std::error_code ec = post_send(to, w.buf, tagged, w.tag, w.context, false,
                                             flag(w.flags, op_flags::no_completion));
        if (ec) return ec;
        ++posted;
    }
    return no_error;
}

inline std::error_code endpoint_impl::post_recv(std::span<std::byte> buf, bool tagged,
                                                std::uint64_t tag, std::uint64_t ignore,
                                                void* context, peer_addr from, bool multi) {
    if (!eng) return errc::endpoint_closed;
    std::uint32_t source;
    if (const errc e = source_of(from, source); e != errc{}) return e;
    if (multi) {
        if (buf.empty() || buf.size() < attr.min_multi_recv) return errc::invalid_argument;
        // Room for an entry per held message it may take, besides its own reservation.
        if (cq->spare_room() <= queues.held_count()) return errc::cq_full;
    }
    std::uint32_t index = none;
    if (const errc e = take_recv_op(index); e != errc{}) return e;
    if (!multi)
        return place_recv(index, buf, tagged, ses::match_rule{tagged, tag, ignore, source},
                          context);
    if (const errc e = multi_recvs.post(*this, index, buf, source, context); e != errc{}) return e;
    return no_error;
}

// A plain receive in op `index` (taken, its entry reserved): matched with a message held for it
// or a deferred send, or posted. Posting full, it is undone (errc::again).
inline errc endpoint_impl::place_recv(std::uint32_t index, std::span<std::byte> buf, bool tagged,
                                      const ses::match_rule& rule, void* context) {
    op& o = ops[index];
    set_recv(o, buf, tagged, rule, context);
    // Nearly always both are empty: a look at each, no search.
    if (!queues.held_empty()) {
        auto held = queues.take_held(
            [&](const held_message& h) { return o.rule.matches(h.tagged, h.tag, h.msg.from); });
        if (held) {
            deliver_held(index, held->msg, held->answered);
            return {};
        }
    }
    if (!rdv.empty() && rdv.match_deferred(*this, index, o.rule)) return {};
    if (!queues.post(tagged, index)) {
        ops.release(index);
        cq->unreserve();
        return errc::again;
    }
    return {};
}

// The receives of `list` that the queue, the op slots and the posted lists have room for,
// posted with the checks and reservations common to them made once; the one that stopped them
// as recv() posts it (which says why it cannot go), and so on.
std::error_code endpoint_impl::post_recv_list(std::span<const recv_work> list, bool tagged,
                                              peer_addr from, std::size_t& posted) {
    posted = 0;
    if (!eng) return errc::endpoint_closed;
    std::uint32_t source;
    if (const errc e = source_of(from, source); e != errc{}) return e;
    while (posted < list.size()) {
        const std::span<const recv_work> rest = list.subspan(posted);
        std::size_t n = ops.room();
        // A receive that meets a deferred send takes a record for its RTR: while any wait, one
        // at a time, each after recv()'s check that a record is free.
        if (!rdv.empty()) n = std::min<std::size_t>(n, 1);
        n = records.spare() ? cq->reserve_up_to(std::min(rest.size(), n)) : 0;
        for (std::size_t k = 0; k < n; ++k) {
            const recv_work& w = rest[k];
            const ses::match_rule rule{tagged, w.tag, w.ignore, source};
            if (const errc e = place_recv(ops.allocate(), w.buf, tagged, rule, w.context);
                e != errc{}) {
                cq->unreserve(n - k - 1);
                return e;
            }
            ++posted;
        }
        if (posted == list.size()) break;
        const recv_work& w = list[posted];
        const std::error_code ec =
            post_recv(w.buf, tagged, w.tag, w.ignore, w.context, from, false);
        if (ec) return ec;
        ++posted;
    }
    return no_error;
}

// ---- probe, claim and cancel ----

// Looks where place_recv does, in its order: the held messages, then the deferred sends.
std::error_code endpoint_impl::probe(bool tagged, std::uint64_t tag, std::uint64_t ignore,
                                     peer_addr from, bool claim, probed_message& out) {
    if (!eng) return errc::endpoint_closed;
    std::uint32_t source;
    if (const errc e = source_of(from, source); e != errc{}) return e;
    const ses::match_rule rule{tagged, tag, ignore, source};
    const std::uint32_t h = queues.find_held(
        [&](const held_message& m) { return rule.matches(m.tagged, m.tag, m.msg.from); });
    if (h != recv_queues::none) {
        if (claim && claimed.full()) return errc::again;
        const held_message& m = queues.held_at(h);
        out = probed_message{
            message_length(m.msg), m.tag, peers.peer_of(*this, m.msg.from), 0, m.tagged, 0};
        if (claim) out.claim = claimed.add(queues.claim_held_at(h));
        return no_error;
    }
    const deferred_send* d = rdv.find_deferred(*this, rule);
    if (d == nullptr) return errc::no_message;
    if (claim && claimed.full()) return errc::again;
    out = probed_message{d->length, d->tag, peers.peer_of(*this, d->peer), 0, d->tagged, 0};
    if (claim) out.claim = claimed.add(*rdv.take_deferred(*this, rule));
    return no_error;
}

// The claimed message goes to the new receive as a matching one would: a held message is
// delivered, a deferred send asked for with an RTR.
std::error_code endpoint_impl::recv_claimed(std::uint64_t claim, std::span<std::byte> buf,
                                            void* context) {
    if (!eng) return errc::endpoint_closed;
    if (!claimed.has(claim)) return errc::invalid_argument;
    std::uint32_t index = none;
    if (const errc e = take_recv_op(index); e != errc{}) return e;
    claimed_message c = *claimed.take(claim);
    op& o = ops[index];
    if (!c.deferred) {
        const held_message& m = c.held;
        set_recv(o, buf, m.tagged, ses::match_rule{m.tagged, m.tag, 0, m.msg.from}, context);
        queues.release_claimed(m);
        deliver_held(index, c.held.msg, m.answered);
        return no_error;
    }
    const deferred_send& d = c.send;
    // Should the RTR be refused, the receive is posted for a message of this sender and tag.
    set_recv(o, buf, d.tagged, ses::match_rule{d.tagged, d.tag, 0, d.peer}, context);
    if (rendezvous::still_there(*this, d)) {
        rdv.start_rtr(*this, index, d);
    } else {
        fail(o, errc::peer_unreachable);
        finish(index);
    }
    return no_error;
}

std::error_code endpoint_impl::cancel(void* context) {
    if (!eng) return errc::endpoint_closed;
    for (const bool tagged : {false, true}) {
        const std::uint32_t node =
            queues.find_first(tagged, [&](std::uint32_t i) { return ops[i].context == context; });
        if (node == recv_queues::none) continue;
        const std::uint32_t index = queues.at(tagged, node);
        op& o = ops[index];
        fail(o, errc::canceled);
        if (o.multi) {
            o.msg_len = 0;  // its entry names no message
            multi_recvs.release(*this, index, node);
        } else {
            queues.take_at(tagged, node);
            finish(index);
        }
        return no_error;
    }
    for (std::uint32_t i = 0; i < ops.size(); ++i)
        if (ops[i].in_use && ops[i].context == context) return errc::busy;
    return errc::not_found;
}

std::error_code endpoint_impl::post_rma(op_kind kind, peer_addr peer, const std::byte* src,
                                        std::byte* dst, std::size_t len, std::uint64_t offset,
                                        std::uint64_t key, bool hd, std::uint64_t data,
                                        void* context, bool silent) {
    if (!eng) return errc::endpoint_closed;
    if (mode == delivery_mode::uud) return errc::unsupported;
    if (len > attr.max_message_size || (hd && len > chunk_bytes)) return errc::message_too_long;
    std::uint32_t index = none;
    if (const errc e = start_op(kind, peer, true, context, silent, index); e != errc{}) return e;
    set_rma(ops[index], kind, src, dst, len, offset, key, hd, data);
    pump(index);
    return no_error;
}

std::error_code endpoint_impl::post_atomic(peer_addr to, atomic_op aop, atomic_type type,
                                           std::span<const std::byte> operand,
                                           std::span<std::byte> result, const std::byte* compare,
                                           bool fetching, bool cas, std::uint64_t offset,
                                           std::uint64_t key, void* context, bool silent) {
    if (!eng) return errc::endpoint_closed;
    if (mode == delivery_mode::uud) return errc::unsupported;
    wire::ses_atomic_extension ext;
    if (!to_wire(aop, type, ext)) return errc::invalid_argument;
    const std::size_t size = size_of(type);
    if (operand.empty() || operand.size() % size != 0 || operand.size() > max_atomic_bytes ||
        (cas && operand.size() != size) || (fetching && result.size() < operand.size()))
        return errc::invalid_argument;
    if (aop == atomic_op::read && !fetching) return errc::invalid_argument;
    const bool bitwise = aop == atomic_op::band || aop == atomic_op::bor || aop == atomic_op::bxor;
    if (bitwise && is_floating(type)) return errc::unsupported;
    std::uint32_t index = none;
    if (const errc e = start_op(op_kind::atomic, to, true, context, silent, index); e != errc{})
        return e;
    op& o = ops[index];
    o.src = operand.data();
    o.len = operand.size();
    o.dst = result.data();
    o.offset = offset;
    o.key = key;
    o.atomic = ext;
    o.fetching = fetching;
    o.cas = cas;
    if (cas) {
        o.atomic.atomic_opcode = wire::ses_atomic_opcode::cswap;
        std::memcpy(o.compare.data(), compare, size);
        std::memcpy(o.swap.data(), operand.data(), size);
    }
    o.flags =
        completion_flags::atomic | (fetching ? completion_flags::read : completion_flags::write);
    pump(index);
    return no_error;
}

// ---- cutting operations into messages ----

// An engine post refused: wait for room, or fail operation index (none: an RTR; its caller
// decides).
endpoint_impl::post_result endpoint_impl::refused(const status& st, std::uint32_t index) {
    if (st.code == status_code::too_many_pending) return post_result::no_room;
    if (index != none) fail(ops[index], errc::invalid_argument);
    return post_result::failed;
}

inline endpoint_impl::post_result endpoint_impl::post_message(
    std::uint32_t index, std::uint32_t rtr_recv, std::uint32_t peer, const ses_fields& f,
    std::span<const std::uint8_t> data, std::size_t offset, std::uint32_t length) {
    if (!records.spare()) return post_result::no_room;
    std::uint16_t id = 0;
    // The record's index is the engine's context: the record taken below is the one on top.
    const status st = eng->post_message(peer, mode, f, data, records.next_index(), &id);
    if (!st.ok()) return refused(st, index);
    const std::uint32_t rec = records.take(index, rtr_recv, peer, mode, offset, length, id);
    // The engine tracks RUD/ROD requests by id until their PDS completion: most (answered in
    // the ACK) never need an index of ours, which cost an insert and an erase per message.
    if (mode == delivery_mode::rudi) records.index(rec);
    if (index != none) {
        ++ops[index].in_flight;
        ops[index].issued = true;
    }
    return post_result::posted;
}

inline endpoint_impl::post_result endpoint_impl::post_send_message(
    std::uint32_t index, const ses_fields& f, std::span<const std::uint8_t> data) {
    if (!records.spare()) return post_result::no_room;
    op& o = ops[index];
    const status st =
        eng->post_message(o.engine_peer, mode, f, data, op_context | index, &o.message_id);
    if (!st.ok()) return refused(st, index);
    records.promise(1);
    ++o.in_flight;
    o.issued = true;
    return post_result::posted;
}

endpoint_impl::post_result endpoint_impl::post_rtr(std::uint32_t rtr_recv, std::uint32_t peer,
                                                   const ses_fields& f) {
    return post_message(none, rtr_recv, peer, f, {}, 0, 0);
}

inline endpoint_impl::post_result endpoint_impl::issue_send(op& o, std::uint32_t index) {
    ses_fields f = request_fields(o.opcode);
    f.memory_key = o.tagged ? o.tag : 0;
    // The restart token: ours, and the target's receive once its RTR named one.
    const std::uint32_t token = o.unsignaled_token != 0 ? o.unsignaled_token : ops.token_of(index);
    f.buffer_offset = (std::uint64_t{token} << 32) | o.target_token;
    auto data = std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(o.src), o.len);
    if (o.rendezvous_key != 0) {
        const auto eager = static_cast<std::uint32_t>(std::min<std::size_t>(mtu, o.len));
        wire::ses_rendezvous_extension r;
        r.eager_length = eager;
        r.rd_offset = 0;
        r.rd_memory_key = o.rendezvous_key;
        f.rendezvous = r;
        f.request_length = static_cast<std::uint32_t>(o.len);
        data = data.first(eager);
    }
    // RUDI requests are indexed by us from the start (the engine does not track them): a record.
    if (mode == delivery_mode::rudi)
        return post_message(index, none, o.engine_peer, f, data, 0,
                            static_cast<std::uint32_t>(o.len));
    return post_send_message(index, f, data);
}

endpoint_impl::post_result endpoint_impl::issue_next(std::uint32_t index) {
    op& o = ops[index];
    if (o.kind == op_kind::send) return issue_send(o, index);
    if (o.kind == op_kind::atomic) {
        ses_fields f = request_fields(o.fetching || o.cas ? wire::ses_opcode::fetching_atomic
                                                          : wire::ses_opcode::atomic);
        f.memory_key = o.key;
        f.buffer_offset = o.offset;
        auto data =
            std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(o.src), o.len);
        if (o.cas) {
            wire::ses_cas_extension c;
            c.atomic = o.atomic;
            c.compare_value = o.compare;
            c.swap_value = o.swap;
            f.cas = c;
            data = {};
        } else {
            f.atomic = o.atomic;
        }
        return post_message(index, none, o.engine_peer, f, data, 0,
                            static_cast<std::uint32_t>(o.len));
    }
    // Writes, reads and a rendezvous receive's pulls go chunk by chunk.
    const bool pull = o.kind == op_kind::recv;
    const std::size_t total = pull ? o.msg_len : o.len;
    const auto chunk = static_cast<std::uint32_t>(
        std::min<std::size_t>(chunk_bytes, total - std::min(total, o.next_offset)));
    ses_fields f =
        request_fields(o.kind == op_kind::write ? wire::ses_opcode::write : wire::ses_opcode::read);
    f.memory_key = pull ? o.pull_key : o.key;
    f.buffer_offset = (pull ? o.pull_offset : o.offset) + o.next_offset;
    std::span<const std::uint8_t> data;
    if (o.kind == op_kind::write) {
        data = {reinterpret_cast<const std::uint8_t*>(o.src) + o.next_offset, chunk};
        f.hd = o.hd;
        f.header_data = o.data;
    } else {
        // An empty read still asks (request_length 0 means "the payload's size": nothing).
        f.request_length = chunk;
    }
    const std::uint32_t peer = pull ? o.origin_peer : o.engine_peer;
    const post_result r = post_message(index, none, peer, f, data, o.next_offset, chunk);
    if (r == post_result::posted) o.next_offset += chunk;
    return r;
}

void endpoint_impl::pump(std::uint32_t index) {
    op& o = ops[index];
    while (o.in_use && o.error == errc{} && o.in_flight < chunks_in_flight && has_more(o) &&
           !o.deferred) {
        const post_result r = issue_next(index);
        if (r == post_result::no_room) {
            stalled.push_back(index);
            return;
        }
        if (r == post_result::failed) break;
    }
    if (o.in_use && o.in_flight == 0) progress_op(index);
}

}  // namespace detail

// ---- the public posts ----

namespace {

bool has_flag(op_flags set, op_flags flag) noexcept {
    return (static_cast<unsigned>(set) & static_cast<unsigned>(flag)) != 0;
}
bool silent(op_flags f) noexcept {
    return has_flag(f, op_flags::no_completion);
}
// Why an initiator operation cannot be posted before its arguments are read: a closed endpoint,
// or a receive's flag.
errc cannot_post(const std::shared_ptr<detail::endpoint_base>& impl, op_flags f) noexcept {
    if (!impl) return errc::endpoint_closed;
    return has_flag(f, op_flags::multi_recv) ? errc::invalid_argument : errc{};
}

}  // namespace

std::error_code endpoint::send(peer_addr to, std::span<const std::byte> buf, void* context,
                               op_flags flags) {
    if (const errc e = cannot_post(impl_, flags); e != errc{}) return e;
    if (impl_->kind == transport::roce_rc) [[unlikely]]
        return detail::roce_of(*impl_).send(to, buf, false, 0, context, false, silent(flags));
    return uet_of(*impl_).post_send(to, buf, false, 0, context, false, silent(flags));
}

std::error_code endpoint::send_list(peer_addr to, std::span<const send_work> list,
                                    std::size_t& posted) {
    posted = 0;
    if (!impl_) return errc::endpoint_closed;
    if (impl_->kind == transport::roce_rc) [[unlikely]]
        return detail::roce_of(*impl_).send_list(to, list, false, posted);
    return uet_of(*impl_).post_send_list(to, list, false, posted);
}

std::error_code endpoint::tsend_list(peer_addr to, std::span<const send_work> list,
                                     std::size_t& posted) {
    posted = 0;
    if (!impl_) return errc::endpoint_closed;
    if (impl_->kind == transport::roce_rc) [[unlikely]]
        return detail::roce_of(*impl_).send_list(to, list, true, posted);
    return uet_of(*impl_).post_send_list(to, list, true, posted);
}

std::error_code endpoint::recv(std::span<std::byte> buf, void* context, peer_addr from,
                               op_flags flags) {
    if (!impl_) return errc::endpoint_closed;
    if (silent(flags)) return errc::invalid_argument;  // a receive always has its entry
    if (impl_->kind == transport::roce_rc) [[unlikely]]
        return detail::roce_of(*impl_).recv(buf, false, 0, 0, context, from,
                                            has_flag(flags, op_flags::multi_recv));
    return uet_of(*impl_).post_recv(buf, false, 0, 0, context, from,
                                    has_flag(flags, op_flags::multi_recv));
}

std::error_code endpoint::recv_list(std::span<const recv_work> list, std::size_t& posted,
                                    peer_addr from) {
    posted = 0;
    if (!impl_) return errc::endpoint_closed;
    if (impl_->kind == transport::roce_rc) [[unlikely]]
        return detail::roce_of(*impl_).recv_list(list, false, from, posted);
    return uet_of(*impl_).post_recv_list(list, false, from, posted);
}

std::error_code endpoint::trecv_list(std::span<const recv_work> list, std::size_t& posted,
                                     peer_addr from) {
    posted = 0;
    if (!impl_) return errc::endpoint_closed;
    if (impl_->kind == transport::roce_rc) [[unlikely]]
        return detail::roce_of(*impl_).recv_list(list, true, from, posted);
    return uet_of(*impl_).post_recv_list(list, true, from, posted);
}

std::error_code endpoint::inject(peer_addr to, std::span<const std::byte> buf) {
    if (!impl_) return errc::endpoint_closed;
    if (impl_->kind == transport::roce_rc) [[unlikely]]
        return detail::roce_of(*impl_).send(to, buf, false, 0, nullptr, true, false);
    return uet_of(*impl_).post_send(to, buf, false, 0, nullptr, true, false);
}

std::error_code endpoint::tsend(peer_addr to, std::span<const std::byte> buf, std::uint64_t tag,
                                void* context, op_flags flags) {
    if (const errc e = cannot_post(impl_, flags); e != errc{}) return e;
    if (impl_->kind == transport::roce_rc) [[unlikely]]
        return detail::roce_of(*impl_).send(to, buf, true, tag, context, false, silent(flags));
    return uet_of(*impl_).post_send(to, buf, true, tag, context, false, silent(flags));
}

std::error_code endpoint::trecv(std::span<std::byte> buf, std::uint64_t tag, std::uint64_t ignore,
                                void* context, peer_addr from) {
    if (!impl_) return errc::endpoint_closed;
    if (impl_->kind == transport::roce_rc) [[unlikely]]
        return detail::roce_of(*impl_).recv(buf, true, tag, ignore, context, from, false);
    return uet_of(*impl_).post_recv(buf, true, tag, ignore, context, from);
}

std::error_code endpoint::probe(probed_message& out, peer_addr from, probe_flags flags) {
    if (!impl_) return errc::endpoint_closed;
    if (impl_->kind == transport::roce_rc) return errc::unsupported;
    return uet_of(*impl_).probe(false, 0, 0, from, flags == probe_flags::claim, out);
}

std::error_code endpoint::tprobe(std::uint64_t tag, std::uint64_t ignore, probed_message& out,
                                 peer_addr from, probe_flags flags) {
    if (!impl_) return errc::endpoint_closed;
    if (impl_->kind == transport::roce_rc) return errc::unsupported;
    return uet_of(*impl_).probe(true, tag, ignore, from, flags == probe_flags::claim, out);
}

std::error_code endpoint::recv_claimed(std::uint64_t claim, std::span<std::byte> buf,
                                       void* context) {
    if (!impl_) return errc::endpoint_closed;
    if (impl_->kind == transport::roce_rc) return errc::unsupported;
    return uet_of(*impl_).recv_claimed(claim, buf, context);
}

std::error_code endpoint::cancel(void* context) {
    if (!impl_) return errc::endpoint_closed;
    if (impl_->kind == transport::roce_rc) return errc::unsupported;
    return uet_of(*impl_).cancel(context);
}

std::error_code endpoint::tinject(peer_addr to, std::span<const std::byte> buf, std::uint64_t tag) {
    if (!impl_) return errc::endpoint_closed;
    if (impl_->kind == transport::roce_rc) [[unlikely]]
        return detail::roce_of(*impl_).send(to, buf, true, tag, nullptr, true, false);
    return uet_of(*impl_).post_send(to, buf, true, tag, nullptr, true, false);
}

std::error_code endpoint::write(peer_addr to, std::span<const std::byte> buf, std::uint64_t offset,
                                std::uint64_t key, void* context, op_flags flags) {
    if (const errc e = cannot_post(impl_, flags); e != errc{}) return e;
    if (impl_->kind == transport::roce_rc) [[unlikely]]
        return detail::roce_of(*impl_).rma(detail::op_kind::write, to, buf.data(), nullptr,
                                           buf.size(), offset, key, false, 0, context,
                                           silent(flags));
    return uet_of(*impl_).post_rma(detail::op_kind::write, to, buf.data(), nullptr, buf.size(),
                                   offset, key, false, 0, context, silent(flags));
}

std::error_code endpoint::write_data(peer_addr to, std::span<const std::byte> buf,
                                     std::uint64_t offset, std::uint64_t key, std::uint64_t data,
                                     void* context, op_flags flags) {
    if (const errc e = cannot_post(impl_, flags); e != errc{}) return e;
    if (impl_->kind == transport::roce_rc) [[unlikely]]
        return detail::roce_of(*impl_).rma(detail::op_kind::write, to, buf.data(), nullptr,
                                           buf.size(), offset, key, true, data, context,
                                           silent(flags));
    return uet_of(*impl_).post_rma(detail::op_kind::write, to, buf.data(), nullptr, buf.size(),
                                   offset, key, true, data, context, silent(flags));
}

std::error_code endpoint::read(peer_addr from, std::span<std::byte> buf, std::uint64_t offset,
                               std::uint64_t key, void* context, op_flags flags) {
    if (const errc e = cannot_post(impl_, flags); e != errc{}) return e;
    if (impl_->kind == transport::roce_rc) [[unlikely]]
        return detail::roce_of(*impl_).rma(detail::op_kind::read, from, nullptr, buf.data(),
                                           buf.size(), offset, key, false, 0, context,
                                           silent(flags));
    return uet_of(*impl_).post_rma(detail::op_kind::read, from, nullptr, buf.data(), buf.size(),
                                   offset, key, false, 0, context, silent(flags));
}

std::error_code endpoint::atomic(peer_addr to, atomic_op op, atomic_type type,
                                 std::span<const std::byte> operand, std::uint64_t offset,
                                 std::uint64_t key, void* context, op_flags flags) {
    if (const errc e = cannot_post(impl_, flags); e != errc{}) return e;
    if (impl_->kind == transport::roce_rc) [[unlikely]]
        return detail::roce_of(*impl_).atomic(to, op, type, operand, {}, nullptr, false, false,
                                              offset, key, context, silent(flags));
    return uet_of(*impl_).post_atomic(to, op, type, operand, {}, nullptr, false, false, offset, key,
                                      context, silent(flags));
}

std::error_code endpoint::fetch_atomic(peer_addr to, atomic_op op, atomic_type type,
                                       std::span<const std::byte> operand,
                                       std::span<std::byte> result, std::uint64_t offset,
                                       std::uint64_t key, void* context, op_flags flags) {
    if (const errc e = cannot_post(impl_, flags); e != errc{}) return e;
    if (impl_->kind == transport::roce_rc) [[unlikely]]
        return detail::roce_of(*impl_).atomic(to, op, type, operand, result, nullptr, true, false,
                                              offset, key, context, silent(flags));
    return uet_of(*impl_).post_atomic(to, op, type, operand, result, nullptr, true, false, offset,
                                      key, context, silent(flags));
}

std::error_code endpoint::compare_atomic(peer_addr to, atomic_type type,
                                         std::span<const std::byte> compare,
                                         std::span<const std::byte> swap,
                                         std::span<std::byte> result, std::uint64_t offset,
                                         std::uint64_t key, void* context, op_flags flags) {
    if (const errc e = cannot_post(impl_, flags); e != errc{}) return e;
    if (compare.size() != size_of(type)) return errc::invalid_argument;
    if (impl_->kind == transport::roce_rc) [[unlikely]]
        return detail::roce_of(*impl_).atomic(to, atomic_op::swap, type, swap, result,
                                              compare.data(), true, true, offset, key, context,
                                              silent(flags));
    return uet_of(*impl_).post_atomic(to, atomic_op::swap, type, swap, result, compare.data(), true,
                                      true, offset, key, context, silent(flags));
}

}  // namespace uet
