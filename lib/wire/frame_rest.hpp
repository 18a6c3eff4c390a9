// A received frame in two pieces: its first bytes where the frame span points, the rest (from
// byte `from` on) elsewhere. A port whose peer sends payloads without copying them (uet_memif:
// the headers in a ring buffer, the payload where the sender's application left it) hands such
// a frame on without joining it, to the readers that take it so (the engine's runs); any other
// reader gets it joined (frame_rest::join).
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

    // The whole frame in `room`; the frame itself when whole. A frame longer than room (no
    // port's frame is) is read as the truncated frame it then is: its first piece, dropped.
    std::span<const std::uint8_t> join(std::span<const std::uint8_t> frame,
                                       std::span<std::uint8_t> room) const noexcept {
        if (at == nullptr) return frame;
        if (frame.size() > room.size() || from > frame.size())
            return frame.first(std::min<std::size_t>(from, frame.size()));
        std::memcpy(room.data(), frame.data(), from);
        std::memcpy(room.data() + from, at, frame.size() - from);
        return room.first(frame.size());
    }
};

}  // namespace uet::wire
