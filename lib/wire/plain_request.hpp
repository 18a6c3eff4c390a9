// The frame nearly every data packet arrives in, read in one pass: untagged Ethernet, IPv4
// without options and not a fragment, UDP, a RUD or ROD request header, then a standard SES
// request without extension headers.
//
// The general path (parse_l2l4, then decode_uet) reads the same frame into a view of every
// header, with a variant for the PDS header and one for the SES header that the engine then
// visits and copies again, which is a large share of a bulk receiver's work per frame.
// read_plain_request accepts a subset of what those accept, with the same checks, and reads the
// same values: plain_request_test compares
// the two on generated and mutated frames. false says only "not this shape, or not valid": the
// caller then takes the general path, which gives the reason.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "wire/bytes.hpp"
#include "wire/eth.hpp"
#include "wire/frame_rest.hpp"
#include "wire/uet_pds.hpp"
#include "wire/uet_ses.hpp"

namespace uet::wire {

struct plain_request {
    mac_address src_mac;
    std::uint32_t src_ip = 0, dst_ip = 0;  // host order
    std::uint8_t dscp = 0, ecn = 0;
    std::uint16_t ip_id = 0;  // IPv4 identification (a path ID where switches stamp one)
    std::uint16_t src_port = 0, dst_port = 0;
    pds_rud_rod_request pds;
    ses_standard_fields ses;
    std::span<const std::uint8_t> payload;  // after the SES header, up to the IP total length
};

// On false out is partly written: use it only when true is returned.
bool read_plain_request(std::span<const std::uint8_t> frame, plain_request& out) noexcept;

// Header prediction (as TCP receivers have done since Van Jacobson): the packets of one message
// from one PDC differ only in a few header fields, so the next one is compared with the last
// one read, word by word, instead of read and checked field by field again. The fields that may
// differ are the IPv4 identification and header checksum, the UDP source port (entropy) and
// checksum, the PDS request's retx and ar flags, clear_psn_offset and PSN, and the SES
// message_offset; every other byte of the 98 header bytes must be equal, and the frame as long.
// A stream of one-packet messages (small sends) is predicted the same way, one message from the
// last: there the SES message_id, buffer_offset (restart token or target offset), memory_key
// (tag or key) and header data may differ too, and the message_offset is not in the header.
struct plain_request_template {
    static constexpr std::size_t header_bytes = 98;  // Ethernet 14, IPv4 20, UDP 8, PDS 12, SES 44
    static constexpr std::size_t words = (header_bytes + 7) / 8;
    std::array<std::uint64_t, words> header{};  // the last frame's header, as compared
    std::size_t frame_size = 0;                 // 0: nothing to compare with
    bool single_packet_messages = false;        // the last frame was a one-packet message
    std::uint32_t ip_sum_rest = 0;              // its IPv4 header's sum but the id and checksum
    plain_request reading;                      // that frame's reading, then the next one's
};

// Keeps frame, which read_plain_request has just read into r, as the one the next is compared
// with. A packet after a message's first one stands for the next packets of its message, a
// one-packet message for the next one-packet messages; a message's first packet of several
// (it carries header data where the others have their offset) and a SYN packet (its PSN offset
// moves with every packet) stand for nothing: t is emptied.
void remember_plain_request(std::span<const std::uint8_t> frame, const plain_request& r,
                            plain_request_template& t) noexcept;

// The reading of frame when it differs from t's frame only in the fields above and is valid
// (IPv4 header checksum; UDP checksum where present): t.reading, updated in place, equal to what
// read_plain_request would read. nullptr says only "not predicted": read it in full.
const plain_request* read_next_plain_request(std::span<const std::uint8_t> frame,
                                             plain_request_template& t) noexcept;

// What read_next_plain_requests reads of each packet: the fields that differ between the
// packets of a message, or from one one-packet message to the next (the PDS request's are read
// from pds_at with load_request_changes, by the caller that needs them). No initializers: an
// array of them is scratch space.
struct next_request_fields {
    const std::uint8_t* payload;   // as long as t.reading.payload
    const std::uint8_t* pds_at;    // the frame's PDS request
    std::uint32_t message_offset;  // inside a message only
    std::uint16_t src_port;
    std::uint16_t ip_id;
    // One-packet messages only: the SES fields of each message's own.
    std::uint16_t message_id;
    std::uint64_t buffer_offset, memory_key, header_data;
};

// read_next_plain_request for frames in turn while it predicts them: their fields in out (room
// for frames.size()), t.reading the last one's as read_next_plain_request would leave it. How
// many. The template's masks and header are loaded once for the burst. With rests (one per
// frame, or nullptr), a frame in two pieces is predicted when its first piece holds exactly its
// headers and it carries no UDP checksum: its payload is then the rest.
std::size_t read_next_plain_requests(std::span<const std::span<const std::uint8_t>> frames,
                                     plain_request_template& t, next_request_fields* out,
                                     const frame_rest* rests = nullptr) noexcept;
// The bytes of a request's headers (Ethernet to the standard SES header), where a frame in two
// pieces must split to be predicted.
std::size_t plain_request_headers_size() noexcept;

// The sender's side of the same prediction: the UET headers (PDS request and standard SES
// header) of a packet inside a message, from which the next packet's are written by changing
// only the fields above that they hold.
struct request_headers_template {
    static constexpr std::size_t size =
        pds_rud_rod_request::wire_size + ses_standard_fields::wire_size;
    std::array<std::uint8_t, size> bytes{};
};

// Writes t's headers at out (size bytes) with h's changing fields (retx, ar, clear_psn_offset,
// PSN) and the SES message_offset of the packet: what store_request and store_standard_fields
// would write for it, when t holds a packet of the same message (not its first or last) sent
// on the same PDC without SYN.
void write_next_request_headers(std::uint8_t* out, const request_headers_template& t,
                                const pds_rud_rod_request& h,
                                std::uint32_t message_offset) noexcept;

// A whole frame's headers from an earlier one, a transmit run's frames after its first: the 98
// header bytes of `first` (sent on the same established PDC, not a retransmission, without a UDP
// checksum, as long as this one) written at out with this packet's IPv4 identification (and so
// header checksum), UDP source port (entropy), PSN and AR flag, and its SES fields (below).
// ip_sum_rest is ipv4_sum_rest(first). What udp_header_template::write and the request header
// writers would write for the packet. Inline: written for every packet of a transmit run.
inline void write_next_frame_headers(std::uint8_t* out, const std::uint8_t* first,
                                     std::uint32_t ip_sum_rest, std::uint16_t ip_id,
                                     std::uint16_t src_port, std::uint32_t psn, bool ar) noexcept {
    constexpr std::size_t ip_at = eth_header::wire_size, udp_at = ip_at + 20, pds_at = udp_at + 8;
    // Nothing is read back from out: its lines are usually still on their way from the peer
    // that read the frame's slot last, and a load that cannot be forwarded from the stores just
    // made waits for them.
    std::memcpy(out, first, plain_request_template::header_bytes);
    store_be16(out + ip_at + 4, ip_id);
    // The sum in native order, as ipv4_sum_rest works it out: one's complement sums do not
    // depend on the byte order (RFC 1071), so the complement is stored as it is. `id` is the
    // identification as it lies in memory, read as a native word.
    const std::uint16_t id = std::endian::native == std::endian::little ? byteswap(ip_id) : ip_id;
    std::uint32_t sum = ip_sum_rest + id;
    sum = (sum & 0xffff) + (sum >> 16);
    sum = (sum & 0xffff) + (sum >> 16);
    const auto checksum = static_cast<std::uint16_t>(~sum);
    std::memcpy(out + ip_at + 10, &checksum, 2);
    store_be16(out + udp_at, src_port);
    // The PDS request's changing fields as store_request_changes writes them for a packet that
    // is not a retransmission (retx clear, clear_psn_offset 0).
    const std::uint8_t flags = first[pds_at + request_flags_byte];
    out[pds_at + request_flags_byte] =
        static_cast<std::uint8_t>((flags & ~request_changing_flags) | (ar ? request_ar_flag : 0));
    store_be16(out + pds_at + 2, 0);
    store_be32(out + pds_at + 4, psn);
}

inline constexpr std::size_t plain_ses_at =
    eth_header::wire_size + 20 + 8 + pds_rud_rod_request::wire_size;
static_assert(plain_ses_at + ses_standard_fields::wire_size ==
              plain_request_template::header_bytes);

// write_next_frame_headers for a packet inside a message (neither its first nor its last, as
// `first` is): its SES message_offset.
inline void write_next_request_frame(std::uint8_t* out, const std::uint8_t* first,
                                     std::uint32_t ip_sum_rest, std::uint16_t ip_id,
                                     std::uint16_t src_port, std::uint32_t psn, bool ar,
                                     std::uint32_t message_offset) noexcept {
    write_next_frame_headers(out, first, ip_sum_rest, ip_id, src_port, psn, ar);
    store_be32(out + plain_ses_at + 36, message_offset);
}

// The SES fields of a one-packet message's own (what differs between two of them whose other
// header fields agree: the same opcode, flags, job, resource index, initiator and length).
struct single_packet_request_fields {
    std::uint16_t message_id;
    std::uint64_t buffer_offset, memory_key, header_data;
};

// write_next_frame_headers for a one-packet message after another (`first`): its own SES fields.
inline void write_next_single_packet_request_frame(std::uint8_t* out, const std::uint8_t* first,
                                                   std::uint32_t ip_sum_rest, std::uint16_t ip_id,
                                                   std::uint16_t src_port, std::uint32_t psn,
                                                   bool ar,
                                                   const single_packet_request_fields& f) noexcept {
    write_next_frame_headers(out, first, ip_sum_rest, ip_id, src_port, psn, ar);
    store_be16(out + plain_ses_at + 2, f.message_id);
    store_be64(out + plain_ses_at + 12, f.buffer_offset);
    store_be64(out + plain_ses_at + 24, f.memory_key);
    store_be64(out + plain_ses_at + 32, f.header_data);
}

// The one's complement sum (native order, unfolded) of the IPv4 header of an untagged frame but
// its identification and checksum: what the frame's checksum is worked out from for another id.
std::uint32_t ipv4_sum_rest(const std::uint8_t* frame) noexcept;

}  // namespace uet::wire
