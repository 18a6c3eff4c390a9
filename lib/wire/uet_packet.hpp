// The whole UET header stack after UDP (or after IP, protocol 253): optional entropy header,
// optional TSS, the PDS header, the SES header it names, then the payload.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "wire/fields.hpp"
#include "wire/reject.hpp"
#include "wire/uet_pds.hpp"
#include "wire/uet_ses.hpp"
#include "wire/uet_tss.hpp"

namespace uet::wire {

struct uet_packet {
    std::optional<entropy_header> entropy;  // present only when decoded with has_entropy_header
    std::optional<tss_header> tss;
    pds_header pds;  // not decoded (left as it was) when TSS is present: it is ciphertext
    // Absent for CTRL, when next_hdr is none, and when TSS is present.
    std::optional<ses_header> ses;
    std::span<const std::uint8_t> payload;  // bytes after the last decoded header (ciphertext+ICV
                                            // when TSS: everything after the TSS header)
};

// Decodes in order; never reads past in. After a TSS header everything from the PDS header on is
// ciphertext (lib/tss decrypts it): the rest, which must hold at least the 16-byte ICV, becomes
// the payload and no PDS or SES header is decoded.
// On an error out is left partly written: use it only when none is returned.
reject_reason decode_uet(std::span<const std::uint8_t> in, bool has_entropy_header,
                         uet_packet& out) noexcept;

// Every header in order (entropy, tss, pds, ses and its extensions).
void visit(const uet_packet& p, field_visitor& v);

// What the dissector path (uet-dump, wire::dissect) decoded of a UET packet, malformed or not.
// The engine uses decode_uet, which refuses what it cannot use; this shows what it can.
struct uet_dissection {
    uet_packet packet;         // entropy, tss and ses are set only when they decoded
    bool pds_decoded = false;  // packet.pds holds the PDS header
    // The SES payload_length, when it declares more bytes than the packet holds after the headers
    // (packet.payload): decode_uet rejects that with bad_ses_payload_length.
    std::optional<std::uint32_t> declared_payload;
};

// Decodes header after header as decode_uet does and keeps each one that decoded: on an error
// out holds every header before the fault (and a request whose extension failed, without it).
// A payload_length beyond the packet is not an error here: out.declared_payload flags it.
reject_reason dissect_uet(std::span<const std::uint8_t> in, bool has_entropy_header,
                          uet_dissection& out) noexcept;

// The headers out holds, in order; and a summary line of them (as summarize(uet_packet)).
void visit(const uet_dissection& d, field_visitor& v);
void summarize(const uet_dissection& d, std::string& out);

// One tcpdump-style line, e.g.
//   "RUD SYN AR psn 1000 spdcid 5 dpdcid 0 | SEND std msg 7 off 0 len 4096 job 42 payload 4052"
void summarize(const uet_packet& p, std::string& out);

// What encode_uet writes, in order. Headers are written as given: the caller keeps the PDS
// next_hdr consistent with ses (next_hdr_for(ses) gives the value). With TSS only the entropy
// and TSS headers are written, then the payload: the already-encrypted bytes (PDS header on,
// ciphertext + ICV); pds and ses are ignored.
struct uet_packet_spec {
    std::optional<entropy_header> entropy;
    std::optional<tss_header> tss;
    pds_header pds;
    std::optional<ses_header> ses;
    std::span<const std::uint8_t> payload;
};

std::size_t encoded_size(const uet_packet_spec& s) noexcept;
// Writes the headers then the payload bytes; returns the bytes written, 0 if out is too small.
std::size_t encode_uet(const uet_packet_spec& s, std::span<std::uint8_t> out) noexcept;
// Writes only the headers, leaving room for the payload (the caller copies it, e.g. with
// checksum_copy); returns the header bytes, 0 if out cannot hold headers and payload.
std::size_t encode_uet_headers(const uet_packet_spec& s, std::span<std::uint8_t> out) noexcept;

}  // namespace uet::wire
