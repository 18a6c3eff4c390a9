// Receive and transmit bursts of a uet_memif port: no copy, no allocation, no lock; one
// system call per burst only toward a reader that asked for interrupts (net_memif in interrupt
// mode), none toward uet.
#include "memif_io.hpp"

#include <unistd.h>

#include <cstring>

#include "dpdk_include.hpp"
#include "prefetch.hpp"
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
    runtime::burst_room<runtime::rx_frame> frames;
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
        // The headers of a UET frame take its first two lines (a small message's ~110 bytes):
        // both come from the peer's core, and only a miss started now overlaps the others.
        rte_prefetch0(b);
        if (d.length > 64) rte_prefetch0(b + 64);
        ++p.c_.rx_frames;
        p.c_.rx_bytes += d.length;
        frames.set(kept++, {{b, d.length}, {}});
    }
    clock.lap(p.c_.rx_driver_ticks);
    if (kept != 0) h.on_receive_burst(std::span(frames.data(), kept), nullptr, now);
    give_back_rx(n);
    clock.lap(p.c_.rx_stack_ticks);
    return n;
}

// The slots just read go back to the peer: the server moves tail; the client posts the buffers
// again at their full size. A server may move buffers between slots (a frame built in one
// slot's buffer and sent in another's, as uet's port does when a handler reorders slots), so
// each slot gets back the buffer it came with, which keeps every buffer in the ring once; a
// descriptor that does not lie in the client's receive buffers gets the slot's own. (Not
// checked: that it starts on a buffer. A server that shifts one only corrupts its own frames,
// which the client reads with the bounds checks it applies to every descriptor.)
void port::io::give_back_rx(std::uint16_t n) noexcept {
    port& p = owner_;
    ring& r = p.rx_;
    r.next = static_cast<std::uint16_t>(r.next + n);
    if (p.cfg_.server) {
        store(r.hdr->tail, r.next);
        return;
    }
    descriptor* desc = r.desc();
    const std::uint32_t bsize = p.cfg_.buffer_size;
    const std::uint64_t rx_bytes = std::uint64_t{r.size} * bsize;
    for (std::uint16_t i = 0; i < n; ++i) {
        const std::uint16_t s = static_cast<std::uint16_t>((r.next - n + i) & r.mask);
        descriptor& d = desc[s];
        const std::uint64_t at = std::uint64_t{d.offset} - p.rx_buffers_at_;
        if (d.region != 0 || d.offset < p.rx_buffers_at_ || at > rx_bytes - bsize) {
            d.region = 0;
            d.offset = p.rx_buffers_at_ + s * bsize;
        }
        d.flags = 0;
        d.length = bsize;
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
    runtime::tx_frame* slots = &slots_[base_];
    slot_buffer* buffers = &buffers_[base_];
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
        buffers[i] = b;
        // The peer read this buffer last, so the first stores into it wait for its lines to come
        // back: asked for now, the lines of the headers arrive while earlier frames are built.
        prefetch_line_for_write(at);
        prefetch_line_for_write(at + 64);
        // The cookie names the ring buffer: a handler may reorder whole slots.
        slots[i].reset({at, b.capacity}, &buffers[i]);
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

// Writes the descriptors of the `filled` frames in order, then (if a handler moved slots or
// made a bad frame) those of the buffers offered and not used after them, so that every buffer
// stays in the ring exactly once; returns how many frames go out.
std::uint16_t port::io::publish(std::size_t filled, std::size_t offered) {
    port& p = owner_;
    ring& r = p.tx_;
    descriptor* desc = r.desc();
    runtime::tx_frame* slots = &slots_[base_];
    const slot_buffer* buffers = &buffers_[base_];
    // Slots the handler moved among the unused ones only are found when they are filled (until
    // then their descriptors are not read, and offer_from_front keeps them paired).
    bool moved = false;
    std::uint16_t out = 0;
    std::uint64_t bytes = 0;
    bool bad = false;
    n_unused_ = 0;
    for (std::size_t i = 0; i < filled; ++i) {
        runtime::tx_frame& f = slots[i];
        moved |= f.io_cookie != &buffers[i];
        const slot_buffer& b = *static_cast<const slot_buffer*>(f.io_cookie);
        if (!finish_frame(f)) {
            ++p.c_.tx_bad_frame;
            bad = true;
            unused_[n_unused_++] = {b, f.buffer};
            continue;
        }
        descriptor& d = desc[(r.next + out) & r.mask];
        d.flags = 0;
        d.region = b.region;
        d.offset = b.offset;
        d.length = static_cast<std::uint32_t>(f.length);
        ++out;
        bytes += f.length;
    }
    p.c_.tx_frames += out;
    p.c_.tx_bytes += bytes;
    if (!moved && !bad) {
        // The unused slots are the ring's next ones, in order: the offer starts there.
        base_ += filled;
        offered_ = offered - filled;
        if (offered_ == 0)
            base_ = 0;
        else if (base_ > runtime::burst_size)
            offer_from_front();
        return out;
    }
    for (std::size_t i = filled; i < offered; ++i)
        unused_[n_unused_++] = {*static_cast<const slot_buffer*>(slots[i].io_cookie),
                                slots[i].buffer};
    for (std::size_t k = 0; k < n_unused_; ++k) {
        descriptor& d = desc[(r.next + out + k) & r.mask];
        d.region = unused_[k].where.region;
        d.offset = unused_[k].where.offset;
        if (p.cfg_.server) d.length = unused_[k].where.posted;
    }
    keep_unused_offered();
    return out;
}

// After publish, when slots moved: the unused buffers are now in the ring's next slots, in
// this order, so they are the first slots of the next offer as they stand (still free: slots
// only become free until a frame leaves, and these were free before).
void port::io::keep_unused_offered() noexcept {
    base_ = 0;
    for (std::size_t k = 0; k < n_unused_; ++k) {
        buffers_[k] = unused_[k].where;
        slots_[k].reset(unused_[k].room, &buffers_[k]);
    }
    offered_ = n_unused_;
}

// The offer moved to the front of the arrays, so that a whole burst fits after it again. Each
// slot keeps the buffer its cookie names (the handler may have swapped unused slots), now at
// the same place relative to the offer's start.
void port::io::offer_from_front() noexcept {
    for (std::size_t k = 0; k < offered_; ++k) {
        buffers_[k] = buffers_[base_ + k];
        slots_[k] = slots_[base_ + k];
    }
    for (std::size_t k = 0; k < offered_; ++k) {
        const auto* b = static_cast<const slot_buffer*>(slots_[k].io_cookie);
        slots_[k].io_cookie = &buffers_[static_cast<std::size_t>(b - buffers_.data()) - base_];
    }
    base_ = 0;
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
    const std::size_t filled = h.on_transmit(now, std::span(&slots_[base_], offered_));
    if (filled == 0) return 0;
    clock.lap(p.c_.tx_stack_ticks);
    const std::uint16_t out = publish(filled, offered_);
    r.next = static_cast<std::uint16_t>(r.next + out);
    store(p.cfg_.server ? r.hdr->tail : r.hdr->head, r.next);
    kick(r);
    clock.lap(p.c_.tx_driver_ticks);
    return out;
}

}  // namespace uet::memif
