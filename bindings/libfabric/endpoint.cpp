// FI_EP_RDM endpoints of the uet libfabric provider: a uet::endpoint opened at fi_enable, with
// its own uet completion queue whose entries go to the transmit or receive CQ bound to it.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_collective.h>
#include <rdma/providers/fi_log.h>

#include <cstdio>
#include <cstring>

#include "uet_fi/uet_fi.hpp"

namespace uet_fi {

// A post's return: 0, or libfabric's error; a full queue progresses, so that a retry can pass.
ssize_t posted(ep_obj* ep, std::error_code ec) {
    if (!ec) return 0;
    // A peer uet does not know: an FI_AV_MAP handle the AV never gave. -FI_EINVAL, as for an
    // FI_AV_TABLE index it never gave.
    if (ec == uet::errc::unknown_peer) return -FI_EINVAL;
    const int e = to_fi_errno(ec);
    if (e == -FI_EAGAIN) ep->progress();
    return e;
}

// Whether a send posted with these flags ends in a completion: fi_inject never does; others
// unless the transmit CQ was bound with FI_SELECTIVE_COMPLETION and FI_COMPLETION is not set.
bool wants_completion(const ep_obj* ep, std::uint64_t flags, bool inject_call) {
    return !inject_call && (!ep->tx_selective || (flags & FI_COMPLETION));
}

namespace {

constexpr std::size_t inject_slots = 64;
constexpr std::size_t max_queue_size = 16384;

std::uint64_t fi_flags(uet::completion_flags f) {
    using uet::completion_flags;
    std::uint64_t out = 0;
    if (has(f, completion_flags::send)) out |= FI_SEND;
    if (has(f, completion_flags::recv)) out |= FI_RECV;
    if (has(f, completion_flags::tagged))
        out |= FI_TAGGED;
    else if (out != 0)
        out |= FI_MSG;
    if (has(f, completion_flags::rma)) out |= FI_RMA;
    if (has(f, completion_flags::atomic)) out |= FI_ATOMIC;
    if (has(f, completion_flags::read)) out |= FI_READ;
    if (has(f, completion_flags::write)) out |= FI_WRITE;
    if (has(f, completion_flags::remote_cq_data)) out |= FI_REMOTE_CQ_DATA;
    if (has(f, completion_flags::remote_write)) out |= FI_REMOTE_WRITE;
    if (has(f, completion_flags::multi_recv)) out |= FI_MULTI_RECV;
    return out;
}

ssize_t post_send(ep_obj* ep, const void* buf, std::size_t len, fi_addr_t dest, void* context,
                  std::uint64_t flags, bool tagged, std::uint64_t tag, bool inject_call = false) {
    if (!ep->enabled) return -FI_EOPBADSTATE;
    if (flags & FI_REMOTE_CQ_DATA) return -FI_EBADFLAGS;
    uet::peer_addr peer;
    if (!ep->av->peer(dest, peer)) return -FI_EINVAL;
    const auto bytes = std::span(static_cast<const std::byte*>(buf), len);
    const bool completion = wants_completion(ep, flags, inject_call);
    if (flags & FI_INJECT) {
        if (len > ep->inject_size) return -FI_EMSGSIZE;
        // Counted, an inject needs its completion: it takes the copying path below, quietly.
        const bool quiet = !completion && ep->send_cntr != nullptr;
        if (!completion && !quiet) {
            const ssize_t rc =
                posted(ep, tagged ? ep->ep.tinject(peer, bytes, tag) : ep->ep.inject(peer, bytes));
            // Nothing may read a CQ for a while (no completion is awaited for an inject), and
            // progress is manual: one step now hands the message to the port.
            if (rc == 0) ep->progress();
            return rc;
        }
        // The message is copied now, as FI_INJECT promises, and its send still completes.
        if (ep->free_slots.empty()) {
            ep->progress();
            return -FI_EAGAIN;
        }
        ep_obj::inject_slot* slot = ep->free_slots.back();
        std::memcpy(slot->data.data(), buf, len);
        slot->context = context;
        slot->quiet = quiet;
        const auto copy = std::span<const std::byte>(slot->data.data(), len);
        const std::error_code ec =
            tagged ? ep->ep.tsend(peer, copy, tag, slot) : ep->ep.send(peer, copy, slot);
        if (!ec) ep->free_slots.pop_back();
        return posted(ep, ec);
    }
    void* ctx = completion ? op_context(context) : counted_context(ep, ep->send_cntr, context);
    if (ctx == nullptr) return posted(ep, uet::errc::again);
    const auto of =
        completion || ep->send_cntr ? uet::op_flags::none : uet::op_flags::no_completion;
    return posted_counted(
        ep, tagged ? ep->ep.tsend(peer, bytes, tag, ctx, of) : ep->ep.send(peer, bytes, ctx, of),
        ctx);
}

ssize_t post_recv(ep_obj* ep, void* buf, std::size_t len, fi_addr_t src, void* context,
                  std::uint64_t flags, bool tagged, std::uint64_t tag, std::uint64_t ignore) {
    if (!ep->enabled) return -FI_EOPBADSTATE;
    // FI_PEEK goes to tagged_peek; FI_CLAIM alone receives what one claimed (tagged only).
    if ((flags & (FI_PEEK | FI_DISCARD)) || ((flags & FI_CLAIM) && !tagged)) return -FI_EBADFLAGS;
    // uet's receives always complete: on a queue bound with FI_SELECTIVE_COMPLETION, one
    // posted without FI_COMPLETION asks what uet cannot do.
    if (ep->rx_selective && !(flags & FI_COMPLETION)) return -FI_EBADFLAGS;
    const auto bytes = std::span(static_cast<std::byte*>(buf), len);
    // The claim names the message: its source address (Open MPI passes 0) and tags do not count.
    if (flags & FI_CLAIM) {
        if (context == nullptr) return -FI_EINVAL;
        return posted(ep, ep->ep.recv_claimed(claim_of(context), bytes, context));
    }
    uet::peer_addr from = uet::any_peer;
    if ((ep->caps & FI_DIRECTED_RECV) && src != FI_ADDR_UNSPEC && !ep->av->peer(src, from))
        return -FI_EINVAL;
    // FI_MULTI_RECV: untagged receives of an endpoint with the capability (libfabric 1.17 has
    // no tagged multi-receive). A buffer below FI_OPT_MIN_MULTI_RECV gets -FI_EINVAL from uet.
    if ((flags & FI_MULTI_RECV) && (tagged || !(ep->caps & FI_MULTI_RECV))) return -FI_EBADFLAGS;
    if (tagged) return posted(ep, ep->ep.trecv(bytes, tag, ignore, op_context(context), from));
    const auto of = (flags & FI_MULTI_RECV) ? uet::op_flags::multi_recv : uet::op_flags::none;
    return posted(ep, ep->ep.recv(bytes, op_context(context), from, of));
}

// One iov at most (iov_limit 1).
bool one_iov(const iovec* iov, std::size_t count, void*& base, std::size_t& len) {
    if (count > 1) return false;
    base = count == 1 ? iov[0].iov_base : nullptr;
    len = count == 1 ? iov[0].iov_len : 0;
    return true;
}

// ---- fi_ops_msg ----

ssize_t msg_recv(fid_ep* f, void* buf, std::size_t len, void*, fi_addr_t src, void* context) {
    auto* ep = self<ep_obj>(f);
    return post_recv(ep, buf, len, src, context, ep->rx_op_flags, false, 0, 0);
}
ssize_t msg_recvv(fid_ep* f, const iovec* iov, void**, std::size_t count, fi_addr_t src,
                  void* context) {
    void* base;
    std::size_t len;
    if (!one_iov(iov, count, base, len)) return -FI_EINVAL;
    return msg_recv(f, base, len, nullptr, src, context);
}
ssize_t msg_recvmsg(fid_ep* f, const fi_msg* m, std::uint64_t flags) {
    void* base;
    std::size_t len;
    if (!one_iov(m->msg_iov, m->iov_count, base, len)) return -FI_EINVAL;
    return post_recv(self<ep_obj>(f), base, len, m->addr, m->context, flags, false, 0, 0);
}
ssize_t msg_send(fid_ep* f, const void* buf, std::size_t len, void*, fi_addr_t dest,
                 void* context) {
    auto* ep = self<ep_obj>(f);
    return post_send(ep, buf, len, dest, context, ep->tx_op_flags & ~FI_INJECT, false, 0);
}
ssize_t msg_sendv(fid_ep* f, const iovec* iov, void**, std::size_t count, fi_addr_t dest,
                  void* context) {
    void* base;
    std::size_t len;
    if (!one_iov(iov, count, base, len)) return -FI_EINVAL;
    return msg_send(f, base, len, nullptr, dest, context);
}
ssize_t msg_sendmsg(fid_ep* f, const fi_msg* m, std::uint64_t flags) {
    void* base;
    std::size_t len;
    if (!one_iov(m->msg_iov, m->iov_count, base, len)) return -FI_EINVAL;
    return post_send(self<ep_obj>(f), base, len, m->addr, m->context, flags, false, 0);
}
ssize_t msg_inject(fid_ep* f, const void* buf, std::size_t len, fi_addr_t dest) {
    return post_send(self<ep_obj>(f), buf, len, dest, nullptr, FI_INJECT, false, 0, true);
}

// ---- fi_ops_tagged ----

ssize_t tagged_recv(fid_ep* f, void* buf, std::size_t len, void*, fi_addr_t src, std::uint64_t tag,
                    std::uint64_t ignore, void* context) {
    auto* ep = self<ep_obj>(f);
    // The default FI_MULTI_RECV of rx_attr->op_flags is for untagged receives.
    return post_recv(ep, buf, len, src, context, ep->rx_op_flags & ~FI_MULTI_RECV, true, tag,
                     ignore);
}
ssize_t tagged_recvv(fid_ep* f, const iovec* iov, void**, std::size_t count, fi_addr_t src,
                     std::uint64_t tag, std::uint64_t ignore, void* context) {
    void* base;
    std::size_t len;
    if (!one_iov(iov, count, base, len)) return -FI_EINVAL;
    return tagged_recv(f, base, len, nullptr, src, tag, ignore, context);
}
ssize_t tagged_recvmsg(fid_ep* f, const fi_msg_tagged* m, std::uint64_t flags) {
    if (flags & FI_PEEK) return tagged_peek(self<ep_obj>(f), m, flags);
    void* base;
    std::size_t len;
    if (!one_iov(m->msg_iov, m->iov_count, base, len)) return -FI_EINVAL;
    return post_recv(self<ep_obj>(f), base, len, m->addr, m->context, flags, true, m->tag,
                     m->ignore);
}
ssize_t tagged_send(fid_ep* f, const void* buf, std::size_t len, void*, fi_addr_t dest,
                    std::uint64_t tag, void* context) {
    auto* ep = self<ep_obj>(f);
    return post_send(ep, buf, len, dest, context, ep->tx_op_flags & ~FI_INJECT, true, tag);
}
ssize_t tagged_sendv(fid_ep* f, const iovec* iov, void**, std::size_t count, fi_addr_t dest,
                     std::uint64_t tag, void* context) {
    void* base;
    std::size_t len;
    if (!one_iov(iov, count, base, len)) return -FI_EINVAL;
    return tagged_send(f, base, len, nullptr, dest, tag, context);
}
ssize_t tagged_sendmsg(fid_ep* f, const fi_msg_tagged* m, std::uint64_t flags) {
    void* base;
    std::size_t len;
    if (!one_iov(m->msg_iov, m->iov_count, base, len)) return -FI_EINVAL;
    return post_send(self<ep_obj>(f), base, len, m->addr, m->context, flags, true, m->tag);
}
ssize_t tagged_inject(fid_ep* f, const void* buf, std::size_t len, fi_addr_t dest,
                      std::uint64_t tag) {
    return post_send(self<ep_obj>(f), buf, len, dest, nullptr, FI_INJECT, true, tag, true);
}

// ---- fi_ops_rma: addr is the offset into the target's region named by key ----

ssize_t post_rma(ep_obj* ep, bool write, void* buf, std::size_t len, fi_addr_t peer_addr,
                 std::uint64_t offset, std::uint64_t key, void* context, std::uint64_t flags) {
    if (!ep->enabled) return -FI_EOPBADSTATE;
    if (!(ep->caps & FI_RMA)) return -FI_EOPNOTSUPP;
    if (flags & (FI_INJECT | FI_REMOTE_CQ_DATA)) return -FI_EBADFLAGS;
    uet::peer_addr peer;
    if (!ep->av->peer(peer_addr, peer)) return -FI_EINVAL;
    cntr_obj* counter = write ? ep->write_cntr : ep->read_cntr;
    const bool completion = wants_completion(ep, flags, false);
    void* ctx = completion ? op_context(context) : counted_context(ep, counter, context);
    if (ctx == nullptr) return posted(ep, uet::errc::again);
    const auto of = completion || counter ? uet::op_flags::none : uet::op_flags::no_completion;
    auto* bytes = static_cast<std::byte*>(buf);
    return posted_counted(
        ep,
        write ? ep->ep.write(peer, std::span<const std::byte>(bytes, len), offset, key, ctx, of)
              : ep->ep.read(peer, std::span(bytes, len), offset, key, ctx, of),
        ctx);
}

ssize_t rma_read(fid_ep* f, void* buf, std::size_t len, void*, fi_addr_t src, std::uint64_t addr,
                 std::uint64_t key, void* context) {
    auto* ep = self<ep_obj>(f);
    return post_rma(ep, false, buf, len, src, addr, key, context, ep->tx_op_flags);
}
ssize_t rma_readv(fid_ep* f, const iovec* iov, void**, std::size_t count, fi_addr_t src,
                  std::uint64_t addr, std::uint64_t key, void* context) {
    void* base;
    std::size_t len;
    if (!one_iov(iov, count, base, len)) return -FI_EINVAL;
    return rma_read(f, base, len, nullptr, src, addr, key, context);
}
ssize_t rma_write(fid_ep* f, const void* buf, std::size_t len, void*, fi_addr_t dest,
                  std::uint64_t addr, std::uint64_t key, void* context) {
    auto* ep = self<ep_obj>(f);
    return post_rma(ep, true, const_cast<void*>(buf), len, dest, addr, key, context,
                    ep->tx_op_flags);
}
ssize_t rma_writev(fid_ep* f, const iovec* iov, void**, std::size_t count, fi_addr_t dest,
                   std::uint64_t addr, std::uint64_t key, void* context) {
    void* base;
    std::size_t len;
    if (!one_iov(iov, count, base, len)) return -FI_EINVAL;
    return rma_write(f, base, len, nullptr, dest, addr, key, context);
}
// One iov and one rma_iov of the same length.
ssize_t rma_msg(fid_ep* f, const fi_msg_rma* m, std::uint64_t flags, bool write) {
    void* base;
    std::size_t len;
    if (!one_iov(m->msg_iov, m->iov_count, base, len) || m->rma_iov_count != 1 ||
        m->rma_iov[0].len != len)
        return -FI_EINVAL;
    return post_rma(self<ep_obj>(f), write, base, len, m->addr, m->rma_iov[0].addr,
                    m->rma_iov[0].key, m->context, flags);
}
ssize_t rma_readmsg(fid_ep* f, const fi_msg_rma* m, std::uint64_t flags) {
    return rma_msg(f, m, flags, false);
}
ssize_t rma_writemsg(fid_ep* f, const fi_msg_rma* m, std::uint64_t flags) {
    return rma_msg(f, m, flags, true);
}

// ---- fid: close, bind, control ----

void unbind_cq(ep_obj* ep, cq_obj*& cq) {
    if (cq == nullptr) return;
    std::erase(cq->eps, ep);
    --cq->refs;
    cq = nullptr;
}

void print_stats(const ep_obj* ep) {
    const uet::endpoint_counters c = ep->ep.counters();
    const uet::fabric_stats s = ep->domain->fabric->fab->stats();
    std::fprintf(
        stderr,
        "uet: endpoint %s: packets sent %llu received %llu, retransmits %llu "
        "(timeouts %llu), pdcs opened %llu failed %llu, unexpected %llu, deferred %llu, "
        "rendezvous %llu; port rx %llu tx %llu dropped rx %llu tx %llu; CQ entries tx %llu rx %llu "
        "errors %llu\n",
        uet::to_string(ep->ep.address()).c_str(), static_cast<unsigned long long>(c.packets_sent),
        static_cast<unsigned long long>(c.packets_received),
        static_cast<unsigned long long>(c.retransmits), static_cast<unsigned long long>(c.timeouts),
        static_cast<unsigned long long>(c.pdcs_opened),
        static_cast<unsigned long long>(c.pdcs_failed),
        static_cast<unsigned long long>(c.unexpected), static_cast<unsigned long long>(c.deferred),
        static_cast<unsigned long long>(c.rendezvous), static_cast<unsigned long long>(s.rx_frames),
        static_cast<unsigned long long>(s.tx_frames), static_cast<unsigned long long>(s.rx_dropped),
        static_cast<unsigned long long>(s.tx_dropped),
        static_cast<unsigned long long>(ep->tx_entries),
        static_cast<unsigned long long>(ep->rx_entries),
        static_cast<unsigned long long>(ep->error_entries));
    if (ep->domain->fabric->cfg.tss_key.empty()) return;
    std::fprintf(stderr, "uet: endpoint %s: TSS sealed %llu opened %llu dropped %llu\n",
                 uet::to_string(ep->ep.address()).c_str(),
                 static_cast<unsigned long long>(c.tss.sealed),
                 static_cast<unsigned long long>(c.tss.opened),
                 static_cast<unsigned long long>(c.tss.dropped_total()));
}

int ep_close(fid* f) {
    auto* ep = self<ep_obj>(f);
    if (ep->enabled && ep->domain->fabric->cfg.stats) print_stats(ep);
    ep->ep.close();
    if (ep->tx_cq == ep->rx_cq)
        ep->rx_cq = nullptr;  // bound once
    else
        unbind_cq(ep, ep->rx_cq);
    unbind_cq(ep, ep->tx_cq);
    for (cntr_obj* c : {ep->send_cntr, ep->recv_cntr, ep->read_cntr, ep->write_cntr})
        if (c != nullptr) std::erase(c->eps, ep);
    if (ep->av != nullptr) --ep->av->refs;
    --ep->domain->refs;
    delete ep;
    return 0;
}

int ep_bind(fid* f, fid* b, std::uint64_t flags) {
    auto* ep = self<ep_obj>(f);
    if (ep->enabled) return -FI_EOPBADSTATE;
    switch (b->fclass) {
        case FI_CLASS_CQ: {
            auto* cq = self<cq_obj>(b);
            if (flags & ~(FI_TRANSMIT | FI_RECV | FI_SELECTIVE_COMPLETION)) return -FI_EBADFLAGS;
            if ((flags & FI_TRANSMIT) && ep->tx_cq != nullptr) return -FI_EINVAL;
            if ((flags & FI_RECV) && ep->rx_cq != nullptr) return -FI_EINVAL;
            if (ep->tx_cq != cq && ep->rx_cq != cq) {
                cq->eps.push_back(ep);
                ++cq->refs;
            }
            if (flags & FI_TRANSMIT) {
                ep->tx_cq = cq;
                ep->tx_selective = (flags & FI_SELECTIVE_COMPLETION) != 0;
            }
            if (flags & FI_RECV) {
                ep->rx_cq = cq;
                ep->rx_selective = (flags & FI_SELECTIVE_COMPLETION) != 0;
            }
            return 0;
        }
        case FI_CLASS_AV:
            if (ep->av != nullptr) return -FI_EINVAL;
            ep->av = self<av_obj>(b);
            ++ep->av->refs;
            return 0;
        case FI_CLASS_CNTR: {
            // Remote reads and writes are not seen by the target (no FI_RMA_EVENT).
            if (flags & (FI_REMOTE_READ | FI_REMOTE_WRITE)) return -FI_ENOSYS;
            if (flags == 0 || (flags & ~(FI_SEND | FI_RECV | FI_READ | FI_WRITE)))
                return -FI_EBADFLAGS;
            auto* c = self<cntr_obj>(b);
            const std::pair<std::uint64_t, cntr_obj**> kinds[] = {{FI_SEND, &ep->send_cntr},
                                                                  {FI_RECV, &ep->recv_cntr},
                                                                  {FI_READ, &ep->read_cntr},
                                                                  {FI_WRITE, &ep->write_cntr}};
            for (const auto& [flag, slot] : kinds)
                if ((flags & flag) && *slot != nullptr) return -FI_EINVAL;
            for (const auto& [flag, slot] : kinds)
                if (flags & flag) *slot = c;
            if (std::find(c->eps.begin(), c->eps.end(), ep) == c->eps.end()) c->eps.push_back(ep);
            return 0;
        }
        case FI_CLASS_EQ:
            return 0;  // no connection or AV events on RDM endpoints
        default:
            return -FI_ENOSYS;
    }
}

int ep_enable(ep_obj* ep) {
    if (ep->enabled) return 0;
    if (ep->av == nullptr) return -FI_ENOAV;
    if (ep->tx_cq == nullptr && ep->rx_cq == nullptr && ep->send_cntr == nullptr &&
        ep->recv_cntr == nullptr && ep->read_cntr == nullptr && ep->write_cntr == nullptr)
        return -FI_ENOCQ;
    const config& cfg = ep->domain->fabric->cfg;
    uet::endpoint_attr a;
    a.job_id = cfg.job;
    if (!cfg.tss_key.empty()) {
        a.tss.enabled = true;
        a.tss.sdi = cfg.tss_sdi;
        a.tss.epoch = cfg.tss_epoch;
        a.tss.key = cfg.tss_key;
    }
    a.mode = ep->mode;
    a.cc = cfg.cc;
    a.lb = cfg.lb;
    a.tx_depth = ep->tx_size;
    a.rx_depth = ep->rx_size;
    a.inject_size = ep->inject_size;
    a.min_multi_recv = ep->min_multi_recv;
    a.answers_in_acks = cfg.answers_in_acks;
    auto cq = ep->domain->dom.open_cq(ep->tx_size + ep->rx_size);
    if (!cq) return to_fi_errno(cq.error());
    auto e = ep->domain->dom.open_endpoint(a, *cq, ep->av->av);
    if (!e) {
        FI_WARN(&provider, FI_LOG_EP_CTRL, "uet: endpoint: %s\n",
                uet::fabric::last_error().c_str());
        return to_fi_errno(e.error());
    }
    ep->cq = std::move(*cq);
    ep->ep = std::move(*e);
    ep->slots.resize(inject_slots);
    for (auto& s : ep->slots) {
        s.data.resize(ep->inject_size);
        ep->free_slots.push_back(&s);
    }
    ep->quiet.resize(ep->tx_size);
    for (auto& q : ep->quiet)
        ep->free_quiet.push_back(&q);
    ep->enabled = true;
    return 0;
}

int ep_control(fid* f, int command, void* arg) {
    auto* ep = self<ep_obj>(f);
    switch (command) {
        case FI_ENABLE:
            return ep_enable(ep);
        case FI_GETOPSFLAG: {
            auto* flags = static_cast<std::uint64_t*>(arg);
            if (flags == nullptr) return -FI_EINVAL;
            *flags = (*flags & FI_TRANSMIT) ? ep->tx_op_flags : ep->rx_op_flags;
            return 0;
        }
        case FI_SETOPSFLAG: {
            auto* flags = static_cast<std::uint64_t*>(arg);
            if (flags == nullptr) return -FI_EINVAL;
            if (*flags & FI_TRANSMIT)
                ep->tx_op_flags = *flags & ~FI_TRANSMIT;
            else
                ep->rx_op_flags = *flags & ~FI_RECV;
            return 0;
        }
        default:
            return -FI_ENOSYS;
    }
}

int ep_getname(fid_t f, void* addr, std::size_t* addrlen) {
    auto* ep = self<ep_obj>(f);
    if (!ep->enabled) return -FI_EOPBADSTATE;
    if (addrlen == nullptr) return -FI_EINVAL;
    const bool fits = *addrlen >= sizeof(sockaddr_in);
    *addrlen = sizeof(sockaddr_in);
    if (!fits) return -FI_ETOOSMALL;
    const sockaddr_in sin = to_sockaddr(ep->ep.address());
    std::memcpy(addr, &sin, sizeof(sin));
    return 0;
}

// FI_OPT_MIN_MULTI_RECV, the one option: a size_t.
int ep_getopt(fid_t f, int level, int name, void* value, std::size_t* len) {
    if (level != FI_OPT_ENDPOINT || name != FI_OPT_MIN_MULTI_RECV) return -FI_ENOPROTOOPT;
    if (value == nullptr || len == nullptr) return -FI_EINVAL;
    const bool fits = *len >= sizeof(std::size_t);
    *len = sizeof(std::size_t);
    if (!fits) return -FI_ETOOSMALL;
    std::memcpy(value, &self<ep_obj>(f)->min_multi_recv, sizeof(std::size_t));
    return 0;
}
// uet fixes the minimum when the endpoint opens: after fi_enable, -FI_EOPBADSTATE.
int ep_setopt(fid_t f, int level, int name, const void* value, std::size_t len) {
    if (level != FI_OPT_ENDPOINT || name != FI_OPT_MIN_MULTI_RECV) return -FI_ENOPROTOOPT;
    if (value == nullptr || len != sizeof(std::size_t)) return -FI_EINVAL;
    auto* ep = self<ep_obj>(f);
    if (ep->enabled) return -FI_EOPBADSTATE;
    std::memcpy(&ep->min_multi_recv, value, sizeof(std::size_t));
    return 0;
}

}  // namespace

ssize_t posted_counted(ep_obj* ep, std::error_code ec, void* ctx) {
    if (ec && !ep->quiet.empty() && ctx >= static_cast<void*>(ep->quiet.data()) &&
        ctx < static_cast<void*>(ep->quiet.data() + ep->quiet.size()))
        ep->free_quiet.push_back(static_cast<ep_obj::quiet_op*>(ctx));  // not posted
    return posted(ep, ec);
}

void* counted_context(ep_obj* ep, cntr_obj* c, void* context) {
    if (c == nullptr) return op_context(context);
    if (ep->free_quiet.empty()) return nullptr;
    ep_obj::quiet_op* q = ep->free_quiet.back();
    ep->free_quiet.pop_back();
    q->context = context;
    return q;
}

void ep_obj::deliver(const uet::completion& c) {
    void* context = c.context;
    const bool rx = has(c.flags, uet::completion_flags::recv) ||
                    has(c.flags, uet::completion_flags::remote_write);
    if (context == nullptr && !rx) {
        // A failed fi_inject (uet gives injects no context): no completion, as libfabric says.
        ++error_entries;
        if (send_cntr != nullptr) ++send_cntr->errors;
        FI_WARN(&provider, FI_LOG_EP_DATA, "uet: an inject failed: %s\n",
                c.detail.empty() ? c.error.message().c_str() : std::string(c.detail).c_str());
        return;
    }
    if (context == &null_context_tag) context = nullptr;
    bool entry = true;  // a CQ entry is wanted (when the operation succeeds)
    if (!slots.empty() && context >= static_cast<void*>(slots.data()) &&
        context < static_cast<void*>(slots.data() + slots.size())) {
        auto* slot = static_cast<inject_slot*>(context);
        context = slot->context;
        entry = !slot->quiet;
        free_slots.push_back(slot);
    } else if (!quiet.empty() && context >= static_cast<void*>(quiet.data()) &&
               context < static_cast<void*>(quiet.data() + quiet.size())) {
        auto* q = static_cast<quiet_op*>(context);
        context = q->context;
        entry = false;
        free_quiet.push_back(q);
    }
    using uet::completion_flags;
    cntr_obj* counter =
        has(c.flags, completion_flags::remote_write) ? nullptr
        : rx                                         ? recv_cntr
        : has(c.flags, completion_flags::read)       ? read_cntr
        : has(c.flags, completion_flags::write) || has(c.flags, completion_flags::atomic)
            ? write_cntr
            : send_cntr;
    // The entry that only releases a multi-receive buffer (no message: buf nullptr) is no
    // receive to count.
    const bool release_only =
        has(c.flags, completion_flags::multi_recv) && c.buf == nullptr && !c.error;
    if (counter != nullptr && !release_only) ++(c.error ? counter->errors : counter->value);
    cq_obj* cq = rx ? rx_cq : tx_cq;
    if (cq == nullptr || (!entry && !c.error)) return;
    cq_entry e;
    e.e.op_context = context;
    // libfabric's separate release entry has FI_MULTI_RECV alone (fi_cq(3)): no FI_RECV.
    e.e.flags = release_only ? FI_MULTI_RECV : fi_flags(c.flags);
    e.e.len = c.len;
    e.e.buf = c.buf;
    e.e.data = c.data;
    e.e.tag = c.tag;
    if (c.error) {
        e.err = -to_fi_errno(c.error);
        e.prov_errno = c.prov_errno;
        e.olen = c.olen;
        e.detail = c.detail.empty() ? c.error.message() : std::string(c.detail);
    }
    if (rx && !release_only && (caps & FI_SOURCE)) e.src = av->fi_addr_of(c.from);
    ++(rx ? rx_entries : tx_entries);
    if (e.err != 0) ++error_entries;
    cq->push(std::move(e));
}

void ep_obj::progress() {
    if (!enabled) {
        domain->dom.progress();
        return;
    }
    // Steps until one ends nothing. The application may stop progressing for long after a
    // completion (fi_pingpong talks over its TCP socket after its last receive of a size) while
    // its peer waits for what finishing it left owed. The engine acknowledges a packet that
    // completes a message in the step that delivers it; an answer to a rendezvous send is
    // posted when the pull completes and leaves in the step after, which this loop takes.
    while (drain() > 0) {
    }
}

std::size_t ep_obj::drain() {
    std::size_t delivered = cq.read(batch);
    for (std::size_t i = 0; i < delivered; ++i)
        deliver(batch[i]);
    uet::completion c;
    while (cq.has_error() && cq.read_error(c)) {
        deliver(c);
        ++delivered;
    }
    return delivered;
}

int ep_open(fid_domain* d, fi_info* info, fid_ep** out, void* context) {
    if (info == nullptr || info->ep_attr == nullptr) return -FI_EINVAL;
    const fi_ep_type type = info->ep_attr->type;
    if (type != FI_EP_RDM && type != FI_EP_DGRAM && type != FI_EP_UNSPEC) return -FI_EINVAL;
    static fi_ops ops = base_ops(ep_close, ep_bind, ep_control);
    static fi_ops_ep ep_ops = [] {
        fi_ops_ep o{};
        o.size = sizeof(o);
        o.cancel = ep_cancel;
        o.getopt = ep_getopt;
        o.setopt = ep_setopt;
        set_enosys(o.tx_ctx);
        set_enosys(o.rx_ctx);
        set_enosys(o.rx_size_left);
        set_enosys(o.tx_size_left);
        return o;
    }();
    static fi_ops_cm cm_ops = [] {
        fi_ops_cm o{};
        o.size = sizeof(o);
        set_enosys(o.setname);
        o.getname = ep_getname;
        set_enosys(o.getpeer);
        set_enosys(o.connect);
        set_enosys(o.listen);
        set_enosys(o.accept);
        set_enosys(o.reject);
        set_enosys(o.shutdown);
        set_enosys(o.join);
        return o;
    }();
    static fi_ops_msg msg_ops = {
        .size = sizeof(fi_ops_msg),
        .recv = msg_recv,
        .recvv = msg_recvv,
        .recvmsg = msg_recvmsg,
        .send = msg_send,
        .sendv = msg_sendv,
        .sendmsg = msg_sendmsg,
        .inject = msg_inject,
        .senddata = enosys<decltype(fi_ops_msg::senddata)>::fn,
        .injectdata = enosys<decltype(fi_ops_msg::injectdata)>::fn,
    };
    static fi_ops_tagged tagged_ops = {
        .size = sizeof(fi_ops_tagged),
        .recv = tagged_recv,
        .recvv = tagged_recvv,
        .recvmsg = tagged_recvmsg,
        .send = tagged_send,
        .sendv = tagged_sendv,
        .sendmsg = tagged_sendmsg,
        .inject = tagged_inject,
        .senddata = enosys<decltype(fi_ops_tagged::senddata)>::fn,
        .injectdata = enosys<decltype(fi_ops_tagged::injectdata)>::fn,
    };
    static fi_ops_rma rma_ops = [] {
        fi_ops_rma o{};
        o.size = sizeof(o);
        o.read = rma_read;
        o.readv = rma_readv;
        o.readmsg = rma_readmsg;
        o.write = rma_write;
        o.writev = rma_writev;
        o.writemsg = rma_writemsg;
        set_enosys(o.inject);
        set_enosys(o.writedata);
        set_enosys(o.injectdata);
        return o;
    }();
    static fi_ops_atomic atomic_table = atomic_ops();
    static fi_ops_collective collective_ops = [] {
        fi_ops_collective o{};
        o.size = sizeof(o);
        set_enosys(o.barrier);
        set_enosys(o.broadcast);
        set_enosys(o.alltoall);
        set_enosys(o.allreduce);
        set_enosys(o.allgather);
        set_enosys(o.reduce_scatter);
        set_enosys(o.reduce);
        set_enosys(o.scatter);
        set_enosys(o.gather);
        set_enosys(o.msg);
        return o;
    }();
    auto* ep = new_obj<ep_obj>(FI_CLASS_EP, context, &ops);
    if (ep == nullptr) return -FI_ENOMEM;
    ep->domain = self<domain_obj>(d);
    ep->caps = info->caps;
    // FI_EP_DGRAM: UET's unreliable datagrams, one packet per message, never ordered.
    ep->mode =
        type == FI_EP_DGRAM ? uet::delivery::uud : endpoint_mode(ep->domain->fabric->cfg, info);
    if ((msg_order(info) & FI_ORDER_SAS) && ep->mode != uet::delivery::rod) {
        delete ep;
        return -FI_EINVAL;  // FI_UET_MODE says unordered, or datagrams
    }
    if (info->tx_attr != nullptr) {
        ep->tx_op_flags = info->tx_attr->op_flags;
        if (info->tx_attr->size != 0) ep->tx_size = std::min(info->tx_attr->size, max_queue_size);
        if (info->tx_attr->inject_size != 0)
            ep->inject_size = std::min<std::size_t>(info->tx_attr->inject_size, 256);
    }
    if (info->rx_attr != nullptr) {
        ep->rx_op_flags = info->rx_attr->op_flags;
        if (info->rx_attr->size != 0) ep->rx_size = std::min(info->rx_attr->size, max_queue_size);
    }
    ep->fid.ops = &ep_ops;
    ep->fid.cm = &cm_ops;
    ep->fid.msg = &msg_ops;
    ep->fid.rma = &rma_ops;
    ep->fid.tagged = &tagged_ops;
    ep->fid.atomic = &atomic_table;
    ep->fid.collective = &collective_ops;
    ++ep->domain->refs;
    *out = &ep->fid;
    return 0;
}

}  // namespace uet_fi
