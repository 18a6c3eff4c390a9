// Bytes on the wire: Ethernet/IPv4/UDP around a UET header stack, built into a room the caller
// gives or into a staging slot. Holds what building frames remembers from one frame to the next:
// the IPv4 id, the headers of the last packet sent from inside a message (the next one of the
// same message on the same PDC is those with a few fields changed), the staging slots, and the
// payload the frame being built leaves in registered memory (zero-copy). What a frame says comes
// from the objects the caller hands in (the peer's headers, the PDC, the message pool).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "core/rng.hpp"
#include "engine/engine.hpp"
#include "engine/message_pool.hpp"
#include "engine/peer_table.hpp"
#include "pds/pdc.hpp"
#include "pds/rudi.hpp"
#include "ses/message.hpp"
#include "wire/plain_request.hpp"
#include "wire/uet_packet.hpp"

namespace uet {

// The SES header of a plain request (no extensions): segment seg of m, written into the frame
// by build_request_frame straight from the message.
struct standard_header_of {
    const ses::tx_message& m;
    ses::segment seg;
};

class frame_builder {
  public:
    explicit frame_builder(const engine_config& cfg);

    std::size_t build_frame(const peer_state& to, std::uint16_t entropy, bool data,
                            const wire::uet_packet_spec& spec, std::span<std::uint8_t> out);
    // A request inside a message from tx_template_ (build_pdc_packet checks that it applies).
    std::size_t build_next_request_frame(const peer_state& to, std::uint16_t entropy,
                                         const wire::pds_rud_rod_request& pds,
                                         std::uint32_t message_offset,
                                         std::span<const std::uint8_t> payload,
                                         std::span<std::uint8_t> out);
    // The common data packet (a RUD/ROD request and a SES standard request) written straight
    // from its two headers: the same bytes as build_frame, without the header variants. A
    // request without extensions needs only the 44 fixed bytes (standard_header_of).
    template <class SesHeader>
    std::size_t build_request_frame(const peer_state& to, std::uint16_t entropy,
                                    const wire::pds_rud_rod_request& pds, const SesHeader& ses,
                                    std::span<const std::uint8_t> payload,
                                    std::span<std::uint8_t> out);

    // A packet of p (to is its peer), data from msgs or a CLOSE.
    std::size_t build_pdc_packet(const peer_state& to, pds::pdc& p, const message_pool& msgs,
                                 tx_entry& e, bool retx, bool ar, std::span<std::uint8_t> buf);
    // The PDS request header of a data packet (next_hdr left to the caller).
    static wire::pds_rud_rod_request request_pds_header(const pds::pdc& p, const tx_entry& e,
                                                        bool retx, bool ar);
    std::size_t build_close(const peer_state& to, pds::pdc& p, tx_entry& e, bool retx,
                            std::span<std::uint8_t> buf);
    std::size_t build_general_request(const peer_state& to, pds::pdc& p, const tx_entry& e,
                                      wire::pds_rud_rod_request h, const ses::tx_message& m,
                                      const ses::segment& seg,
                                      std::span<const std::uint8_t> payload,
                                      std::span<std::uint8_t> buf);
    std::size_t build_rudi_request(const peer_table& peers, const message_pool& msgs, rng& random,
                                   pds::rudi_packet& r, bool retx, std::span<std::uint8_t> buf);

    // Where the next data frame is built: f's room where any frame fits (zero-copy possible),
    // else staging slot `staged`. Clears what the last frame left in referenced_
    // (frame_builder_inline.hpp).
    std::span<std::uint8_t> data_frame_buffer(const tx_frame& f, std::size_t staged);
    // data_frame_buffer's place for a frame that takes no payload by reference (a run's copied
    // frame), without its by-reference state: nothing to clear or to read back after the copy.
    std::span<std::uint8_t> copied_frame_buffer(const tx_frame& f, std::size_t staged) noexcept {
        return f.room.size() >= staging_frame_size_
                   ? f.room.first(staging_frame_size_)
                   : std::span<std::uint8_t>(&staging_[staged * staging_frame_size_],
                                             staging_frame_size_);
    }
    // Whether a data payload of `bytes` may leave by reference (zero-copy): the hook is set and
    // the size is one it is asked about (engine_config::reference_min_bytes). Others are copied.
    bool may_reference(std::size_t bytes) const noexcept {
        return zero_copy_ != nullptr && bytes != 0 && bytes >= reference_min_bytes_;
    }

    // ---- transmit runs (frame_builder_inline.hpp) ----
    // Whether one-packet messages a and b have the same headers on one PDC but for their own
    // fields (wire::single_packet_request_fields).
    static bool same_single_packet_headers(const ses::tx_message& a,
                                           const ses::tx_message& b) noexcept;
    // One frame of a run each, inline in their run.
    std::size_t copy_single_packet_run_frame(const std::uint8_t* first, std::uint32_t ip_sum,
                                             std::uint16_t entropy, psn_t psn, bool ar,
                                             const ses::tx_message& m, std::span<std::uint8_t> buf);
    std::size_t copy_run_frame(const std::uint8_t* first, std::uint32_t ip_sum,
                               std::uint16_t entropy, psn_t psn, bool ar, std::uint32_t offset,
                               std::span<const std::uint8_t> payload, std::span<std::uint8_t> buf);
    std::size_t hand_out(tx_frame& f, std::span<std::uint8_t> buf, std::size_t len);

    // ---- the template and the by-reference state ----
    // Whether the template is that of message `message` on PDC pdc, with packets of `length`.
    bool template_names(std::uint32_t pdc, std::uint32_t message,
                        std::uint32_t length) const noexcept {
        const tx_headers_template& t = tx_template_;
        return t.pdc == pdc && t.message == message && t.length == length;
    }
    // The slot's next message, or the PDC's next user, is not the template's.
    void forget_message(std::uint32_t index) noexcept {
        if (tx_template_.message == index) tx_template_.message = none;
    }
    void forget_pdc(std::uint32_t index) noexcept {
        if (tx_template_.pdc == index) tx_template_.pdc = none;
    }
    // Whether the frame being built is in the caller's room with zero-copy on.
    bool by_reference() const noexcept { return by_reference_; }
    // The payload the last frame left in registered memory, and its region.
    std::span<const std::uint8_t> referenced() const noexcept { return referenced_; }
    std::uint32_t referenced_region() const noexcept { return referenced_region_; }
    void set_referenced(std::span<const std::uint8_t> payload, std::uint32_t region) noexcept {
        referenced_ = payload;
        referenced_region_ = region;
    }
    // transmit() is done building into the caller's rooms.
    void end_call() noexcept { by_reference_ = false; }

  private:
    // Both: L2-L4 around the UET headers write_headers puts at the start of the span it is
    // given (returning their size, 0 if they do not fit), then the payload (defined in
    // frame_builder.cpp only).
    template <class WriteHeaders>
    std::size_t build_frame_with(const peer_state& to, std::uint16_t entropy, bool data,
                                 std::span<const std::uint8_t> payload, std::span<std::uint8_t> out,
                                 WriteHeaders&& write_headers);

    // The UET headers of the last packet sent from inside a message (neither its first nor its
    // last), for the next one of the same message on the same PDC.
    struct tx_headers_template {
        wire::request_headers_template headers;
        std::uint32_t pdc = none, message = none, length = 0;
    };
    tx_headers_template tx_template_;
    std::uint16_t ip_id_ = 0;
    // Zero-copy: set by data_frame_buffer() while a data frame is built into the caller's room;
    // build_frame leaves a referenced payload in referenced_ (and its region) for that frame.
    bool by_reference_ = false;
    std::span<const std::uint8_t> referenced_;
    std::uint32_t referenced_region_ = no_payload_region;
    std::size_t staging_frame_size_ = 0;
    std::unique_ptr<std::uint8_t[]> staging_;  // tx_burst data frames
    // Copies of the configuration (engine_core::cfg has them all).
    payload_memory* zero_copy_;
    std::uint32_t reference_min_bytes_;
    std::uint32_t ip_;
    bool udp_checksum_;
    // 1: each frame's IPv4 identification is the next; 0 (path_ids): every frame's is 0, so
    // that a packet no switch stamped reads as carrying no path ID.
    std::uint16_t ip_id_step_ = 1;
    std::uint16_t next_ip_id() noexcept {
        const std::uint16_t id = ip_id_;
        ip_id_ += ip_id_step_;
        return id;
    }
};

}  // namespace uet
