// Receive and transmit bursts: no allocation, no lock, no system call of ours per frame.
#include "dpdk/port_io.hpp"

#include <time.h>

#include <cstring>

#include "dpdk/dpdk_include.hpp"
#include "host/stage_clock.hpp"

namespace uet::dpdk {

namespace {

using host::stage_clock;

constexpr unsigned tx_retries = 4;  // re-offers of a burst to a full TX ring before dropping
constexpr std::uint16_t prefetch_ahead = 4;
constexpr auto goodbye_resend = std::chrono::milliseconds(50);  // leaving frames are not acked

rte_mbuf* mbuf_of(const host::tx_frame& f) noexcept {
    return static_cast<rte_mbuf*>(f.io_cookie);
}

// The usual frame, built in its mbuf with neither an external payload nor an offload to ask
// for: its lengths are all that queue_io::prepare() would set. Inline in transmit_burst (the
// call and the offload check cost a frame as much as this); anything else goes to prepare().
bool prepare_plain(host::tx_frame& f) noexcept {
    rte_mbuf* m = mbuf_of(f);
    if (f.ext.length != 0 || f.offload_ipv4_checksum || f.offload_udp_checksum || m == nullptr ||
        f.length == 0 || f.length > f.buffer.size())
        return false;
    m->data_len = static_cast<std::uint16_t>(f.length);
    m->pkt_len = f.length;
    m->ol_flags = 0;
    return true;
}

}  // namespace

port::queue_io::queue_io(port& owner, std::uint16_t queue, std::size_t frame_room)
    : owner_(owner),
      queue_(queue),
      frame_room_(frame_room),
      // A queue that rte_flow fills with engine traffic only needs no second look.
      classify_(!(owner.steering_ == steering_mode::hardware && queue == owner.cfg_.steer_queue)),
      watch_goodbye_(owner.is_memif()),
      scratch_(65536),
      iova_is_va_(rte_eal_iova_mode() == RTE_IOVA_VA) {}

port::queue_io::~queue_io() {
    for (std::uint16_t i = 0; i < backlog_; ++i)
        rte_pktmbuf_free(out_[i]);
    if (ext_stashed_ != 0) rte_pktmbuf_free_bulk(ext_stash_.data(), ext_stashed_);
    for (auto& s : slots_) {
        if (s.io_cookie != nullptr) rte_pktmbuf_free(mbuf_of(s));
        s.io_cookie = nullptr;
    }
}

std::size_t port::queue_io::receive_burst(host::frame_handler& h, std::uint64_t now) {
    if (queue_ >= owner_.cfg_.rx_queues) return 0;
    if (owner_.peer_left_.load(std::memory_order_relaxed) && !owner_.peer_back()) [[unlikely]] {
        retry_owed_ack();
        return 0;
    }
    std::array<rte_mbuf*, host::burst_size> pkts;
    stage_clock clock(owner_.cfg_.time_stages);
    const std::uint16_t n = rte_eth_rx_burst(owner_.port_id_, queue_, pkts.data(),
                                             static_cast<std::uint16_t>(pkts.size()));
    if (n == 0) return 0;
    clock.lap(c_.rx_driver_ticks);
    // The headers of a frame another core (or the memif peer) just wrote miss the cache: ask
    // for them a few frames ahead of the one being handled.
    for (std::uint16_t i = 0; i < std::min<std::uint16_t>(n, prefetch_ahead); ++i)
        rte_prefetch0(rte_pktmbuf_mtod(pkts[i], const void*));
    // The burst goes to the handler at once; the mbufs (and scratch_, for one multi-segment
    // frame) stay valid until it returns.
    host::burst_room<host::rx_frame> frames;
    std::size_t kept = 0;
    bool gathered = false;
    for (std::uint16_t i = 0; i < n; ++i) {
        rte_mbuf* m = pkts[i];
        if (i + prefetch_ahead < n)
            rte_prefetch0(rte_pktmbuf_mtod(pkts[i + prefetch_ahead], const void*));
        ++c_.rx_frames;
        c_.rx_bytes += m->pkt_len;
        std::span<const std::uint8_t> frame;
        if (m->nb_segs == 1) {
            frame = {rte_pktmbuf_mtod(m, const std::uint8_t*), m->data_len};
        } else if (m->pkt_len <= scratch_.size()) {
            // One scratch buffer: the frames kept so far go first if it holds one of them.
            if (gathered) flush(h, frames, kept, now);
            gathered = false;
            ++c_.rx_multiseg;
            const void* p = rte_pktmbuf_read(m, 0, m->pkt_len, scratch_.data());
            if (p == nullptr) continue;
            gathered = p == scratch_.data();
            frame = {static_cast<const std::uint8_t*>(p), m->pkt_len};
        } else {
            ++c_.rx_oversize;
            continue;
        }
        host::classification c;
        if (classify_) {
            c = host::classify(frame, owner_.cfg_.steering);
            if (c.cls == host::traffic_class::other_ethertype && take_goodbye(frame)) continue;
            c_.steering.count(c.cls);
            if (!host::steer_to_stack(c.cls)) {
                ++c_.steered_away;
                continue;
            }
        } else if (take_goodbye(frame)) {
            continue;
        }
        frames.set(kept++, {frame, c, {}});
    }
    flush(h, frames, kept, now);
    rte_pktmbuf_free_bulk(pkts.data(), n);
    clock.lap(c_.rx_stack_ticks);
    return n;
}

void port::queue_io::flush(host::frame_handler& h, host::burst_room<host::rx_frame>& frames,
                           std::size_t& kept, std::uint64_t now) {
    if (kept == 0) return;
    h.on_receive_burst(std::span<const host::rx_frame>(frames.data(), kept),
                       classify_ ? &owner_.cfg_.steering : nullptr, now);
    kept = 0;
}

// Every slot holds an mbuf before the handler sees it; slots the last burst used get new ones.
bool port::queue_io::refill() noexcept {
    if (slots_ready_) return true;
    std::array<rte_mbuf*, host::burst_size> fresh;
    unsigned missing = 0;
    for (const auto& s : slots_)
        missing += s.io_cookie == nullptr;
    if (missing != 0 && rte_pktmbuf_alloc_bulk(owner_.pool_, fresh.data(), missing) != 0) {
        ++c_.tx_alloc_failed;
        return false;
    }
    // Only slots whose mbuf went out or that the handler wrote: a slot that still holds its
    // mbuf keeps its room (slots move only whole), so the other mbufs are not touched (a burst
    // of a few small frames would otherwise pay for resetting every slot).
    unsigned next = 0;
    for (auto& s : slots_) {
        if (s.io_cookie == nullptr) {
            rte_mbuf* m = fresh[next++];
            s.reset({rte_pktmbuf_mtod(m, std::uint8_t*), frame_room_}, m);
        } else if (s.length != 0 || s.ext.length != 0) {
            s.reset(s.buffer, s.io_cookie);
        }
    }
    slots_ready_ = true;
    return true;
}

rte_mbuf* port::queue_io::take_ext_mbuf() noexcept {
    if (ext_stashed_ == 0) {
        if (rte_pktmbuf_alloc_bulk(owner_.ext_pool_, ext_stash_.data(), ext_stash_.size()) == 0)
            ext_stashed_ = ext_stash_.size();
        else
            return rte_pktmbuf_alloc(owner_.ext_pool_);  // the pool is low: one at a time
    }
    return ext_stash_[--ext_stashed_];
}

// A zero-copy payload: a data-less mbuf attached to the registered memory, chained after the
// headers. The region's shared info counts the references (port::in_flight).
bool port::queue_io::attach_payload(rte_mbuf* m, const host::tx_frame& f) noexcept {
    if (f.ext.region >= owner_.regions_.size()) return false;
    const region& r = owner_.regions_[f.ext.region];
    if (r.shinfo == nullptr || f.ext.data < r.addr || f.ext.length > UINT16_MAX ||
        f.ext.length > r.length - static_cast<std::size_t>(f.ext.data - r.addr)) {
        return false;
    }
    rte_mbuf* e = take_ext_mbuf();
    if (e == nullptr) {
        ++c_.tx_alloc_failed;
        return false;
    }
    void* va = const_cast<std::uint8_t*>(f.ext.data);
    const rte_iova_t iova = iova_is_va_
                                ? static_cast<rte_iova_t>(reinterpret_cast<std::uintptr_t>(va))
                                : rte_mem_virt2iova(va);
    rte_mbuf_ext_refcnt_update(r.shinfo, 1);
    rte_pktmbuf_attach_extbuf(e, va, iova, static_cast<std::uint16_t>(f.ext.length), r.shinfo);
    e->data_off = 0;
    e->data_len = static_cast<std::uint16_t>(f.ext.length);
    e->pkt_len = f.ext.length;
    if (rte_pktmbuf_chain(m, e) != 0) {
        rte_pktmbuf_free(e);
        return false;
    }
    return true;
}

void port::queue_io::apply_offloads(rte_mbuf* m, const host::tx_frame& f) noexcept {
    const bool ip = f.offload_ipv4_checksum && owner_.caps_.ipv4_checksum_offload;
    const bool udp = f.offload_udp_checksum && owner_.caps_.udp_checksum_offload;
    if (!ip && !udp) return;
    std::uint8_t* b = f.buffer.data();
    std::size_t l2 = RTE_ETHER_HDR_LEN;
    if (f.length >= l2 + 4 && b[12] == 0x81 && b[13] == 0x00) l2 += 4;
    if (f.length < l2 + sizeof(rte_ipv4_hdr) || b[l2 - 2] != 0x08 || b[l2 - 1] != 0x00) return;
    auto* iph = reinterpret_cast<rte_ipv4_hdr*>(b + l2);
    const std::size_t l3 = (iph->version_ihl & 0x0f) * 4u;
    m->l2_len = l2;
    m->l3_len = l3;
    m->ol_flags |= RTE_MBUF_F_TX_IPV4;
    if (ip) {
        iph->hdr_checksum = 0;
        m->ol_flags |= RTE_MBUF_F_TX_IP_CKSUM;
    }
    if (udp && iph->next_proto_id == IPPROTO_UDP && f.length >= l2 + l3 + sizeof(rte_udp_hdr)) {
        m->ol_flags |= RTE_MBUF_F_TX_UDP_CKSUM;
        auto* udph = reinterpret_cast<rte_udp_hdr*>(b + l2 + l3);
        udph->dgram_cksum = rte_ipv4_phdr_cksum(iph, m->ol_flags);
    }
}

// Turns a filled slot into a sendable mbuf (chain). False: the frame is dropped and counted,
// and its mbuf stays in the slot for reuse.
bool port::queue_io::prepare(host::tx_frame& f) noexcept {
    rte_mbuf* m = mbuf_of(f);
    if (f.length == 0 || f.length > f.buffer.size() || m == nullptr) {
        ++c_.tx_bad_frame;
        return false;
    }
    m->data_len = static_cast<std::uint16_t>(f.length);
    m->pkt_len = f.length;
    m->ol_flags = 0;
    if (f.ext.length != 0) {
        // A payload with a trailer (the port does not chain one) is copied with it.
        const std::size_t tail = f.ext.tail_length;
        if (tail == 0 && owner_.caps_.zero_copy && attach_payload(m, f)) {
            ++c_.tx_zero_copy;
        } else if (f.ext.data != nullptr && f.ext.length + tail <= f.buffer.size() - f.length) {
            std::memcpy(f.buffer.data() + f.length, f.ext.data, f.ext.length);
            std::memcpy(f.buffer.data() + f.length + f.ext.length, f.ext.tail.data(), tail);
            m->data_len = static_cast<std::uint16_t>(f.length + f.ext.length + tail);
            m->pkt_len = m->data_len;
            ++c_.tx_copied;
        } else {
            ++c_.tx_bad_frame;
            return false;
        }
    }
    apply_offloads(m, f);
    return true;
}

std::size_t port::queue_io::transmit_burst(host::frame_handler& h, std::uint64_t now) {
    if (queue_ >= owner_.cfg_.tx_queues) return 0;
    if (owner_.peer_left_.load(std::memory_order_relaxed) && !owner_.peer_back()) [[unlikely]]
        return discard_burst(h, now);
    std::uint16_t count = backlog_;
    stage_clock clock(owner_.cfg_.time_stages);
    // With a backlog the handler fills only the slots behind it, so order is kept and the
    // backlog never exceeds one burst.
    if (count < slots_.size() && refill()) {
        const std::span<host::tx_frame> room(slots_.data(), slots_.size() - count);
        const std::size_t filled = std::min(h.on_transmit(now, room), room.size());
        // A handler that produced nothing kept every mbuf (frames it held for ARP are copies):
        // clearing what it wrote is cheaper than a refill.
        slots_ready_ = filled == 0;
        if (slots_ready_)
            for (auto& s : slots_)
                if (s.length != 0 || s.ext.length != 0) s.reset(s.buffer, s.io_cookie);
        for (std::size_t i = 0; i < filled; ++i) {
            if (!prepare_plain(slots_[i]) && !prepare(slots_[i])) continue;
            out_[count++] = mbuf_of(slots_[i]);
            slots_[i].io_cookie = nullptr;  // the mbuf now belongs to the send path
        }
    }
    if (count == 0) return 0;
    clock.lap(c_.tx_stack_ticks);
    std::uint16_t sent = 0;
    for (unsigned attempt = 0; sent < count && attempt <= tx_retries; ++attempt) {
        const std::uint16_t n = rte_eth_tx_burst(owner_.port_id_, queue_, out_.data() + sent,
                                                 static_cast<std::uint16_t>(count - sent));
        if (n == 0) break;
        sent += n;
    }
    clock.lap(c_.tx_driver_ticks);
    for (std::uint16_t i = 0; i < sent; ++i)
        c_.tx_bytes += out_[i]->pkt_len;
    c_.tx_frames += sent;
    backlog_ = static_cast<std::uint16_t>(count - sent);
    if (backlog_ != 0) {
        c_.tx_deferred += backlog_;
        std::memmove(out_.data(), out_.data() + sent, backlog_ * sizeof(out_[0]));
    }
    return sent;
}

std::size_t port::queue_io::discard_burst(host::frame_handler& h, std::uint64_t now) noexcept {
    c_.tx_peer_left += backlog_;
    for (std::uint16_t i = 0; i < backlog_; ++i)
        rte_pktmbuf_free(out_[i]);
    backlog_ = 0;
    if (!refill()) return 0;
    // The engine sees a link that loses everything: it retransmits and in the end fails the
    // operations with a clear error, as it would with a peer that vanished.
    c_.tx_peer_left += std::min(h.on_transmit(now, slots_), slots_.size());
    for (auto& s : slots_)
        if (s.length != 0 || s.ext.length != 0) s.reset(s.buffer, s.io_cookie);
    slots_ready_ = true;
    return 0;
}

// Frames after a goodbye in the same burst are already in our mbufs: they are still handled.
bool port::queue_io::take_goodbye(std::span<const std::uint8_t> frame) noexcept {
    if (!watch_goodbye_ || !goodbye::maybe(frame)) return false;
    const auto g = goodbye::parse(frame);
    if (!g) return false;
    on_goodbye(*g);
    return true;
}

void port::queue_io::on_goodbye(const goodbye::message& m) noexcept {
    if (m.k != goodbye::kind::leaving) return;  // an answer for a close() of ours that gave up
    // The peer resends `leaving` until it hears us, so a burst may hold several. Once one
    // answer is in the ring the peer may close, and the driver unmap the rings, at any moment:
    // a second answer to a later copy crashed the tx burst (1 pair in 40 under load). Only an
    // answer that never got into the ring is sent again.
    if (owner_.peer_left_.exchange(true)) {
        retry_owed_ack();
        return;
    }
    owner_.link_went_down_.store(false);
    // Answered at once: the peer waits for it, and a log line first only widened the window
    // in which a peer that had given up closes.
    owner_.ack_owed_.store(!(owner_.link_up() && send_goodbye(goodbye::kind::ack)));
    ++c_.peer_left;
    owner_.log("the memif peer " + m.sender.to_string() +
               " said goodbye: frames to it are dropped until the link is back");
}

bool port::queue_io::send_goodbye(goodbye::kind k) noexcept {
    if (queue_ >= owner_.cfg_.tx_queues) return false;
    rte_mbuf* m = rte_pktmbuf_alloc(owner_.pool_);
    if (m == nullptr) {
        ++c_.tx_alloc_failed;
        return false;
    }
    const std::size_t len = goodbye::build(
        {rte_pktmbuf_mtod(m, std::uint8_t*), rte_pktmbuf_tailroom(m)}, owner_.mac_, k);
    m->data_len = static_cast<std::uint16_t>(len);
    m->pkt_len = static_cast<std::uint32_t>(len);
    if (len == 0 || rte_eth_tx_burst(owner_.port_id_, queue_, &m, 1) != 1) {
        rte_pktmbuf_free(m);
        return false;
    }
    return true;
}

void port::queue_io::retry_owed_ack() noexcept {
    if (owner_.ack_owed_.load() && send_goodbye(goodbye::kind::ack)) owner_.ack_owed_.store(false);
}

// No burst here: the peer may close at any moment. An answer still owed goes out once the
// peer, which waits for it, has drained the ring.
bool port::queue_io::wait_link_down(std::chrono::steady_clock::time_point deadline) noexcept {
    const timespec pause{0, 200'000};
    do {
        if (!owner_.link_up()) return true;
        retry_owed_ack();
        nanosleep(&pause, nullptr);
    } while (std::chrono::steady_clock::now() < deadline);
    return false;
}

port::leave_outcome port::queue_io::after_peer_left(std::uint32_t timeout_ms) noexcept {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    return wait_link_down(deadline) ? leave_outcome::peer_closed : leave_outcome::timed_out;
}

// Sends `leaving` until the peer answers. Two ports leaving at once: the lower MAC answers the
// other's `leaving` and waits, without a burst, for the link to go down; the higher one closes
// on that answer. Whatever arrives meanwhile is dropped: the port is closing.
port::leave_outcome port::queue_io::leave(std::uint32_t timeout_ms) noexcept {
    using clock = std::chrono::steady_clock;
    const auto deadline = clock::now() + std::chrono::milliseconds(timeout_ms);
    auto next_send = clock::now();
    const timespec pause{0, 50'000};
    std::array<rte_mbuf*, host::burst_size> pkts;
    while (clock::now() < deadline) {
        if (!owner_.link_up()) return leave_outcome::peer_closed;  // it closed without an answer
        if (clock::now() >= next_send) {
            send_goodbye(goodbye::kind::leaving);
            next_send = clock::now() + goodbye_resend;
        }
        const std::uint16_t n = rte_eth_rx_burst(owner_.port_id_, queue_, pkts.data(),
                                                 static_cast<std::uint16_t>(pkts.size()));
        bool acked = false, yield = false;
        for (std::uint16_t i = 0; i < n; ++i) {
            const rte_mbuf* m = pkts[i];
            const auto g = goodbye::parse({rte_pktmbuf_mtod(m, const std::uint8_t*), m->data_len});
            if (!g) continue;
            acked |= g->k == goodbye::kind::ack;
            yield |= g->k == goodbye::kind::leaving && owner_.mac_.octets < g->sender.octets;
        }
        if (n != 0) rte_pktmbuf_free_bulk(pkts.data(), n);
        if (acked) return leave_outcome::acknowledged;
        if (yield) {
            send_goodbye(goodbye::kind::ack);
            return wait_link_down(deadline) ? leave_outcome::yielded : leave_outcome::timed_out;
        }
        if (n == 0) nanosleep(&pause, nullptr);
    }
    return leave_outcome::timed_out;
}

void port::queue_io::drain() noexcept {
    // The port is stopping: what the ring never took is lost now.
    for (std::uint16_t i = 0; i < backlog_; ++i) {
        ++c_.tx_ring_full;
        rte_pktmbuf_free(out_[i]);
    }
    backlog_ = 0;
    if (owner_.peer_left_.load()) return;  // the peer may be unmapping the rings right now
    if (queue_ < owner_.cfg_.tx_queues) rte_eth_tx_done_cleanup(owner_.port_id_, queue_, 0);
    if (queue_ >= owner_.cfg_.rx_queues) return;
    std::array<rte_mbuf*, host::burst_size> pkts;
    for (int i = 0; i < 64; ++i) {
        const std::uint16_t n = rte_eth_rx_burst(owner_.port_id_, queue_, pkts.data(),
                                                 static_cast<std::uint16_t>(pkts.size()));
        if (n == 0) break;
        rte_pktmbuf_free_bulk(pkts.data(), n);
    }
}

void port::queue_io::add_counters(port_counters& t) const noexcept {
    t.rx_frames += c_.rx_frames;
    t.rx_bytes += c_.rx_bytes;
    t.rx_multiseg += c_.rx_multiseg;
    t.rx_oversize += c_.rx_oversize;
    t.tx_frames += c_.tx_frames;
    t.tx_bytes += c_.tx_bytes;
    t.tx_zero_copy += c_.tx_zero_copy;
    t.tx_copied += c_.tx_copied;
    t.tx_ring_full += c_.tx_ring_full;
    t.tx_deferred += c_.tx_deferred;
    t.tx_peer_left += c_.tx_peer_left;
    t.peer_left += c_.peer_left;
    t.tx_alloc_failed += c_.tx_alloc_failed;
    t.tx_bad_frame += c_.tx_bad_frame;
    t.steered_away += c_.steered_away;
    t.rx_driver_ticks += c_.rx_driver_ticks;
    t.rx_stack_ticks += c_.rx_stack_ticks;
    t.tx_stack_ticks += c_.tx_stack_ticks;
    t.tx_driver_ticks += c_.tx_driver_ticks;
    for (std::size_t i = 0; i < t.steering.frames.size(); ++i) {
        t.steering.frames[i] += c_.steering.frames[i];
    }
}

}  // namespace uet::dpdk
