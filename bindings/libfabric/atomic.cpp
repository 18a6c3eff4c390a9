// FI_ATOMIC over uet's atomics: fi_atomic (min, max, sum, the bitwise ones, write),
// fi_fetch_atomic (those and read) and fi_compare_atomic (compare and swap), on the ten integer
// and floating types uet has, up to 256 bytes of operands per operation. As with RMA, addr is
// the offset into the target's region named by key (no FI_MR_VIRT_ADDR).
#include <rdma/fi_atomic.h>

#include <utility>

#include "uet_fi/uet_fi.hpp"

namespace uet_fi {

namespace {

constexpr std::size_t max_atomic_bytes = 256;  // uet's operands per operation

enum class kind { write, fetch, compare };

constexpr std::pair<fi_datatype, uet::atomic_type> types[] = {
    {FI_INT8, uet::atomic_type::int8},     {FI_UINT8, uet::atomic_type::uint8},
    {FI_INT16, uet::atomic_type::int16},   {FI_UINT16, uet::atomic_type::uint16},
    {FI_INT32, uet::atomic_type::int32},   {FI_UINT32, uet::atomic_type::uint32},
    {FI_INT64, uet::atomic_type::int64},   {FI_UINT64, uet::atomic_type::uint64},
    {FI_FLOAT, uet::atomic_type::float32}, {FI_DOUBLE, uet::atomic_type::float64}};
constexpr std::pair<fi_op, uet::atomic_op> ops[] = {
    {FI_MIN, uet::atomic_op::min},           {FI_MAX, uet::atomic_op::max},
    {FI_SUM, uet::atomic_op::sum},           {FI_BAND, uet::atomic_op::band},
    {FI_BOR, uet::atomic_op::bor},           {FI_BXOR, uet::atomic_op::bxor},
    {FI_ATOMIC_WRITE, uet::atomic_op::swap}, {FI_ATOMIC_READ, uet::atomic_op::read}};

// uet's name for libfabric's, from one of the tables above; false when uet has none.
template <class From, class To, std::size_t N>
bool to_uet(From x, const std::pair<From, To> (&table)[N], To& out) {
    for (const auto& [from, to] : table) {
        if (from == x) {
            out = to;
            return true;
        }
    }
    return false;
}

// Whether uet has this operation on this type for this kind of call; with it, how many
// elements one operation may carry.
bool valid(kind k, fi_datatype dt, fi_op op, uet::atomic_op& aop, uet::atomic_type& type,
           std::size_t& count) {
    if (!to_uet(dt, types, type)) return false;
    if (k == kind::compare) {
        if (op != FI_CSWAP) return false;
        aop = uet::atomic_op::swap;
        count = 1;
        return true;
    }
    if (!to_uet(op, ops, aop)) return false;
    if (aop == uet::atomic_op::read && k != kind::fetch) return false;
    const bool bitwise =
        aop == uet::atomic_op::band || aop == uet::atomic_op::bor || aop == uet::atomic_op::bxor;
    if (bitwise && uet::is_floating(type)) return false;
    count = max_atomic_bytes / uet::size_of(type);
    return true;
}

// One operation: operand (count elements at buf), result and compare where the kind has them.
ssize_t post_atomic(ep_obj* ep, kind k, const void* buf, std::size_t count, const void* compare,
                    void* result, fi_addr_t dest, std::uint64_t offset, std::uint64_t key,
                    fi_datatype dt, fi_op op, void* context, std::uint64_t flags) {
    if (!ep->enabled) return -FI_EOPBADSTATE;
    if (!(ep->caps & FI_ATOMIC)) return -FI_EOPNOTSUPP;
    if (flags & (FI_INJECT | FI_REMOTE_CQ_DATA)) return -FI_EBADFLAGS;
    uet::atomic_op aop{};
    uet::atomic_type type{};
    std::size_t max_count = 0;
    if (!valid(k, dt, op, aop, type, max_count)) return -FI_EOPNOTSUPP;
    if (count == 0 || count > max_count) return -FI_EINVAL;
    uet::peer_addr peer;
    if (!ep->av->peer(dest, peer)) return -FI_EINVAL;
    const std::size_t bytes = count * uet::size_of(type);
    cntr_obj* counter = k == kind::write ? ep->write_cntr : ep->read_cntr;
    const bool completion = wants_completion(ep, flags, false);
    void* ctx = completion ? op_context(context) : counted_context(ep, counter, context);
    if (ctx == nullptr) return posted(ep, uet::errc::again);
    const auto of = completion || counter ? uet::op_flags::none : uet::op_flags::no_completion;
    const auto res = std::span(static_cast<std::byte*>(result), k == kind::write ? 0 : bytes);
    // A read sends no operand (libfabric lets buf be NULL): the result's bytes stand in.
    const void* from = aop == uet::atomic_op::read ? result : buf;
    const auto operand = std::span(static_cast<const std::byte*>(from), bytes);
    const auto cmp =
        std::span(static_cast<const std::byte*>(compare), k == kind::compare ? bytes : 0);
    const std::error_code ec =
        k == kind::write ? ep->ep.atomic(peer, aop, type, operand, offset, key, ctx, of)
        : k == kind::fetch
            ? ep->ep.fetch_atomic(peer, aop, type, operand, res, offset, key, ctx, of)
            : ep->ep.compare_atomic(peer, type, cmp, operand, res, offset, key, ctx, of);
    return posted_counted(ep, ec, ctx);
}

// One fi_ioc (and one fi_rma_ioc of the same count) per operation: iov_limit 1.
bool one_ioc(const fi_ioc* iov, std::size_t n, const void*& base, std::size_t& count) {
    if (n != 1 || iov == nullptr) return false;
    base = iov[0].addr;
    count = iov[0].count;
    return true;
}

ssize_t atomic_write(fid_ep* f, const void* buf, std::size_t count, void*, fi_addr_t dest,
                     std::uint64_t addr, std::uint64_t key, fi_datatype dt, fi_op op,
                     void* context) {
    auto* ep = self<ep_obj>(f);
    return post_atomic(ep, kind::write, buf, count, nullptr, nullptr, dest, addr, key, dt, op,
                       context, ep->tx_op_flags);
}
ssize_t atomic_writev(fid_ep* f, const fi_ioc* iov, void**, std::size_t n, fi_addr_t dest,
                      std::uint64_t addr, std::uint64_t key, fi_datatype dt, fi_op op,
                      void* context) {
    const void* buf;
    std::size_t count;
    if (!one_ioc(iov, n, buf, count)) return -FI_EINVAL;
    return atomic_write(f, buf, count, nullptr, dest, addr, key, dt, op, context);
}
// The message's one fi_ioc and one fi_rma_ioc, of the same count.
bool one_msg(const fi_msg_atomic* m, const void*& buf, std::size_t& count) {
    return m != nullptr && one_ioc(m->msg_iov, m->iov_count, buf, count) && m->rma_iov_count == 1 &&
           m->rma_iov[0].count == count;
}
ssize_t atomic_writemsg(fid_ep* f, const fi_msg_atomic* m, std::uint64_t flags) {
    const void* buf;
    std::size_t count;
    if (!one_msg(m, buf, count)) return -FI_EINVAL;
    return post_atomic(self<ep_obj>(f), kind::write, buf, count, nullptr, nullptr, m->addr,
                       m->rma_iov[0].addr, m->rma_iov[0].key, m->datatype, m->op, m->context,
                       flags);
}

ssize_t atomic_readwrite(fid_ep* f, const void* buf, std::size_t count, void*, void* result, void*,
                         fi_addr_t dest, std::uint64_t addr, std::uint64_t key, fi_datatype dt,
                         fi_op op, void* context) {
    auto* ep = self<ep_obj>(f);
    return post_atomic(ep, kind::fetch, buf, count, nullptr, result, dest, addr, key, dt, op,
                       context, ep->tx_op_flags);
}
ssize_t atomic_readwritev(fid_ep* f, const fi_ioc* iov, void**, std::size_t n, fi_ioc* resultv,
                          void**, std::size_t result_n, fi_addr_t dest, std::uint64_t addr,
                          std::uint64_t key, fi_datatype dt, fi_op op, void* context) {
    const void* buf;
    const void* result;
    std::size_t count, result_count;
    if (!one_ioc(iov, n, buf, count) || !one_ioc(resultv, result_n, result, result_count) ||
        result_count != count)
        return -FI_EINVAL;
    return atomic_readwrite(f, buf, count, nullptr, const_cast<void*>(result), nullptr, dest, addr,
                            key, dt, op, context);
}
ssize_t atomic_readwritemsg(fid_ep* f, const fi_msg_atomic* m, fi_ioc* resultv, void**,
                            std::size_t result_n, std::uint64_t flags) {
    const void* buf;
    const void* result;
    std::size_t count, result_count;
    if (!one_msg(m, buf, count) || !one_ioc(resultv, result_n, result, result_count) ||
        result_count != count)
        return -FI_EINVAL;
    return post_atomic(self<ep_obj>(f), kind::fetch, buf, count, nullptr, const_cast<void*>(result),
                       m->addr, m->rma_iov[0].addr, m->rma_iov[0].key, m->datatype, m->op,
                       m->context, flags);
}

ssize_t atomic_compwrite(fid_ep* f, const void* buf, std::size_t count, void*, const void* compare,
                         void*, void* result, void*, fi_addr_t dest, std::uint64_t addr,
                         std::uint64_t key, fi_datatype dt, fi_op op, void* context) {
    auto* ep = self<ep_obj>(f);
    return post_atomic(ep, kind::compare, buf, count, compare, result, dest, addr, key, dt, op,
                       context, ep->tx_op_flags);
}
ssize_t atomic_compwritev(fid_ep* f, const fi_ioc* iov, void**, std::size_t n,
                          const fi_ioc* comparev, void**, std::size_t compare_n, fi_ioc* resultv,
                          void**, std::size_t result_n, fi_addr_t dest, std::uint64_t addr,
                          std::uint64_t key, fi_datatype dt, fi_op op, void* context) {
    const void *buf, *compare, *result;
    std::size_t count, compare_count, result_count;
    if (!one_ioc(iov, n, buf, count) || !one_ioc(comparev, compare_n, compare, compare_count) ||
        !one_ioc(resultv, result_n, result, result_count) || compare_count != count ||
        result_count != count)
        return -FI_EINVAL;
    return atomic_compwrite(f, buf, count, nullptr, compare, nullptr, const_cast<void*>(result),
                            nullptr, dest, addr, key, dt, op, context);
}
ssize_t atomic_compwritemsg(fid_ep* f, const fi_msg_atomic* m, const fi_ioc* comparev, void**,
                            std::size_t compare_n, fi_ioc* resultv, void**, std::size_t result_n,
                            std::uint64_t flags) {
    const void *buf, *compare, *result;
    std::size_t count, compare_count, result_count;
    if (!one_msg(m, buf, count) || !one_ioc(comparev, compare_n, compare, compare_count) ||
        !one_ioc(resultv, result_n, result, result_count) || compare_count != count ||
        result_count != count)
        return -FI_EINVAL;
    return post_atomic(self<ep_obj>(f), kind::compare, buf, count, compare,
                       const_cast<void*>(result), m->addr, m->rma_iov[0].addr, m->rma_iov[0].key,
                       m->datatype, m->op, m->context, flags);
}

int valid_count(kind k, fi_datatype dt, fi_op op, std::size_t* count) {
    uet::atomic_op aop{};
    uet::atomic_type type{};
    std::size_t n = 0;
    if (!valid(k, dt, op, aop, type, n)) return -FI_EOPNOTSUPP;
    if (count != nullptr) *count = n;
    return 0;
}
int atomic_writevalid(fid_ep*, fi_datatype dt, fi_op op, std::size_t* count) {
    return valid_count(kind::write, dt, op, count);
}
int atomic_readwritevalid(fid_ep*, fi_datatype dt, fi_op op, std::size_t* count) {
    return valid_count(kind::fetch, dt, op, count);
}
int atomic_compwritevalid(fid_ep*, fi_datatype dt, fi_op op, std::size_t* count) {
    return valid_count(kind::compare, dt, op, count);
}

}  // namespace

fi_ops_atomic atomic_ops() {
    fi_ops_atomic o{};
    o.size = sizeof(o);
    o.write = atomic_write;
    o.writev = atomic_writev;
    o.writemsg = atomic_writemsg;
    // uet copies no atomic operand at the call, which fi_inject_atomic promises.
    set_enosys(o.inject);
    o.readwrite = atomic_readwrite;
    o.readwritev = atomic_readwritev;
    o.readwritemsg = atomic_readwritemsg;
    o.compwrite = atomic_compwrite;
    o.compwritev = atomic_compwritev;
    o.compwritemsg = atomic_compwritemsg;
    o.writevalid = atomic_writevalid;
    o.readwritevalid = atomic_readwritevalid;
    o.compwritevalid = atomic_compwritevalid;
    return o;
}

int query_atomic(fid_domain*, fi_datatype dt, fi_op op, fi_atomic_attr* attr, std::uint64_t flags) {
    if (flags & ~std::uint64_t{FI_FETCH_ATOMIC | FI_COMPARE_ATOMIC | FI_TAGGED})
        return -FI_EBADFLAGS;
    if (flags & FI_TAGGED) return -FI_EOPNOTSUPP;
    const kind k = (flags & FI_COMPARE_ATOMIC) ? kind::compare
                   : (flags & FI_FETCH_ATOMIC) ? kind::fetch
                                               : kind::write;
    uet::atomic_op aop{};
    uet::atomic_type type{};
    std::size_t count = 0;
    if (!valid(k, dt, op, aop, type, count)) return -FI_EOPNOTSUPP;
    if (attr != nullptr) {
        attr->count = count;
        attr->size = uet::size_of(type);
    }
    return 0;
}

}  // namespace uet_fi
