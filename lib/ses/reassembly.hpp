// SES receive side: places arriving segments into engine-owned buffers at their offset, counts
// each packet once (a bitmap per message), and hands complete messages to the application as
// views it later releases. A single-packet message lands in a buffer preallocated with its slot
// (no allocation); larger ones take a buffer from a power-of-two size-class pool, which only
// allocates when a class has never had a buffer of that size free.
//
// A message may instead be placed externally (RMA WRITEs, whose bytes go straight into the target
// region): its slot holds no buffer, place() only counts the packet and says whether it is new,
// and the caller copies new packets' payloads where they belong (mark_failed() when it could not).
//
// For modes without PDS duplicate suppression (RUDI, UUD) it also remembers recently completed
// messages per source, so a late duplicate is recognised and not delivered twice.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "core/flat_map.hpp"
#include "core/small_copy.hpp"
#include "ses/message.hpp"

namespace uet::ses {

struct rx_config {
    std::size_t slots = 1024;  // messages being assembled or awaiting release
    std::uint32_t mtu = 4096;
    std::uint32_t max_message = 16u << 20;
    std::size_t remembered = 4096;                // completed RUDI/UUD messages remembered
    std::uint64_t stale_ns = 100'000'000;         // a partial message idle this long may be evicted
    std::uint64_t max_buffer_bytes = 256u << 20;  // multi-packet buffers held, in use or pooled
};

struct message_key {
    std::uint32_t peer = 0;
    std::uint8_t mode = 0;
    std::uint16_t message_id = 0;
    std::uint64_t packed() const noexcept {
        return (std::uint64_t{peer} << 24) | (std::uint64_t{mode} << 16) | message_id;
    }
    // The key of the stream's next message (ids are given out in order, and wrap).
    message_key next() const noexcept {
        return {peer, mode, static_cast<std::uint16_t>(message_id + 1)};
    }
};

enum class place_result : std::uint8_t {
    placed,        // stored, message still incomplete
    completed,     // stored and the message is now whole (queued for delivery)
    duplicate,     // this packet (or the whole message) was already here
    no_resources,  // no slot or buffer: drop without acknowledging, the sender retries
    inconsistent,  // contradicts what earlier packets of the message said
};

struct delivered_message {
    message_key key;
    std::span<const std::uint8_t> data;
    std::uint64_t handle = 0;
    // What the message's packets said (header_data from its SOM packet): the slot's own, valid
    // until release(handle) (a stream of small messages paid two copies of it per message).
    const op_fields* fields = nullptr;
    // Placed externally: data is empty, the caller put the payload where it belongs; failed if
    // it could not place some packet (mark_failed).
    bool external = false, failed = false;
    std::uint64_t tag = 0;     // what set_tag() attached
    std::uint32_t origin = 0;  // what set_origin() attached
};

class reassembly {
  public:
    explicit reassembly(const rx_config& cfg);
    ~reassembly();
    reassembly(const reassembly&) = delete;
    reassembly& operator=(const reassembly&) = delete;

    place_result place(const message_key& key, std::uint32_t total_length, const segment& seg,
                       std::span<const std::uint8_t> payload, bool remember, std::uint64_t now,
                       const op_fields* fields = nullptr, bool external = false,
                       std::uint32_t* slot_index = nullptr) noexcept;
    // Packets of one message that follow one another, none its first: n = payloads.size()
    // packets of `length` bytes (the MTU) at message offsets first_offset, first_offset +
    // length, ..., each new to the PDS (RUD/ROD: nothing remembered). Placed as place() would
    // place them one by one, with one lookup of the message. false, with nothing changed, when
    // any of them is not simply placed (the message has no slot yet, a packet is there already,
    // the packets disagree with the slot): the caller then places them one by one.
    bool place_run(const message_key& key, std::uint32_t total_length, std::uint32_t first_offset,
                   std::uint32_t length, std::span<const std::uint8_t* const> payloads,
                   const op_fields& fields, bool external, std::uint64_t now, place_result& result,
                   std::uint32_t& slot_index) noexcept;
    // An externally placed packet place() accepted could not be placed: the message is
    // delivered with failed set. slot_index is what place() returned.
    void mark_failed(std::uint32_t slot_index) noexcept {
        if (slot_index < slots_.size()) slots_[slot_index].failed = true;
    }
    // A value handed out with the message at delivery (the engine's answer token).
    void set_tag(std::uint32_t slot_index, std::uint64_t tag) noexcept {
        if (slot_index < slots_.size()) slots_[slot_index].tag = tag;
    }
    // Where the message came from, for its answer (the engine's PDC).
    void set_origin(std::uint32_t slot_index, std::uint32_t origin) noexcept {
        if (slot_index < slots_.size()) slots_[slot_index].origin = origin;
    }
    // Whether a completed message with this key is remembered.
    bool recently_completed(const message_key& key) const noexcept {
        return recent_.find(key.packed()).has_value();
    }
    // Whether a message from this peer is being assembled or awaits release (a scan: for the
    // rare moment a peer's entry may be given to another).
    bool holds_peer(std::uint32_t peer) const noexcept;
    // Forgets the completed messages remembered of this peer, whose id is about to name another.
    void forget_peer(std::uint32_t peer) noexcept;
    bool pop_delivered(delivered_message& out) noexcept;
    bool nothing_delivered() const noexcept { return delivery_head_ == no_index; }
    // Gives the buffer back; false for an unknown or already released handle.
    bool release(std::uint64_t handle) noexcept;

    // Whether n one-packet messages of new keys (RUD/ROD: nothing remembered) would each be
    // placed and completed by place(): a free slot for each without reclaiming one, and no
    // message of several packets being assembled whose key one of them could share.
    bool can_place_single_packet(std::size_t n) const noexcept {
        return free_.size() >= n && assembling_.size() == 0;
    }
    // place() of one of those n messages (not remembered, its payload copied into the slot),
    // where the caller checked can_place_single_packet(n) for them: completed at once, without
    // place()'s lookups and the checks that precondition settles. Its slot. Inline: a stream of
    // small messages calls it for each.
    std::uint32_t place_new_single_packet(const message_key& key, const segment& seg,
                                          std::span<const std::uint8_t> payload, std::uint64_t now,
                                          const op_fields& fields) noexcept {
        const std::uint32_t index = free_.back();
        free_.pop_back();
        fill_single_packet(index, key, seg, payload, now, &fields, false);
        append_delivered(index);
        return index;
    }
    std::size_t slots_in_use() const noexcept { return slots_.size() - free_.size(); }
    std::uint64_t buffers_allocated() const noexcept { return buffers_allocated_; }
    std::uint64_t evicted() const noexcept { return evicted_; }
    std::uint64_t buffer_bytes() const noexcept { return buffer_bytes_; }

  private:
    enum class slot_state : std::uint8_t { free, assembling, delivered };
    struct slot {
        message_key key;
        std::uint32_t length = 0;
        std::uint32_t packets_total = 0, packets_received = 0;
        std::uint8_t* buffer = nullptr;
        int size_class = -1;  // -1: the slot's own inline buffer
        std::uint32_t generation = 0;
        std::uint64_t last_update_ns = 0;
        slot_state state = slot_state::free;
        bool external = false, failed = false;
        std::uint64_t tag = 0;
        std::uint32_t origin = 0;
        std::uint32_t delivery_next = no_index;
        op_fields fields;
    };

    std::optional<std::uint32_t> find_assembling(const message_key& key) noexcept;
    place_result place_single_packet(const message_key& key, const segment& seg,
                                     std::span<const std::uint8_t> payload, bool remember_completed,
                                     std::uint64_t now, const op_fields* fields, bool external,
                                     std::uint32_t* slot_index) noexcept;
    // A free slot taken for a one-packet message: the message in it, as place() leaves it.
    void fill_single_packet(std::uint32_t index, const message_key& key, const segment& seg,
                            std::span<const std::uint8_t> payload, std::uint64_t now,
                            const op_fields* fields, bool external) noexcept {
        slot& s = slots_[index];
        s.key = key;
        s.length = seg.length;
        s.packets_total = s.packets_received = 1;
        s.last_update_ns = now;
        s.external = external;
        s.failed = false;
        s.tag = 0;
        s.origin = 0;
        s.fields = fields ? *fields : op_fields{};
        if (!external) {
            s.buffer = inline_buffer(index);
            s.size_class = -1;
            copy_payload(s.buffer, payload.data(), seg.length);
        }
    }
    // The slot's last packet is in: onto the delivery list.
    place_result complete(const message_key& key, std::uint32_t index,
                          bool remember_completed) noexcept;
    void append_delivered(std::uint32_t index) noexcept {
        slot& s = slots_[index];
        s.state = slot_state::delivered;
        s.delivery_next = no_index;
        if (delivery_tail_ == no_index)
            delivery_head_ = index;
        else
            slots_[delivery_tail_].delivery_next = index;
        delivery_tail_ = index;
    }
    std::uint32_t open_slot(const message_key& key, std::uint32_t length, bool external,
                            std::uint64_t now) noexcept;
    std::uint32_t take_free_slot(std::uint64_t now) noexcept;
    // A buffer for the slot's message: its own inline one for one packet (the common small
    // message: inlined), else one of its size class from the pool.
    bool attach_buffer(slot& s) noexcept;
    bool attach_pooled_buffer(slot& s) noexcept;
    bool make_room(std::uint64_t bytes) noexcept;
    void free_slot(std::uint32_t index) noexcept;
    void remember(const message_key& key) noexcept;
    std::uint64_t* packet_bits(std::uint32_t index) noexcept {
        return &bits_[std::size_t{index} * words_per_slot_];
    }

    rx_config cfg_;
    std::vector<slot> slots_;
    std::vector<std::uint32_t> free_;
    // Slot i's one-packet buffer is at i x inline_stride_: the MTU rounded up to 1 KiB, plus
    // 1 KiB where that is a multiple of 4 KiB. At the MTU's stride (4096) every slot's first line
    // fell in one set of the L1 cache, and a burst of 32 small messages evicted each other there;
    // now they spread over four. Not finer: slots 64 bytes apart (not a KiB multiple) slowed
    // bulk transfers, most likely by 4K aliasing: a copy whose
    // source and destination lie a little under a multiple of 4 KiB apart stalls on false
    // store-to-load dependences, which a 64-byte step makes happen for some buffers.
    static std::size_t inline_stride_for(std::uint32_t mtu) noexcept {
        const std::size_t kib = (std::size_t{mtu} + 1023) / 1024 * 1024;
        return kib % 4096 == 0 ? kib + 1024 : kib;
    }
    std::size_t inline_stride_;
    std::uint8_t* inline_buffer(std::size_t index) const noexcept {
        return &inline_buffers_[index * inline_stride_];
    }
    std::unique_ptr<std::uint8_t[]> inline_buffers_;  // slots x inline_stride_
    std::vector<std::uint64_t> bits_;                 // slots x words_per_slot_
    std::size_t words_per_slot_ = 0;
    pds::flat_map assembling_;             // key -> slot
    std::uint32_t last_found_ = no_index;  // the slot find_assembling found last (a hint)
    pds::flat_map recent_;                 // key -> 1
    std::vector<std::uint64_t> recent_ring_;
    std::size_t recent_head_ = 0;
    std::vector<std::vector<std::unique_ptr<std::uint8_t[]>>> size_classes_;  // free buffers
    std::uint32_t delivery_head_ = no_index, delivery_tail_ = no_index;
    std::uint64_t buffers_allocated_ = 0, evicted_ = 0;
    std::uint64_t buffer_bytes_ = 0;
};

// Inline: the caller (the engine's poll_received) reads the fields back at once; through a
// call they went by the stack, a 16-byte load of two 8-byte stores that could not forward.
inline bool reassembly::pop_delivered(delivered_message& out) noexcept {
    if (delivery_head_ == no_index) return false;
    const std::uint32_t index = delivery_head_;
    slot& s = slots_[index];
    delivery_head_ = s.delivery_next;
    if (delivery_head_ == no_index) delivery_tail_ = no_index;
    out.key = s.key;
    out.data = s.external ? std::span<const std::uint8_t>{}
                          : std::span<const std::uint8_t>(s.buffer, s.length);
    out.external = s.external;
    out.failed = s.failed;
    out.tag = s.tag;
    out.origin = s.origin;
    out.handle = (std::uint64_t{s.generation} << 32) | index;
    out.fields = &s.fields;
    return true;
}

}  // namespace uet::ses
