// A received frame in two pieces: its first bytes where the frame span points, the rest (from
// byte `from` on) elsewhere (or in three: a trailer after the rest). A port whose peer sends
// payloads without copying them (uet_memif: the headers in a ring buffer, the payload where the
// sender's application left it) hands such a frame on without joining it, to the readers that take
// it so (the engine's runs); any other reader gets it joined (frame_rest::join).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

namespace uet::wire {

struct frame_rest {
    const std::uint8_t* at = nullptr;  // nullptr: the frame is whole where its span points
    std::uint32_t from = 0;            // the frame's bytes [from, size) are at `at`
    // A third piece (a trailer the sender chained after its payload: RoCEv2's pad and ICRC):
    // then [from, tail_from) are at `at` and [tail_from, size) at tail_at. Only readers that
    // say so take such frames (frame_engine::takes_trailers); the others get them joined.
    const std::uint8_t* tail_at = nullptr;
    std::uint32_t tail_from = 0;

    // The whole frame in `room`; the frame itself when whole. A frame longer than room (no
    // port's frame is), or whose pieces do not add up, is read as the truncated frame it then
    // is: its first piece, dropped.
    std::span<const std::uint8_t> join(std::span<const std::uint8_t> frame,
                                       std::span<std::uint8_t> room) const noexcept {
        if (at == nullptr) return frame;
        const std::size_t mid_end = tail_at != nullptr ? tail_from : frame.size();
        if (frame.size() > room.size() || from > mid_end || mid_end > frame.size())
            return frame.first(std::min<std::size_t>(from, frame.size()));
        std::memcpy(room.data(), frame.data(), from);
        std::memcpy(room.data() + from, at, mid_end - from);
        if (tail_at != nullptr) std::memcpy(room.data() + mid_end, tail_at, frame.size() - mid_end);
        return room.first(frame.size());
    }
};

}  // namespace uet::wire
