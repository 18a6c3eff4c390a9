// The memif protocol, version 2.0, as VPP's libmemif and DPDK's net_memif speak it: the control
// messages exchanged over a Unix SOCK_SEQPACKET socket and the layout of the rings in shared
// memory. Written from the protocol's description (docs: "Shared Memory Packet Interface (memif)
// Library", DPDK's memif guide); sizes are checked below so that the layout cannot drift.
//
// Roles: the client ("slave") creates every shared memory region (rings and packet buffers) and
// hands them to the server ("master") as file descriptors. Two kinds of ring:
//   client-to-server (C2S, "S2M"): the client fills buffers and advances head; the server reads
//     the slots up to head and advances tail to give them back.
//   server-to-client (S2C, "M2S"): the client posts empty buffers by advancing head; the server
//     fills the slots from tail up to head (writing each descriptor's length) and advances tail;
//     the client reads up to tail and posts the slots again.
// head and tail are free-running 16-bit counters; a slot is counter & (ring_size - 1).
#pragma once

#include <cstddef>
#include <cstdint>

namespace uet::memif {

inline constexpr std::uint32_t ring_cookie = 0x3E31F20;
inline constexpr std::uint16_t protocol_version = (2 << 8) | 0;
inline constexpr std::size_t name_size = 32;

enum class msg_type : std::uint16_t {
    none = 0,
    ack = 1,
    hello = 2,
    init = 3,
    add_region = 4,
    add_ring = 5,
    connect = 6,
    connected = 7,
    disconnect = 8,
};

inline constexpr std::uint16_t add_ring_flag_c2s = 1;   // the ring carries client -> server
inline constexpr std::uint16_t ring_flag_mask_int = 1;  // the reader polls: no eventfd kicks
inline constexpr std::uint8_t interface_mode_ethernet = 0;

#pragma pack(push, 1)
struct msg_hello {
    std::uint8_t name[name_size];
    std::uint16_t min_version, max_version;
    std::uint16_t max_region;    // highest region index the server accepts
    std::uint16_t max_s2c_ring;  // highest ring index, each direction
    std::uint16_t max_c2s_ring;
    std::uint8_t max_log2_ring_size;
};

struct msg_init {
    std::uint16_t version;
    std::uint32_t id;  // the interface id both sides were configured with
    std::uint8_t mode;
    std::uint8_t secret[24];
    std::uint8_t name[name_size];
};

struct msg_add_region {
    std::uint16_t index;
    std::uint64_t size;
};

struct msg_add_ring {
    std::uint16_t flags;  // add_ring_flag_c2s
    std::uint16_t index;
    std::uint16_t region;
    std::uint32_t offset;  // of the ring header within the region
    std::uint8_t log2_ring_size;
    std::uint16_t private_hdr_size;
};

struct msg_connect {
    std::uint8_t if_name[name_size];
};

struct msg_disconnect {
    std::uint32_t code;
    std::uint8_t reason[96];
};

// Every control message is 128 bytes: the type, then one of the bodies.
struct message {
    std::uint16_t type;
    union {
        msg_hello hello;
        msg_init init;
        msg_add_region add_region;
        msg_add_ring add_ring;
        msg_connect connect;  // also CONNECTED
        msg_disconnect disconnect;
        std::uint8_t raw[126];
    };
};

struct descriptor {
    std::uint16_t flags;  // bit 0: the frame continues in the next slot (not produced here)
    std::uint16_t region;
    std::uint32_t length;
    std::uint32_t offset;  // of the buffer within the region
    std::uint32_t metadata;
};
#pragma pack(pop)

inline constexpr std::uint16_t desc_flag_next = 1;

// A ring in shared memory: the cookie, flags and head on the first cache line, tail on the
// second (the two sides write one each), descriptors from the third.
struct ring_header {
    alignas(64) std::uint32_t cookie;
    std::uint16_t flags;
    std::uint16_t head;
    alignas(64) std::uint16_t tail;
    alignas(64) descriptor desc[];
};

static_assert(sizeof(message) == 128);
static_assert(sizeof(msg_hello) == 43 && sizeof(msg_init) == 63);
static_assert(sizeof(msg_add_region) == 10 && sizeof(msg_add_ring) == 13);
static_assert(sizeof(descriptor) == 16);
static_assert(offsetof(ring_header, head) == 6 && offsetof(ring_header, tail) == 64);
static_assert(sizeof(ring_header) == 128);

}  // namespace uet::memif
