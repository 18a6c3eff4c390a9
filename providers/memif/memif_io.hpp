// The burst paths of a uet_memif port (private to the driver).
#pragma once

#include <array>
#include <vector>

#include "memif/memif_port.hpp"

namespace uet::memif {

class port::io final : public host::packet_io {
  public:
    explicit io(port& owner) noexcept : owner_(owner) {}
    host::io_caps caps() const override { return owner_.caps(); }
    // Frames are read where the peer wrote them; the slots go back to it after the handler.
    std::size_t receive_burst(host::frame_handler& h, std::uint64_t now) override;
    // The handler builds its frames in the ring's buffers; they leave when head/tail moves.
    std::size_t transmit_burst(host::frame_handler& h, std::uint64_t now) override;
    // The link came up again: the ring starts over, no slot is offered, no buffer is spare.
    void forget_offers() noexcept;

  private:
    // The TX slots we may fill (0: none, or the peer's counter is out of range).
    inline std::uint16_t tx_room() noexcept;
    // A ring buffer the handler may fill: where it is and how much it holds.
    struct slot_buffer {
        std::uint16_t region = 0;
        std::uint32_t offset = 0, capacity = 0;
        std::uint32_t posted = 0;  // the length the descriptor had (a server gives it back)
    };
    std::size_t offer_slots(std::uint16_t free, std::size_t from);
    inline std::size_t offer_own_slots(std::size_t from, std::size_t n) noexcept;
    bool publish_in_place(std::size_t filled) noexcept;
    inline void past_sent(std::size_t filled) noexcept;
    // Writes the descriptors of the frames (a chained frame takes two or three slots, of at
    // most `room` more than offered); returns the ring slots used, the frames sent in `frames_out`.
    std::uint16_t publish(std::size_t filled, std::size_t offered, std::size_t room,
                          std::uint16_t& frames_out);
    // Before ring position next + k past the offer is first written (a chained frame pushed the
    // slots on): the buffer its descriptor d named is kept spare.
    [[gnu::always_inline]] inline void keep_spare(const descriptor& d, std::size_t k) noexcept;
    // A frame in several slots from ring position at (at most avail of them published): copied
    // whole into scratch slot `into`. Returns the slots it took (0: incomplete); length 0 when
    // the frame was refused (counted).
    std::uint16_t gather(std::uint16_t at, std::uint16_t avail, std::size_t into,
                         std::uint32_t& length) noexcept;
    std::uint16_t take_chain(std::uint16_t at, std::uint16_t avail, std::size_t into, bool split,
                             host::rx_frame& f) noexcept;
    void keep_unused_offered() noexcept;
    void offer_from_front() noexcept;
    // Called for every frame sent: inlined into publish, so that no frame pays for a call.
    // 0: a bad frame; 1: whole in its buffer; 2: its payload chained (a second slot), from the
    // shared region `in`; 3: chained with a trailer (a third slot). Chained only where the
    // slots it takes are among `spare_slots`.
    [[gnu::always_inline]] inline int finish_frame(host::tx_frame& f, std::size_t spare_slots,
                                                   const app_region*& in) noexcept;
    void give_back_rx(std::uint16_t n) noexcept;
    static bool wants_kick(const ring& r) noexcept;  // the reader has not masked kicks
    void kick(const ring& r) noexcept;

    port& owner_;
    // The offer is slots_[base_, base_ + offered_), slot k's buffer buffers_[k]. Twice a burst:
    // the slots a call left unused stay where they are, the offer's start moving past the ones
    // sent (a receiver sends one ACK in a call that was offered 32 slots), until they are moved
    // to the front once base_ passes a burst.
    static constexpr std::size_t slot_capacity = 2 * host::burst_size;
    std::array<host::tx_frame, slot_capacity> slots_{};
    std::array<slot_buffer, slot_capacity> buffers_{};
    std::size_t base_ = 0;
    // Slots from the ring's next one on, prepared for the handler and not yet used: a transmit
    // call that sends nothing (most of an idle or window-held sender's calls) leaves them as
    // they are, so the next call need not prepare them again.
    std::size_t offered_ = 0;
    // When a handler moved slots or made a bad frame: the buffers of the last publish that no
    // frame used, in ring order after the frames sent, which the next offer starts with.
    struct unused_slot {
        slot_buffer where;
        std::span<std::uint8_t> room;
    };
    std::array<unused_slot, host::burst_size> unused_{};
    std::size_t n_unused_ = 0;
    bool skipping_ = false;  // inside a chained (multi-slot) frame being dropped
    // A client's TX buffers that no ring slot names: one per slot that holds a chained payload
    // (offsets in region 0), taken again when such a slot is offered.
    std::vector<std::uint32_t> spare_;
    std::size_t written_past_offer_ = 0;  // publish: positions past the offer already taken
    // Chained frames received, gathered whole: burst_size slots of max_frame bytes.
    std::vector<std::uint8_t> scratch_;
    std::size_t scratch_slot_ = 0;
};

}  // namespace uet::memif
