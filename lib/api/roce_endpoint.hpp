// The roce_rc endpoint: the public API over RoCEv2 RC queue pairs (lib/roce_engine). One QP per
// peer, connected by the engine's connection manager on the first post to an address-vector
// entry; the posts are work requests on it. Every SEND starts with a 16-byte message header
// (kind, length, tag: docs/wire-format.md) so that the target can match and size a receive at the
// first packet. Messages that arrive before their receive wait in a bounded arena; with the arena
// full the target answers RNR and the sender's QP tries again later, as verbs does.
//
// With qp_sched.qps > 1 a peer's connection is that many QPs, each its own UDP source port (its
// own ECMP path): RDMA WRITEs and READs are spread over them by the connection's scheduler
// (lib/qp_sched), split into subchunks that each go as a work request of their own and merge
// back into the request's one completion; SENDs and atomics go on the first QP, in order. The
// completions of a peer's requests are given in posting order, as one QP gives them.
//
// Split: roce_endpoint.cpp (set-up, close, progress, completions, errors), roce_post.cpp (what
// the application posts), roce_rx.cpp (the delivery target: what arrives).
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "api/api_impl.hpp"
#include "api/region_holds.hpp"
#include "qp_sched/qp_sched.hpp"
#include "roce_engine/engine.hpp"

namespace uet::detail {

// ---- the message header at the start of every SEND ----
inline constexpr std::uint32_t roce_header_bytes = 16;
struct roce_header {
    bool tagged = false;
    std::uint32_t length = 0;  // of the message after the header
    std::uint64_t tag = 0;
};
void write_roce_header(std::uint8_t* to, const roce_header& h) noexcept;
// false when fewer than 16 bytes came or they are no header of ours.
bool read_roce_header(std::span<const std::uint8_t> from, roce_header& out) noexcept;

// The source a receive's rule compares: the sender's address-vector entry, or one no entry has.
inline std::uint32_t roce_source_of(peer_addr from) noexcept {
    return from == any_peer ? ses::any_source - 1 : static_cast<std::uint32_t>(from);
}

// The RoCE engine's settings for an endpoint: what the network prepared (address, MAC, seed,
// checksums) and the endpoint's attributes. mtu: the fabric's payload MTU.
roce::engine_config roce_config_for(const engine_config& prepared, const endpoint_attr& attr,
                                    std::uint32_t mtu, std::uint32_t qps_per_connection);
// Why attr cannot open a roce_rc endpoint, naming the field; empty when it can.
std::string roce_refusal(const endpoint_attr& attr);
// The connection's scheduler settings: attr's fields over the environment's NCCL variables over
// the defaults. Empty on success, else what is wrong, naming the field or the variable.
std::string resolve_qp_sched(const qp_sched_attr& attr, qp_sched::params& out);

// A work completion's status as the application sees it (docs/api.md). connected: the QP had
// reached RTS, so that a retry limit is the peer stopping rather than never answering.
errc errc_of(roce::wc_status s, bool connected) noexcept;
std::string_view detail_of(roce::wc_status s) noexcept;

class roce_endpoint final : public endpoint_base, public roce::delivery_target {
  public:
    roce_endpoint(std::shared_ptr<domain_impl> d, std::shared_ptr<cq_impl> c,
                  std::shared_ptr<av_impl> a, const endpoint_attr& attr,
                  const roce::engine_config& rc, const qp_sched::params& sched);
    ~roce_endpoint() override;

    // ---- posting (roce_post.cpp) ----
    std::error_code send(peer_addr to, std::span<const std::byte> buf, bool tagged,
                         std::uint64_t tag, void* context, bool inject, bool silent);
    std::error_code send_list(peer_addr to, std::span<const send_work> list, bool tagged,
                              std::size_t& posted);
    std::error_code recv(std::span<std::byte> buf, bool tagged, std::uint64_t tag,
                         std::uint64_t ignore, void* context, peer_addr from, bool multi);
    std::error_code recv_list(std::span<const recv_work> list, bool tagged, peer_addr from,
                              std::size_t& posted);
    std::error_code rma(op_kind kind, peer_addr peer, const std::byte* src, std::byte* dst,
                        std::size_t len, std::uint64_t offset, std::uint64_t key, bool with_data,
                        std::uint64_t data, void* context, bool silent);
    std::error_code atomic(peer_addr to, atomic_op aop, atomic_type type,
                           std::span<const std::byte> operand, std::span<std::byte> result,
                           const std::byte* compare, bool fetching, bool cas, std::uint64_t offset,
                           std::uint64_t key, void* context, bool silent);

    // ---- endpoint_base (roce_endpoint.cpp) ----
    bool process(std::uint64_t now) override;
    bool process() override;
    frame_engine* frames() noexcept override { return eng_.get(); }
    void close() noexcept override;
    void add_engine_counters(endpoint_counters& c) const noexcept override;
    std::vector<qp_counters> queue_pairs(peer_addr peer) const;

    // ---- roce::delivery_target (roce_rx.cpp) ----
    bool take_receive(roce::qp& q, std::span<const std::uint8_t> first_payload,
                      roce::recv_slot& out) override;
    void receive_done(roce::qp& q, std::uint64_t cookie, std::uint32_t length, bool with_imm,
                      std::uint32_t imm, roce::wc_status status) override;
    roce::remote_memory place_write(roce::qp& q, std::uint32_t rkey, std::uint64_t va,
                                    std::uint32_t length) override;
    std::uint8_t* write_packet_at(roce::qp& q, std::uint32_t rkey, std::uint64_t va,
                                  std::uint32_t length) override;
    void remote_data(roce::qp& q, std::uint32_t imm, std::uint32_t length) override;
    roce::remote_memory read_source(roce::qp& q, std::uint32_t rkey, std::uint64_t va,
                                    std::uint32_t length) override;
    void read_done(roce::qp& q, std::uint32_t hold) override;
    roce::atomic_outcome atomic(roce::qp& q, std::uint32_t rkey, std::uint64_t va,
                                roce::wr_opcode op, std::uint64_t swap_add,
                                std::uint64_t compare) override;
    void on_qp_event(roce::qp& q, roce::qp_event e, std::uint16_t detail) override;

  private:
    // One QP of ours, active (we connected) or passive (the peer did).
    struct connection {
        peer_addr peer = any_peer;  // the address-vector entry of its peer, if there is one
        std::uint32_t slot = 0;     // its place in the peer's connection (peer_qps::qp)
        bool established = false;   // reached RTS
        bool dead = false;          // in ERR, or rejected: flushing, then destroyed
        bool disconnected = false;  // by the peer (DREQ)
        // Operations whose work request is on the QP's send queue, in posting order, and those
        // posted before the QP reached RTS (or while its send queue was full).
        std::deque<std::uint32_t> posted, waiting;
    };
    // A message that arrived before its receive (or is still arriving).
    struct unexpected_message {
        std::vector<std::uint8_t> bytes;
        roce_header header;
        peer_addr from = any_peer;
        bool in_use = false, done = false;
        roce::wc_status status = roce::wc_status::success;
        std::uint32_t claimed_by = none;  // a receive matched it while it was arriving
    };
    // The QPs that carry our posts to one peer, and how requests are spread over them.
    struct peer_qps {
        std::vector<roce::qpn_t> qp;  // by slot; 0: connected anew by the next post it takes
        qp_sched::scheduler_state sched;
        // Operations to the peer not yet completed, in posting order (with several QPs only):
        // each one's completion waits for those before it.
        std::deque<std::uint32_t> order;
    };
    // Where an operation stands beyond op: a subchunk's request, a request's subchunks.
    struct op_route {
        std::uint32_t parent = none;  // a subchunk: the request it is part of
        std::uint32_t pending = 0;    // a split request: subchunks not ended
        std::uint32_t slot = 0;       // the QP it went on (its place in peer_qps::qp)
        std::uint64_t posted_at = 0;  // when its work request went on the QP
        bool measured = false;        // its completion is an RTT sample for the scheduler
        bool ordered = false;         // in its peer's peer_qps::order
        bool done = false;            // ended, its completion waiting for those before it
        bool trailer = false;         // a split WRITE's immediate data, sent after its data
    };
    enum class cookie_kind : std::uint64_t { receive = 1, unexpected = 2, discard = 3 };
    static std::uint64_t cookie_of(cookie_kind k, std::uint32_t index) noexcept {
        return (static_cast<std::uint64_t>(k) << 32) | index;
    }

    // A new operation (its completion entry reserved unless inject), or why not.
    errc start(op_kind kind, peer_addr peer, bool reserve_cq, void* context, bool silent,
               std::uint32_t& index);
    // The peer's connection, made (with no QP connected yet) when there is none.
    peer_qps& qps_of(peer_addr peer);
    // The QP in `slot` of the connection to `peer`, connecting one if there is none.
    errc connection_to(peer_addr peer, std::uint32_t slot, roce::qpn_t& qpn);
    // Hands operation index's work request to the QP (or its waiting list): an error only when
    // the engine refuses it for good.
    errc submit(roce::qpn_t qpn, std::uint32_t index);
    // connection_to + submit for the operation start() made; on an error the operation is undone.
    errc launch(std::uint32_t index);
    // launch on a connection of several QPs: the scheduler's split, a subchunk per part.
    errc launch_scheduled(std::uint32_t index, peer_qps& g);
    // A subchunk of request `parent`: `length` bytes at `offset` into it, on `slot`.
    errc launch_subchunk(std::uint32_t parent, std::uint32_t slot, std::uint64_t offset,
                         std::uint64_t length, bool trailer);
    // Operation index's work request ended (its error, if any, recorded): a subchunk counts
    // down its request, and a request completes in its peer's order.
    void settle(std::uint32_t index);
    // Completes the operations at the front of the peer's order that have ended.
    void complete_in_order(peer_qps& g);
    roce::send_wr work_request(std::uint32_t index) const noexcept;
    // Moves waiting operations onto their QP's send queue while it has room.
    void post_waiting(roce::qpn_t qpn, connection& c);
    void on_completion(const roce::work_completion& wc);
    // Operations of c that ended without a completion entry of the engine's (unsignaled).
    void retire_unsignaled(roce::qpn_t qpn, connection& c);
    void end_op(std::uint32_t index, roce::wc_status status, bool connected, bool disconnected);
    void finish(std::uint32_t index);
    void fail(op& o, errc e, int prov_errno, std::size_t olen = 0) noexcept;
    // A receive matched a whole message: copied into it and completed.
    void deliver(std::uint32_t recv, unexpected_message& u);
    // Where (rkey, va, length) is in our regions with `access` granted, or nullptr (counted).
    std::uint8_t* region_at(std::uint32_t rkey, std::uint64_t va, std::uint64_t length,
                            std::uint32_t access);
    std::uint32_t take_unexpected_slot(const roce_header& h, peer_addr from);
    void free_unexpected(std::uint32_t slot) noexcept;
    peer_addr peer_of(std::uint32_t ip) const noexcept;
    // The address-vector entry of the QP's peer, or any_peer.
    peer_addr peer_of(const roce::qp& q) noexcept;
    std::uint8_t* staged(std::uint32_t index, std::size_t bytes);
    // Destroys the QP (a DREQ if it is connected), keeping its counters in retired_.
    void destroy(roce::qpn_t qpn);

    std::unique_ptr<roce::engine> eng_;  // null once closed
    op_pool ops_;
    std::vector<std::vector<std::uint8_t>> staged_;  // per operation: a SEND's header and data
    ses::receive_queues<std::uint32_t> posted_;
    std::vector<unexpected_message> unexpected_;
    std::deque<std::uint32_t> unexpected_order_;  // slots in arrival order
    std::vector<std::uint32_t> unexpected_free_;
    std::size_t unexpected_bytes_ = 0;
    std::unordered_map<roce::qpn_t, connection> connections_;
    qp_sched::params sched_params_;
    std::unordered_map<std::uint64_t, peer_qps> peers_;  // where posts to a peer go
    std::vector<op_route> routes_;                       // by operation
    roce::qp_counters retired_;                          // of the QPs destroyed
    std::vector<roce::work_completion> wcs_;
    std::uint64_t dropped_bad_header_ = 0;
    // READ responses cut from registered regions: one hold per response queued on a QP
    // (read_source, read_done), so that deregistering a region waits for them.
    region_holds holds_;
};

// The roce_rc endpoint behind a public endpoint of kind transport::roce_rc.
inline roce_endpoint& roce_of(endpoint_base& b) noexcept {
    return static_cast<roce_endpoint&>(b);
}

}  // namespace uet::detail
