// frame_builder's bodies that its transmit callers build per frame, visible where they are called
// so that they stay inline there: included by the transmit translation units only.
#pragma once

#include <cstring>

#include "core/small_copy.hpp"
#include "engine/frame_builder.hpp"

namespace uet {

inline std::span<std::uint8_t> frame_builder::data_frame_buffer(const tx_frame& f,
                                                                std::size_t staged) {
    // Into the caller's room where any frame fits there: no copy of the frame after this.
    const bool in_room = f.room.size() >= staging_frame_size_;
    by_reference_ = in_room && zero_copy_ != nullptr;
    referenced_ = {};
    referenced_region_ = no_payload_region;
    return copied_frame_buffer(f, staged);
}

inline wire::pds_rud_rod_request frame_builder::request_pds_header(const pds::pdc& p,
                                                                   const tx_entry& e, bool retx,
                                                                   bool ar) {
    wire::pds_rud_rod_request h;
    h.type = p.ordered ? wire::pds_type::rod : wire::pds_type::rud;
    h.retx = retx;
    h.ar = ar;
    h.syn = p.syn();
    h.psn = e.psn;
    h.spdcid = p.local_id;
    // Until the first ACK the target does not know our start PSN: each SYN packet says how far
    // it is from it (the window is below 4096, so it fits the 12 bits).
    if (h.syn)
        h.psn_offset = static_cast<std::uint16_t>((e.psn - p.start_psn) & 0xfff);
    else
        h.dpdcid = p.remote_id;
    return h;
}

// A frame of a run after its first (at `first`, ip_sum its wire::ipv4_sum_rest): build_frame_with
// and build_next_request_frame's bytes for it, without a UDP checksum; payload empty where it
// stays in registered memory (the headers, copied from the first's, count it all the same).
inline std::size_t frame_builder::copy_run_frame(const std::uint8_t* first, std::uint32_t ip_sum,
                                                 std::uint16_t entropy, psn_t psn, bool ar,
                                                 std::uint32_t offset,
                                                 std::span<const std::uint8_t> payload,
                                                 std::span<std::uint8_t> buf) {
    constexpr std::size_t header = wire::plain_request_template::header_bytes;
    if (buf.size() < header + payload.size()) return 0;
    wire::write_next_request_frame(buf.data(), first, ip_sum, next_ip_id(), entropy, psn, ar,
                                   offset);
    if (!payload.empty()) std::memcpy(buf.data() + header, payload.data(), payload.size());
    return header + payload.size();
}

inline bool frame_builder::same_single_packet_headers(const ses::tx_message& a,
                                                      const ses::tx_message& b) noexcept {
    const ses::op_fields &x = a.fields, &y = b.fields;
    return a.length == b.length && x.opcode == y.opcode && x.hd == y.hd && x.job_id == y.job_id &&
           x.pid_on_fep == y.pid_on_fep && x.resource_index == y.resource_index &&
           x.initiator == y.initiator && x.request_length == y.request_length;
}

// A one-packet message's frame after the run's first (at `first`, ip_sum its
// wire::ipv4_sum_rest, a message with the same headers): build_pdc_packet's bytes for it.
inline std::size_t frame_builder::copy_single_packet_run_frame(const std::uint8_t* first,
                                                               std::uint32_t ip_sum,
                                                               std::uint16_t entropy, psn_t psn,
                                                               bool ar, const ses::tx_message& m,
                                                               std::span<std::uint8_t> buf) {
    constexpr std::size_t header = wire::plain_request_template::header_bytes;
    if (buf.size() < header + m.length) return 0;
    const wire::single_packet_request_fields own{m.message_id, m.fields.buffer_offset,
                                                 m.fields.memory_key, m.fields.header_data};
    wire::write_next_single_packet_request_frame(buf.data(), first, ip_sum, next_ip_id(), entropy,
                                                 psn, ar, own);
    copy_payload(buf.data() + header, m.data, m.length);
    return header + m.length;
}

// A run's frame built (len bytes in buf) goes out in f: 1, or 0 for a frame that could not be
// built (counted, not handed out, as transmit() does).
inline std::size_t frame_builder::hand_out(tx_frame& f, std::span<std::uint8_t> buf,
                                           std::size_t len) {
    if (len == 0) return 0;
    f.payload = referenced_;
    f.payload_region = referenced_region_;
    f.tail_length = 0;
    f.data = buf.first(len);
    return 1;
}

}  // namespace uet
