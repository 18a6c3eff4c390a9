// The seam between a transport engine and what carries its frames (a port's poll loop, the
// in-process pipe, the fabric model): a receive burst, a transmit burst, a deadline. UET's
// engine and the RoCE engine both implement it, so that what drives them need not name either.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "wire/frame_rest.hpp"

namespace uet {

inline constexpr std::uint32_t no_payload_region = 0xffffffffu;

// Zero-copy transmit: for a data packet built into a caller's room the engine asks whether its
// payload (length bytes of the sender's memory at data) may go out by reference. A handle other
// than no_payload_region (the caller's name for the registered memory holding it) leaves the
// payload out of the room: tx_frame::payload points at it and the caller chains it after the
// headers. The engine still sums it for its checksum (a read, not a copy). Called from
// transmit(); it must not call the engine.
class payload_memory {
  public:
    virtual std::uint32_t find(const std::uint8_t* data, std::size_t length) noexcept = 0;

  protected:
    ~payload_memory() = default;
};

// A frame to send. The caller may offer room (memory it owns: a DPDK mbuf's data room) for
// each slot; the engine then builds the frame there, headers and payload in one pass, and data
// points into room. Without room, or where the room is too small for any frame, data is a view
// into engine memory, valid until the next transmit() call (the caller copies it).
struct tx_frame {
    std::span<const std::uint8_t> data;
    std::span<std::uint8_t> room;  // set by the caller, never changed by the engine
    // Zero-copy: bytes of the sender's memory that follow data on the wire, in the caller's
    // region payload_region. They stay valid until the message completes; a caller that keeps
    // the frame longer (a NIC's TX ring) must hold the memory registered until it lets go.
    // Empty for every other frame.
    std::span<const std::uint8_t> payload;
    std::uint32_t payload_region = no_payload_region;
    // With payload: bytes that follow it on the wire (RoCEv2's pad and ICRC), at most 8.
    std::uint8_t tail_length = 0;
    std::array<std::uint8_t, 8> tail{};
};

class frame_engine {
  public:
    // A burst of received frames, all valid during the call, some in pieces (rests[i] for
    // frames[i]; rests may be null). Any content: hostile input is counted and dropped.
    virtual void receive_burst(std::span<const std::span<const std::uint8_t>> frames,
                               const wire::frame_rest* rests, std::uint64_t now) = 0;
    // Whether receive_burst takes frames in three pieces (frame_rest::tail_at); an engine that
    // does not is handed them joined.
    virtual bool takes_trailers() const noexcept { return false; }
    // Fires due timers, then fills out with up to out.size() frames to send now.
    virtual std::size_t transmit(std::uint64_t now, std::span<tx_frame> out) = 0;
    // When the engine next needs a call: the current time if it has frames ready, else its
    // earliest timer; UINT64_MAX when idle.
    virtual std::uint64_t next_deadline() const = 0;
    // From now on transmit() sends control frames only: for a last flush before the engine
    // goes, when the memory of posted work may be gone.
    virtual void stop_data() noexcept = 0;

  protected:
    ~frame_engine() = default;
};

}  // namespace uet
