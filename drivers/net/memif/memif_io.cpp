// Receive and transmit bursts of a uet_memif port: no copy, no allocation, no lock; one
// system call per burst only toward a reader that asked for interrupts (net_memif in interrupt
// mode), none toward uet.
#include "memif_io.hpp"

#include <unistd.h>

#include <cstring>

#include "dpdk_include.hpp"
#include "stage_clock.hpp"

namespace uet::memif {

namespace {

using runtime::stage_clock;

constexpr unsigned peer_check_bursts = 1024;  // receive bursts between looks at the socket

std::uint16_t load(const std::uint16_t& v) noexcept {
    return __atomic_load_n(&v, __ATOMIC_ACQUIRE);
}

void store(std::uint16_t& v, std::uint16_t x) noexcept {
    __atomic_store_n(&v, x, __ATOMIC_RELEASE);
}

}  // namespace

std::size_t port::io::receive_burst(runtime::frame_handler& h, std::uint64_t now) {
    port& p = owner_;
    if (!p.connected_ || ++p.bursts_since_check_ >= peer_check_bursts) [[unlikely]] {
        p.bursts_since_check_ = 0;
        if (p.connected_)
            p.check_peer();
        else
            p.serve_control();
        if (!p.connected_) return 0;
    }
    ring& r = p.rx_;
    stage_clock clock(p.cfg_.time_stages);
    // The server reads the client's slots up to head; the client reads the slots the server
    // filled, up to tail.
    const std::uint16_t end = load(p.cfg_.server ? r.hdr->head : r.hdr->tail);
    std::uint16_t n = static_cast<std::uint16_t>(end - r.next);
    if (n == 0) return 0;
    if (n > r.size) {  // a peer that moved its counter past the ring: nothing in it is sane
        ++p.c_.rx_bad_descriptor;
        p.link_down("the peer's ring counter is out of range", true);
        return 0;
    }
    n = std::min<std::uint16_t>(n, runtime::burst_size);
    std::array<runtime::rx_frame, runtime::burst_size> frames;
    std::size_t kept = 0;
    const descriptor* desc = r.desc();
    for (std::uint16_t i = 0; i < n; ++i) {
        // A copy: the peer may rewrite the descriptor while we look at it.
        descriptor d;
        std::memcpy(&d, &desc[(r.next + i) & r.mask], sizeof d);
        const bool chained = d.flags & desc_flag_next;
        if (skipping_ || chained) {  // frames over several slots are not produced by uet
            if (!skipping_) ++p.c_.rx_multiseg;
            skipping_ = chained;
            continue;
        }
        const std::uint8_t* b = p.buffer_of(d, d.length);
        if (b == nullptr || d.length == 0) {
            ++p.c_.rx_bad_descriptor;
            continue;
        }
        rte_prefetch0(b);
        ++p.c_.rx_frames;
        p.c_.rx_bytes += d.length;
        frames[kept++] = {{b, d.length}, {}};
    }
    clock.lap(p.c_.rx_driver_ticks);
    if (kept != 0) h.on_receive_burst(std::span(frames.data(), kept), nullptr, now);
    give_back_rx(n);
    clock.lap(p.c_.rx_stack_ticks);
    return n;
}

// The slots just read go back to the peer: the server moves tail; the client posts the buffers
// again (their full size, at the offsets it chose: a server may have rewritten either).
void port::io::give_back_rx(std::uint16_t n) noexcept {
    port& p = owner_;
    ring& r = p.rx_;
    r.next = static_cast<std::uint16_t>(r.next + n);
    if (p.cfg_.server) {
        store(r.hdr->tail, r.next);
        return;
    }
    descriptor* desc = r.desc();
    for (std::uint16_t i = 0; i < n; ++i) {
        const std::uint16_t s = static_cast<std::uint16_t>((r.next - n + i) & r.mask);
        desc[s].region = 0;
        desc[s].flags = 0;
        desc[s].offset = p.rx_buffers_at_ + s * p.cfg_.buffer_size;
        desc[s].length = p.cfg_.buffer_size;
    }
    store(r.hdr->head, static_cast<std::uint16_t>(r.next + r.size));
}

// Fills buffers_ and slots_ from `from` (the slots still offered) up to `free` ring buffers;
// returns how many are offered.
std::size_t port::io::offer_slots(std::uint16_t free, std::size_t from) {
    port& p = owner_;
    ring& r = p.tx_;
    const std::size_t n = std::min<std::size_t>(free, runtime::burst_size);
    const descriptor* desc = r.desc();
    for (std::size_t i = from; i < n; ++i) {
        const std::uint16_t s = static_cast<std::uint16_t>((r.next + i) & r.mask);
        // Where the buffer is: the descriptor says (a handler's reordering of slots moves
        // buffers between them). The client's own buffers are all bsize long; the server's
        // were posted by the client, each with its length: the client's word, checked.
        descriptor d;
        std::memcpy(&d, &desc[s], sizeof d);
        const slot_buffer b =
            p.cfg_.server
                ? slot_buffer{d.region, d.offset, std::min(d.length, p.max_frame_), d.length}
                : slot_buffer{d.region, d.offset, p.cfg_.buffer_size, p.cfg_.buffer_size};
        std::uint8_t* at = p.buffer_of({0, b.region, b.capacity, b.offset, 0}, b.capacity);
        if (at == nullptr || b.capacity == 0) {
            ++p.c_.rx_bad_descriptor;
            return i;
        }
        buffers_[i] = b;
        // The cookie names the ring buffer: a handler may reorder whole slots.
        slots_[i].reset({at, b.capacity}, &buffers_[i]);
    }
    return n;
}

// A frame the handler filled, checked; an external payload (never asked for: caps() has no
// zero_copy) is copied behind the headers.
inline bool port::io::finish_frame(runtime::tx_frame& f) noexcept {
    if (f.length == 0 || f.length > f.buffer.size()) return false;
    if (f.ext.length != 0) {
        if (f.ext.data == nullptr || f.ext.length > f.buffer.size() - f.length) return false;
        std::memcpy(f.buffer.data() + f.length, f.ext.data, f.ext.length);
        f.length += f.ext.length;
        ++owner_.c_.tx_copied;
    }
    return true;
}

// Writes the descriptors of the `filled` frames in order, then those of the buffers offered
// and not used (a bad frame's among them) after them, so that every buffer stays in the ring
// exactly once; returns how many frames go out.
std::uint16_t port::io::publish(std::size_t filled, std::size_t offered) {
    port& p = owner_;
    ring& r = p.tx_;
    descriptor* desc = r.desc();
    std::uint16_t out = 0;
    bool moved = false;
    n_unused_ = 0;
    for (std::size_t i = 0; i < offered; ++i) {
        runtime::tx_frame& f = slots_[i];
        const slot_buffer& b = *static_cast<const slot_buffer*>(f.io_cookie);
        moved |= &b != &buffers_[i];
        if (i >= filled || !finish_frame(f)) {
            if (i < filled) ++p.c_.tx_bad_frame;
            unused_[n_unused_++] = {b, f.buffer};
            continue;
        }
        descriptor& d = desc[(r.next + out) & r.mask];
        d.flags = 0;
        d.region = b.region;
        d.offset = b.offset;
        d.length = static_cast<std::uint32_t>(f.length);
        ++out;
        ++p.c_.tx_frames;
        p.c_.tx_bytes += f.length;
    }
    if (moved || out != filled) {  // only then may buffers have moved
        for (std::size_t k = 0; k < n_unused_; ++k) {
            descriptor& d = desc[(r.next + out + k) & r.mask];
            d.region = unused_[k].where.region;
            d.offset = unused_[k].where.offset;
            if (p.cfg_.server) d.length = unused_[k].where.posted;
        }
    }
    return out;
}

// After publish: the unused buffers are now in the ring's next slots, in this order, so they
// are the first slots of the next offer as they stand (still free: slots only become free
// until a frame leaves, and these were free before).
void port::io::keep_unused_offered() noexcept {
    for (std::size_t k = 0; k < n_unused_; ++k) {
        buffers_[k] = unused_[k].where;
        slots_[k].reset(unused_[k].room, &buffers_[k]);
    }
    offered_ = n_unused_;
}

void port::io::kick(const ring& r) noexcept {
    if ((r.hdr->flags & ring_flag_mask_int) != 0 || r.kick_fd < 0) return;
    const std::uint64_t one = 1;
    [[maybe_unused]] const ssize_t rc = write(r.kick_fd, &one, sizeof one);
}

std::size_t port::io::transmit_burst(runtime::frame_handler& h, std::uint64_t now) {
    port& p = owner_;
    if (!p.connected_) return 0;  // the handler keeps its frames until the link is up
    ring& r = p.tx_;
    stage_clock clock(p.cfg_.time_stages);
    // The client may fill the slots the server gave back (up to tail + size); the server the
    // slots the client posted (up to head).
    const std::uint16_t free =
        p.cfg_.server ? static_cast<std::uint16_t>(load(r.hdr->head) - r.next)
                      : static_cast<std::uint16_t>(
                            r.size - static_cast<std::uint16_t>(r.next - load(r.hdr->tail)));
    if (free == 0 || free > r.size) return 0;
    // Until a frame leaves, slots may only become free, never stop being so.
    if (offered_ < std::min<std::size_t>(free, runtime::burst_size))
        offered_ = offer_slots(free, offered_);
    if (offered_ == 0) return 0;
    // A handler that fills nothing leaves the slots untouched (frame_handler's contract).
    const std::size_t filled = h.on_transmit(now, std::span(slots_.data(), offered_));
    if (filled == 0) return 0;
    clock.lap(p.c_.tx_stack_ticks);
    const std::uint16_t out = publish(filled, offered_);
    r.next = static_cast<std::uint16_t>(r.next + out);
    keep_unused_offered();
    store(p.cfg_.server ? r.hdr->tail : r.hdr->head, r.next);
    kick(r);
    clock.lap(p.c_.tx_driver_ticks);
    return out;
}

}  // namespace uet::memif
