// The burst paths of a uet_memif port (private to the driver).
#pragma once

#include <array>

#include "memif_port.hpp"

namespace uet::memif {

class port::io final : public runtime::packet_io {
  public:
    explicit io(port& owner) noexcept : owner_(owner) {}
    runtime::io_caps caps() const override { return owner_.caps(); }
    // Frames are read where the peer wrote them; the slots go back to it after the handler.
    std::size_t receive_burst(runtime::frame_handler& h, std::uint64_t now) override;
    // The handler builds its frames in the ring's buffers; they leave when head/tail moves.
    std::size_t transmit_burst(runtime::frame_handler& h, std::uint64_t now) override;
    // The link came up again: the ring starts over, no slot is offered.
    void forget_offers() noexcept { offered_ = base_ = 0; }

  private:
    // A ring buffer the handler may fill: where it is and how much it holds.
    struct slot_buffer {
        std::uint16_t region = 0;
        std::uint32_t offset = 0, capacity = 0;
        std::uint32_t posted = 0;  // the length the descriptor had (a server gives it back)
    };
    std::size_t offer_slots(std::uint16_t free, std::size_t from);
    std::uint16_t publish(std::size_t filled, std::size_t offered);
    void keep_unused_offered() noexcept;
    void offer_from_front() noexcept;
    // Called for every frame sent: inlined into publish (one call per frame cost ~20 instructions).
    [[gnu::always_inline]] inline bool finish_frame(runtime::tx_frame& f) noexcept;
    void give_back_rx(std::uint16_t n) noexcept;
    void kick(const ring& r) noexcept;

    port& owner_;
    // The offer is slots_[base_, base_ + offered_), slot k's buffer buffers_[k]. Twice a burst:
    // the slots a call left unused stay where they are, the offer's start moving past the ones
    // sent (a receiver sends one ACK in a call that was offered 32 slots), until they are moved
    // to the front once base_ passes a burst.
    static constexpr std::size_t slot_capacity = 2 * runtime::burst_size;
    std::array<runtime::tx_frame, slot_capacity> slots_{};
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
    std::array<unused_slot, runtime::burst_size> unused_{};
    std::size_t n_unused_ = 0;
    bool skipping_ = false;  // inside a chained (multi-slot) frame being dropped
};

}  // namespace uet::memif
