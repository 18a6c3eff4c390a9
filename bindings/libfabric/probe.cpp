// FI_PEEK, FI_CLAIM and fi_cancel of the uet provider over uet's endpoint::tprobe, recv_claimed
// and cancel: fi_trecvmsg's probe of the messages that arrived before their receive (Open MPI's
// mtl ofi builds MPI_Iprobe on FI_PEEK, MPI_Improbe and MPI_Mrecv on FI_CLAIM) and the cancel of
// a posted receive (MPI_Cancel).
#include <cstdint>

#include "uet_fi/uet_fi.hpp"

namespace uet_fi {

// An FI_PEEK | FI_CLAIM keeps the claim in the application's fi_context (fi_tagged(3): the same
// fi_context goes with the FI_CLAIM receive that pairs with it).
std::uint64_t claim_of(void* context) noexcept {
    return reinterpret_cast<std::uintptr_t>(static_cast<fi_context*>(context)->internal[0]);
}

namespace {

void keep_claim(void* context, std::uint64_t claim) noexcept {
    static_cast<fi_context*>(context)->internal[0] =
        reinterpret_cast<void*>(static_cast<std::uintptr_t>(claim));
}

}  // namespace

ssize_t tagged_peek(ep_obj* ep, const fi_msg_tagged* m, std::uint64_t flags) {
    if (!ep->enabled) return -FI_EOPBADSTATE;
    if (flags & FI_DISCARD) return -FI_EBADFLAGS;
    const bool claim = (flags & FI_CLAIM) != 0;
    if (claim && m->context == nullptr) return -FI_EINVAL;
    if (ep->rx_cq == nullptr) return -FI_ENOCQ;
    uet::peer_addr from = uet::any_peer;
    if ((ep->caps & FI_DIRECTED_RECV) && m->addr != FI_ADDR_UNSPEC && !ep->av->peer(m->addr, from))
        return -FI_EINVAL;
    // What has arrived is taken in first: a peek sees what a receive posted now would.
    ep->progress();
    uet::probed_message found;
    const std::error_code ec = ep->ep.tprobe(
        m->tag, m->ignore, found, from, claim ? uet::probe_flags::claim : uet::probe_flags::none);
    if (ec && ec != uet::errc::no_message) return posted(ep, ec);
    // Its outcome is a completion, as any receive's: the message's length, tag and source, or
    // an error entry FI_ENOMSG when none matches.
    cq_entry e;
    e.e.op_context = m->context;
    e.e.flags = FI_TAGGED | FI_RECV;
    if (ec) {
        e.err = FI_ENOMSG;
        e.detail = ec.message();
        ++ep->error_entries;
    } else {
        e.e.len = found.len;
        e.e.tag = found.tag;
        e.e.data = found.data;
        if (ep->caps & FI_SOURCE) e.src = ep->av->fi_addr_of(found.from);
        if (claim) keep_claim(m->context, found.claim);
    }
    ++ep->rx_entries;
    ep->rx_cq->push(std::move(e));
    return 0;
}

ssize_t ep_cancel(fid_t f, void* context) {
    auto* ep = self<ep_obj>(f);
    if (!ep->enabled) return -FI_EOPBADSTATE;
    // An operation posted without a context cannot be canceled (fi_endpoint(3)).
    if (context == nullptr) return -FI_ENOENT;
    return to_fi_errno(ep->ep.cancel(context));
}

}  // namespace uet_fi
