// The receive pipeline: frames read (header prediction, runs of one message or of one-packet
// messages), taken as a run where one can be, else packet by packet to the target side (the PDC,
// reassembly, the ACK policy). Its state is the decoded headers of the frame being read and the
// run being taken. rx_read.cpp reads, rx_take.cpp takes runs, rx_target.cpp takes one packet;
// what is not a data packet for a target PDC goes to rx_control.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "engine/engine.hpp"
#include "engine/engine_core.hpp"
#include "engine/rx_context.hpp"
#include "pds/pdc.hpp"
#include "ses/reassembly.hpp"
#include "wire/frame.hpp"
#include "wire/plain_request.hpp"
#include "wire/uet_fep.hpp"
#include "wire/uet_packet.hpp"

namespace uet {

class engine_impl;

// Responses are reassembled under (peer, mode | response_key_bit, request id): the ids of the
// requests a peer sends us and of the responses to ours are separate spaces.
inline constexpr std::uint8_t response_key_bit = 4;

// A RUD_CC / ROD_CC request is a request plus a credit target.
wire::pds_rud_rod_request as_request(const wire::pds_rud_rod_cc_request& c);

class rx_pipeline {
  public:
    // ---- read (rx_read.cpp) ----
    // rests: nullptr, or one per frame (frames in two pieces).
    // One frame is a burst of one.
    void receive_burst(engine_impl& e, std::span<const std::span<const std::uint8_t>> frames,
                       const wire::frame_rest* rests, std::uint64_t now);

    // A data packet's SES part: its header, checked by place(), or (wire::read_plain_request's
    // path) the segment checked already.
    struct rx_ses {
        const wire::ses_header* header = nullptr;
        const ses::rx_segment* checked = nullptr;
        std::span<const std::uint8_t> payload;
    };
    static rx_ses ses_of(const wire::uet_packet& pkt) noexcept {
        return {pkt.ses ? &*pkt.ses : nullptr, nullptr, pkt.payload};
    }

    // ---- one packet at the target (rx_target.cpp) ----
    void on_trimmed(engine_impl& e, const rx_context& rx, std::span<const std::uint8_t> l4);
    void on_request(engine_impl& e, const rx_context& rx, const wire::pds_rud_rod_request& h,
                    const rx_ses& in, const std::uint32_t* credit_target = nullptr);
    // target: the PDC a RUD/ROD packet came on (answers in ACKs).
    // Into reassembly (and, for a WRITE, the region): the SES header checked here unless it
    // comes checked (the common data packet does, and then no segment is built and cleared).
    bool place(engine_impl& e, const rx_context& rx, delivery_mode mode, const rx_ses& in,
               bool remember, bool single_packet, ses::place_result& result,
               pds::pdc* target = nullptr) {
        return in.checked
                   ? place_checked(e, rx, mode, *in.checked, in.payload, remember, single_packet,
                                   result, target)
                   : place_unchecked(e, rx, mode, in, remember, single_packet, result, target);
    }

  private:
    // ---- read (rx_read.cpp) ----
    void receive_one(engine_impl& e, std::span<const std::uint8_t> frame);
    bool read_one_plain(engine_impl& e, std::span<const std::uint8_t> frame);
    // Whether a plain request read from a frame is one the pipeline takes: ours, and not
    // trimmed (a trimmed one goes to the general path, which NACKs it).
    static bool takes_plain(const engine_core& core, const wire::plain_request& f) noexcept {
        return f.dst_ip == core.cfg.ip && f.dst_port == core.cfg.udp_port &&
               f.dscp != core.cfg.trim_dscp && f.ses.pid_on_fep == core.cfg.pid_on_fep;
    }
    // The PIDonFEP of a PDC packet's sender: its SPDCID's top bits (engine_config::fep_pids).
    static std::uint16_t pid_of_spdcid(const engine_core& core, std::uint16_t spdcid) noexcept {
        return core.cfg.fep_pids ? wire::pid_of_id(spdcid) : 0;
    }
    // The PIDonFEP of a frame's sender, from its UET header (l4: the UDP payload) as far as it
    // tells without decoding: a PDC packet's SPDCID; 0 for the others (RUDI and UUD requests
    // say theirs in their SES header, read once decoded: source_pid_of_request).
    static std::uint16_t source_pid(const engine_core& core,
                                    std::span<const std::uint8_t> l4) noexcept;
    static std::uint16_t source_pid_of_request(const engine_core& core,
                                               const wire::uet_packet& pkt) noexcept;
    // A request's SES header names our PIDonFEP (responses and packets without one name none).
    static bool names_our_pid(const engine_core& core, const wire::uet_packet& pkt) noexcept;
    // A data packet of a run: what differs from the packet before it.
    struct run_packet {
        wire::pds_rud_rod_request pds;
        ses::segment seg;
        std::uint32_t bytes = 0;  // the frame's payload (seg.length and any padding)
        std::uint16_t entropy = 0;
        std::uint16_t ip_id = 0;
        bool ce = false;
    };
    static constexpr std::size_t max_run = 32;
    // What a batch's packets are: the next packets of one message, or one-packet messages.
    enum class batch_kind : std::uint8_t { message, single_packet };
    // The batch read at the front of a burst: its kind and how many frames (0: none).
    struct rx_batch {
        batch_kind kind;
        std::size_t n;
    };
    std::size_t receive_run(engine_impl& e, std::span<const std::span<const std::uint8_t>> frames,
                            const wire::frame_rest* rests);
    rx_batch read_batch(engine_impl& e, std::span<const std::span<const std::uint8_t>> frames,
                        const wire::frame_rest* rests);
    template <batch_kind K>
    std::size_t check_batch(const engine_core& core, std::size_t predicted);
    // Packet i's checked segment in a batch of one-packet messages: the batch's, with the
    // message's own fields. Valid until the next call.
    const ses::rx_segment& batch_segment(std::size_t i) noexcept {
        const wire::next_request_fields& x = batch_fields_[i];
        ses::rx_segment& s = single_packet_segment_;
        s.message_id = x.message_id;
        s.fields.buffer_offset = x.buffer_offset;
        s.fields.memory_key = x.memory_key;
        s.fields.header_data = x.header_data;  // a one-packet message is its first packet
        return s;
    }

    // ---- runs taken (rx_take.cpp) ----
    pds::pdc* batch_target(engine_impl& e, const rx_context& rx, std::size_t n);
    bool take_batch(engine_impl& e, const rx_context& rx, rx_batch b);
    inline bool place_batch_message(engine_impl& e, const rx_context& rx, pds::pdc& p,
                                    delivery_mode mode, std::size_t n);
    inline void place_batch_single(engine_impl& e, const rx_context& rx, pds::pdc& p,
                                   delivery_mode mode, std::size_t n);
    void write_batch(engine_impl& e, const rx_context& rx, std::uint32_t slot, std::size_t n);
    void accept_batch(engine_impl& e, pds::pdc& p, const rx_context& rx, std::size_t n);
    void receive_run_one_by_one(engine_impl& e, const rx_context& rx, rx_batch b);
    // The run's context with packet i's entropy and CE mark.
    rx_context run_context(const rx_context& rx, std::size_t i) const noexcept {
        rx_context at = rx;
        at.entropy = run_[i].entropy;
        at.ip_id = run_[i].ip_id;
        at.ce = run_[i].ce;
        return at;
    }

    // ---- one packet at the target (rx_target.cpp) ----
    void on_request_from_new_source(engine_impl& e, const rx_context& rx,
                                    const wire::pds_rud_rod_request& h, const rx_ses& in,
                                    const std::uint32_t* credit_target);
    // A request packet the PDC accepted and placed: into its window, and acknowledged now or
    // later by the ACK policy. A packet that completed its message is acknowledged at the next
    // transmit() as if it asked (AR): the application may see the message and stop progressing
    // (manual progress) while its peer waits for that ACK, or for the answer it carries.
    void on_accepted(engine_impl& e, pds::pdc& p, const wire::pds_rud_rod_request& h,
                     std::uint32_t bytes, bool created, bool completed, const rx_context& rx);
    pds::pdc* target_for(engine_impl& e, const rx_context& rx, const wire::pds_rud_rod_request& h,
                         bool& created);
    // The open target PDC a request without SYN names; nullptr (nothing counted) if none.
    pds::pdc* established_target(engine_impl& e, const rx_context& rx,
                                 const wire::pds_rud_rod_request& h);
    void reopen_if_forged_close(engine_impl& e, pds::pdc& p, psn_t psn);
    bool place_unchecked(engine_impl& e, const rx_context& rx, delivery_mode mode, const rx_ses& in,
                         bool remember, bool single_packet, ses::place_result& result,
                         pds::pdc* target);
    bool place_checked(engine_impl& e, const rx_context& rx, delivery_mode mode,
                       const ses::rx_segment& seg, std::span<const std::uint8_t> payload,
                       bool remember, bool single_packet, ses::place_result& result,
                       pds::pdc* target);
    // The reassembly key of a data packet's message, and whether its payload goes to the region
    // the placement hook names rather than into a reassembly buffer.
    static ses::message_key message_key_of(const rx_context& rx, delivery_mode mode,
                                           const ses::rx_segment& seg) noexcept {
        auto key_mode = static_cast<std::uint8_t>(mode);
        if (seg.fields.response) key_mode |= response_key_bit;
        return {rx.peer, key_mode, seg.message_id};
    }
    static bool placed_externally(const engine_core& core, const ses::rx_segment& seg) noexcept {
        return core.places_writes && !seg.fields.response &&
               seg.fields.opcode == wire::ses_opcode::write;
    }
    void place_write(engine_impl& e, const rx_context& rx, const ses::rx_segment& seg,
                     std::span<const std::uint8_t> payload, std::uint32_t slot);

    // ---- state ----
    wire::plain_request_template rx_template_;  // the last data frame, for the next
    ses::rx_segment rx_segment_;                // the segment of the data frame being received ...
    bool rx_segment_of_template_ = false;       // ... checked in full from rx_template_'s frame
    std::array<run_packet, max_run> run_;       // the run receive_run() is taking
    std::array<const std::uint8_t*, max_run> run_payloads_{};
    // The fields each packet of the batch has of its own, as read; for one-packet messages, the
    // segment their template's reading checked, which all of them share but for those fields
    // (batch_segment()).
    std::array<wire::next_request_fields, max_run> batch_fields_;
    ses::rx_segment single_packet_segment_;
    // The decoded headers of the frame receive_one() is handling. Members, not locals: fresh ones
    // are zeroed on every frame (432 bytes); the decoders reset what they use.
    wire::l2l4_view rx_l2_;
    wire::uet_packet rx_pkt_;
    wire::plain_request rx_plain_;
    // A frame in two pieces read outside a run, joined (receive_burst with rests).
    std::array<std::uint8_t, 16384> joined_;
};

// What is not a data packet for a target PDC: ACKs, NACKs and CTRL packets, and the dispatch of
// a decoded packet by its PDS header. No state of its own.
class rx_control {
  public:
    static void dispatch(engine_impl& e, const rx_context& rx, const wire::uet_packet& pkt);
    static void on_ctrl(engine_impl& e, const rx_context& rx, const wire::pds_ctrl& h);
    static void on_ack(engine_impl& e, const rx_context& rx, const wire::pds_ack_cc& h,
                       const wire::uet_packet& pkt);
    static void on_nack(engine_impl& e, const rx_context& rx, const wire::pds_nack& h);
};

}  // namespace uet
