// What the application posts on a roce_rc endpoint: each operation becomes one work request on
// the QP to its peer (connected on the first post to that peer). A SEND goes with its 16-byte
// header in front, copied with the data; no_completion and inject post unsignaled work requests.
#include <cstring>

#include "api/roce_endpoint.hpp"

namespace uet::detail {

namespace {

// The longest message: RC carries 2^31 bytes in one work request, the header included.
constexpr std::size_t max_roce_message = (std::size_t{1} << 31) - roce_header_bytes;

errc errc_of(roce::post_error e) noexcept {
    switch (e) {
        case roce::post_error::none:
            return {};
        case roce::post_error::queue_full:
        case roce::post_error::not_ready:
            return errc::again;
        case roce::post_error::bad_length:
        case roce::post_error::read_beyond_window:
            return errc::message_too_long;
        default:
            return errc::invalid_argument;
    }
}

// Whether an atomic maps to a verbs atomic (8 bytes, fetch-add or compare-and-swap), and which.
bool verbs_atomic(atomic_op aop, atomic_type type, bool cas) noexcept {
    if (type != atomic_type::int64 && type != atomic_type::uint64) return false;
    return cas || aop == atomic_op::sum || aop == atomic_op::read;
}

}  // namespace

std::uint8_t* roce_endpoint::staged(std::uint32_t index, std::size_t bytes) {
    std::vector<std::uint8_t>& s = staged_[index];
    if (s.size() < bytes) s.resize(bytes);
    return s.data();
}

errc roce_endpoint::start(op_kind kind, peer_addr peer, bool reserve_cq, void* context, bool silent,
                          std::uint32_t& index) {
    if (static_cast<std::uint64_t>(peer) >= av->addresses.size()) return errc::unknown_peer;
    if (reserve_cq && !cq->reserve()) return errc::cq_full;
    index = ops_.allocate();
    if (index == none) {
        if (reserve_cq) cq->unreserve();
        return errc::again;
    }
    op& o = ops_[index];
    o.kind = kind;
    o.context = context;
    o.peer = peer;
    o.silent = silent;
    return {};
}

roce_endpoint::peer_qps& roce_endpoint::qps_of(peer_addr peer) {
    const auto key = static_cast<std::uint64_t>(peer);
    if (const auto it = peers_.find(key); it != peers_.end()) return it->second;
    // The metric's minimum latency is left to the jitter filter: the lowest metric measured.
    return peers_
        .emplace(key, peer_qps{std::vector<roce::qpn_t>(sched_params_.qps_per_connection, 0),
                               qp_sched::scheduler_state(sched_params_, attr.link_gbps, 0),
                               {}})
        .first->second;
}

errc roce_endpoint::connection_to(peer_addr peer, std::uint32_t slot, roce::qpn_t& qpn) {
    peer_qps& g = qps_of(peer);
    if (g.qp[slot] != 0) {
        qpn = g.qp[slot];
        return {};
    }
    const auto key = static_cast<std::uint64_t>(peer);
    const std::uint32_t ip = av->addresses[key].ip;
    const std::uint64_t t = domain->fabric->net->now();
    // Each QP takes its own UDP source port (from its number): its own ECMP path.
    qpn = eng_->connect({ip, mac_of(ip), 0}, key, t);
    if (qpn == 0) return errc::again;  // every QP or connection entry in use
    connection c;
    c.peer = peer;
    c.slot = slot;
    connections_.emplace(qpn, std::move(c));
    g.qp[slot] = qpn;
    domain->fabric->net->on_new_peer(ip);
    return {};
}

roce::send_wr roce_endpoint::work_request(std::uint32_t index) const noexcept {
    const op& o = ops_[index];
    roce::send_wr w;
    w.wr_id = index;
    // Subchunks and measured requests are signaled: their completions merge or time them.
    const op_route& r = routes_[index];
    w.signaled = (!o.silent && !o.inject) || r.measured || r.parent != none;
    w.remote_va = o.offset;
    w.rkey = static_cast<std::uint32_t>(o.key);
    switch (o.kind) {
        case op_kind::send:
            w.opcode = roce::wr_opcode::send;
            w.local = const_cast<std::uint8_t*>(staged_[index].data());
            w.length = static_cast<std::uint32_t>(o.len + roce_header_bytes);
            break;
        case op_kind::write:
            w.opcode = o.hd ? roce::wr_opcode::write_imm : roce::wr_opcode::write;
            w.local = reinterpret_cast<std::uint8_t*>(const_cast<std::byte*>(o.src));
            w.length = static_cast<std::uint32_t>(o.len);
            w.imm = static_cast<std::uint32_t>(o.data);
            break;
        case op_kind::read:
            w.opcode = roce::wr_opcode::read;
            w.local = reinterpret_cast<std::uint8_t*>(o.dst);
            w.length = static_cast<std::uint32_t>(o.len);
            break;
        default: {  // atomic: the original value lands in the result (or a scratch word)
            w.opcode = o.cas ? roce::wr_opcode::cmp_swap : roce::wr_opcode::fetch_add;
            w.local = o.fetching ? reinterpret_cast<std::uint8_t*>(o.dst)
                                 : const_cast<std::uint8_t*>(staged_[index].data());
            w.length = 8;
            std::uint64_t operand = 0, compare = 0;
            std::memcpy(&operand, o.swap.data(), 8);
            std::memcpy(&compare, o.compare.data(), 8);
            w.compare_add = o.cas ? compare : operand;
            w.swap = o.cas ? operand : 0;
            break;
        }
    }
    return w;
}

errc roce_endpoint::submit(roce::qpn_t qpn, std::uint32_t index) {
    connection& c = connections_.at(qpn);
    if (!c.established || c.dead || !c.waiting.empty()) {
        c.waiting.push_back(index);
        return {};
    }
    const roce::post_error e = eng_->post_send(qpn, work_request(index));
    if (e == roce::post_error::queue_full) {
        c.waiting.push_back(index);
        return {};
    }
    if (e != roce::post_error::none) return errc_of(e);
    c.posted.push_back(index);
    if (routes_[index].measured) routes_[index].posted_at = domain->fabric->net->now();
    return {};
}

void roce_endpoint::post_waiting(roce::qpn_t qpn, connection& c) {
    while (!c.waiting.empty()) {
        const std::uint32_t index = c.waiting.front();
        const roce::post_error e = eng_->post_send(qpn, work_request(index));
        if (e == roce::post_error::queue_full) return;
        c.waiting.pop_front();
        if (e == roce::post_error::none) {
            c.posted.push_back(index);
            // The RTT runs from when the work request went on the QP, not from the wait for room.
            if (routes_[index].measured) routes_[index].posted_at = now;
            continue;
        }
        fail(ops_[index], errc_of(e), 0);
        settle(index);
    }
}

// Takes the op started in `index` to its QP (or QPs); on an error the op is undone.
errc roce_endpoint::launch(std::uint32_t index) {
    op& o = ops_[index];
    peer_qps& g = qps_of(o.peer);
    errc e{};
    if (g.qp.size() > 1) {
        e = launch_scheduled(index, g);
    } else {
        if (o.kind == op_kind::write || o.kind == op_kind::read) {
            qp_sched::subchunk whole;
            g.sched.schedule(o.len, now, {&whole, 1});  // counts it on the one QP
        }
        roce::qpn_t qpn = 0;
        e = connection_to(o.peer, 0, qpn);
        if (e == errc{}) e = submit(qpn, index);
    }
    if (e != errc{}) {
        routes_[index] = {};
        if (!o.inject) cq->unreserve();
        ops_.release(index);
    }
    return e;
}

errc roce_endpoint::launch_scheduled(std::uint32_t index, peer_qps& g) {
    op& o = ops_[index];
    op_route& r = routes_[index];
    const bool data = (o.kind == op_kind::write || o.kind == op_kind::read) && o.len != 0;
    // SENDs (matched in order at the target) and atomics (executed once, in order) stay on the
    // first QP.
    // Room for a subchunk per QP first: a request refused for now (errc::again, posted again
    // by the application) must not count in the scheduler's requests or move its turn.
    if (data && ops_.room() < g.qp.size()) return errc::again;
    qp_sched::subchunk parts[qp_sched::params::max_qps];
    std::size_t k = 1;
    parts[0] = {0, 0, o.len};
    if (data) k = g.sched.schedule(o.len, domain->fabric->net->now(), {parts, g.qp.size()});
    roce::qpn_t qpn = 0;
    // Every QP the request needs is connected (or connecting) before anything is posted, so
    // that a refusal leaves nothing behind.
    for (std::size_t i = 0; i < k; ++i)
        if (const errc e = connection_to(o.peer, parts[i].qp, qpn); e != errc{}) return e;
    if (k == 1) {
        r.slot = parts[0].qp;
        r.measured = data;
        if (const errc e = submit(g.qp[r.slot], index); e != errc{}) return e;
    } else {
        for (std::size_t i = 0; i < k; ++i) {
            const errc e =
                launch_subchunk(index, parts[i].qp, parts[i].offset, parts[i].length, false);
            if (e == errc{}) continue;
            if (r.pending == 0) return e;
            // Some went: the request ends with them, failed.
            fail(o, e, 0);
            break;
        }
    }
    r.ordered = true;
    g.order.push_back(index);
    return {};
}

errc roce_endpoint::launch_subchunk(std::uint32_t parent, std::uint32_t slot, std::uint64_t offset,
                                    std::uint64_t length, bool trailer) {
    const std::uint32_t index = ops_.allocate();
    if (index == none) return errc::again;
    const op& p = ops_[parent];
    op& o = ops_[index];
    o.kind = p.kind;
    o.peer = p.peer;
    o.src = p.src != nullptr ? p.src + offset : nullptr;
    o.dst = p.dst != nullptr ? p.dst + offset : nullptr;
    o.len = length;
    o.offset = p.offset + offset;
    o.key = p.key;
    o.hd = trailer;
    o.data = p.data;
    op_route& r = routes_[index];
    r.parent = parent;
    r.slot = slot;
    r.measured = !trailer;
    ++routes_[parent].pending;
    roce::qpn_t qpn = 0;
    errc e = connection_to(p.peer, slot, qpn);
    if (e == errc{}) e = submit(qpn, index);
    if (e != errc{}) {
        --routes_[parent].pending;
        r = {};
        ops_.release(index);
    }
    return e;
}

std::error_code roce_endpoint::send(peer_addr to, std::span<const std::byte> buf, bool tagged,
                                    std::uint64_t tag, void* context, bool inject, bool silent) {
    if (!eng_) return errc::endpoint_closed;
    if (inject && buf.size() > attr.inject_size) return errc::message_too_long;
    if (buf.size() > attr.max_message_size || buf.size() > max_roce_message)
        return errc::message_too_long;
    std::uint32_t index = none;
    if (const errc e = start(op_kind::send, to, !inject, context, silent, index); e != errc{})
        return e;
    op& o = ops_[index];
    o.inject = inject;
    o.tagged = tagged;
    o.tag = tag;
    o.len = buf.size();
    o.flags = tagged ? completion_flags::send | completion_flags::tagged : completion_flags::send;
    std::uint8_t* s = staged(index, roce_header_bytes + buf.size());
    write_roce_header(s, {tagged, static_cast<std::uint32_t>(buf.size()), tag});
    if (!buf.empty()) std::memcpy(s + roce_header_bytes, buf.data(), buf.size());
    return launch(index);
}

std::error_code roce_endpoint::send_list(peer_addr to, std::span<const send_work> list, bool tagged,
                                         std::size_t& posted) {
    posted = 0;
    for (const send_work& w : list) {
        const bool silent =
            (static_cast<unsigned>(w.flags) & static_cast<unsigned>(op_flags::no_completion)) != 0;
        if ((static_cast<unsigned>(w.flags) & static_cast<unsigned>(op_flags::multi_recv)) != 0)
            return errc::invalid_argument;
        if (const std::error_code ec = send(to, w.buf, tagged, w.tag, w.context, false, silent))
            return ec;
        ++posted;
    }
    return no_error;
}

std::error_code roce_endpoint::recv(std::span<std::byte> buf, bool tagged, std::uint64_t tag,
                                    std::uint64_t ignore, void* context, peer_addr from,
                                    bool multi) {
    if (!eng_) return errc::endpoint_closed;
    if (multi) return errc::unsupported;  // no multi-receive buffers on roce_rc
    std::uint32_t source = ses::any_source;
    if (from != any_peer) {
        if (static_cast<std::uint64_t>(from) >= av->addresses.size()) return errc::unknown_peer;
        source = static_cast<std::uint32_t>(from);
    }
    if (!cq->reserve()) return errc::cq_full;
    const std::uint32_t index = ops_.allocate();
    if (index == none) {
        cq->unreserve();
        return errc::again;
    }
    op& o = ops_[index];
    o.kind = op_kind::recv;
    o.context = context;
    o.dst = buf.data();
    o.len = buf.size();
    o.tagged = tagged;
    o.rule = ses::match_rule{tagged, tag, ignore, source};
    o.flags = tagged ? completion_flags::recv | completion_flags::tagged : completion_flags::recv;
    for (const std::uint32_t slot : unexpected_order_) {
        unexpected_message& u = unexpected_[slot];
        if (u.claimed_by != none ||
            !o.rule.matches(u.header.tagged, u.header.tag, roce_source_of(u.from)))
            continue;
        if (!u.done) {
            u.claimed_by = index;  // completes when the rest of it has arrived
            return no_error;
        }
        deliver(index, u);
        free_unexpected(slot);
        return no_error;
    }
    if (!posted_.push(tagged, index)) {
        ops_.release(index);
        cq->unreserve();
        return errc::again;
    }
    return no_error;
}

std::error_code roce_endpoint::recv_list(std::span<const recv_work> list, bool tagged,
                                         peer_addr from, std::size_t& posted) {
    posted = 0;
    for (const recv_work& w : list) {
        if (const std::error_code ec = recv(w.buf, tagged, w.tag, w.ignore, w.context, from, false))
            return ec;
        ++posted;
    }
    return no_error;
}

std::error_code roce_endpoint::rma(op_kind kind, peer_addr peer, const std::byte* src,
                                   std::byte* dst, std::size_t len, std::uint64_t offset,
                                   std::uint64_t key, bool with_data, std::uint64_t data,
                                   void* context, bool silent) {
    if (!eng_) return errc::endpoint_closed;
    if (len > attr.max_message_size || len > max_roce_message) return errc::message_too_long;
    // The immediate data of a WRITE is 32 bits.
    if (with_data && data > 0xffffffffu) return errc::invalid_argument;
    std::uint32_t index = none;
    if (const errc e = start(kind, peer, true, context, silent, index); e != errc{}) return e;
    set_rma(ops_[index], kind, src, dst, len, offset, key, with_data, data);
    return launch(index);
}

std::error_code roce_endpoint::atomic(peer_addr to, atomic_op aop, atomic_type type,
                                      std::span<const std::byte> operand,
                                      std::span<std::byte> result, const std::byte* compare,
                                      bool fetching, bool cas, std::uint64_t offset,
                                      std::uint64_t key, void* context, bool silent) {
    if (!eng_) return errc::endpoint_closed;
    if (aop == atomic_op::read && !fetching) return errc::invalid_argument;
    if (!verbs_atomic(aop, type, cas)) return errc::unsupported;
    if (operand.size() != 8 || (fetching && result.size() < 8)) return errc::invalid_argument;
    if (offset % 8 != 0) return errc::invalid_argument;  // verbs atomics are 8-byte aligned
    std::uint32_t index = none;
    if (const errc e = start(op_kind::atomic, to, true, context, silent, index); e != errc{})
        return e;
    op& o = ops_[index];
    o.src = operand.data();
    o.len = 8;
    o.dst = result.data();
    o.offset = offset;
    o.key = key;
    o.fetching = fetching;
    o.cas = cas;
    o.compare = {};
    o.swap = {};
    // atomic_op::read is a fetch-add of 0.
    if (aop != atomic_op::read) std::memcpy(o.swap.data(), operand.data(), 8);
    if (cas) std::memcpy(o.compare.data(), compare, 8);
    if (!fetching) staged(index, 8);
    o.flags =
        completion_flags::atomic | (fetching ? completion_flags::read : completion_flags::write);
    return launch(index);
}

}  // namespace uet::detail
