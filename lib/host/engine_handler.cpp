#include "host/engine_handler.hpp"

#include <algorithm>
#include <cstring>

namespace uet::host {

void engine_handler::on_receive(std::span<const std::uint8_t> frame, std::uint64_t now) {
    ++stats_.frames_rx;
    engine_.receive_burst({&frame, 1}, nullptr, now);
}

void engine_handler::on_start(const io_caps& caps) {
    caps_ = caps;
    joined_slot_ = caps.max_frame;
    joined_.assign(burst_size * joined_slot_, 0);
}

// The engine takes the burst at once (UET's engine finds runs of one message's packets in it).
void engine_handler::on_receive_burst(std::span<const rx_frame> frames, const steering_config*,
                                      std::uint64_t now) {
    burst_room<std::span<const std::uint8_t>> bytes;
    burst_room<wire::frame_rest> rests;
    const bool trailers_taken = engine_.takes_trailers();
    while (!frames.empty()) {
        const std::size_t n = std::min(frames.size(), bytes.size());
        bool split = false;
        for (std::size_t i = 0; i < n; ++i) {
            bytes.set(i, frames[i].bytes);
            split |= frames[i].rest.at != nullptr;
        }
        if (split)  // frames in pieces (zero-copy transmit over uet_memif): their rests too
            for (std::size_t i = 0; i < n; ++i) {
                wire::frame_rest rest = frames[i].rest;
                if (rest.tail_at != nullptr && !trailers_taken) {
                    // (Before on_start there is no room: the frame reads as truncated.)
                    const std::span<std::uint8_t> room =
                        joined_.empty()
                            ? std::span<std::uint8_t>()
                            : std::span(joined_).subspan(i * joined_slot_, joined_slot_);
                    bytes.data()[i] = rest.join(frames[i].bytes, room);
                    rest = {};
                }
                rests.set(i, rest);
            }
        stats_.frames_rx += n;
        engine_.receive_burst(std::span(bytes.data(), n), split ? rests.data() : nullptr, now);
        frames = frames.subspan(n);
    }
}

std::size_t engine_handler::on_transmit(std::uint64_t now, std::span<tx_frame> frames) {
    // Nothing to send and no timer due: most calls of a sender waiting for its ACKs, which
    // would hand the engine a room per slot (a burst's worth of stores) for it to build nothing.
    if (engine_.next_deadline() > now) return 0;
    const std::size_t want = std::min(frames.size(), out_.size());
    // The engine builds each frame straight into the slot's buffer (the mbuf's data room).
    for (std::size_t i = 0; i < want; ++i)
        out_[i].room = frames[i].buffer;
    const std::size_t got = engine_.transmit(now, std::span<uet::tx_frame>(out_.data(), want));
    std::size_t n = 0;
    for (std::size_t i = 0; i < got; ++i) {
        const auto data = out_[i].data;
        if (data.data() == frames[i].buffer.data()) {
            // Built in place: slot i holds it; slots travel whole (buffer with its cookie).
            if (i != n) std::swap(frames[i], frames[n]);
            const auto payload = out_[i].payload;
            frames[n].ext = {};
            if (!payload.empty()) {
                // Zero-copy: the payload stays in registered memory; the port chains it.
                ext_payload& ext = frames[n].ext;
                ext.data = payload.data();
                ext.length = payload.size();
                ext.region = out_[i].payload_region;
                ext.tail_length =
                    std::min<std::uint8_t>(out_[i].tail_length, ext_payload::max_tail);
                ext.tail = out_[i].tail;  // whole: a fixed-size copy, no call
                ++stats_.frames_by_reference;
            }
            frames[n++].length = data.size();
            continue;
        }
        // A frame that does not fit the port is lost like any dropped frame; the engine's
        // retransmission ends in an error completion rather than a hang.
        if (data.size() > frames[n].buffer.size()) {
            ++stats_.tx_too_large;
            continue;
        }
        std::memcpy(frames[n].buffer.data(), data.data(), data.size());
        frames[n].length = data.size();
        frames[n].ext = {};
        stats_.bytes_copied_tx += data.size();
        ++n;
    }
    // The rooms left in out_ point into mbufs the port may send or free: the engine reads them
    // only inside transmit(), and the next call sets them again before it.
    stats_.frames_tx += n;
    return n;
}

std::uint64_t engine_handler::next_deadline() const {
    // The engine says UINT64_MAX when idle, which is also the host stack's no_deadline.
    static_assert(no_deadline == UINT64_MAX);
    return engine_.next_deadline();
}

}  // namespace uet::host
