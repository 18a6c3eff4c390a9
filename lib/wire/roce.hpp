// RoCEv2 (InfiniBand transport over UDP port 4791): BTH and the RC extension headers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "wire/fields.hpp"
#include "wire/frame.hpp"
#include "wire/icrc.hpp"
#include "wire/reject.hpp"

namespace uet::wire {

// Reliable Connection opcodes (IBA table 38, transport 000b) plus the RoCEv2 CNP.
enum class roce_opcode : std::uint8_t {
    rc_send_first = 0x00,
    rc_send_middle = 0x01,
    rc_send_last = 0x02,
    rc_send_last_with_immediate = 0x03,
    rc_send_only = 0x04,
    rc_send_only_with_immediate = 0x05,
    rc_rdma_write_first = 0x06,
    rc_rdma_write_middle = 0x07,
    rc_rdma_write_last = 0x08,
    rc_rdma_write_last_with_immediate = 0x09,
    rc_rdma_write_only = 0x0a,
    rc_rdma_write_only_with_immediate = 0x0b,
    rc_rdma_read_request = 0x0c,
    rc_rdma_read_response_first = 0x0d,
    rc_rdma_read_response_middle = 0x0e,
    rc_rdma_read_response_last = 0x0f,
    rc_rdma_read_response_only = 0x10,
    rc_acknowledge = 0x11,
    rc_atomic_acknowledge = 0x12,
    rc_compare_swap = 0x13,
    rc_fetch_add = 0x14,
    ud_send_only = 0x64,  // Unreliable Datagram SEND (DETH): the connection manager's MADs
    cnp = 0x81,           // RoCEv2 congestion notification packet (BECN set, 16 reserved bytes)
};

// "RC_SEND_FIRST", ..., "RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE", "CNP"; nullptr when unsupported.
const char* roce_opcode_name(std::uint8_t opcode) noexcept;

// What follows the BTH for one opcode. Extension headers appear in this order:
// RETH or AtomicETH, then AETH, then AtomicAckETH, then ImmDt (an opcode never has both
// request-side and response-side headers).
struct roce_opcode_info {
    bool known = false;
    bool reth = false;
    bool atomic_eth = false;
    bool aeth = false;
    bool atomic_ack_eth = false;
    bool immdt = false;
    bool payload = false;           // carries a data payload (may be zero-length for *_ONLY/LAST)
    bool full_payload = false;      // FIRST/MIDDLE: a full-MTU payload, never empty, pad count 0
    std::size_t fixed_payload = 0;  // opcodes with a fixed reserved body (CNP: 16)
    bool deth = false;              // Unreliable Datagram: a DETH right after the BTH
};
roce_opcode_info roce_opcode_lookup(std::uint8_t opcode) noexcept;

struct bth_header {
    static constexpr std::size_t wire_size = 12;
    std::uint8_t opcode = 0;
    bool se = false;             // solicited event
    bool m = false;              // migration request
    std::uint8_t pad_count = 0;  // 2 bits
    std::uint8_t tver = 0;       // 4 bits, must be 0
    std::uint16_t pkey = 0xffff;
    bool fecn = false;          // byte 4 bit 7 (RoCEv2 use of resv8a)
    bool becn = false;          // byte 4 bit 6
    std::uint32_t dest_qp = 0;  // 24 bits
    bool ack_req = false;
    std::uint32_t psn = 0;  // 24 bits
};

// Datagram extended transport header: the Q_Key the receiver checks and the sending QP.
struct deth_header {
    static constexpr std::size_t wire_size = 8;
    std::uint32_t q_key = 0;
    std::uint32_t src_qp = 0;  // 24 bits
};

struct reth_header {
    static constexpr std::size_t wire_size = 16;
    std::uint64_t va = 0;
    std::uint32_t rkey = 0;
    std::uint32_t dma_len = 0;
};

// AETH syndrome: bit 7 reserved, bits 6..5 the kind, bits 4..0 the value (credit count for an
// ACK, timer for an RNR NAK, NAK code for a NAK).
enum class aeth_kind : std::uint8_t { ack = 0, rnr_nak = 1, reserved = 2, nak = 3 };
enum class aeth_nak_code : std::uint8_t {
    psn_sequence_error = 0,
    invalid_request = 1,
    remote_access_error = 2,
    remote_operational_error = 3,
    invalid_rd_request = 4,
};

struct aeth_header {
    static constexpr std::size_t wire_size = 4;
    std::uint8_t syndrome = 0;
    std::uint32_t msn = 0;  // 24 bits

    aeth_kind kind() const noexcept { return static_cast<aeth_kind>((syndrome >> 5) & 3); }
    std::uint8_t value() const noexcept { return syndrome & 0x1f; }
    static constexpr std::uint8_t make_syndrome(aeth_kind k, std::uint8_t value) noexcept {
        return static_cast<std::uint8_t>((static_cast<std::uint8_t>(k) << 5) | (value & 0x1f));
    }
};
// "ACK", "RNR_NAK", "RESERVED", "NAK".
const char* to_string(aeth_kind k) noexcept;
// "PSN_SEQUENCE_ERROR", ...; "UNKNOWN" for reserved codes.
const char* aeth_nak_name(std::uint8_t code) noexcept;

struct immdt_header {
    static constexpr std::size_t wire_size = 4;
    std::uint32_t imm = 0;  // the 4 bytes read big-endian
};

struct atomic_eth_header {
    static constexpr std::size_t wire_size = 28;
    std::uint64_t va = 0;
    std::uint32_t rkey = 0;
    std::uint64_t swap_add = 0;
    std::uint64_t compare = 0;
};

struct atomic_ack_eth_header {
    static constexpr std::size_t wire_size = 8;
    std::uint64_t orig_remote_data = 0;
};

// decode(bth) rejects tver != 0; it does not judge the opcode (decode_roce does).
std::size_t encode(const bth_header& h, std::span<std::uint8_t> out) noexcept;
reject_reason decode(std::span<const std::uint8_t> in, bth_header& out) noexcept;
void visit(const bth_header& h, field_visitor& v);

std::size_t encode(const deth_header& h, std::span<std::uint8_t> out) noexcept;
reject_reason decode(std::span<const std::uint8_t> in, deth_header& out) noexcept;
void visit(const deth_header& h, field_visitor& v);

std::size_t encode(const reth_header& h, std::span<std::uint8_t> out) noexcept;
reject_reason decode(std::span<const std::uint8_t> in, reth_header& out) noexcept;
void visit(const reth_header& h, field_visitor& v);

// decode(aeth) rejects the reserved syndrome kind (bad_aeth_syndrome).
std::size_t encode(const aeth_header& h, std::span<std::uint8_t> out) noexcept;
reject_reason decode(std::span<const std::uint8_t> in, aeth_header& out) noexcept;
void visit(const aeth_header& h, field_visitor& v);

std::size_t encode(const immdt_header& h, std::span<std::uint8_t> out) noexcept;
reject_reason decode(std::span<const std::uint8_t> in, immdt_header& out) noexcept;
void visit(const immdt_header& h, field_visitor& v);

std::size_t encode(const atomic_eth_header& h, std::span<std::uint8_t> out) noexcept;
reject_reason decode(std::span<const std::uint8_t> in, atomic_eth_header& out) noexcept;
void visit(const atomic_eth_header& h, field_visitor& v);

std::size_t encode(const atomic_ack_eth_header& h, std::span<std::uint8_t> out) noexcept;
reject_reason decode(std::span<const std::uint8_t> in, atomic_ack_eth_header& out) noexcept;
void visit(const atomic_ack_eth_header& h, field_visitor& v);

struct roce_packet {
    bth_header bth;
    std::optional<deth_header> deth;
    std::optional<reth_header> reth;
    std::optional<aeth_header> aeth;
    std::optional<immdt_header> immdt;
    std::optional<atomic_eth_header> atomic_eth;
    std::optional<atomic_ack_eth_header> atomic_ack_eth;
    std::span<const std::uint8_t> payload;  // without pad and ICRC; points into the input
    std::uint32_t icrc = 0;  // as computed by roce_icrc (stored little-endian on the wire)
};

// udp_payload: BTH .. ICRC. ip_packet: IPv4 header .. end of the ICRC (l2l4_view::ip_packet),
// which must end with udp_payload. Checks tver, that the opcode is supported, that the packet
// holds the opcode's extension headers, the pad count, 4-byte alignment and the ICRC.
reject_reason decode_roce(std::span<const std::uint8_t> udp_payload,
                          std::span<const std::uint8_t> ip_packet, roce_packet& out) noexcept;
// The same for a packet received in three pieces (zero-copy transmit over uet_memif): ip_head
// from the IPv4 header to the end of the transport headers (the UDP payload starting at
// udp_at, udp_len bytes long in all), then the payload, then the pad and the ICRC (trailer).
// nullopt when the pieces are not split so (the caller joins them and calls decode_roce).
std::optional<reject_reason> decode_roce_split(std::span<const std::uint8_t> ip_head,
                                               std::size_t udp_at, std::size_t udp_len,
                                               std::span<const std::uint8_t> payload,
                                               std::span<const std::uint8_t> trailer,
                                               roce_packet& out) noexcept;
void visit(const roce_packet& p, field_visitor& v);
// One tcpdump-style line, appended to out, e.g.
// "RC_RDMA_WRITE_FIRST qp 0x000012 psn 100 ackreq va 0x1000 rkey 0x42 len 4096 payload 1024".
void summarize(const roce_packet& p, std::string& out);

// What to send. bth.pad_count is computed by the builder; the optional headers present must be
// exactly those roce_opcode_lookup(bth.opcode) lists.
struct roce_packet_spec {
    bth_header bth;
    std::optional<deth_header> deth;
    std::optional<reth_header> reth;
    std::optional<aeth_header> aeth;
    std::optional<immdt_header> immdt;
    std::optional<atomic_eth_header> atomic_eth;
    std::optional<atomic_ack_eth_header> atomic_ack_eth;
    std::span<const std::uint8_t> payload;
};

// Bytes of the UDP payload (BTH .. ICRC) for spec r, or 0 if r is inconsistent.
std::size_t roce_udp_payload_size(const roce_packet_spec& r) noexcept;
// Writes BTH .. ICRC placeholder (zeros) into out; returns bytes written or 0.
std::size_t encode_roce_transport(const roce_packet_spec& r, std::span<std::uint8_t> out) noexcept;
// A whole frame: s (use dst_port = roce_udp_port) + r, payload padded to 4 bytes, ICRC and
// checksums filled. Returns the frame length or 0 (too small, or r inconsistent).
std::size_t build_roce_frame(const frame_spec& s, const roce_packet_spec& r,
                             std::span<std::uint8_t> out) noexcept;
// The data path's form of build_roce_frame, byte for byte the same frame (wire_roce_test holds it
// to the reference): the Ethernet, IPv4 and UDP headers come from a template of the frame_spec
// (untagged; per frame only the IP ID and the UDP source port), the transport headers are
// encoded in place, and the payload is copied into the frame by crc32_copy, which sums the ICRC
// as it copies, so each payload byte is read once. udp_checksum: also fill the UDP checksum
// (a second pass over the frame), as frame_spec::udp_checksum does. Returns the frame length or
// 0 (out too small, or r inconsistent).
std::size_t build_roce_frame_fast(const udp_header_template& t, std::uint16_t ip_id,
                                  std::uint16_t src_port, bool udp_checksum,
                                  const roce_packet_spec& r, std::span<std::uint8_t> out) noexcept;
// Zero-copy transmit: the same frame in three pieces, the headers in out (their length is
// returned, 0 as above), then r.payload where it lies, then the trailer, the pad and the ICRC
// (trailer_length bytes, at most 7, in trailer). The ICRC sums the payload where it lies (a
// read, no copy). No UDP checksum: it would take a pass over the pieces (RoCEv2 sends 0).
std::size_t build_roce_headers_fast(const udp_header_template& t, std::uint16_t ip_id,
                                    std::uint16_t src_port, const roce_packet_spec& r,
                                    std::span<std::uint8_t> out, std::span<std::uint8_t, 8> trailer,
                                    std::size_t& trailer_length) noexcept;

}  // namespace uet::wire
