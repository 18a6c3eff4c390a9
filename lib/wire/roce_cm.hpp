// The InfiniBand Communication Manager's messages (IBTA vol. 1, chapter 12) as RoCEv2 carries
// them: a 256-byte MAD (24-byte MAD header, then the CM data) in an RoCEv2 UD SEND to QP 1 with
// the GSI's well-known Q_Key. REQ, REP, RTU, REJ, DREQ and DREP are read and written at the
// standard's offsets; the fields an RC connection over RoCEv2 does not use (alternate paths, EE
// contexts, LIDs other than the permissive one) are written as zero and ignored when read.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "wire/fields.hpp"
#include "wire/reject.hpp"

namespace uet::wire {

inline constexpr std::size_t mad_size = 256;
inline constexpr std::size_t mad_header_size = 24;
inline constexpr std::uint32_t gsi_qpn = 1;
inline constexpr std::uint32_t gsi_qkey = 0x80010000u;  // the well-known Q_Key of QP 1
inline constexpr std::uint8_t cm_management_class = 0x07;
inline constexpr std::uint8_t cm_class_version = 2;
inline constexpr std::uint8_t mad_method_send = 0x03;

enum class cm_attribute : std::uint16_t {
    req = 0x0010,
    mra = 0x0011,
    rej = 0x0012,
    rep = 0x0013,
    rtu = 0x0014,
    dreq = 0x0015,
    drep = 0x0016,
};
// "REQ", "REP", ...; "UNKNOWN" for any other value.
const char* to_string(cm_attribute a) noexcept;

// The IBTA path MTU code (1 = 256 ... 5 = 4096) of a byte count, 0 for any other; and back.
constexpr std::uint8_t ib_mtu_code(std::uint32_t bytes) noexcept {
    for (std::uint8_t c = 1; c <= 5; ++c)
        if (bytes == (128u << c)) return c;
    return 0;
}
constexpr std::uint32_t ib_mtu_bytes(std::uint8_t code) noexcept {
    return code >= 1 && code <= 5 ? 128u << code : 0;
}

// An IPv4 address as the IPv4-mapped GID RoCEv2 uses (::ffff:a.b.c.d).
std::array<std::uint8_t, 16> ipv4_mapped_gid(std::uint32_t ip) noexcept;

// The union of the fields the six messages carry; each message reads and writes its own.
struct cm_message {
    cm_attribute attribute = cm_attribute::req;
    std::uint64_t transaction_id = 0;
    std::uint32_t local_comm_id = 0;
    std::uint32_t remote_comm_id = 0;             // all but REQ
    std::uint64_t service_id = 0;                 // REQ
    std::uint64_t local_ca_guid = 0;              // REQ, REP
    std::uint32_t local_qpn = 0;                  // REQ, REP (24 bits)
    std::uint32_t starting_psn = 0;               // REQ, REP (24 bits)
    std::uint8_t responder_resources = 0;         // REQ, REP
    std::uint8_t initiator_depth = 0;             // REQ, REP
    std::uint8_t remote_cm_response_timeout = 0;  // REQ (5 bits)
    std::uint8_t local_cm_response_timeout = 0;   // REQ (5 bits)
    std::uint8_t retry_count = 0;                 // REQ (3 bits)
    std::uint8_t rnr_retry_count = 0;             // REQ, REP (3 bits)
    std::uint8_t max_cm_retries = 0;              // REQ (4 bits)
    std::uint8_t path_mtu = 0;                    // REQ: ib_mtu_code
    std::uint16_t pkey = 0xffff;                  // REQ
    std::array<std::uint8_t, 16> local_gid{};     // REQ: primary path
    std::array<std::uint8_t, 16> remote_gid{};    // REQ: primary path
    std::uint8_t traffic_class = 0;               // REQ
    std::uint8_t hop_limit = 0;                   // REQ
    std::uint8_t sl = 0;                          // REQ (4 bits)
    std::uint8_t local_ack_timeout = 0;           // REQ (5 bits)
    std::uint8_t target_ack_delay = 0;            // REP (5 bits)
    std::uint8_t rejected_message = 0;            // REJ: 0 REQ, 1 REP, 2 other (2 bits)
    std::uint16_t reject_reason_code = 0;         // REJ
    std::uint32_t remote_qpn = 0;                 // DREQ (24 bits)
    // The message's private data: its first private_data_size(attribute) bytes are sent.
    std::array<std::uint8_t, 224> private_data{};
};

// Private data bytes each message carries (REQ 92, REP 196, RTU 224, REJ 148, DREQ 220,
// DREP 224); 0 for an attribute not handled here.
std::size_t private_data_size(cm_attribute a) noexcept;

// What uet writes at the start of the private data of REQ, REP and REJ, so that both ends
// check they run the same job and retransmission mode: magic "UETR" (4), version (1), mode
// (1: 0 go-back-N, 1 out-of-order), path MTU code (1: REP names the one the passive side
// chose), refusal (1: why a REJ was sent), job ID (4), all big-endian.
inline constexpr std::uint32_t uet_cm_magic = 0x55455452;
inline constexpr std::uint8_t uet_cm_version = 1;
enum class cm_refusal : std::uint8_t { none, not_uet, job, mode, mtu, not_listening };
const char* to_string(cm_refusal r) noexcept;
struct uet_cm_private {
    std::uint8_t mode = 0;
    std::uint8_t mtu_code = 0;
    cm_refusal refusal = cm_refusal::none;
    std::uint32_t job_id = 0;
};
void write_private(const uet_cm_private& p, cm_message& m) noexcept;
// false when the private data does not start with uet's magic and version.
bool read_private(const cm_message& m, uet_cm_private& out) noexcept;

// The 256-byte MAD of m; returns mad_size, or 0 when out is smaller or the attribute is not one
// of the six.
std::size_t encode(const cm_message& m, std::span<std::uint8_t> out) noexcept;
// Reads a MAD: the header must be a CM Send (base version 1, class 0x07, class version 2) of
// one of the six attributes.
reject_reason decode_cm(std::span<const std::uint8_t> mad, cm_message& out) noexcept;
void visit(const cm_message& m, field_visitor& v);
// One line, e.g. "CM REQ comm 0x1 qpn 0x000123 psn 5 mtu 4096".
void summarize(const cm_message& m, std::string& out);

}  // namespace uet::wire
