// Fabric, domain, EQ, MR, CQ and AV of the uet libfabric provider.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <rdma/providers/fi_log.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

#include "uet_fi/uet_fi.hpp"

namespace uet_fi {

namespace {

// ---- fabric: every fi_fabric of the process on one configuration shares one uet fabric (the
// pipe's endpoints must share it to reach each other; a dpdk port opens once) ----

std::weak_ptr<uet::fabric> shared_fabric;
std::string shared_fabric_key;

std::string config_key(const config& c) {
    return c.provider + '|' + c.device + '|' + c.address + '|' + c.eal_args + '|' +
           std::to_string(c.mtu) + '|' + c.capture + '|' + (c.busy_poll ? "1" : "0");
}

int open_uet_fabric(const config& c, std::shared_ptr<uet::fabric>& out) {
    const std::string key = config_key(c);
    if (auto fab = shared_fabric.lock()) {
        if (key != shared_fabric_key) {
            FI_WARN(&provider, FI_LOG_FABRIC,
                    "uet: a fabric of another configuration is open in this process\n");
            return -FI_EBUSY;
        }
        out = std::move(fab);
        return 0;
    }
    uet::fabric_attr fa;
    fa.provider = c.provider;
    fa.capture_file = c.capture;
    fa.mtu = fabric_mtu(c);
    if (c.provider == "dpdk") {
        fa.dpdk.device = c.device;
        fa.dpdk.address = c.address;
        fa.dpdk.eal_args = c.eal_args;
        fa.dpdk.busy_poll = c.busy_poll;
    }
    auto fab = uet::fabric::open(fa);
    if (!fab) {
        FI_WARN(&provider, FI_LOG_FABRIC, "uet: fabric: %s\n", uet::fabric::last_error().c_str());
        return to_fi_errno(fab.error());
    }
    out = std::make_shared<uet::fabric>(std::move(*fab));
    shared_fabric = out;
    shared_fabric_key = key;
    return 0;
}

int fabric_close(fid* f) {
    auto* fab = self<fabric_obj>(f);
    if (fab->refs > 0) return -FI_EBUSY;
    delete fab;
    return 0;
}

// ---- EQ: opened because applications open one (fi_pingpong does); RDM endpoints post no
// connection events, so it stays empty ----

int eq_close(fid* f) {
    auto* eq = self<eq_obj>(f);
    --eq->fabric->refs;
    delete eq;
    return 0;
}

ssize_t eq_read(fid_eq*, std::uint32_t*, void*, std::size_t, std::uint64_t) {
    return -FI_EAGAIN;
}
ssize_t eq_readerr(fid_eq*, fi_eq_err_entry*, std::uint64_t) {
    return -FI_EAGAIN;
}
ssize_t eq_sread(fid_eq*, std::uint32_t*, void*, std::size_t, int timeout, std::uint64_t) {
    if (timeout > 0) std::this_thread::sleep_for(std::chrono::milliseconds(timeout));
    return -FI_EAGAIN;
}
const char* eq_strerror(fid_eq*, int prov_errno, const void*, char* buf, std::size_t len) {
    const char* text = fi_strerror(prov_errno);
    if (buf != nullptr && len > 0) {
        std::snprintf(buf, len, "%s", text);
        return buf;
    }
    return text;
}

int eq_open(fid_fabric* f, fi_eq_attr* attr, fid_eq** out, void* context) {
    if (attr != nullptr && attr->wait_obj != FI_WAIT_NONE && attr->wait_obj != FI_WAIT_UNSPEC)
        return -FI_ENOSYS;
    static fi_ops ops = base_ops(eq_close);
    static fi_ops_eq eq_ops = [] {
        fi_ops_eq o{};
        o.size = sizeof(o);
        o.read = eq_read;
        o.readerr = eq_readerr;
        set_enosys(o.write);
        o.sread = eq_sread;
        o.strerror = eq_strerror;
        return o;
    }();
    auto* eq = new_obj<eq_obj>(FI_CLASS_EQ, context, &ops);
    if (eq == nullptr) return -FI_ENOMEM;
    eq->fabric = self<fabric_obj>(f);
    eq->fid.ops = &eq_ops;
    ++eq->fabric->refs;
    *out = &eq->fid;
    return 0;
}

// ---- MR: uet's registrations; the key is uet's (FI_MR_PROV_KEY) ----

int mr_close(fid* f) {
    auto* mr = self<mr_obj>(f);
    mr->mr.close();
    --mr->domain->refs;
    delete mr;
    return 0;
}

int mr_reg(fid* f, const void* buf, std::size_t len, std::uint64_t acc, std::uint64_t offset,
           std::uint64_t, std::uint64_t flags, fid_mr** out, void* context) {
    if (offset != 0 || flags != 0) return -FI_EBADFLAGS;
    static fi_ops ops = base_ops(mr_close);
    auto* dom = self<domain_obj>(f);
    uet::access a = uet::access::none;
    if (acc & (FI_SEND | FI_READ)) a = a | uet::access::local_read;
    if (acc & (FI_RECV | FI_WRITE)) a = a | uet::access::local_write;
    if (acc & FI_REMOTE_READ) a = a | uet::access::remote_read;
    if (acc & FI_REMOTE_WRITE) a = a | uet::access::remote_write | uet::access::remote_atomic;
    auto* bytes = static_cast<std::byte*>(const_cast<void*>(buf));
    auto r = dom->dom.register_memory(std::span(bytes, len), a, dom->fabric->cfg.job);
    if (!r) return to_fi_errno(r.error());
    auto* mr = new_obj<mr_obj>(FI_CLASS_MR, context, &ops);
    if (mr == nullptr) return -FI_ENOMEM;
    mr->domain = dom;
    mr->mr = std::move(*r);
    mr->fid.mem_desc = mr;
    mr->fid.key = mr->mr.key();
    ++dom->refs;
    *out = &mr->fid;
    return 0;
}

int mr_regv(fid* f, const iovec* iov, std::size_t count, std::uint64_t acc, std::uint64_t offset,
            std::uint64_t key, std::uint64_t flags, fid_mr** out, void* context) {
    if (count != 1) return -FI_EINVAL;
    return mr_reg(f, iov[0].iov_base, iov[0].iov_len, acc, offset, key, flags, out, context);
}

int mr_regattr(fid* f, const fi_mr_attr* attr, std::uint64_t flags, fid_mr** out) {
    if (attr == nullptr || attr->iov_count != 1) return -FI_EINVAL;
    return mr_reg(f, attr->mr_iov[0].iov_base, attr->mr_iov[0].iov_len, attr->access, attr->offset,
                  attr->requested_key, flags, out, attr->context);
}

// ---- domain ----

// dpdk: the domains open in this process. Every endpoint of the port progresses in one poll loop
// (a CQ read of any of them runs them all), so they must be used by one thread at a time; under
// FI_THREAD_DOMAIN that is what a domain is, so the port has one domain at a time.
int dpdk_domains = 0;

int domain_close(fid* f) {
    auto* dom = self<domain_obj>(f);
    if (dom->refs > 0) return -FI_EBUSY;
    if (dom->fabric->cfg.provider == "dpdk") --dpdk_domains;
    --dom->fabric->refs;
    delete dom;
    return 0;
}

int domain_open(fid_fabric* f, fi_info* info, fid_domain** out, void* context) {
    auto* fab = self<fabric_obj>(f);
    if (info != nullptr && info->domain_attr != nullptr && info->domain_attr->name != nullptr &&
        domain_name(fab->cfg) != info->domain_attr->name)
        return -FI_EINVAL;
    static fi_ops ops = base_ops(domain_close);
    static fi_ops_domain dom_ops = [] {
        fi_ops_domain o{};
        o.size = sizeof(o);
        set_enosys(o.scalable_ep);
        o.cntr_open = cntr_open;
        set_enosys(o.poll_open);
        set_enosys(o.stx_ctx);
        set_enosys(o.srx_ctx);
        o.query_atomic = query_atomic;
        set_enosys(o.query_collective);
        set_enosys(o.endpoint2);
        o.av_open = av_open;
        o.cq_open = cq_open;
        o.endpoint = ep_open;
        return o;
    }();
    static fi_ops_mr mr_ops = [] {
        fi_ops_mr o{};
        o.size = sizeof(o);
        o.reg = mr_reg;
        o.regv = mr_regv;
        o.regattr = mr_regattr;
        return o;
    }();
    if (fab->cfg.provider == "dpdk" && dpdk_domains > 0) {
        FI_WARN(&provider, FI_LOG_DOMAIN,
                "uet: the dpdk port has a domain open already: its endpoints progress together, "
                "so they share one domain (FI_THREAD_DOMAIN: one thread)\n");
        return -FI_EBUSY;
    }
    auto d = fab->fab->open_domain();
    if (!d) return to_fi_errno(d.error());
    auto* dom = new_obj<domain_obj>(FI_CLASS_DOMAIN, context, &ops);
    if (dom == nullptr) return -FI_ENOMEM;
    dom->fabric = fab;
    dom->dom = std::move(*d);
    dom->fid.ops = &dom_ops;
    dom->fid.mr = &mr_ops;
    if (fab->cfg.provider == "dpdk") ++dpdk_domains;
    ++fab->refs;
    *out = &dom->fid;
    return 0;
}

int trywait(fid_fabric*, fid**, int) {
    return -FI_ENOSYS;
}

// ---- CQ ----

std::size_t entry_size(fi_cq_format f) {
    switch (f) {
        case FI_CQ_FORMAT_MSG:
            return sizeof(fi_cq_msg_entry);
        case FI_CQ_FORMAT_DATA:
            return sizeof(fi_cq_data_entry);
        case FI_CQ_FORMAT_TAGGED:
            return sizeof(fi_cq_tagged_entry);
        default:
            return sizeof(fi_cq_entry);
    }
}

// Up to count successful entries; with src, each one's source (FI_SOURCE) too.
ssize_t read_entries(fid_cq* f, void* buf, std::size_t count, fi_addr_t* src) {
    auto* cq = self<cq_obj>(f);
    if (cq->count == 0) cq->progress();
    if (cq->count == 0) return -FI_EAGAIN;
    if (cq->ring[cq->head].err != 0) return -FI_EAVAIL;
    const std::size_t size = entry_size(cq->format);
    auto* out = static_cast<char*>(buf);
    std::size_t n = 0;
    while (n < count && cq->count > 0 && cq->ring[cq->head].err == 0) {
        std::memcpy(out + n * size, &cq->ring[cq->head].e, size);
        if (src != nullptr) src[n] = cq->ring[cq->head].src;
        cq->head = (cq->head + 1) % cq->ring.size();
        --cq->count;
        ++n;
    }
    return static_cast<ssize_t>(n);
}

ssize_t cq_read(fid_cq* f, void* buf, std::size_t count) {
    return read_entries(f, buf, count, nullptr);
}

ssize_t cq_readfrom(fid_cq* f, void* buf, std::size_t count, fi_addr_t* src) {
    return read_entries(f, buf, count, src);
}

ssize_t cq_readerr(fid_cq* f, fi_cq_err_entry* out, std::uint64_t) {
    auto* cq = self<cq_obj>(f);
    if (cq->count == 0 || cq->ring[cq->head].err == 0) return -FI_EAGAIN;
    cq_entry& e = cq->ring[cq->head];
    cq->err_text = std::move(e.detail);
    void* user_data = out->err_data;
    const std::size_t user_size = out->err_data_size;
    out->op_context = e.e.op_context;
    out->flags = e.e.flags;
    out->len = e.e.len;
    out->buf = e.e.buf;
    out->data = e.e.data;
    out->tag = e.e.tag;
    out->olen = e.olen;
    out->err = e.err;
    out->prov_errno = e.prov_errno;
    if (user_data != nullptr && user_size > 0) {
        const std::size_t n = std::min(user_size, cq->err_text.size() + 1);
        std::memcpy(user_data, cq->err_text.c_str(), n);
        out->err_data_size = n;
    } else {
        out->err_data = cq->err_text.data();
        out->err_data_size = cq->err_text.size() + 1;
    }
    cq->head = (cq->head + 1) % cq->ring.size();
    --cq->count;
    return 1;
}

ssize_t cq_sreadfrom(fid_cq* f, void* buf, std::size_t count, fi_addr_t* src, const void*,
                     int timeout) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout);
    for (;;) {
        const ssize_t n = read_entries(f, buf, count, src);
        if (n != -FI_EAGAIN) return n;
        if (timeout >= 0 && std::chrono::steady_clock::now() >= end) return -FI_EAGAIN;
    }
}

ssize_t cq_sread(fid_cq* f, void* buf, std::size_t count, const void* cond, int timeout) {
    return cq_sreadfrom(f, buf, count, nullptr, cond, timeout);
}

const char* cq_strerror(fid_cq*, int prov_errno, const void* err_data, char* buf, std::size_t len) {
    const char* text = err_data != nullptr ? static_cast<const char*>(err_data)
                                           : (prov_errno != 0 ? "uet: the target answered an "
                                                                "error (SES return code)"
                                                              : "uet: no detail");
    if (buf != nullptr && len > 0) {
        std::snprintf(buf, len, "%s", text);
        return buf;
    }
    return text;
}

int cq_close(fid* f) {
    auto* cq = self<cq_obj>(f);
    if (cq->refs > 0) return -FI_EBUSY;
    --cq->domain->refs;
    delete cq;
    return 0;
}

// ---- AV: fi_addr is an index of the table (FI_AV_TABLE) or uet's peer handle (FI_AV_MAP) ----

int av_insert(fid_av* f, const void* addr, std::size_t count, fi_addr_t* fi_addr,
              std::uint64_t flags, void*) {
    auto* av = self<av_obj>(f);
    if (flags & FI_EVENT) return -FI_ENOEQ;
    const auto* sins = static_cast<const sockaddr_in*>(addr);
    int inserted = 0;
    for (std::size_t i = 0; i < count; ++i) {
        fi_addr_t out = FI_ADDR_NOTAVAIL;
        if (sins[i].sin_family == AF_INET) {
            if (auto p = av->av.insert(from_sockaddr(sins[i]))) {
                if (av->type == FI_AV_MAP) {
                    out = static_cast<fi_addr_t>(*p);
                } else {
                    out = av->table.size();
                    av->table.push_back(*p);
                    av->remember(*p, out);
                }
                ++inserted;
            }
        }
        if (fi_addr != nullptr) fi_addr[i] = out;
    }
    return inserted;
}

int av_insertsvc(fid_av* f, const char* node, const char* service, fi_addr_t* fi_addr,
                 std::uint64_t flags, void* context) {
    sockaddr_in sin{};
    sin.sin_family = AF_INET;
    if (node == nullptr || inet_pton(AF_INET, node, &sin.sin_addr) != 1) return -FI_EINVAL;
    const int port = service != nullptr ? std::atoi(service) : 4793;
    if (port <= 0 || port > 65535) return -FI_EINVAL;
    sin.sin_port = htons(static_cast<std::uint16_t>(port));
    return av_insert(f, &sin, 1, fi_addr, flags, context);
}

int av_remove(fid_av* f, fi_addr_t* fi_addr, std::size_t count, std::uint64_t) {
    auto* av = self<av_obj>(f);
    for (std::size_t i = 0; i < count; ++i) {
        if (av->type != FI_AV_TABLE || fi_addr[i] >= av->table.size()) continue;
        av->forget(av->table[fi_addr[i]], fi_addr[i]);
        av->table[fi_addr[i]] = uet::any_peer;  // the index names nothing any more
    }
    return 0;
}

int av_lookup(fid_av* f, fi_addr_t fi_addr, void* addr, std::size_t* addrlen) {
    auto* av = self<av_obj>(f);
    uet::peer_addr p;
    if (!av->peer(fi_addr, p)) return -FI_EINVAL;
    const auto ea = av->av.lookup(p);
    if (!ea) return -FI_EINVAL;
    const sockaddr_in sin = to_sockaddr(*ea);
    std::memcpy(addr, &sin, std::min(*addrlen, sizeof(sin)));
    const bool fits = *addrlen >= sizeof(sin);
    *addrlen = sizeof(sin);
    return fits ? 0 : -FI_ETOOSMALL;
}

const char* av_straddr(fid_av*, const void* addr, char* buf, std::size_t* len) {
    const auto* sin = static_cast<const sockaddr_in*>(addr);
    char ip[INET_ADDRSTRLEN] = "?";
    inet_ntop(AF_INET, &sin->sin_addr, ip, sizeof(ip));
    char text[64];
    const unsigned pid = from_sockaddr(*sin).pid;
    const int n = pid == 0 ? std::snprintf(text, sizeof(text), "fi_sockaddr_in://%s:%u", ip,
                                           static_cast<unsigned>(ntohs(sin->sin_port)))
                           : std::snprintf(text, sizeof(text), "fi_sockaddr_in://%s:%u/%u", ip,
                                           static_cast<unsigned>(ntohs(sin->sin_port)), pid);
    if (buf != nullptr && *len > 0) std::snprintf(buf, *len, "%s", text);
    *len = static_cast<std::size_t>(n) + 1;
    return buf;
}

// ---- counters: completions and errors of the operations bound to them ----

int cntr_close(fid* f) {
    auto* c = self<cntr_obj>(f);
    if (!c->eps.empty()) return -FI_EBUSY;
    --c->domain->refs;
    delete c;
    return 0;
}

std::uint64_t cntr_read(fid_cntr* f) {
    auto* c = self<cntr_obj>(f);
    c->progress();
    return c->value;
}
std::uint64_t cntr_readerr(fid_cntr* f) {
    auto* c = self<cntr_obj>(f);
    c->progress();
    return c->errors;
}
int cntr_add(fid_cntr* f, std::uint64_t v) {
    self<cntr_obj>(f)->value += v;
    return 0;
}
int cntr_set(fid_cntr* f, std::uint64_t v) {
    self<cntr_obj>(f)->value = v;
    return 0;
}
int cntr_adderr(fid_cntr* f, std::uint64_t v) {
    self<cntr_obj>(f)->errors += v;
    return 0;
}
int cntr_seterr(fid_cntr* f, std::uint64_t v) {
    self<cntr_obj>(f)->errors = v;
    return 0;
}
// Progresses until the count reaches threshold (0), an error is counted (-FI_EAVAIL) or
// timeout milliseconds pass (-FI_ETIMEDOUT; a negative timeout waits for ever).
int cntr_wait(fid_cntr* f, std::uint64_t threshold, int timeout) {
    auto* c = self<cntr_obj>(f);
    const std::uint64_t errors = c->errors;
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout);
    for (;;) {
        c->progress();
        if (c->value >= threshold) return 0;
        if (c->errors != errors) return -FI_EAVAIL;
        if (timeout >= 0 && std::chrono::steady_clock::now() >= end) return -FI_ETIMEDOUT;
    }
}

int av_close(fid* f) {
    auto* av = self<av_obj>(f);
    if (av->refs > 0) return -FI_EBUSY;
    --av->domain->refs;
    delete av;
    return 0;
}

}  // namespace

bool av_obj::peer(fi_addr_t addr, uet::peer_addr& out) const noexcept {
    if (type == FI_AV_MAP) {
        out = static_cast<uet::peer_addr>(addr);
        return addr != FI_ADDR_NOTAVAIL;
    }
    if (addr >= table.size() || table[addr] == uet::any_peer) return false;
    out = table[addr];
    return true;
}

fi_addr_t av_obj::fi_addr_of(uet::peer_addr p) const noexcept {
    if (p == uet::any_peer) return FI_ADDR_NOTAVAIL;
    if (type == FI_AV_MAP) return static_cast<fi_addr_t>(p);
    const auto i = static_cast<std::uint64_t>(p);
    return i < index_of.size() ? index_of[i] : FI_ADDR_NOTAVAIL;
}

void av_obj::remember(uet::peer_addr p, fi_addr_t index) {
    const auto i = static_cast<std::uint64_t>(p);
    if (i >= max_reverse) return;  // not expected: uet's handles count from 0
    if (i >= index_of.size()) index_of.resize(i + 1, FI_ADDR_NOTAVAIL);
    if (index_of[i] == FI_ADDR_NOTAVAIL) index_of[i] = index;
}

void av_obj::forget(uet::peer_addr p, fi_addr_t index) noexcept {
    const auto i = static_cast<std::uint64_t>(p);
    if (i < index_of.size() && index_of[i] == index) index_of[i] = FI_ADDR_NOTAVAIL;
}

namespace {

// What reading a CQ or counter does: progress the endpoints bound to it, or the domain.
void progress_bound(domain_obj* domain, const std::vector<ep_obj*>& eps) {
    if (eps.empty()) {
        domain->dom.progress();
        return;
    }
    for (ep_obj* ep : eps)
        ep->progress();
}

}  // namespace

void cntr_obj::progress() {
    progress_bound(domain, eps);
}

int cntr_open(fid_domain* d, fi_cntr_attr* attr, fid_cntr** out, void* context) {
    if (attr != nullptr) {
        if (attr->events != FI_CNTR_EVENTS_COMP) return -FI_ENOSYS;
        if (attr->wait_obj != FI_WAIT_NONE && attr->wait_obj != FI_WAIT_UNSPEC) return -FI_ENOSYS;
        if (attr->flags != 0) return -FI_EBADFLAGS;
    }
    static fi_ops ops = base_ops(cntr_close);
    static fi_ops_cntr cntr_ops = {
        .size = sizeof(fi_ops_cntr),
        .read = cntr_read,
        .readerr = cntr_readerr,
        .add = cntr_add,
        .set = cntr_set,
        .wait = cntr_wait,
        .adderr = cntr_adderr,
        .seterr = cntr_seterr,
    };
    auto* c = new_obj<cntr_obj>(FI_CLASS_CNTR, context, &ops);
    if (c == nullptr) return -FI_ENOMEM;
    c->domain = self<domain_obj>(d);
    c->fid.ops = &cntr_ops;
    ++c->domain->refs;
    *out = &c->fid;
    return 0;
}

void cq_obj::push(cq_entry&& entry) {
    if (count == ring.size()) {
        std::vector<cq_entry> bigger(std::max<std::size_t>(64, ring.size() * 2));
        for (std::size_t i = 0; i < count; ++i)
            bigger[i] = std::move(ring[(head + i) % ring.size()]);
        ring = std::move(bigger);
        head = 0;
    }
    ring[(head + count) % ring.size()] = std::move(entry);
    ++count;
}

void cq_obj::progress() {
    progress_bound(domain, eps);
}

int cq_open(fid_domain* d, fi_cq_attr* attr, fid_cq** out, void* context) {
    if (attr == nullptr) return -FI_EINVAL;
    if (attr->wait_obj != FI_WAIT_NONE && attr->wait_obj != FI_WAIT_UNSPEC) return -FI_ENOSYS;
    if (attr->format == FI_CQ_FORMAT_UNSPEC) attr->format = FI_CQ_FORMAT_CONTEXT;
    if (attr->format != FI_CQ_FORMAT_CONTEXT && attr->format != FI_CQ_FORMAT_MSG &&
        attr->format != FI_CQ_FORMAT_DATA && attr->format != FI_CQ_FORMAT_TAGGED)
        return -FI_ENOSYS;
    if (attr->flags & FI_AFFINITY) return -FI_EBADFLAGS;
    static fi_ops ops = base_ops(cq_close);
    static fi_ops_cq cq_ops = [] {
        fi_ops_cq o{};
        o.size = sizeof(o);
        o.read = cq_read;
        o.readfrom = cq_readfrom;
        o.readerr = cq_readerr;
        o.sread = cq_sread;
        o.sreadfrom = cq_sreadfrom;
        set_enosys(o.signal);
        o.strerror = cq_strerror;
        return o;
    }();
    auto* cq = new_obj<cq_obj>(FI_CLASS_CQ, context, &ops);
    if (cq == nullptr) return -FI_ENOMEM;
    cq->domain = self<domain_obj>(d);
    cq->format = attr->format;
    cq->ring.resize(std::max<std::size_t>(64, attr->size));
    cq->fid.ops = &cq_ops;
    ++cq->domain->refs;
    *out = &cq->fid;
    return 0;
}

int av_open(fid_domain* d, fi_av_attr* attr, fid_av** out, void* context) {
    fi_av_type type = FI_AV_TABLE;
    if (attr != nullptr) {
        if (attr->type == FI_AV_MAP)
            type = FI_AV_MAP;
        else if (attr->type != FI_AV_TABLE && attr->type != FI_AV_UNSPEC)
            return -FI_EINVAL;
        if (attr->name != nullptr || attr->rx_ctx_bits != 0) return -FI_ENOSYS;
        if (attr->flags & (FI_EVENT | FI_SYMMETRIC)) return -FI_EBADFLAGS;
    }
    static fi_ops ops = base_ops(av_close);
    static fi_ops_av av_ops = [] {
        fi_ops_av o{};
        o.size = sizeof(o);
        o.insert = av_insert;
        o.insertsvc = av_insertsvc;
        set_enosys(o.insertsym);
        o.remove = av_remove;
        o.lookup = av_lookup;
        o.straddr = av_straddr;
        set_enosys(o.av_set);
        return o;
    }();
    auto* dom = self<domain_obj>(d);
    auto a = dom->dom.open_av();
    if (!a) return to_fi_errno(a.error());
    auto* av = new_obj<av_obj>(FI_CLASS_AV, context, &ops);
    if (av == nullptr) return -FI_ENOMEM;
    av->domain = dom;
    av->type = type;
    av->av = std::move(*a);
    av->fid.ops = &av_ops;
    ++dom->refs;
    *out = &av->fid;
    return 0;
}

int open_fabric(fi_fabric_attr* attr, fid_fabric** out, void* context) {
    config cfg = read_config();
    if (!cfg.error.empty()) {
        FI_WARN(&provider, FI_LOG_FABRIC, "uet: %s\n", cfg.error.c_str());
        return -FI_EINVAL;
    }
    if (attr != nullptr && attr->name != nullptr && fabric_name(cfg) != attr->name)
        return -FI_EINVAL;
    static fi_ops ops = base_ops(fabric_close);
    static fi_ops_fabric fab_ops = [] {
        fi_ops_fabric o{};
        o.size = sizeof(o);
        o.domain = domain_open;
        set_enosys(o.passive_ep);
        o.eq_open = eq_open;
        set_enosys(o.wait_open);
        o.trywait = trywait;
        set_enosys(o.domain2);
        return o;
    }();
    std::shared_ptr<uet::fabric> fab;
    if (const int rc = open_uet_fabric(cfg, fab); rc != 0) return rc;
    auto* fo = new_obj<fabric_obj>(FI_CLASS_FABRIC, context, &ops);
    if (fo == nullptr) return -FI_ENOMEM;
    fo->cfg = std::move(cfg);
    fo->fab = std::move(fab);
    fo->fid.ops = &fab_ops;
    fo->fid.api_version = attr != nullptr ? attr->api_version : provider.fi_version;
    *out = &fo->fid;
    return 0;
}

// uet_fi.hpp's name format.
sockaddr_in to_sockaddr(const uet::endpoint_address& a) noexcept {
    sockaddr_in sin{};
    sin.sin_family = AF_INET;
    sin.sin_port = htons(a.port);
    sin.sin_addr.s_addr = htonl(a.ip);
    sin.sin_zero[0] = static_cast<unsigned char>(a.pid >> 8);
    sin.sin_zero[1] = static_cast<unsigned char>(a.pid);
    return sin;
}

uet::endpoint_address from_sockaddr(const sockaddr_in& sin) noexcept {
    const auto hi = static_cast<std::uint16_t>(static_cast<unsigned char>(sin.sin_zero[0]));
    const auto lo = static_cast<std::uint16_t>(static_cast<unsigned char>(sin.sin_zero[1]));
    return {.ip = ntohl(sin.sin_addr.s_addr),
            .port = ntohs(sin.sin_port),
            .pid = static_cast<std::uint16_t>((hi << 8) | lo)};
}

}  // namespace uet_fi
