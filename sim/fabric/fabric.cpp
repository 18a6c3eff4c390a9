#include "fabric/fabric.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "core/prefetch.hpp"
#include "pipe/frame_edit.hpp"
#include "wire/bytes.hpp"
#include "wire/ipv4.hpp"

namespace uet::netmodel {

namespace {

constexpr std::uint64_t ps_per_ns = 1000;

std::uint64_t to_ps(std::uint64_t ns) noexcept {
    return ns > fabric::none / ps_per_ns ? fabric::none : ns * ps_per_ns;
}

// Serialisation time in picoseconds, rounded to the nearest (1 Gb/s = 1 bit per ns).
std::uint64_t wire_ps(std::size_t bytes, double rate_gbps) noexcept {
    const double ps = std::round(static_cast<double>(bytes) * 8000.0 / rate_gbps);
    return ps < 1e18 ? static_cast<std::uint64_t>(ps) : std::uint64_t{1'000'000'000'000'000'000};
}

// MurmurHash3's 64-bit finaliser: every input bit reaches every output bit, so source ports
// that differ in one bit land on unrelated spines, as a switch's ECMP hash intends.
std::uint64_t fmix64(std::uint64_t k) noexcept {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ull;
    k ^= k >> 33;
    return k;
}

void require(bool ok, const char* what) {
    if (!ok) throw std::invalid_argument(what);
}

}  // namespace

link_params uet_link(double rate_gbps, std::uint64_t delay_ns, std::uint64_t bdp_bytes) {
    link_params p;
    p.rate_gbps = rate_gbps;
    p.delay_ns = delay_ns;
    p.queue_bytes = bdp_bytes;
    p.ecn_kmin_bytes = bdp_bytes / 5;
    p.ecn_kmax_bytes = bdp_bytes * 4 / 5;
    p.trimming = true;
    p.priority_queue_bytes = bdp_bytes;
    return p;
}

// ---- construction and addressing ----

fabric::fabric(const topology& t) : topo_(t) {
    require(t.leaves >= 1 && t.leaves <= max_leaves, "fabric: leaves must be 1..65024");
    require(t.hosts_per_leaf >= 1 && t.hosts_per_leaf <= 255, "fabric: hosts_per_leaf 1..255");
    require(t.spines >= 1 && t.spines <= 65535, "fabric: spines must be 1..65535");
    require(t.host_link.rate_gbps > 0 && t.fabric_link.rate_gbps > 0, "fabric: rate must be > 0");
    require(t.max_frame_bytes >= 64, "fabric: max_frame_bytes must be >= 64");
    require(t.max_frames_in_flight >= 1, "fabric: max_frames_in_flight must be >= 1");
    require(t.pods == 0 || (t.leaves % t.pods == 0 && t.cores_per_agg >= 1 &&
                            std::uint64_t{t.spines} * t.cores_per_agg <= 65535),
            "fabric: pods must divide leaves, 1 <= spines x cores_per_agg <= 65535");
    require(t.carried_bytes == 0 || t.carried_bytes >= 64, "fabric: carried_bytes must be >= 64");
    slot_bytes_ =
        t.carried_bytes ? std::min(t.carried_bytes, t.max_frame_bytes) : t.max_frame_bytes;
    if (slot_bytes_ < t.max_frame_bytes) {
        deliver_scratch_.assign(t.max_frame_bytes, 0x5a);
        edit_scratch_.assign(t.max_frame_bytes, 0x5a);
    }
    hosts_ = t.leaves * t.hosts_per_leaf;
    links_ = t.leaves * t.spines;
    core_links_ = t.pods * t.spines * t.cores_per_agg;
    ports_.resize(std::size_t{2} * hosts_ + std::size_t{2} * links_ + std::size_t{2} * core_links_);
    events_ = event_heap(port_count());
    std::uint64_t state = t.seed;
    leaf_seeds_.resize(t.leaves);
    next_spine_.assign(t.leaves, 0);
    for (auto& s : leaf_seeds_)
        s = splitmix64(state);
    for (std::uint32_t i = 0; i < port_count(); ++i) {
        const bool host_side = i < 2 * hosts_, core_side = i >= 2 * hosts_ + 2 * links_;
        // init_port keeps a pointer: to topo_'s own parameters, never a copy.
        const link_params& lp = host_side                      ? topo_.host_link
                                : core_side && topo_.core_link ? *topo_.core_link
                                                               : topo_.fabric_link;
        init_port(i, lp, i < hosts_, splitmix64(state));
    }
}

void fabric::init_port(std::uint32_t id, const link_params& lp, bool nic, std::uint64_t seed) {
    port& p = ports_[id];
    p.params = &lp;
    p.rate_gbps = lp.rate_gbps;
    p.delay_ps = to_ps(lp.delay_ns);
    p.queue_cap = nic ? topo_.nic_queue_bytes : lp.queue_bytes;
    p.priority_cap = nic ? topo_.nic_queue_bytes : lp.priority_queue_bytes;
    p.marks_and_trims = !nic;
    p.ecn_rng.reseed(seed);
}

std::uint32_t fabric::host_ip(std::uint32_t host) const noexcept {
    const std::uint32_t leaf = host / topo_.hosts_per_leaf, index = host % topo_.hosts_per_leaf;
    return topo_.ip_base | (leaf & 0xff) << 16 | index << 8 | (1 + (leaf >> 8));
}

wire::mac_address fabric::host_mac(std::uint32_t host) const noexcept {
    const std::uint32_t leaf = host / topo_.hosts_per_leaf;
    const auto index = static_cast<std::uint8_t>(host % topo_.hosts_per_leaf);
    return {{0x02, 0x00, static_cast<std::uint8_t>(leaf >> 8), static_cast<std::uint8_t>(leaf),
             index, 0x01}};
}

std::uint32_t fabric::host_of_ip(std::uint32_t ip) const noexcept {
    const std::uint32_t low = ip & 0xff;
    if (low == 0) return no_host;
    const std::uint32_t leaf = (low - 1) << 8 | ((ip >> 16) & 0xff), index = (ip >> 8) & 0xff;
    if (leaf >= topo_.leaves || index >= topo_.hosts_per_leaf) return no_host;
    const std::uint32_t host = leaf * topo_.hosts_per_leaf + index;
    return host_ip(host) == ip ? host : no_host;
}

std::uint64_t fabric::uplink_hash(std::uint32_t leaf,
                                  std::span<const std::uint8_t> frame) const noexcept {
    const pipe::frame_layout l = pipe::locate(frame);
    std::uint64_t addrs = 0, rest = 0;
    if (l.ipv4()) {
        const std::uint8_t* ip = &frame[l.ip];
        addrs = std::uint64_t{wire::load_be32(ip + 12)} << 32 | wire::load_be32(ip + 16);
        rest = std::uint64_t{ip[9]} << 32;
        if (l.is_udp()) rest |= wire::load_be32(&frame[l.udp]);  // source and destination port
    }
    return tuple_hash(leaf, addrs, rest);
}

std::uint64_t fabric::tuple_hash(std::uint32_t leaf, std::uint64_t addrs,
                                 std::uint64_t rest) const noexcept {
    return fmix64(fmix64(leaf_seeds_[leaf % topo_.leaves] ^ addrs) ^ rest);
}

std::uint32_t fabric::uplink_for_udp(std::uint32_t leaf, std::uint32_t src_ip, std::uint32_t dst_ip,
                                     std::uint16_t src_port,
                                     std::uint16_t dst_port) const noexcept {
    const std::uint64_t addrs = std::uint64_t{src_ip} << 32 | dst_ip;
    const std::uint64_t rest = std::uint64_t{17} << 32 | std::uint32_t{src_port} << 16 | dst_port;
    return static_cast<std::uint32_t>(tuple_hash(leaf, addrs, rest) % topo_.spines);
}

std::uint32_t fabric::uplink_for(std::uint32_t leaf,
                                 std::span<const std::uint8_t> frame) const noexcept {
    return static_cast<std::uint32_t>(uplink_hash(leaf, frame) % topo_.spines);
}

// ---- ports ----

std::uint32_t fabric::up_port(std::uint32_t leaf, std::uint32_t spine) const noexcept {
    return 2 * hosts_ + leaf * topo_.spines + spine;
}

std::uint32_t fabric::down_port(std::uint32_t spine, std::uint32_t leaf) const noexcept {
    return 2 * hosts_ + links_ + spine * topo_.leaves + leaf;
}

std::uint32_t fabric::agg_up_port(std::uint32_t pod, std::uint32_t spine,
                                  std::uint32_t c) const noexcept {
    return 2 * hosts_ + 2 * links_ + (pod * topo_.spines + spine) * topo_.cores_per_agg + c;
}

std::uint32_t fabric::core_down_port(std::uint32_t spine, std::uint32_t c,
                                     std::uint32_t pod) const noexcept {
    return 2 * hosts_ + 2 * links_ + core_links_ + (spine * topo_.cores_per_agg + c) * topo_.pods +
           pod;
}

port_kind fabric::kind(std::uint32_t port) const noexcept {
    if (port < hosts_) return port_kind::nic;
    if (port < 2 * hosts_) return port_kind::to_host;
    if (port < 2 * hosts_ + links_) return port_kind::up;
    if (port < 2 * hosts_ + 2 * links_) return port_kind::down;
    if (port < 2 * hosts_ + 2 * links_ + core_links_) return port_kind::agg_up;
    return port_kind::core_down;
}

std::uint32_t fabric::path_links(std::uint32_t from, std::uint32_t to) const noexcept {
    const std::uint32_t a = leaf_of(from), b = leaf_of(to);
    if (a == b) return 2;
    return pod_of_leaf(a) == pod_of_leaf(b) ? 4 : 6;
}

port_stats fabric::port_counters(std::uint32_t port_id) const noexcept {
    const port& p = ports_[port_id];
    port_stats s = p.stats;
    s.queue_bytes = p.data_bytes;
    s.priority_bytes = p.prio_bytes;
    if (now_ps_ > 0) {
        const double occupied = static_cast<double>(p.data_bytes + p.prio_bytes);
        const double tail = occupied * static_cast<double>(now_ps_ - p.last_change_ps);
        s.mean_queue_bytes = (p.area + tail) / static_cast<double>(now_ps_);
    }
    return s;
}

std::uint64_t fabric::spine_bytes(std::uint32_t spine) const noexcept {
    std::uint64_t sum = 0;
    for (std::uint32_t leaf = 0; leaf < topo_.leaves; ++leaf)
        sum += ports_[down_port(spine, leaf)].stats.tx_bytes;
    return sum;
}

std::uint64_t fabric::spine_packets(std::uint32_t spine) const noexcept {
    std::uint64_t sum = 0;
    for (std::uint32_t leaf = 0; leaf < topo_.leaves; ++leaf)
        sum += ports_[down_port(spine, leaf)].stats.tx_packets;
    return sum;
}

std::size_t fabric::memory_bytes() const noexcept {
    return ports_.capacity() * sizeof(port) + leaf_seeds_.capacity() * sizeof(std::uint64_t) +
           chunks_.size() * (std::size_t{slot_bytes_} << chunk_bits) +
           meta_.capacity() * sizeof(slot_meta) + free_.capacity() * sizeof(std::uint32_t) +
           events_.memory_bytes() + changes_.capacity() * sizeof(change);
}

// ---- frame pool ----

std::uint32_t fabric::alloc_slot() {
    if (free_.empty()) {
        const std::size_t base = meta_.size();
        if (base >= topo_.max_frames_in_flight) return nil;
        const std::size_t n = std::size_t{1} << chunk_bits;
        chunks_.push_back(std::make_unique_for_overwrite<std::uint8_t[]>(n * slot_bytes_));
        meta_.resize(base + n);
        const std::size_t end = std::min<std::size_t>(base + n, topo_.max_frames_in_flight);
        for (std::size_t i = end; i-- > base;)
            free_.push_back(static_cast<std::uint32_t>(i));
    }
    const std::uint32_t s = free_.back();
    free_.pop_back();
    high_water_ = std::max(high_water_, ++used_);
    return s;
}

void fabric::free_slot(std::uint32_t s) noexcept {
    free_.push_back(s);
    --used_;
}

std::span<std::uint8_t> fabric::whole(std::uint32_t s,
                                      std::vector<std::uint8_t>& scratch) noexcept {
    const std::uint32_t length = meta_[s].length;
    if (length <= slot_bytes_) return {data(s), length};
    std::memcpy(scratch.data(), data(s), slot_bytes_);
    return {scratch.data(), length};
}

void fabric::put_back(std::uint32_t s, std::span<const std::uint8_t> frame) noexcept {
    if (frame.data() != data(s))
        std::memcpy(data(s), frame.data(), std::min<std::size_t>(frame.size(), slot_bytes_));
}

void fabric::push(fifo& f, std::uint32_t s) noexcept {
    meta_[s].next = nil;
    if (f.tail == nil) {
        f.head = s;
    } else {
        meta_[f.tail].next = s;
    }
    f.tail = s;
}

std::uint32_t fabric::pop(fifo& f) noexcept {
    const std::uint32_t s = f.head;
    f.head = meta_[s].next;
    if (f.head == nil) f.tail = nil;
    return s;
}

// ---- traffic ----

void fabric::send(std::uint32_t from_host, std::span<const std::uint8_t> frame, std::uint64_t now) {
    if (from_host >= hosts_) throw std::out_of_range("fabric::send: no such host");
    advance(now);
    ++stats_.sent;
    if (frame.size() > topo_.max_frame_bytes) {
        ++stats_.oversized;
        return;
    }
    const std::uint32_t s = alloc_slot();
    if (s == nil) {
        ++stats_.pool_exhausted;
        return;
    }
    std::memcpy(data(s), frame.data(), std::min<std::size_t>(frame.size(), slot_bytes_));
    slot_meta& m = meta_[s];
    m.length = static_cast<std::uint32_t>(frame.size());
    const pipe::frame_layout l = pipe::locate(frame);
    m.dst_host = l.ipv4() ? host_of_ip(wire::load_be32(&frame[l.ip + 16])) : no_host;
    m.dscp = l.ipv4() ? wire::tos_dscp(frame[l.ip + 1]) : 0;
    const std::uint32_t leaf = leaf_of(from_host);
    // Spraying turns the round robin only for packets that go up to a spine.
    const bool up = m.dst_host != no_host && leaf_of(m.dst_host) != leaf;
    // One draw picks the spine (aggregation switch) and, in a fat tree, the core above it.
    std::uint64_t draw = 0;
    if (!topo_.leaf_spray) {
        draw = uplink_hash(leaf, frame);
    } else if (up) {
        draw = next_spine_[leaf]++;
    }
    m.uplink = static_cast<std::uint16_t>(draw % topo_.spines);
    m.core = topo_.pods ? static_cast<std::uint16_t>(draw / topo_.spines % topo_.cores_per_agg) : 0;
    enqueue(nic_port(from_host), s, now_ps_);
}

void fabric::enqueue(std::uint32_t port_id, std::uint32_t s, std::uint64_t t) {
    port& p = ports_[port_id];
    if (p.failed) {
        ++p.stats.blackholed;
        ++stats_.blackholed;
        free_slot(s);
        return;
    }
    account(p, t);
    const std::uint8_t dscp = meta_[s].dscp;
    const bool priority = dscp == p.params->priority_dscp || dscp == p.params->trim_dscp;
    if (!(priority ? admit_priority(p, s) : admit_data(p, s))) {
        ++p.stats.dropped;
        ++stats_.dropped;
        free_slot(s);
        return;
    }
    if (p.in_service == nil) start_next(p, t);
    refresh(port_id);
}

// Data queue with ECN marking on enqueue; when full, trimming moves the header to the priority
// queue instead of dropping the packet.
bool fabric::admit_data(port& p, std::uint32_t s) {
    slot_meta& m = meta_[s];
    const link_params& lp = *p.params;
    if (p.queue_cap == 0 || p.data_bytes + m.length <= p.queue_cap) {
        if (p.marks_and_trims && lp.ecn_kmax_bytes > 0) mark(p, s);
        m.priority = false;
        p.data_bytes += m.length;
        p.stats.peak_queue_bytes = std::max(p.stats.peak_queue_bytes, p.data_bytes);
        push(p.data, s);
        return true;
    }
    if (!p.marks_and_trims || !lp.trimming) return false;
    const std::span<std::uint8_t> frame = whole(s, edit_scratch_);
    const std::size_t n = pipe::trim_frame(frame, lp.trim_to, lp.trim_dscp);
    if (n == 0) return false;
    put_back(s, frame.first(n));
    m.length = static_cast<std::uint32_t>(n);
    m.dscp = lp.trim_dscp;
    ++p.stats.trimmed;
    ++stats_.trimmed;
    return admit_priority(p, s);
}

// The source leaf's path ID (topology::stamp_path_id): the uplink chosen, plus 1.
void fabric::stamp_path(std::uint32_t s) noexcept {
    const std::span<std::uint8_t> frame = whole(s, edit_scratch_);
    if (pipe::set_ip_id(frame, static_cast<std::uint16_t>(meta_[s].uplink + 1))) put_back(s, frame);
}

void fabric::mark(port& p, std::uint32_t s) noexcept {
    const link_params& lp = *p.params;
    const std::uint64_t q = p.data_bytes;
    double probability = 0;
    if (q > lp.ecn_kmin_bytes) {
        probability = q >= lp.ecn_kmax_bytes
                          ? 1.0
                          : lp.ecn_pmax * static_cast<double>(q - lp.ecn_kmin_bytes) /
                                static_cast<double>(lp.ecn_kmax_bytes - lp.ecn_kmin_bytes);
    }
    if (!p.ecn_rng.bernoulli(probability)) return;
    const std::span<std::uint8_t> frame = whole(s, edit_scratch_);
    if (!pipe::mark_ce(frame)) return;  // Not-ECT, CE already, not IPv4
    put_back(s, frame);
    ++p.stats.ecn_marked;
    ++stats_.ecn_marked;
    p.stats.min_marked_queue_bytes = std::min(p.stats.min_marked_queue_bytes, q);
}

bool fabric::admit_priority(port& p, std::uint32_t s) noexcept {
    slot_meta& m = meta_[s];
    if (p.priority_cap != 0 && p.prio_bytes + m.length > p.priority_cap) return false;
    m.priority = true;
    p.prio_bytes += m.length;
    p.stats.peak_priority_bytes = std::max(p.stats.peak_priority_bytes, p.prio_bytes);
    push(p.prio, s);
    return true;
}

// Time-averaged occupancy: integrate the bytes held up to t before they change.
void fabric::account(port& p, std::uint64_t t) noexcept {
    if (t <= p.last_change_ps) return;
    p.area += static_cast<double>(p.data_bytes + p.prio_bytes) *
              static_cast<double>(t - p.last_change_ps);
    p.last_change_ps = t;
}

// Strict priority, no preemption: the next frame is chosen when the wire becomes free.
void fabric::start_next(port& p, std::uint64_t t) noexcept {
    std::uint32_t s = nil;
    if (!p.prio.empty()) {
        s = pop(p.prio);
    } else if (!p.data.empty()) {
        s = pop(p.data);
    }
    p.in_service = s;
    p.tx_done_ps = s == nil ? none : t + wire_ps(meta_[s].length, p.rate_gbps);
}

void fabric::finish_tx(port& p, std::uint64_t t) noexcept {
    const std::uint32_t s = p.in_service;
    account(p, t);
    slot_meta& m = meta_[s];
    (m.priority ? p.prio_bytes : p.data_bytes) -= m.length;
    ++p.stats.tx_packets;
    p.stats.tx_bytes += m.length;
    ++stats_.hops;
    m.time_ps = t + p.delay_ps;
    if (p.wire.empty()) p.wire_head_ps = m.time_ps;
    push(p.wire, s);
    start_next(p, t);
}

// A frame has reached the far end of port_id: route it by destination host.
void fabric::forward(std::uint32_t port_id, std::uint32_t s, std::uint64_t t) {
    const std::uint32_t dst = meta_[s].dst_host;
    switch (kind(port_id)) {
        case port_kind::nic: {
            if (dst == no_host) {
                ++stats_.unroutable;
                free_slot(s);
                return;
            }
            const std::uint32_t leaf = leaf_of(port_id);
            if (leaf_of(dst) == leaf) return enqueue(to_host_port(dst), s, t);
            if (topo_.stamp_path_id) stamp_path(s);
            enqueue(up_port(leaf, meta_[s].uplink), s, t);
            return;
        }
        case port_kind::up: {
            const std::uint32_t from_leaf = (port_id - up_port(0, 0)) / topo_.spines;
            const std::uint32_t spine = (port_id - up_port(0, 0)) % topo_.spines;
            const std::uint32_t pod = pod_of_leaf(from_leaf);
            if (topo_.pods == 0 || pod_of_leaf(leaf_of(dst)) == pod) {
                enqueue(down_port(spine, leaf_of(dst)), s, t);
            } else {
                enqueue(agg_up_port(pod, spine, meta_[s].core), s, t);
            }
            return;
        }
        case port_kind::agg_up: {
            const std::uint32_t agg = (port_id - agg_up_port(0, 0, 0)) / topo_.cores_per_agg;
            const std::uint32_t c = (port_id - agg_up_port(0, 0, 0)) % topo_.cores_per_agg;
            enqueue(core_down_port(agg % topo_.spines, c, pod_of_leaf(leaf_of(dst))), s, t);
            return;
        }
        case port_kind::core_down: {
            const std::uint32_t core = (port_id - core_down_port(0, 0, 0)) / topo_.pods;
            enqueue(down_port(core / topo_.cores_per_agg, leaf_of(dst)), s, t);
            return;
        }
        case port_kind::down:
            enqueue(to_host_port(dst), s, t);
            return;
        case port_kind::to_host:
            push(arrived_, s);
            return;
    }
}

void fabric::run_port_event(std::uint32_t port_id) {
    port& p = ports_[port_id];
    const std::uint64_t t = p.next_ps;
    if (p.wire_head_ps <= t) {
        const std::uint32_t s = pop(p.wire);
        p.wire_head_ps = p.wire.empty() ? none : meta_[p.wire.head].time_ps;
        refresh(port_id);
        forward(port_id, s, t);
        return;
    }
    finish_tx(p, t);
    refresh(port_id);
}

void fabric::advance(std::uint64_t now) {
    const std::uint64_t limit = to_ps(now);
    for (;;) {
        const std::uint64_t tp = events_.top_time();
        const std::uint64_t tc = changes_.empty() ? none : changes_.front().at_ps;
        if (tc != none && tc <= tp && tc <= limit) {
            std::pop_heap(changes_.begin(), changes_.end(), change_later);
            const change c = changes_.back();
            changes_.pop_back();
            now_ps_ = std::max(now_ps_, c.at_ps);
            ++stats_.events;
            apply(c, now_ps_);
            continue;
        }
        if (tp == none || tp > limit) break;
        now_ps_ = tp;
        ++stats_.events;
        // The next event is most likely one of these ports': at a thousand hosts a port's
        // record is a cache miss, fetched while this event runs.
        for (std::uint32_t k = 0; k < 2; ++k)
            if (const std::uint32_t id = events_.next_id(k); id != event_heap::absent)
                prefetch_line(&ports_[id]);
        run_port_event(events_.top_id());
    }
    if (limit != none) now_ps_ = std::max(now_ps_, limit);
}

std::uint64_t fabric::next_event() const noexcept {
    std::uint64_t t = none;
    if (!arrived_.empty()) t = meta_[arrived_.head].time_ps;
    t = std::min(t, events_.top_time());
    if (!changes_.empty()) t = std::min(t, changes_.front().at_ps);
    return t == none ? none : (t + ps_per_ns - 1) / ps_per_ns;
}

// ---- faults ----

bool fabric::change_later(const change& a, const change& b) noexcept {
    return a.at_ps != b.at_ps ? a.at_ps > b.at_ps : a.seq > b.seq;
}

void fabric::schedule(std::uint32_t port_id, change_op op, double rate, std::uint64_t at) {
    if (port_id >= port_count()) throw std::out_of_range("fabric: no such port");
    if (op == change_op::rate && !(rate > 0)) throw std::invalid_argument("fabric: rate <= 0");
    changes_.push_back({to_ps(at), change_seq_++, port_id, op, rate});
    std::push_heap(changes_.begin(), changes_.end(), change_later);
}

void fabric::apply(const change& c, std::uint64_t t) {
    port& p = ports_[c.port];
    switch (c.op) {
        case change_op::rate:
            p.rate_gbps = c.rate_gbps;  // the frame on the wire finishes at the old rate
            return;
        case change_op::fail:
            if (p.failed) return;
            account(p, t);
            flush(p);
            p.failed = true;
            refresh(c.port);
            return;
        case change_op::restore:
            p.failed = false;
            return;
    }
}

// A failed link loses everything it holds: queued, being serialised, and on the wire.
void fabric::flush(port& p) {
    std::uint64_t lost = 0;
    for (fifo* f : {&p.prio, &p.data, &p.wire}) {
        while (!f->empty()) {
            free_slot(pop(*f));
            ++lost;
        }
    }
    if (p.in_service != nil) {
        free_slot(p.in_service);
        ++lost;
    }
    p.in_service = nil;
    p.tx_done_ps = none;
    p.wire_head_ps = none;
    p.data_bytes = p.prio_bytes = 0;
    p.stats.blackholed += lost;
    stats_.blackholed += lost;
}

void fabric::set_port_rate(std::uint32_t port, double gbps, std::uint64_t at) {
    schedule(port, change_op::rate, gbps, at);
}

void fabric::fail_port(std::uint32_t port, std::uint64_t at) {
    schedule(port, change_op::fail, 0, at);
}

void fabric::restore_port(std::uint32_t port, std::uint64_t at) {
    schedule(port, change_op::restore, 0, at);
}

void fabric::set_spine_link_rate(std::uint32_t leaf, std::uint32_t spine, double gbps,
                                 std::uint64_t at) {
    set_port_rate(up_port(leaf, spine), gbps, at);
    set_port_rate(down_port(spine, leaf), gbps, at);
}

void fabric::fail_spine_link(std::uint32_t leaf, std::uint32_t spine, std::uint64_t at) {
    fail_port(up_port(leaf, spine), at);
    fail_port(down_port(spine, leaf), at);
}

void fabric::restore_spine_link(std::uint32_t leaf, std::uint32_t spine, std::uint64_t at) {
    restore_port(up_port(leaf, spine), at);
    restore_port(down_port(spine, leaf), at);
}

void fabric::set_spine_rate(std::uint32_t spine, double gbps, std::uint64_t at) {
    for (std::uint32_t leaf = 0; leaf < topo_.leaves; ++leaf)
        set_spine_link_rate(leaf, spine, gbps, at);
}

void fabric::set_host_link_rate(std::uint32_t host, double gbps, std::uint64_t at) {
    set_port_rate(nic_port(host), gbps, at);
    set_port_rate(to_host_port(host), gbps, at);
}

// ---- events ----

// A port's next event is the end of its current serialisation or its earliest wire arrival.
void fabric::refresh(std::uint32_t port_id) noexcept {
    port& p = ports_[port_id];
    std::uint64_t next = p.in_service == nil ? none : p.tx_done_ps;
    next = std::min(next, p.wire_head_ps);
    if (next == p.next_ps) return;
    p.next_ps = next;
    events_.set(port_id, next);
}

}  // namespace uet::netmodel
