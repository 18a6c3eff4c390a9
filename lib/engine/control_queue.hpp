// Control frames (ACK, NACK, CTRL, RUDI responses) built when their cause arrives and kept until
// a transmit() call hands them out: a ring of fixed-size slots. A slot handed out is reclaimed by
// the next transmit() call, when the caller has put the frame on the wire.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "engine/engine.hpp"

namespace uet {

class control_queue {
  public:
    static constexpr std::size_t frame_size = 128;

    explicit control_queue(std::size_t capacity)
        : capacity_(capacity), buf_(new std::uint8_t[capacity * frame_size]), len_(capacity, 0) {}

    // Room for one control frame, or empty when the ring is full.
    std::span<std::uint8_t> slot() noexcept {
        if (head_ - tail_ >= capacity_) return {};
        return {&buf_[(head_ % capacity_) * frame_size], frame_size};
    }
    // The frame just built in slot() is length bytes long and waits to be handed out.
    void commit(std::size_t length) noexcept {
        if (length == 0) return;  // not built (counted where it failed)
        len_[head_ % capacity_] = static_cast<std::uint16_t>(length);
        ++head_;
    }
    // The frames handed out by the previous transmit() call are on the wire: their slots free.
    void reclaim() noexcept {
        tail_ += handed_;
        handed_ = 0;
    }
    bool empty() const noexcept { return tail_ == head_; }
    // Frames not yet handed out.
    bool waiting() const noexcept { return head_ != tail_ + handed_; }
    // Hands out waiting frames into out[n..], copied into each frame's room where it fits (a
    // small copy) or else viewed where they are.
    void hand_out(std::span<tx_frame> out, std::size_t& n) noexcept {
        while (n < out.size() && tail_ + handed_ < head_) {
            const std::size_t at = (tail_ + handed_) % capacity_;
            const std::span<const std::uint8_t> frame(&buf_[at * frame_size], len_[at]);
            tx_frame& f = out[n++];
            f.payload = {};
            f.payload_region = no_payload_region;
            if (f.room.size() >= frame.size()) {
                std::copy(frame.begin(), frame.end(), f.room.begin());
                f.data = f.room.first(frame.size());
            } else {
                f.data = frame;
            }
            ++handed_;
        }
    }

  private:
    std::size_t capacity_;
    std::unique_ptr<std::uint8_t[]> buf_;
    std::vector<std::uint16_t> len_;
    std::size_t head_ = 0, tail_ = 0, handed_ = 0;
};

}  // namespace uet
