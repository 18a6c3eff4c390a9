// The seam between a port's driver (DPDK ethdev, uet's memif) and the sans-I/O protocol core.
// The driver owns the buffers and the clock; a frame_handler (the PDS engine, the host stack, a
// test) only sees byte spans and a nanosecond timestamp, so the same handler runs over DPDK,
// memif, the in-memory pipe or the simulator.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <new>
#include <span>
#include <type_traits>

#include "host/steering.hpp"
#include "wire/frame_rest.hpp"

namespace uet::host {

inline constexpr std::size_t burst_size = 32;
inline constexpr std::uint64_t no_deadline = std::numeric_limits<std::uint64_t>::max();

// Room for a burst of N values that a layer fills one by one before handing them on: unlike an
// std::array<T, N>, not initialized at each call (the default member initializers of a frame's
// span and classification would be a store per field and entry, per burst, in every layer a
// burst crosses).
// An entry is read only after set().
template <class T, std::size_t N = burst_size>
class burst_room {
    static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);

  public:
    burst_room() noexcept {}  // nothing initialized, on purpose
    void set(std::size_t i, const T& v) noexcept { std::construct_at(data() + i, v); }
    T* data() noexcept { return std::launder(reinterpret_cast<T*>(bytes_)); }
    static constexpr std::size_t size() noexcept { return N; }

  private:
    alignas(T) std::byte bytes_[sizeof(T) * N];
};

// What the port under the handler can do; given once before the first burst.
struct io_caps {
    std::size_t max_frame = 1514;  // largest frame (Ethernet header included, no FCS)
    bool ipv4_checksum_offload = false;
    bool udp_checksum_offload = false;
    bool zero_copy = false;  // tx_frame::ext is sent without a copy (multi-segment TX)
    // ext_payload::tail is chained after the payload too (uet_memif); elsewhere a frame with a
    // tail is copied whole.
    bool zero_copy_tail = false;
};

// Memory registered with a port (port::register_memory): a tx_frame may point into it.
struct ext_payload {
    static constexpr std::size_t max_tail = 8;
    const std::uint8_t* data = nullptr;
    std::size_t length = 0;
    std::uint32_t region = 0;  // the handle register_memory returned
    // Bytes that follow the payload on the wire: a trailer computed over it (RoCEv2's pad and
    // ICRC), which cannot be written into registered memory.
    std::uint8_t tail_length = 0;
    std::array<std::uint8_t, max_tail> tail{};
};

// One frame to transmit. The packet_io hands out slots whose buffer is writable room for a frame
// (an mbuf's data room in providers/dpdk, a ring slot in providers/memif); the handler writes
// headers (and usually the payload) there and sets length. With ext set, ext.length bytes of
// registered memory follow buffer[0, length) on the wire: chained without a copy where
// io_caps::zero_copy, copied otherwise; ext.tail's bytes follow them.
struct tx_frame {
    std::span<std::uint8_t> buffer;
    std::size_t length = 0;
    ext_payload ext;
    // Ask the port to compute the IPv4 header / UDP checksum. Only honoured where io_caps says
    // the port can (the driver then writes the pseudo-header sum the NIC expects); elsewhere the
    // handler must have filled the checksums itself.
    bool offload_ipv4_checksum = false;
    bool offload_udp_checksum = false;
    // The packet_io's handle of the buffer (providers/dpdk: its mbuf). A handler may reorder or
    // swap whole slots (buffer and cookie travel together) but never change one without the other.
    void* io_cookie = nullptr;

    void reset(std::span<std::uint8_t> room, void* cookie) noexcept {
        buffer = room;
        io_cookie = cookie;
        length = 0;
        ext = {};
        offload_ipv4_checksum = offload_udp_checksum = false;
    }
};

// One frame of a received burst (Ethernet header first, no FCS) and, where the port classified
// it (software steering), what it found. Only to a handler that takes_split_frames() may a port
// hand a frame in two pieces: bytes then spans the whole frame's length, of which the first
// rest.from bytes are there and the others at rest.at.
struct rx_frame {
    std::span<const std::uint8_t> bytes;
    classification c;
    wire::frame_rest rest;
};

class frame_handler {
  public:
    virtual ~frame_handler() = default;

    // Called once, before any burst, with the capabilities of the port underneath.
    virtual void on_start(const io_caps& /*caps*/) {}
    // One received frame (Ethernet header first, no FCS). The span is valid only during the call.
    virtual void on_receive(std::span<const std::uint8_t> frame, std::uint64_t now) = 0;
    // The same frame, which the port already classified under `by` (software steering): a
    // handler that classifies too may take c instead of looking again.
    virtual void on_receive_classified(std::span<const std::uint8_t> frame,
                                       const classification& /*c*/, const steering_config& /*by*/,
                                       std::uint64_t now) {
        on_receive(frame, now);
    }
    // A received burst, every frame valid until the call returns; `by` is the steering the port
    // classified them under (nullptr: not classified). A handler that can take a burst at once
    // overrides this (the engine takes consecutive packets of a message as a run); by default
    // each frame goes to on_receive_classified / on_receive in turn.
    virtual void on_receive_burst(std::span<const rx_frame> frames, const steering_config* by,
                                  std::uint64_t now) {
        for (const rx_frame& f : frames) {
            if (by)
                on_receive_classified(f.bytes, f.c, *by, now);
            else
                on_receive(f.bytes, now);
        }
    }
    // Whether on_receive_burst takes frames in two pieces (rx_frame::rest). The default
    // on_receive_burst does not: it hands on bytes alone.
    virtual bool takes_split_frames() const noexcept { return false; }
    // Fill up to frames.size() slots from the front; return how many were filled, setting the
    // length and ext of each. Slots past the returned count are reused by the packet_io, which may
    // hand them again as they are (whatever a handler left in them), after a call that filled
    // none or in the next call's first slots.
    virtual std::size_t on_transmit(std::uint64_t now, std::span<tx_frame> frames) = 0;
    // The earliest time at which on_transmit has something to do even without new input;
    // no_deadline if none. Lets the poll loop (providers/dpdk) back off while idle.
    virtual std::uint64_t next_deadline() const = 0;
};

// A source and sink of frames (one queue of one port). The poll loop of providers/dpdk drives
// it; the ports of providers/dpdk and providers/memif implement it, and so can anything else
// that moves frames.
class packet_io {
  public:
    virtual ~packet_io() = default;
    virtual io_caps caps() const = 0;
    // Receive one burst and hand it to h.on_receive_burst; returns the number of frames.
    virtual std::size_t receive_burst(frame_handler& h, std::uint64_t now) = 0;
    // Ask h.on_transmit for one burst and send it; returns the number of frames sent.
    virtual std::size_t transmit_burst(frame_handler& h, std::uint64_t now) = 0;
};

}  // namespace uet::host
