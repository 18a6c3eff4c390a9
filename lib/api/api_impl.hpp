// Inside the public API: the objects behind the handles of include/uet/.
//
// Every endpoint is one uet::engine; the fabric's network (provider.hpp) moves its frames: the
// "pipe" provider between the endpoints of this process in virtual time, the "dpdk" provider over
// one DPDK port. Progress happens only when the application reads a completion queue or calls
// progress(); everything is single-threaded.
//
// Split by concern: fabric.cpp (fabric, domain, address vector, completion queue, memory
// regions), provider_pipe.cpp and provider_dpdk.cpp (the networks), dpdk_settings.cpp (checking
// the dpdk provider's attributes), endpoint.cpp (set-up, close, counters), endpoint_post.cpp
// (what the application posts: the initiator side), endpoint_rx.cpp (what arrives: the target
// side and responses), responder.cpp (answers, RMA and
// atomics on our regions), atomics.cpp (atomic arithmetic).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "api/claims.hpp"
#include "api/endpoint_base.hpp"
#include "api/multi_recv.hpp"
#include "api/op_pool.hpp"
#include "api/peer_map.hpp"
#include "api/provider.hpp"
#include "api/recv_queues.hpp"
#include "api/rendezvous.hpp"
#include "api/request_tracker.hpp"
#include "api/responder.hpp"
#include "api/unsignaled_sends.hpp"
#include "core/ring_index.hpp"
#include "engine/engine.hpp"
#include "ses/matching.hpp"
#include "ses/mr_table.hpp"
#include "tss/secure_engine.hpp"
#include "uet/uet.hpp"

namespace uet::detail {

// Engine contexts: a record's index; op_context | an operation's index (a send's message without a
// record, endpoint_impl::post_send_message); response_context | a fetched-values buffer (a
// response message of ours); response_context | op_context | a rendezvous send's index (the
// response to a read of its buffer, rendezvous::read_served); response_context | region_context |
// a hold (the response to a read of a registered region, responder::hold_region).
inline constexpr std::uint64_t region_context = std::uint64_t{1} << 61;
inline constexpr std::uint64_t op_context = std::uint64_t{1} << 62;
inline constexpr std::uint64_t response_context = std::uint64_t{1} << 63;

// The MAC the pipe provider gives the endpoint at ip (the dpdk provider's host stack fills real
// ones into every frame).
inline wire::mac_address mac_of(std::uint32_t ip) {
    return {{0x02, 0x00, static_cast<std::uint8_t>(ip >> 24), static_cast<std::uint8_t>(ip >> 16),
             static_cast<std::uint8_t>(ip >> 8), static_cast<std::uint8_t>(ip)}};
}

// An endpoint's engine settings before the network adds its own (network::prepare).
engine_config engine_config_for(const endpoint_attr& attr, std::uint32_t mtu);

// Transport security (secure.cpp). resolve_tss checks endpoint_attr::tss for a fabric of this
// MTU and fills in the domain and its key: "" on success, else why not (naming the field).
std::string resolve_tss(const endpoint_attr& attr, std::uint32_t mtu, tss::domain_config& cfg,
                        tss::key256& key);
// A secured engine's settings: a payload per packet that leaves room for the TSS header and ICV,
// and no zero-copy transmit.
void secure_engine_config(engine_config& c, const tss::domain_config& cfg) noexcept;
void add_tss_counters(const tss::secure_engine& s, endpoint_counters& c) noexcept;

// SES return code -> the error the application sees, and a sentence naming the cause.
errc errc_of(wire::ses_return_code rc) noexcept;
std::string_view detail_of(wire::ses_return_code rc) noexcept;
std::string_view detail_of(errc e) noexcept;

struct fabric_impl;
struct endpoint_impl;

struct cq_impl {
    cq_impl(std::shared_ptr<fabric_impl> f, std::size_t capacity);

    // Room for one more operation's completion (posting takes it; its completion gives it back).
    bool reserve() noexcept;
    // reserve() up to n times: how many were taken.
    std::size_t reserve_up_to(std::size_t n) noexcept;
    void unreserve(std::size_t n = 1) noexcept { reserved_ -= n; }
    // A completion of a reserved operation: always has room. Returns the new entry, not cleared:
    // the caller writes every field in place (a completion built elsewhere and copied in was read
    // back right after its fields were stored one by one: a store-forwarding stall per operation).
    completion& push_reserved() noexcept {
        --reserved_;
        completion& c = ring[ring_add(head, count, ring_size())];
        ++count;
        return c;
    }
    // A completion nobody reserved (remote write data): lost (and reported) when full.
    void push_unreserved(const completion& c) noexcept;
    // Room for an entry beyond every reserved one (the ring is twice the capacity): a message of a
    // multi-receive buffer, whose one reservation is for the entry that releases it. The ring has
    // none only while the application has at least `capacity` entries to read.
    bool has_spare_room() const noexcept { return count + reserved_ < ring_size(); }
    std::size_t spare_room() const noexcept { return ring_size() - count - reserved_; }
    // The new entry, not cleared (as push_reserved); has_spare_room() must hold.
    completion& push_spare() noexcept {
        completion& c = ring[ring_add(head, count, ring_size())];
        ++count;
        return c;
    }
    std::size_t pop(std::span<completion> out) noexcept;
    bool pop_error(completion& out) noexcept;
    bool head_is_error() const noexcept;

    // ring.size(), without its division by sizeof(completion) (once per completion).
    std::size_t ring_size() const noexcept { return 2 * capacity; }

    std::shared_ptr<fabric_impl> fabric;
    std::size_t capacity;
    std::vector<completion> ring;  // 2 x capacity: reserved entries always fit
    std::size_t head = 0, count = 0, reserved_ = 0;
    bool overrun = false;
};

struct av_impl {
    std::vector<endpoint_address> addresses;
    // key(ip, pid) -> index: filled at insert, read on receive.
    static std::uint64_t key(std::uint32_t ip, std::uint16_t pid) noexcept {
        return (std::uint64_t{pid} << 32) | ip;
    }
    std::unordered_map<std::uint64_t, std::uint64_t> by_address;
};

struct domain_impl {
    domain_impl(std::shared_ptr<fabric_impl> f, const domain_attr& a);
    std::shared_ptr<fabric_impl> fabric;
    ses::mr_table regions;
    // key -> the network's handle of the region (zero-copy transmit), where it took one.
    std::unordered_map<std::uint64_t, std::uint32_t> network_handles;
};

struct endpoint_impl final : endpoint_base, delivery_target {
    endpoint_impl(std::shared_ptr<domain_impl> d, std::shared_ptr<cq_impl> c,
                  std::shared_ptr<av_impl> a, const endpoint_attr& attr, const engine_config& ec);

    // ---- posting (endpoint_post.cpp) ----
    // Forced inline into the public calls (endpoint::send, inject, tsend, tinject; recv,
    // trecv), their only callers: a second call per message otherwise.
    [[gnu::always_inline]] std::error_code post_send(peer_addr to, std::span<const std::byte> buf,
                                                     bool tagged, std::uint64_t tag, void* context,
                                                     bool inject, bool silent);
    [[gnu::always_inline]] std::error_code post_recv(std::span<std::byte> buf, bool tagged,
                                                     std::uint64_t tag, std::uint64_t ignore,
                                                     void* context, peer_addr from,
                                                     bool multi = false);
    // post_recv's last step for a plain receive, shared with post_recv_list: forced inline into
    // both, once per receive.
    [[gnu::always_inline]] errc place_recv(std::uint32_t index, std::span<std::byte> buf,
                                           bool tagged, const ses::match_rule& rule, void* context);
    // The engine peer a receive from `from` takes messages of (ses::any_source for any_peer).
    [[gnu::always_inline]] errc source_of(peer_addr from, std::uint32_t& source);
    // A receive's op `index`: its entry reserved, a record free for the RTR it may need (so that
    // nothing has to be undone later); errc::cq_full or errc::again when there is no room.
    [[gnu::always_inline]] errc take_recv_op(std::uint32_t& index);
    // endpoint::recv_list / trecv_list.
    std::error_code post_recv_list(std::span<const recv_work> list, bool tagged, peer_addr from,
                                   std::size_t& posted);
    std::error_code post_rma(op_kind kind, peer_addr peer, const std::byte* src, std::byte* dst,
                             std::size_t len, std::uint64_t offset, std::uint64_t key, bool hd,
                             std::uint64_t data, void* context, bool silent);
    std::error_code post_atomic(peer_addr to, atomic_op aop, atomic_type type,
                                std::span<const std::byte> operand, std::span<std::byte> result,
                                const std::byte* compare, bool fetching, bool cas,
                                std::uint64_t offset, std::uint64_t key, void* context,
                                bool silent);
    // endpoint::probe / tprobe, recv_claimed and cancel (endpoint_post.cpp).
    std::error_code probe(bool tagged, std::uint64_t tag, std::uint64_t ignore, peer_addr from,
                          bool claim, probed_message& out);
    std::error_code recv_claimed(std::uint64_t claim, std::span<std::byte> buf, void* context);
    std::error_code cancel(void* context);
    void close() noexcept override;
    // The network carries the frames of the security sublayer where the endpoint has one.
    frame_engine* frames() noexcept override {
        if (secured) return secured.get();
        return eng.get();
    }
    void add_engine_counters(endpoint_counters& c) const noexcept override;
    // Joins the secure domain: from now on every frame is sealed and opened (secure.cpp).
    void secure(const tss::domain_config& cfg, const tss::key256& key);

    // ---- initiator machinery (endpoint_post.cpp; fail in endpoint.cpp) ----
    // errc{} on success. Not std::error_code: every one made, success too, calls libstdc++'s
    // system_category() (two per posted operation).
    [[gnu::always_inline]] errc check_post(peer_addr peer, bool reserve_cq,
                                           std::uint32_t& engine_peer);
    // check_post + an op slot with kind, context and peers filled in; undoes the CQ reservation
    // when no slot is free. `index` is the new op on success.
    // The steps of a post, always inlined into it: as calls (GCC kept them out of line) each
    // cost a prologue and an epilogue saving the registers the post holds (~10 instructions).
    [[gnu::always_inline]] errc start_op(op_kind kind, peer_addr peer, bool reserve_cq,
                                         void* context, bool silent, std::uint32_t& index);
    enum class post_result : std::uint8_t { posted, no_room, failed };
    void pump(std::uint32_t index);
    post_result issue_next(std::uint32_t index);
    [[gnu::always_inline]] post_result issue_send(op& o, std::uint32_t index);
    // One engine message of operation index (none: the RTR of receive rtr_recv). Inlined into
    // the posts of endpoint_post.cpp; post_rtr is the RTR's, for endpoint_rx.cpp.
    [[gnu::always_inline]] post_result post_message(std::uint32_t index, std::uint32_t rtr_recv,
                                                    std::uint32_t peer, const ses_fields& f,
                                                    std::span<const std::uint8_t> data,
                                                    std::size_t offset, std::uint32_t length);
    post_result refused(const status& st, std::uint32_t index);
    post_result post_rtr(std::uint32_t rtr_recv, std::uint32_t peer, const ses_fields& f);
    // A send's one engine message, without a record: the engine's context names the operation
    // (op_context) and a record is only promised (record_pool::promise), taken if the answer
    // comes as a message (request_tracker::record_for_op). Nearly every answer comes in the ACK:
    // a record taken, filled, found and freed per message would cost a cache line.
    [[gnu::always_inline]] post_result post_send_message(std::uint32_t index, const ses_fields& f,
                                                         std::span<const std::uint8_t> data);
    void progress_op(std::uint32_t index);
    // progress_op's body, forced inline where a sent message's end ends its operation
    // (request_tracker::finish_record, for every send): a call there would save and restore
    // registers once per message.
    [[gnu::always_inline]] void advance_op(std::uint32_t index);
    [[gnu::always_inline]] void finish(std::uint32_t index);
    void fail(op& o, errc e, int prov_errno = 0);
    ses_fields request_fields(wire::ses_opcode opcode) const noexcept;

    // ---- what arrives (endpoint_rx.cpp) ----
    // Engine completions and messages; true if anything happened. process(now): at `now`, the
    // network's time read by the caller.
    bool process() override;
    bool process(std::uint64_t now) override;

    // endpoint::send_list / tsend_list.
    std::error_code post_send_list(peer_addr to, std::span<const send_work> list, bool tagged,
                                   std::size_t& posted);
    // Forced inline into process(), its one caller: once per message received.
    [[gnu::always_inline]] void on_message(received_message& m);
    // A received send's way to its receive, inlined into on_message (endpoint_rx.cpp only):
    // as calls, each cost a prologue and an epilogue per message.
    [[gnu::always_inline]] void on_send_request(received_message& m);
    // delivery_target (the engine's calls up, from receive()): where one packet of a WRITE goes
    // (nullptr: refused); and the single-packet sends of a receive run, as they arrive, each
    // straight into the first posted receive it matches when that is an ordinary one it fits in
    // (what on_send_request and deliver() would do, with no engine call: the engine answers
    // RC_OK in its ACK), up to the first that cannot go so. place_write is responder's
    // (responder.cpp).
    bool places_writes() const noexcept override { return true; }
    std::uint8_t* place_write(std::uint32_t from, const ses_fields& f, std::uint32_t offset,
                              std::uint32_t length) noexcept override;
    bool takes_single_packet_messages() const noexcept override { return true; }
    std::size_t take_single_packet_messages(
        std::uint32_t from, const ses_fields& common, std::uint32_t length,
        std::span<const wire::next_request_fields> own) noexcept override;
    [[gnu::always_inline]] void deliver(std::uint32_t recv, received_message& m, bool answered);
    // deliver() out of line: for a held message (post_recv) and for multi_recv.
    void deliver_held(std::uint32_t recv, received_message& m, bool answered);
    void retry_stalled();

    delivery_mode mode;
    std::uint32_t mtu;
    std::unique_ptr<engine> eng;  // null once closed
    // endpoint_attr::tss: the security sublayer around eng, which the network carries instead.
    std::unique_ptr<tss::secure_engine> secured;
    unsignaled_sends unsignaled;

    op_pool ops;
    record_pool records;
    std::vector<std::uint32_t> stalled;  // operations waiting for a free record
    std::vector<std::uint32_t> stalled_retry;
    recv_queues queues;
    multi_recv multi_recvs;
    rendezvous rdv;
    claims claimed;  // messages claimed by probes
    responder responses;
    peer_map peers;
    std::vector<send_completion> completions;  // scratch for poll_send_completions
    // Scratch for poll_received: a member, as a local array its 16 entries were constructed
    // on every process() call (~80 stores a poll).
    std::vector<received_message> received;
    request_tracker requests;
};

// The UET endpoint behind a public endpoint of kind transport::uet.
inline endpoint_impl& uet_of(endpoint_base& b) noexcept {
    return static_cast<endpoint_impl&>(b);
}

// How long an acknowledged request may wait for its answer: well past the time the target's
// engine needs to give up retransmitting the answer (rto_max x retries). Only an answer that
// was never produced (the target lost the request after acknowledging it) waits this long.
std::uint64_t answer_timeout(const engine_config& c) noexcept;

struct fabric_impl {
    fabric_impl(const fabric_attr& a, std::unique_ptr<network> n, bool det)
        : attr(a), net(std::move(n)), deterministic(det) {}
    fabric_attr attr;
    std::unique_ptr<network> net;
    bool deterministic;  // the provider's runs are reproducible from attr.seed
};

inline constexpr std::uint32_t base_ip = 0x0a000001;  // 10.0.0.1, 10.0.0.2, ...
// Largest message the engine carries; longer operations go as several.
inline constexpr std::uint32_t chunk_bytes = 4u << 20;
inline constexpr std::uint32_t chunks_in_flight = 8;  // per operation
inline constexpr std::size_t max_atomic_bytes = 256;

// Applies one atomic request to target (count elements); old values to fetched when non-null.
wire::ses_return_code apply_atomic(const wire::ses_atomic_extension& ext,
                                   const std::uint8_t* compare, std::uint8_t* target,
                                   std::span<const std::uint8_t> operand,
                                   std::uint8_t* fetched) noexcept;
bool to_wire(atomic_op op, atomic_type type, wire::ses_atomic_extension& out) noexcept;

// Success as the posting calls return it and completions carry it: a default std::error_code
// calls system_category() (out of line, in libstdc++) each time it is made; copying this one is
// two moves.
inline const std::error_code no_error{};

// ---- the end of an operation, inline: a sent message's completion and a received message's
// delivery both end here, each a call deeper than the last (~40 instructions per message) ----

inline bool has_more(const op& o) {
    switch (o.kind) {
        case op_kind::write:
        case op_kind::read:
            return !o.issued || o.next_offset < o.len;
        case op_kind::recv:
            return o.pulling && o.next_offset < o.msg_len;
        default:
            return !o.issued;
    }
}

// An operation's completion, written straight into its entry of the completion queue, which is
// reused as it was left: built in one expression, so every field is written once (clearing the
// entry and then filling it cost ~25 instructions), and a field added to `completion` later and
// not named here stops the build (-Wmissing-field-initializers). Forced inline: GCC put it out of
// line once the delivery around it changed, a call per completion.
[[gnu::always_inline]] inline void fill_completion(const op& o, completion& c) noexcept {
    const bool recv = o.kind == op_kind::recv;
    c = completion{.context = o.context,
                   .flags = o.flags,
                   .len = recv ? o.msg_len : o.len,
                   .buf = recv ? o.dst : nullptr,
                   .data = 0,
                   .tag = recv ? o.msg_tag : 0,
                   .from = recv ? o.msg_from : any_peer,
                   .error = no_error,
                   .olen = 0,
                   .prov_errno = 0,
                   .detail = {}};
    if (o.error == errc{}) [[likely]]
        return;
    c.error = make_error_code(o.error);
    c.olen = o.olen;
    c.prov_errno = o.prov_errno;
    c.detail = o.prov_errno != 0 ? detail_of(static_cast<wire::ses_return_code>(o.prov_errno))
                                 : detail_of(o.error);
    if (o.error == errc::truncated) c.len = 0;
}

inline void endpoint_impl::finish(std::uint32_t index) {
    op& o = ops[index];
    if (o.inject) {
        // Nothing was reserved for it: an error entry is lost (the queue reports the overrun)
        // only when the queue is full.
        if (o.error != errc{}) {
            completion c;
            fill_completion(o, c);
            cq->push_unreserved(c);
        }
    } else if (o.silent && o.error == errc{}) {
        cq->unreserve();
        ++silent_completions;
    } else {
        fill_completion(o, cq->push_reserved());
    }
    if (o.rendezvous_key != 0) rdv.release_send(*this, o);
    ops.release(index);
}

inline void endpoint_impl::progress_op(std::uint32_t index) {
    advance_op(index);
}

// Called when nothing of the operation is in flight any more: finish it, re-send it, or wait.
inline void endpoint_impl::advance_op(std::uint32_t index) {
    op& o = ops[index];
    if (o.in_flight > 0) {
        pump(index);
        return;
    }
    if (o.error == errc{} && o.kind == op_kind::send && o.deferred) {
        if (!o.rtr_seen) return;  // the target will ask once a receive is posted
        o.deferred = o.rtr_seen = false;
        o.issued = false;
        ++counters.resent_after_rtr;
        pump(index);
        return;
    }
    if (o.error == errc{} && has_more(o)) {
        pump(index);
        return;
    }
    if (o.kind == op_kind::recv && o.pulling) rdv.end_pull(*this, o);
    // A rendezvous send waits for the read responses still cut from its buffer.
    if (o.rendezvous_key != 0 && rdv.release_send(*this, o)) [[unlikely]]
        return;
    finish(index);
}

}  // namespace uet::detail
