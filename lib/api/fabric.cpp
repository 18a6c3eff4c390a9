// Fabric, domain, address vector, completion queue and memory regions. The networks under them
// are in provider_pipe.cpp and provider_dpdk.cpp.
#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>
#include <random>

#include "api/api_impl.hpp"
#include "api/roce_endpoint.hpp"
#include "core/ring_index.hpp"

namespace uet {
namespace detail {

// ---- why the last set-up call failed ----

namespace {
thread_local std::string last_error_text;
}  // namespace

std::string last_error_text_copy() {
    return last_error_text;
}

void set_last_error(std::string why) {
    last_error_text = std::move(why);
}

void clear_last_error() {
    last_error_text.clear();
}

// ---- providers ----

namespace {
// Filled by the providers' load-time constructors, before main: a fixed table, so that
// registering needs no allocation and no order among static objects.
struct provider_table {
    std::array<const provider*, 8> entries{};
    std::size_t count = 0;
};
provider_table& providers() {
    static provider_table t;
    return t;
}
}  // namespace

void register_provider(const provider& p) noexcept {
    provider_table& t = providers();
    if (find_provider(p.name) == nullptr && t.count < t.entries.size()) t.entries[t.count++] = &p;
}

const provider* find_provider(std::string_view name) noexcept {
    const provider_table& t = providers();
    for (std::size_t i = 0; i < t.count; ++i)
        if (name == t.entries[i]->name) return t.entries[i];
    return nullptr;
}

std::string provider_names() {
    const provider_table& t = providers();
    std::string names;
    for (std::size_t i = 0; i < t.count; ++i)
        names += (i ? ", \"" : "\"") + std::string(t.entries[i]->name) + "\"";
    return names;
}

// ---- completion queue ----

cq_impl::cq_impl(std::shared_ptr<fabric_impl> f, std::size_t cap)
    : fabric(std::move(f)), capacity(cap), ring(2 * cap) {}

bool cq_impl::reserve() noexcept {
    if (reserved_ + count >= capacity) return false;
    ++reserved_;
    return true;
}

std::size_t cq_impl::reserve_up_to(std::size_t n) noexcept {
    const std::size_t taken = reserved_ + count;
    const std::size_t granted = taken < capacity ? std::min(n, capacity - taken) : 0;
    reserved_ += granted;
    return granted;
}

void cq_impl::push_unreserved(const completion& c) noexcept {
    // Keep room for every reserved completion still to come.
    if (count + reserved_ >= ring_size()) {
        overrun = true;
        return;
    }
    ring[ring_add(head, count, ring_size())] = c;
    ++count;
}

bool cq_impl::head_is_error() const noexcept {
    return overrun || (count > 0 && static_cast<bool>(ring[head].error));
}

std::size_t cq_impl::pop(std::span<completion> out) noexcept {
    // In locals: the copies' stores (bytes, which may alias anything) made the compiler read the
    // ring, its head and its count again for every entry.
    const completion* const r = ring.data();
    const std::size_t size = ring_size(), most = std::min(out.size(), count);
    std::size_t n = 0, at = head;
    while (n < most && !r[at].error) {
        out[n++] = r[at];
        at = ring_next(at, size);
    }
    head = at;
    count -= n;
    // Emptied, the ring starts again at its first entry: the next completions are written to
    // lines just read (still cached) instead of walking a ring twice the queue's capacity, whose
    // every entry was a cache miss for the producer and for the reader.
    if (count == 0) head = 0;
    return n;
}

bool cq_impl::pop_error(completion& out) noexcept {
    if (overrun) {
        overrun = false;
        out = completion{};
        out.error = make_error_code(errc::cq_overrun);
        out.detail = detail_of(errc::cq_overrun);
        return true;
    }
    if (count == 0 || !ring[head].error) return false;
    out = ring[head];
    head = ring_next(head, ring_size());
    --count;
    return true;
}

namespace {

// Memory keys are the only thing between a peer of the same job and a region: on a real network
// they must not be guessable, so they are salted from the system's entropy. A deterministic
// provider (pipe) keeps them reproducible from attr.seed.
std::uint64_t region_key_seed(const fabric_attr& attr, bool deterministic) {
    std::uint64_t seed = attr.seed ^ 0x6d72;
    if (!deterministic) {
        std::random_device entropy;
        seed ^= (std::uint64_t{entropy()} << 32) ^ entropy();
    }
    return seed;
}

}  // namespace

domain_impl::domain_impl(std::shared_ptr<fabric_impl> f, const domain_attr& a)
    : fabric(std::move(f)),
      regions(a.max_memory_regions, region_key_seed(fabric->attr, fabric->deterministic)) {}

}  // namespace detail

// ---- endpoint addresses ----

std::string to_string(const endpoint_address& a) {
    std::string s;
    for (int shift = 24; shift >= 0; shift -= 8) {
        s += std::to_string((a.ip >> shift) & 0xff);
        s += shift ? "." : ":";
    }
    s += std::to_string(a.port);
    if (a.pid != 0) s += "/" + std::to_string(a.pid);
    return s;
}

std::optional<endpoint_address> parse_endpoint_address(const std::string& text) {
    endpoint_address a;
    const char* p = text.data();
    const char* end = p + text.size();
    for (int i = 0; i < 4; ++i) {
        unsigned octet = 0;
        auto [next, ec] = std::from_chars(p, end, octet);
        if (ec != std::errc{} || octet > 255 || next == end) return std::nullopt;
        if (*next != (i < 3 ? '.' : ':')) return std::nullopt;
        a.ip = (a.ip << 8) | octet;
        p = next + 1;
    }
    auto [next, ec] = std::from_chars(p, end, a.port);
    if (ec != std::errc{}) return std::nullopt;
    if (next != end) {
        if (*next != '/') return std::nullopt;
        auto [after, pid_ec] = std::from_chars(next + 1, end, a.pid);
        if (pid_ec != std::errc{} || after != end || a.pid > 0xfff) return std::nullopt;
    }
    return a;
}

// ---- fabric ----

result<fabric> fabric::open(const fabric_attr& attr) {
    detail::clear_last_error();
    const detail::provider* p = detail::find_provider(attr.provider);
    if (p == nullptr) {
        detail::set_last_error("unknown provider \"" + attr.provider +
                               "\" (known: " + detail::provider_names() + ")");
        return errc::unsupported;
    }
    std::error_code ec;
    std::unique_ptr<detail::network> net = p->open(attr, ec);
    if (!net) return ec ? ec : make_error_code(errc::invalid_argument);
    fabric f;
    f.impl_ = std::make_shared<detail::fabric_impl>(attr, std::move(net), p->deterministic);
    return f;
}

std::string fabric::last_error() {
    return detail::last_error_text_copy();
}

fabric::~fabric() = default;
fabric::fabric(fabric&&) noexcept = default;
fabric& fabric::operator=(fabric&&) noexcept = default;

result<domain> fabric::open_domain(const domain_attr& attr) {
    if (!impl_) return errc::invalid_argument;
    if (attr.max_memory_regions == 0 || attr.max_memory_regions > (1u << 24))
        return errc::invalid_argument;
    domain d;
    d.impl_ = std::make_shared<detail::domain_impl>(impl_, attr);
    return d;
}

const fabric_attr& fabric::attr() const noexcept {
    return impl_->attr;
}

bool fabric::progress() {
    return impl_ && impl_->net->step();
}

std::uint64_t fabric::now_ns() const noexcept {
    return impl_ ? impl_->net->now() : 0;
}

fabric_stats fabric::stats() const noexcept {
    return impl_ ? impl_->net->stats() : fabric_stats{};
}

std::error_code fabric::set_impairments(const link_impairments& impairments) {
    if (!impl_) return make_error_code(errc::invalid_argument);
    const std::error_code ec = impl_->net->set_impairments(impairments);
    if (!ec) impl_->attr.impairments = impairments;
    return ec;
}

// ---- domain ----

domain::~domain() = default;
domain::domain(domain&&) noexcept = default;
domain& domain::operator=(domain&&) noexcept = default;

result<memory_region> domain::register_memory(std::span<std::byte> buf, access flags,
                                              std::uint32_t job_id) {
    if (!impl_ || job_id > 0xffffff) return errc::invalid_argument;
    const std::uint64_t key =
        impl_->regions.add(reinterpret_cast<std::uint8_t*>(buf.data()), buf.size(),
                           static_cast<std::uint32_t>(flags), job_id);
    if (key == 0) return errc::again;
    const std::uint32_t handle = impl_->fabric->net->register_memory(buf.data(), buf.size());
    if (handle != detail::network::no_memory_handle) impl_->network_handles.emplace(key, handle);
    memory_region mr;
    mr.domain_ = impl_;
    mr.key_ = key;
    mr.span_ = buf;
    mr.access_ = flags;
    mr.job_ = job_id;
    return mr;
}

result<completion_queue> domain::open_cq(std::size_t capacity) {
    if (!impl_ || capacity == 0 || capacity > (1u << 24)) return errc::invalid_argument;
    completion_queue cq;
    cq.impl_ = std::make_shared<detail::cq_impl>(impl_->fabric, capacity);
    return cq;
}

result<address_vector> domain::open_av() {
    if (!impl_) return errc::invalid_argument;
    address_vector av;
    av.impl_ = std::make_shared<detail::av_impl>();
    return av;
}

result<endpoint> domain::open_endpoint(const endpoint_attr& attr, completion_queue& cq,
                                       address_vector& av) {
    if (!impl_ || !cq.impl_ || !av.impl_ || cq.impl_->fabric != impl_->fabric)
        return errc::invalid_argument;
    if (attr.job_id > 0xffffff || attr.tx_depth == 0 || attr.rx_depth == 0 ||
        attr.tx_depth + attr.rx_depth > 0xffff ||  // operation tokens carry a 16-bit index
        attr.deferrable_threshold > attr.rendezvous_threshold ||
        attr.rendezvous_threshold > detail::chunk_bytes ||
        attr.inject_size > impl_->fabric->attr.mtu)
        return errc::invalid_argument;
    detail::clear_last_error();
    if (attr.parallel_pdcs == 0 || attr.parallel_pdcs > max_parallel_pdcs) {
        detail::set_last_error("endpoint_attr.parallel_pdcs " + std::to_string(attr.parallel_pdcs) +
                               " is outside 1.." + std::to_string(max_parallel_pdcs));
        return errc::invalid_argument;
    }
    if (attr.tss.enabled && attr.transport != transport::uet) {
        detail::set_last_error("endpoint_attr.tss is supported on transport uet only, not roce_rc");
        return errc::invalid_argument;
    }
    auto& f = *impl_->fabric;
    engine_config c = detail::engine_config_for(attr, f.attr.mtu);
    std::shared_ptr<detail::endpoint_base> ep;
    if (attr.transport == transport::roce_rc) {
        if (const std::string why = detail::roce_refusal(attr); !why.empty()) {
            detail::set_last_error(why);
            return errc::invalid_argument;
        }
        qp_sched::params sched;
        if (const std::string why = detail::resolve_qp_sched(attr.qp_sched, sched); !why.empty()) {
            detail::set_last_error(why);
            return errc::invalid_argument;
        }
        if (auto ec = f.net->prepare(c, attr)) return ec;
        // attr() says what is in effect: every qp_sched field, from wherever it came.
        endpoint_attr effective = attr;
        qp_sched_attr& q = effective.qp_sched;
        q.qps = sched.qps_per_connection;
        q.scheduler = static_cast<qp_scheduler>(sched.kind());
        q.reset_interval_ms = sched.reset_interval_ms;
        q.update_interval_us = sched.update_interval_us;
        q.weight = sched.weight;
        q.split_data_min = sched.split_data_min;
        q.wrr_enable = sched.wrr_enable;
        ep = std::make_shared<detail::roce_endpoint>(
            impl_, cq.impl_, av.impl_, effective,
            detail::roce_config_for(c, effective, f.attr.mtu, sched.qps_per_connection), sched);
    } else if (attr.transport == transport::uet) {
        tss::domain_config secure;
        tss::key256 key;
        if (attr.tss.enabled) {
            if (const std::string why = detail::resolve_tss(attr, f.attr.mtu, secure, key);
                !why.empty()) {
                detail::set_last_error(why);
                return errc::invalid_argument;
            }
        }
        if (auto ec = f.net->prepare(c, attr)) return ec;
        if (attr.tss.enabled) detail::secure_engine_config(c, secure);
        auto u = std::make_shared<detail::endpoint_impl>(impl_, cq.impl_, av.impl_, attr, c);
        if (attr.tss.enabled) u->secure(secure, key);
        ep = std::move(u);
    } else {
        detail::set_last_error("endpoint_attr.transport " +
                               std::to_string(static_cast<int>(attr.transport)) +
                               " is neither uet nor roce_rc");
        return errc::invalid_argument;
    }
    f.net->attach(*ep);
    endpoint e;
    e.impl_ = std::move(ep);
    return e;
}

bool domain::progress() {
    return impl_ && impl_->fabric->net->step();
}

// ---- memory region ----

memory_region::~memory_region() {
    close();
}

memory_region::memory_region(memory_region&& o) noexcept
    : domain_(std::move(o.domain_)),
      key_(o.key_),
      span_(o.span_),
      access_(o.access_),
      job_(o.job_) {
    o.key_ = 0;
}

memory_region& memory_region::operator=(memory_region&& o) noexcept {
    if (this != &o) {
        close();
        domain_ = std::move(o.domain_);
        key_ = std::exchange(o.key_, 0);
        span_ = o.span_;
        access_ = o.access_;
        job_ = o.job_;
    }
    return *this;
}

void memory_region::close() noexcept {
    if (domain_ && key_ != 0) {
        domain_->regions.remove(key_);
        // A response to a peer's read may still be cut from the region's memory (zero copy), as
        // it is sent and each time it is resent: the memory goes back to the application only
        // once the engine is done with it (acknowledged, or given up on at the retry limit). A
        // network with nothing left to do has no engine holding it.
        while (domain_->regions.still_read(key_) && domain_->fabric->net->step()) {
        }
        if (const auto h = domain_->network_handles.find(key_);
            h != domain_->network_handles.end()) {
            domain_->fabric->net->unregister_memory(h->second);
            domain_->network_handles.erase(h);
        }
    }
    key_ = 0;
    domain_.reset();
}

// ---- address vector ----

address_vector::~address_vector() = default;
address_vector::address_vector(address_vector&&) noexcept = default;
address_vector& address_vector::operator=(address_vector&&) noexcept = default;

result<peer_addr> address_vector::insert(const endpoint_address& a) {
    if (!impl_ || a.ip == 0 || a.pid > 0xfff) return errc::invalid_argument;
    const std::uint64_t key = detail::av_impl::key(a.ip, a.pid);
    if (auto it = impl_->by_address.find(key); it != impl_->by_address.end())
        return static_cast<peer_addr>(it->second);
    const std::uint64_t index = impl_->addresses.size();
    impl_->addresses.push_back(a);
    impl_->by_address.emplace(key, index);
    return static_cast<peer_addr>(index);
}

std::optional<endpoint_address> address_vector::lookup(peer_addr p) const {
    const auto index = static_cast<std::uint64_t>(p);
    if (!impl_ || index >= impl_->addresses.size()) return std::nullopt;
    return impl_->addresses[index];
}

std::size_t address_vector::size() const noexcept {
    return impl_ ? impl_->addresses.size() : 0;
}

// ---- completion queue ----

completion_queue::~completion_queue() = default;
completion_queue::completion_queue(completion_queue&&) noexcept = default;
completion_queue& completion_queue::operator=(completion_queue&&) noexcept = default;

std::size_t completion_queue::read(std::span<completion> out) {
    if (!impl_) return 0;
    if (impl_->count == 0) impl_->fabric->net->step();
    return impl_->pop(out);
}

bool completion_queue::has_error() const noexcept {
    return impl_ && impl_->head_is_error();
}

bool completion_queue::read_error(completion& out) {
    return impl_ && impl_->pop_error(out);
}

std::error_code completion_queue::wait(completion& out, std::uint64_t max_steps) {
    if (!impl_) return errc::invalid_argument;
    for (std::uint64_t steps = 0; impl_->count == 0 && !impl_->overrun; ++steps)
        if (steps >= max_steps || !impl_->fabric->net->step()) return errc::again;
    if (impl_->pop_error(out)) return out.error;
    impl_->pop(std::span<completion>(&out, 1));
    return {};
}

std::error_code completion_queue::wait_for(completion& out, std::chrono::nanoseconds timeout) {
    if (!impl_) return errc::invalid_argument;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    // The clock is read every 256 steps: a step is a few microseconds at most.
    for (std::uint64_t steps = 0; impl_->count == 0 && !impl_->overrun; ++steps) {
        if (steps % 256 == 255 && std::chrono::steady_clock::now() >= deadline) return errc::again;
        if (!impl_->fabric->net->step()) return errc::again;
    }
    if (impl_->pop_error(out)) return out.error;
    impl_->pop(std::span<completion>(&out, 1));
    return {};
}

std::size_t completion_queue::size() const noexcept {
    return impl_ ? impl_->count : 0;
}

std::size_t completion_queue::capacity() const noexcept {
    return impl_ ? impl_->capacity : 0;
}

}  // namespace uet
