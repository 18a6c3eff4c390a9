// The RoCEv2 engine: RC queue pairs (lib/roce) tied to frames. Received frames are parsed,
// checked (IPv4, UDP port, BTH, extension headers, pad, ICRC) and handed to the QP they name;
// transmit() builds every QP's ACKs, READ responses and requests into frames with their ICRC.
// Sans-I/O: the time is passed in, and what carries the frames drives it as a frame_engine.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "cc/dcqcn.hpp"
#include "roce/completer.hpp"
#include "roce/delivery.hpp"
#include "roce/qp.hpp"
#include "roce/requester.hpp"
#include "roce_engine/cm.hpp"
#include "wire/eth.hpp"
#include "wire/frame.hpp"
#include "wire/frame_engine.hpp"
#include "wire/reject.hpp"
#include "wire/roce.hpp"

namespace uet::roce {

struct engine_config {
    wire::mac_address mac{};
    std::uint32_t ip = 0;            // host order
    std::uint16_t udp_port = 4791;   // RoCEv2's (IANA); tests may move it
    std::uint32_t max_qps = 64;      // at most 65536
    qp_limits qp;                    // every QP's sizes and retransmission mode
    std::uint8_t dscp = 26;          // requests and READ responses (ECT(0))
    std::uint8_t control_dscp = 48;  // ACKs, NAKs and CNPs (not ECT)
    std::size_t tx_burst = 32;       // frames per transmit() call at most
    bool udp_checksum = false;       // RoCEv2 NICs send 0: the ICRC covers the packet
    // DCQCN per QP: CE-marked data gets a CNP back (at most one per min_time_between_cnps),
    // and a CNP slows the QP that sent it (lib/cc/dcqcn.hpp). false: no CNPs, no pacing.
    bool dcqcn = false;
    cc::dcqcn_params dcqcn_params;
    // Per-packet spraying (out-of-order mode only, the constructor refuses it otherwise): the
    // packets the far end places wherever they arrive, WRITE_ONLY with its own RETH and READ
    // responses, each take a random UDP source port, so ECMP spreads them over the paths;
    // every other packet keeps its QP's port.
    bool spray = false;
    std::uint64_t seed = 1;  // QP numbers, initial PSNs and sprayed source ports
    cm_config cm;            // connect(), and REQs from peers
    // Zero-copy transmit, as a NIC DMAs from registered memory: a payload of at least
    // zero_copy_min bytes that zero_copy finds in registered memory leaves by reference
    // (tx_frame::payload, its pad and ICRC in tx_frame::tail), where the caller offered room and
    // no UDP checksum is wanted. nullptr: every payload is copied into the frame.
    payload_memory* zero_copy = nullptr;
    std::uint32_t zero_copy_min = 1;
};

// A QP's UDP source port is its ECMP path: the address vector's choice, or from its number.
constexpr std::uint16_t source_port(qpn_t qpn, std::uint16_t chosen) noexcept {
    return chosen != 0 ? chosen : static_cast<std::uint16_t>(0xc000 | (qpn & 0x3fff));
}

// Where connect() finds the peer: the address vector's entry.
struct connect_params {
    std::uint32_t peer_ip = 0;  // host order
    wire::mac_address peer_mac{};
    std::uint16_t udp_sport = 0;  // the QP's ECMP path; 0: from its number
};

struct engine_counters {
    std::uint64_t frames_rx = 0, bytes_rx = 0;
    std::uint64_t frames_tx = 0, bytes_tx = 0;
    std::array<std::uint64_t, wire::reject_reason_count> rejects{};
    std::array<std::uint64_t, roce_drop_count> drops{};  // before a QP took the packet
    std::uint64_t tx_dropped = 0;  // a frame larger than the room and the staging slot
    std::uint64_t cnps_sent = 0, cnps_received = 0;
    std::uint64_t paced = 0;  // transmit rounds in which a QP waited for its DCQCN rate

    std::uint64_t rejected(wire::reject_reason r) const noexcept {
        return rejects[static_cast<std::size_t>(r)];
    }
    std::uint64_t dropped(roce_drop d) const noexcept { return drops[static_cast<std::size_t>(d)]; }
};

class engine final : public frame_engine {
  public:
    engine(const engine_config& config, delivery_target& target);
    ~engine();
    engine(const engine&) = delete;
    engine& operator=(const engine&) = delete;

    // Throws std::invalid_argument for spray without the out-of-order mode.
    // ibv_create_qp: a QP in RESET, by its number; 0 when max_qps exist already.
    qpn_t create_qp(std::uint64_t context = 0);
    // ibv_destroy_qp: its work requests are dropped without completions, and its READ
    // responses with them (their holds go back to the target, drop_responses). Destroying the
    // engine gives back no holds: the target forgets those itself.
    bool destroy_qp(qpn_t qpn);
    // ibv_modify_qp (lib/roce/qp_fsm.hpp); an unknown QP is a bad transition.
    fsm_result modify_qp(qpn_t qpn, const qp_attr& attr, std::uint32_t mask);
    // rdma_connect: a new QP in INIT and a REQ to the peer's connection manager. The target
    // hears on_qp_event(established) when it reaches RTS, or rejected / error (retry_exc_err
    // when the peer never answered). 0 when every QP or connection entry is in use.
    qpn_t connect(const connect_params& to, std::uint64_t context, std::uint64_t now);
    // rdma_disconnect: a DREQ to the peer; the QP moves to ERR and its work requests flush.
    // false when the QP is not one the connection manager established.
    bool disconnect(qpn_t qpn, std::uint64_t now);
    // ibv_post_send.
    post_error post_send(qpn_t qpn, const send_wr& wr);
    // Send-side completions of every QP, oldest first per QP, with qp_num set.
    std::size_t poll_completions(std::span<work_completion> out);

    qp* find(qpn_t qpn) noexcept;
    const qp* find(qpn_t qpn) const noexcept;
    const engine_counters& counters() const noexcept { return counters_; }
    const engine_config& config() const noexcept { return cfg_; }
    const cm_counters& cm() const noexcept { return cm_.counters; }

    void receive_burst(std::span<const std::span<const std::uint8_t>> frames,
                       const wire::frame_rest* rests, std::uint64_t now) override;
    void receive_burst(std::span<const std::span<const std::uint8_t>> frames, std::uint64_t now) {
        receive_burst(frames, nullptr, now);
    }
    std::size_t transmit(std::uint64_t now, std::span<tx_frame> out) override;
    std::uint64_t next_deadline() const override;
    void stop_data() noexcept override { data_stopped_ = true; }

  private:
    bool takes_trailers() const noexcept override { return true; }
    void receive_one(std::span<const std::uint8_t> frame, std::uint64_t now);
    // A frame in three pieces (headers, payload, pad and ICRC: zero-copy transmit over
    // uet_memif) read where they lie; any other split is joined first.
    void receive_split(std::span<const std::uint8_t> frame, const wire::frame_rest& rest,
                       std::uint64_t now);
    // Parses a frame's Ethernet, IP and UDP headers: false (counted) when it is no RoCEv2
    // packet for this host.
    bool admit(std::span<const std::uint8_t> frame, wire::l2l4_view& v);
    void dispatch(const wire::l2l4_view& v, const wire::roce_packet& p, std::uint64_t now);
    // The connection manager's exchange (engine_cm.cpp).
    void on_cm_datagram(const wire::l2l4_view& v, const wire::roce_packet& p, std::uint64_t now);
    void on_req(const wire::cm_message& m, std::uint32_t ip, const wire::mac_address& mac,
                std::uint64_t now);
    void on_rep(const wire::cm_message& m, std::uint32_t ip);
    void on_rtu(const wire::cm_message& m, std::uint32_t ip);
    void on_rej(const wire::cm_message& m, std::uint32_t ip);
    void on_dreq(const wire::cm_message& m, std::uint32_t ip, const wire::mac_address& mac);
    void on_drep(const wire::cm_message& m, std::uint32_t ip);
    // A passive QP in RTR: to RTS on the RTU or on its first request.
    void establish(cm_entry& e, qp& q);
    void refuse(const wire::cm_message& m, std::uint32_t ip, const wire::mac_address& mac,
                std::uint16_t reason, wire::cm_refusal why);
    void cm_timers(std::uint64_t now);
    // What this end announces in a REQ or REP: its mode, job and path MTU.
    wire::uet_cm_private announce(path_mtu mtu) const noexcept;
    // Reports a QP that entered ERR during the call that ran `step`.
    template <typename Step>
    void watch_error(qp& q, Step&& step);
    void count_drop(roce_drop d) noexcept { ++counters_.drops[static_cast<std::size_t>(d)]; }
    bool has_work(const qp& q) const noexcept;
    // Builds one frame of `q` into out (its room if large enough, else a staging slot); its
    // length, 0 when it did not fit.
    template <typename Spec>
    std::size_t emit(const qp& q, const Spec& spec, bool data, tx_frame& out, std::size_t slot);
    struct frame_path {
        std::uint32_t ip;
        wire::mac_address mac;
        std::uint16_t udp_sport;
    };
    std::size_t emit_frame(const frame_path& to, const wire::roce_packet_spec& spec, bool data,
                           tx_frame& out, std::size_t slot);
    // Counts a frame of len bytes built at room (0: it did not fit, counted in tx_dropped) and
    // points out at it; len.
    std::size_t emitted(std::size_t len, std::span<std::uint8_t> room, tx_frame& out) noexcept;
    bool by_reference(std::span<const std::uint8_t> payload, const tx_frame& out) noexcept;
    // out's room when the frame fits it, else staging slot `slot`.
    std::span<std::uint8_t> room_for(std::size_t frame, tx_frame& out, std::size_t slot) noexcept;
    wire::frame_spec frame_spec_to(const frame_path& to, bool data) const noexcept;
    // A QP's frames start from its peer's headers: Ethernet, IPv4 and UDP, for its data (ECT(0),
    // dscp) and its control frames (not ECT, control_dscp), built when the peer is first seen.
    struct qp_headers {
        std::uint32_t ip = 0;
        wire::mac_address mac{};
        bool built = false;
        wire::udp_header_template data, control;
    };
    const qp_headers& headers_of(const qp& q) noexcept;
    // The UDP source port of q's packet: its QP's, or a sprayed one (engine_config::spray).
    std::uint16_t source_port_of(const qp& q, std::uint8_t opcode) noexcept;
    // Congestion control of one QP: its reaction point (paces what it sends) and notification
    // point (answers CE marks with CNPs).
    struct qp_cc {
        explicit qp_cc(const cc::dcqcn_params& p) : rp(p), np(p) {}
        cc::dcqcn_rp rp;
        cc::dcqcn_np np;
        bool cnp_due = false;
    };
    // A slot's QPNs: 0x100 + (qpn_offset_ + generation x qpn_stride_ + slot) mod qpn_span_. Its
    // next QP takes the next generation, so a QP created after one was destroyed never answers
    // to the old number.
    std::uint32_t slot_of_qpn(qpn_t qpn) const noexcept {
        std::uint32_t d = qpn - 0x100 - qpn_offset_;
        if (d >= qpn_span_) d += qpn_span_;  // below the offset: wrapped round
        return d & (qpn_stride_ - 1);
    }
    std::size_t slot_of(const qp& q) const noexcept { return slot_of_qpn(q.qpn); }
    qpn_t qpn_of_slot(std::uint32_t slot) const noexcept {
        return 0x100 + (qpn_offset_ + generation_[slot] * qpn_stride_ + slot) % qpn_span_;
    }
    // Whether DCQCN holds the QP's data back at `now`.
    bool paced(qp_cc* cc, std::uint64_t now) const noexcept;

    engine_config cfg_;
    delivery_target& target_;
    std::vector<std::unique_ptr<qp>> qps_;  // by slot (slot_of)
    std::uint32_t in_use_ = 0;              // slots from here on are empty
    // The slots the per-call passes (timers, transmit, completions, deadline) walk.
    std::span<std::unique_ptr<qp>> live() noexcept { return std::span(qps_).first(in_use_); }
    std::span<const std::unique_ptr<qp>> live() const noexcept {
        return std::span(qps_).first(in_use_);
    }
    std::vector<std::unique_ptr<qp_cc>> cc_;  // by slot, with dcqcn
    std::vector<qp_headers> headers_;         // by slot
    std::uint32_t qpn_offset_ = 0;            // random, below qpn_span_
    std::uint32_t qpn_stride_ = 1;            // max_qps rounded up to a power of two
    std::uint32_t qpn_span_ = 1;              // a multiple of qpn_stride_
    std::vector<std::uint32_t> generation_;   // by slot
    std::uint32_t rr_ = 0;                    // the QP transmit() starts with
    std::uint16_t ip_id_ = 0;
    rng spray_rng_;
    std::uint64_t now_ = 0;
    bool data_stopped_ = false;
    std::vector<std::uint8_t> staging_;
    std::vector<std::uint8_t> joined_;                    // a received frame in two pieces, joined
    std::uint32_t reference_region_ = no_payload_region;  // by_reference's find
    engine_counters counters_;
    connection_manager cm_;
    std::uint32_t cm_psn_ = 0;  // the GSI's send PSN
};

}  // namespace uet::roce
