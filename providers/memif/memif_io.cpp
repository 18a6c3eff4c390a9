// Receive and transmit bursts of a uet_memif port: no copy, no allocation, no lock; one
// system call per burst only toward a reader that asked for interrupts (net_memif in interrupt
// mode), none toward uet.
#include "memif/memif_io.hpp"

#include <unistd.h>

#include <cstring>

#include "core/prefetch.hpp"
#include "host/stage_clock.hpp"

namespace uet::memif {

namespace {

using host::stage_clock;

constexpr unsigned peer_check_bursts = 1024;  // receive bursts between looks at the socket

std::uint16_t load(const std::uint16_t& v) noexcept {
    return __atomic_load_n(&v, __ATOMIC_ACQUIRE);
}

void store(std::uint16_t& v, std::uint16_t x) noexcept {
    __atomic_store_n(&v, x, __ATOMIC_RELEASE);
}

}  // namespace

std::size_t port::io::receive_burst(host::frame_handler& h, std::uint64_t now) {
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
    // A burst of frames, not of slots: a chained frame takes two (or more) slots.
    const std::uint16_t avail = n;
    const std::uint16_t window = std::min<std::uint16_t>(n, 2 * host::burst_size);
    const bool split = h.takes_split_frames();
    host::burst_room<host::rx_frame> frames;
    std::size_t kept = 0;
    const descriptor* desc = r.desc();
    const std::span<const port::region> regions = p.regions_;  // read once (buffer_in)
    // The headers of a UET frame take its first two lines (a small message's ~110 bytes): both
    // come from the peer's core, and only misses started together overlap. Asked for before any
    // frame is read (a descriptor read torn by the peer only misdirects a prefetch; a chained
    // payload's first lines are asked for too).
    for (std::uint16_t i = 0; i < window; ++i) {
        const descriptor& d = desc[(r.next + i) & r.mask];
        const std::uint16_t g = d.region;
        if (g >= regions.size()) continue;
        const std::uint8_t* b = regions[g].base + d.offset;
        prefetch_line(b);
        prefetch_line(b + 64);
    }
    std::uint32_t frames_in = 0;
    std::uint64_t bytes_in = 0;
    std::uint16_t i = 0;
    for (; i < window && kept < host::burst_size; ++i) {
        // A copy: the peer may rewrite the descriptor while we look at it.
        descriptor d;
        std::memcpy(&d, &desc[(r.next + i) & r.mask], sizeof d);
        if (skipping_) [[unlikely]] {  // the rest of a frame refused
            skipping_ = d.flags & desc_flag_next;
            continue;
        }
        if (d.flags & desc_flag_next) {  // a chained frame (zero-copy transmit)
            host::rx_frame f;
            const std::uint16_t took =
                take_chain(static_cast<std::uint16_t>(r.next + i), avail - i, kept, split, f);
            if (took == 0) {  // its last slot is not published: a peer that breaks the protocol
                ++p.c_.rx_bad_descriptor;
                skipping_ = true;
                continue;
            }
            i = static_cast<std::uint16_t>(i + took - 1);
            if (f.bytes.empty()) continue;
            ++p.c_.rx_multiseg;
            ++p.c_.rx_frames;
            p.c_.rx_bytes += f.bytes.size();
            frames.set(kept++, f);
            continue;
        }
        const std::uint8_t* b = port::buffer_in(regions, d, d.length);
        if (b == nullptr || d.length == 0) {
            ++p.c_.rx_bad_descriptor;
            continue;
        }
        ++frames_in;
        bytes_in += d.length;
        frames.set(kept++, {{b, d.length}, {}, {}});
    }
    p.c_.rx_frames += frames_in;
    p.c_.rx_bytes += bytes_in;
    clock.lap(p.c_.rx_driver_ticks);
    if (kept != 0) h.on_receive_burst(std::span(frames.data(), kept), nullptr, now);
    give_back_rx(i);
    clock.lap(p.c_.rx_stack_ticks);
    return i;
}

// Copies the slots of one chained frame into scratch slot `into`, each checked as a whole frame's
// would be. The frame is refused (length 0, counted) when a slot lies outside the shared memory
// or the whole outgrows a frame of this port; its slots are taken all the same.
std::uint16_t port::io::gather(std::uint16_t at, std::uint16_t avail, std::size_t into,
                               std::uint32_t& length) noexcept {
    port& p = owner_;
    const ring& r = p.rx_;
    const descriptor* desc = r.desc();
    std::uint8_t* out = scratch_.data() + into * scratch_slot_;
    bool bad = false, oversize = false;
    length = 0;
    for (std::uint16_t k = 0; k < avail; ++k) {
        descriptor d;
        std::memcpy(&d, &desc[(at + k) & r.mask], sizeof d);
        const std::uint8_t* b = p.buffer_of(d, d.length);
        if (b == nullptr) {
            bad = true;
        } else if (d.length > scratch_slot_ - length) {
            oversize = true;
        } else if (!bad && !oversize) {
            std::memcpy(out + length, b, d.length);
            length += d.length;
        }
        if (d.flags & desc_flag_next) continue;
        if (bad || length == 0) ++p.c_.rx_bad_descriptor;
        if (oversize) ++p.c_.rx_oversize;
        if (bad || oversize) length = 0;
        return static_cast<std::uint16_t>(k + 1);
    }
    length = 0;
    return 0;
}

// A chained frame from ring position at: handed on in its pieces where it has two or three and
// the handler takes such frames (the headers read where the peer wrote them, the payload where its
// application keeps it: no copy), gathered whole into scratch slot `into` otherwise. Returns
// the slots it took (0: incomplete); f.bytes empty when the frame was refused (counted).
std::uint16_t port::io::take_chain(std::uint16_t at, std::uint16_t avail, std::size_t into,
                                   bool split, host::rx_frame& f) noexcept {
    f = {};
    if (split && avail >= 2) {
        const port& p = owner_;
        const descriptor* desc = p.rx_.desc();
        descriptor d[3];
        std::memcpy(&d[0], &desc[at & p.rx_.mask], sizeof d[0]);
        std::memcpy(&d[1], &desc[(at + 1) & p.rx_.mask], sizeof d[1]);
        // Two pieces, or three (a trailer after the payload: RoCEv2's pad and ICRC).
        const bool three = (d[1].flags & desc_flag_next) && avail >= 3;
        if (three) std::memcpy(&d[2], &desc[(at + 2) & p.rx_.mask], sizeof d[2]);
        const std::size_t pieces = three ? 3 : 2;
        std::uint64_t total = 0;
        for (std::size_t k = 0; k < pieces; ++k)
            total += d[k].length;
        // The whole frame's length must lie in the first piece's region too: readers of the
        // headers are given a span of the whole frame.
        const auto length = static_cast<std::uint32_t>(total);
        const std::uint8_t* head = total <= scratch_slot_ ? p.buffer_of(d[0], length) : nullptr;
        const std::uint8_t* rest = p.buffer_of(d[1], d[1].length);
        const std::uint8_t* tail = three ? p.buffer_of(d[2], d[2].length) : nullptr;
        if (!(d[pieces - 1].flags & desc_flag_next) && head != nullptr && rest != nullptr &&
            d[0].length != 0 && d[1].length != 0 &&
            (!three || (tail != nullptr && d[2].length != 0))) {
            f.bytes = {head, length};
            f.rest = {rest, d[0].length};
            if (three) {
                f.rest.tail_at = tail;
                f.rest.tail_from = d[0].length + d[1].length;
            }
            return static_cast<std::uint16_t>(pieces);
        }
    }
    std::uint32_t length = 0;
    const std::uint16_t took = gather(at, avail, into, length);
    if (length != 0) f.bytes = {&scratch_[into * scratch_slot_], length};
    return took;
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
    const std::size_t n = std::min<std::size_t>(free, host::burst_size);
    const descriptor* desc = r.desc();
    host::tx_frame* slots = &slots_[base_];
    slot_buffer* buffers = &buffers_[base_];
    if (!p.cfg_.server) from = offer_own_slots(from, n);
    for (std::size_t i = from; i < n; ++i) {
        const std::uint16_t s = static_cast<std::uint16_t>((r.next + i) & r.mask);
        // Where the buffer is: the descriptor says (a handler's reordering of slots moves
        // buffers between them). The client's own buffers are all bsize long; the server's
        // were posted by the client, each with its length: the client's word, checked.
        descriptor d;
        std::memcpy(&d, &desc[s], sizeof d);
        if (!p.cfg_.server && !p.names_tx_buffer(d)) [[unlikely]] {
            // The slot held a chained payload or a trailer: its buffer is a spare one.
            if (spare_.empty()) {
                ++p.c_.rx_bad_descriptor;
                return i;
            }
            d.region = 0;
            d.offset = spare_.back();
            spare_.pop_back();
        }
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

// offer_slots() for a client's slots from `from` while each names one of its own buffers (in
// region 0, not a chained payload's slot), which is every slot but after zero-copy transmit:
// region 0 is looked up once rather than per slot. Returns where it stopped, for the general
// loop to go on from.
inline std::size_t port::io::offer_own_slots(std::size_t from, std::size_t n) noexcept {
    port& p = owner_;
    const ring& r = p.tx_;
    const std::uint32_t bsize = p.cfg_.buffer_size;
    if (p.regions_.empty() || p.regions_[0].size < bsize) return from;
    std::uint8_t* const base = p.regions_[0].base;
    const std::uint64_t last_offset = p.regions_[0].size - bsize;
    const descriptor* desc = r.desc();
    host::tx_frame* slots = &slots_[base_];
    slot_buffer* buffers = &buffers_[base_];
    std::size_t i = from;
    for (; i < n; ++i) {
        descriptor d;
        std::memcpy(&d, &desc[(r.next + i) & r.mask], sizeof d);
        if (!p.names_tx_buffer(d) || d.offset > last_offset) break;
        buffers[i] = slot_buffer{0, d.offset, bsize, bsize};
        std::uint8_t* at = base + d.offset;
        prefetch_line_for_write(at);  // as in offer_slots
        prefetch_line_for_write(at + 64);
        slots[i].reset({at, bsize}, &buffers[i]);
    }
    return i;
}

// A frame the handler filled, checked. An external payload goes in a slot of its own where it
// lies in memory the server mapped (and `spare_slots` are left past the offer: one for it, one
// more for a trailer); else it is copied behind the headers, its trailer after it. Either way
// the whole must fit the frame's buffer, as a frame of the port.
inline int port::io::finish_frame(host::tx_frame& f, std::size_t spare_slots,
                                  const app_region*& in) noexcept {
    if (f.length == 0 || f.length > f.buffer.size()) return 0;
    if (f.ext.length != 0) {
        const std::size_t tail = f.ext.tail_length;
        if (f.ext.data == nullptr || tail > trailer_cell ||
            f.ext.length + tail > f.buffer.size() - f.length)
            return 0;
        const std::size_t slots = tail == 0 ? 1 : 2;
        if (slots <= spare_slots && (in = owner_.chainable(f.ext)) != nullptr) return 1 + slots;
        std::memcpy(f.buffer.data() + f.length, f.ext.data, f.ext.length);
        std::memcpy(f.buffer.data() + f.length + f.ext.length, f.ext.tail.data(), tail);
        f.length += f.ext.length + tail;
        f.ext = {};
        ++owner_.c_.tx_copied;
    }
    return 1;
}

// Before publish writes ring position next + k past the offer (chained frames took two or three
// slots each): the free slot's buffer (none if it held a chained payload) is spare from now on.
inline void port::io::keep_spare(const descriptor& d, std::size_t k) noexcept {
    if (k < written_past_offer_) return;
    if (owner_.names_tx_buffer(d)) spare_.push_back(d.offset);
    written_past_offer_ = k + 1;
}

// Writes the descriptors of the `filled` frames in order, then (if a handler moved slots, made a
// bad frame or chained a payload) those of the buffers offered and not used after them, so that
// every buffer stays in the ring exactly once (or spare, for a slot holding a chained payload);
// returns the ring slots used, the frames that go out in frames_out.
std::uint16_t port::io::publish(std::size_t filled, std::size_t offered, std::size_t room,
                                std::uint16_t& frames_out) {
    if (publish_in_place(filled)) {
        frames_out = static_cast<std::uint16_t>(filled);
        return frames_out;
    }
    port& p = owner_;
    host::tx_frame* slots = &slots_[base_];
    const slot_buffer* buffers = &buffers_[base_];
    descriptor* const desc = p.tx_.desc();
    const std::uint16_t next = p.tx_.next, mask = p.tx_.mask;
    const bool client = !p.cfg_.server;
    // One store per descriptor (they are in shared memory: the compiler would keep each field's).
    const auto put = [&](std::size_t k, const descriptor& v) {
        descriptor& d = desc[(next + k) & mask];
        if (k >= offered) [[unlikely]]
            keep_spare(d, k);
        std::memcpy(&d, &v, sizeof v);
    };
    // Slots the handler moved among the unused ones only are found when they are filled (until
    // then their descriptors are not read, and offer_from_front keeps them paired).
    bool moved = false;
    std::size_t pos = 0;  // ring slots written
    std::uint16_t out = 0;
    std::uint64_t bytes = 0;
    std::uint32_t chained = 0, last_handle = 0;
    std::size_t last_pos = 0;
    bool bad = false;
    n_unused_ = 0;
    written_past_offer_ = offered;
    for (std::size_t i = 0; i < filled; ++i) {
        host::tx_frame& f = slots[i];
        moved |= f.io_cookie != &buffers[i];
        const slot_buffer& b = *static_cast<const slot_buffer*>(f.io_cookie);
        const app_region* in = nullptr;
        const int kind = finish_frame(f, client ? room - std::min(room, pos - out) : 0, in);
        if (kind == 0) {
            ++p.c_.tx_bad_frame;
            bad = true;
            unused_[n_unused_++] = {b, f.buffer};
            continue;
        }
        const auto length = static_cast<std::uint32_t>(f.length);
        put(pos++, {kind >= 2 ? desc_flag_next : std::uint16_t{0}, b.region, length, b.offset, 0});
        ++out;
        bytes += length;
        if (kind >= 2) {
            const auto ext = static_cast<std::uint32_t>(f.ext.length);
            put(pos++, {kind == 3 ? desc_flag_next : std::uint16_t{0}, in->index, ext,
                        static_cast<std::uint32_t>(f.ext.data - in->base), 0});
            bytes += ext;
            if (kind == 3) {  // the trailer, in the cell of its ring slot
                const std::uint32_t cell = p.trailers_at_ + ((next + pos) & mask) * trailer_cell;
                std::memcpy(p.regions_[0].base + cell, f.ext.tail.data(), trailer_cell);
                put(pos++, {0, 0, f.ext.tail_length, cell, 0});
                bytes += f.ext.tail_length;
            }
            ++chained;
            if (f.ext.region != last_handle && last_handle != 0)
                p.app_regions_[last_handle - 1].last_chained = p.tx_slots_ + last_pos;
            last_handle = f.ext.region;
            last_pos = pos;
        }
    }
    if (last_handle != 0) p.app_regions_[last_handle - 1].last_chained = p.tx_slots_ + last_pos;
    p.c_.tx_zero_copy += chained;
    p.c_.tx_frames += out;
    p.c_.tx_bytes += bytes;
    frames_out = out;
    if (!moved && !bad && pos == out) {
        past_sent(filled);
        return out;
    }
    for (std::size_t i = filled; i < offered; ++i)
        unused_[n_unused_++] = {*static_cast<const slot_buffer*>(slots[i].io_cookie),
                                slots[i].buffer};
    for (std::size_t k = 0; k < n_unused_; ++k) {
        const slot_buffer& w = unused_[k].where;
        const descriptor& now = desc[(next + pos + k) & mask];
        put(pos + k, {0, w.region, client ? now.length : w.posted, w.offset, now.metadata});
    }
    keep_unused_offered();
    return static_cast<std::uint16_t>(pos);
}

// publish() of a burst whose every frame lies whole in the buffer offered for its slot (no
// slot moved, no payload to chain or copy, a length the buffer holds): checked first and then
// written, one descriptor a frame, without the general loop's per-frame cases. False, with
// nothing written, for any other burst.
bool port::io::publish_in_place(std::size_t filled) noexcept {
    port& p = owner_;
    const host::tx_frame* slots = &slots_[base_];
    const slot_buffer* buffers = &buffers_[base_];
    std::uint64_t bytes = 0;
    for (std::size_t i = 0; i < filled; ++i) {
        const host::tx_frame& f = slots[i];
        if (f.io_cookie != &buffers[i] || f.ext.length != 0 || f.length == 0 ||
            f.length > f.buffer.size())
            return false;
        bytes += f.length;
    }
    descriptor* const desc = p.tx_.desc();
    const std::uint16_t next = p.tx_.next, mask = p.tx_.mask;
    for (std::size_t i = 0; i < filled; ++i) {
        const slot_buffer& b = buffers[i];
        const descriptor d{0, b.region, static_cast<std::uint32_t>(slots[i].length), b.offset, 0};
        std::memcpy(&desc[(next + i) & mask], &d, sizeof d);
    }
    p.c_.tx_frames += filled;
    p.c_.tx_bytes += bytes;
    past_sent(filled);
    return true;
}

// After publish, when the frames sent took the offer's first `filled` slots in order: the
// unused slots are the ring's next ones, in order, and the offer starts there.
inline void port::io::past_sent(std::size_t filled) noexcept {
    base_ += filled;
    offered_ -= filled;
    if (offered_ == 0)
        base_ = 0;
    else if (base_ > host::burst_size)
        offer_from_front();
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

void port::io::forget_offers() noexcept {
    offered_ = base_ = 0;
    n_unused_ = 0;
    spare_.clear();
    spare_.reserve(owner_.tx_.size);
    scratch_slot_ = (owner_.max_frame_ + 63) / 64 * 64;
    scratch_.resize(host::burst_size * scratch_slot_);
}

bool port::io::wants_kick(const ring& r) noexcept {
    return (r.hdr->flags & ring_flag_mask_int) == 0 && r.kick_fd >= 0;
}

void port::io::kick(const ring& r) noexcept {
    const std::uint64_t one = 1;
    [[maybe_unused]] const ssize_t rc = write(r.kick_fd, &one, sizeof one);
}

// The client may fill the slots the server gave back (up to tail + size), the server the slots
// the client posted (up to head). The peer's counter is a line the peer writes every burst: read
// on every call, it would miss the cache on nearly every call, so the last value read stands
// while it leaves room for a full offer (it only moves on: the room it shows is never too much).
inline std::uint16_t port::io::tx_room() noexcept {
    port& p = owner_;
    ring& r = p.tx_;
    const bool server = p.cfg_.server;
    const auto room = [&](std::uint16_t seen) {
        return server
                   ? static_cast<std::uint16_t>(seen - r.next)
                   : static_cast<std::uint16_t>(r.size - static_cast<std::uint16_t>(r.next - seen));
    };
    // A full offer: a burst of slots, three times that where each frame may take three.
    const std::size_t enough = p.chains_ ? 3 * host::burst_size : host::burst_size;
    std::uint16_t free = room(r.peer_seen);
    if (free >= enough && free <= r.size) return free;
    const std::uint16_t seen = load(server ? r.hdr->head : r.hdr->tail);
    free = room(seen);
    if (free > r.size) return 0;  // a peer that moved its counter past the ring
    r.peer_seen = seen;
    return free;
}

std::size_t port::io::transmit_burst(host::frame_handler& h, std::uint64_t now) {
    port& p = owner_;
    if (!p.connected_) return 0;  // the handler keeps its frames until the link is up
    ring& r = p.tx_;
    stage_clock clock(p.cfg_.time_stages);
    const std::uint16_t free = tx_room();
    if (free == 0) return 0;
    // The reader's flags (for the kick after the frames) share a line with the head, which a
    // polling server reads all the time: asked for now, that line is back by the time the
    // frames are built (read only then, it would miss the cache on every burst).
    prefetch_line(r.hdr);
    // Where payloads may be chained, a third of the free slots are offered: a chained frame
    // takes a second slot and a third for a trailer, so that every frame offered can have them.
    // Until a frame leaves, slots may only become free, never stop being so.
    const std::uint16_t to_offer = p.chains_ ? free / 3 : free;
    if (offered_ < std::min<std::size_t>(to_offer, host::burst_size))
        offered_ = offer_slots(to_offer, offered_);
    if (offered_ == 0) return 0;
    // A handler that fills nothing leaves the slots untouched (frame_handler's contract).
    const std::size_t filled = h.on_transmit(now, std::span(&slots_[base_], offered_));
    if (filled == 0) return 0;
    clock.lap(p.c_.tx_stack_ticks);
    std::uint16_t out = 0;
    const std::uint16_t used = publish(filled, offered_, free - offered_, out);
    r.next = static_cast<std::uint16_t>(r.next + used);
    p.tx_slots_ += used;
    // Read before our store to their line: after it, the read waits for the store's ownership.
    const bool wake = wants_kick(r);
    store(p.cfg_.server ? r.hdr->tail : r.hdr->head, r.next);
    if (wake) kick(r);
    clock.lap(p.c_.tx_driver_ticks);
    return out;
}

}  // namespace uet::memif
