// Endpoint: reliable datagram, connectionless (libfabric's FI_EP_RDM). Every operation takes the
// peer from the address vector and a context returned in its completion; every call returns a
// std::error_code at once (nothing throws, nothing blocks) and, when that is {}, the operation
// ends in exactly one completion or error completion on the endpoint's queue (inject, and
// operations posted with op_flags::no_completion, only when they fail).
// Buffers passed to an operation must stay valid until its completion.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "uet/address_vector.hpp"
#include "uet/atomic.hpp"
#include "uet/completion_queue.hpp"

namespace uet {

// The protocol an endpoint speaks on the wire.
enum class transport : std::uint8_t {
    uet,      // Ultra Ethernet Transport (PDS and SES)
    roce_rc,  // RoCEv2 reliable-connected queue pairs
};

// How a roce_rc endpoint's queue pairs recover lost packets; both ends must agree (the
// connection is refused otherwise).
enum class roce_mode : std::uint8_t {
    go_back_n,     // a loss is repaired by sending everything after it again (what NICs do)
    out_of_order,  // packets are placed as they arrive; only the missing ones are sent again
};

// A roce_rc endpoint's queue-pair attributes (ibv_qp_attr's, with its codes).
struct roce_attr {
    roce_mode mode = roce_mode::go_back_n;
    std::uint8_t ack_timeout = 14;    // local ACK timeout: 4.096 us x 2^ack_timeout (0..31)
    std::uint8_t retry_cnt = 7;       // timeouts without progress before retry_limit (0..7)
    std::uint8_t rnr_retry = 7;       // receiver-not-ready retries before no_match; 7 = forever
    std::uint8_t min_rnr_timer = 1;   // the wait a sender is asked for after RNR (IBTA code)
    std::uint8_t max_rd_atomic = 16;  // READs and atomics in flight per queue pair (1..16)
};

// How a roce_rc endpoint spreads its RDMA writes and reads to one peer over the queue pairs of
// the connection (docs/api.md, "Multi-QP connections"): the schedulers of NCCL and RCCL, and
// CAST's, which weights each QP by its path's congestion, measured by RTT.
enum class qp_scheduler : std::uint8_t {
    round_robin,  // each request to the next QP
    stripe,       // each request split into equal subchunks, one per QP
    cast_stripe,  // subchunk sizes from the CAST weights
    cast_wrr,     // each request to one QP, picked by weighted round robin on the CAST weights
};
// The connection's queue pairs and scheduler, by the knobs of RCCL's and NCCL's IB plugins. A
// field left empty takes the value of the environment variable named beside it when that is set,
// else the default shown; a field set here wins over the environment.
struct qp_sched_attr {
    std::optional<std::uint32_t> qps;  // NCCL_IB_QPS_PER_CONNECTION: 1 (1..128)
    // NCCL_IB_QP_SCHED_ENABLE (CAST's weights) and NCCL_IB_SPLIT_DATA_ON_QPS (split each
    // request): round_robin
    std::optional<qp_scheduler> scheduler;
    std::optional<std::uint64_t>
        reset_interval_ms;  // NCCL_IB_QP_SCHED_RESET_INTERVAL: 60000; 0 never
    std::optional<std::uint64_t> update_interval_us;  // NCCL_IB_QP_SCHED_UPDATE_INTERVAL: 50
    // NCCL_IB_QP_SCHED_WEIGHT: 0, the average of the RTT metric; else the newest sample's weight
    // in a moving average (0, 1]
    std::optional<double> weight;
    // NCCL_IB_QP_SCHED_SPLIT_DATA_MIN: 65536. A request whose subchunks would be smaller goes
    // whole to one QP, the next in turn or (wrr_enable) by weight.
    std::optional<std::uint64_t> split_data_min;
    std::optional<bool> wrr_enable;  // NCCL_IB_QP_SCHED_WRR_ENABLE: false
};

// How the endpoint's packets are delivered (UET PDS modes).
enum class delivery : std::uint8_t {
    rud,   // reliable, unordered (default)
    rod,   // reliable, ordered: messages from one peer match in the order they were sent
    rudi,  // reliable, unordered, idempotent: for RMA (no connection state at the target)
    uud,   // unreliable datagrams: send / tagged send of one packet, no response, no RMA
};

// Congestion control of the endpoint's packet delivery contexts.
enum class congestion_control : std::uint8_t {
    none,  // a fixed window: point-to-point benchmarks only (nothing backs off on a fabric)
    nscc,  // sender window from RTT and ECN (UET NSCC): the default
    rccc,  // receiver-granted credit (UET RCCC)
};
// How each packet's entropy (UDP source port, hence its ECMP path) is chosen.
enum class path_policy : std::uint8_t {
    static_path,  // one value per PDC: a flow's ECMP path (point-to-point benchmarks)
    oblivious,    // spray over the value space
    bitmap,       // spray, skipping values recently penalised by ECN, NACK or timeout
    reps,         // recycle values that came back without ECN (REPS): the default
};

// Transport security (UET's TSS, docs/api.md "Transport security"): every frame of the endpoint
// sealed with AES-256-GCM under a key derived from the secure domain's key, every received
// frame authenticated before the packet delivery sublayer sees it. Both ends must join the same
// secure domain (SDI, mode, key, epoch).
enum class tss_mode : std::uint8_t {
    cluster,        // "U1": one key shared by every member, keys derived per source address
    client_server,  // "U2": each side names itself with a secure source identifier (ssi)
};

// Key bytes that are wiped (OPENSSL_cleanse) when the object holding them goes or is cleared;
// nothing in uet prints them.
class tss_key {
  public:
    tss_key() noexcept = default;
    explicit tss_key(std::span<const std::byte> bytes);
    tss_key(const tss_key& o) : tss_key(o.bytes()) {}
    tss_key& operator=(const tss_key& o);
    tss_key(tss_key&& o) noexcept : bytes_(std::move(o.bytes_)) {}
    tss_key& operator=(tss_key&& o) noexcept;
    ~tss_key() { clear(); }
    std::span<const std::byte> bytes() const noexcept { return bytes_; }
    bool empty() const noexcept { return bytes_.empty(); }
    void clear() noexcept;

    // A key as tools keep it: 64 hex digits (what `openssl rand -hex 32` prints; white space
    // around them ignored). nullopt when text is not that.
    static std::optional<tss_key> from_hex(std::string_view text);
    // A key file: 32 raw bytes, or 64 hex digits. nullopt, and error saying what was wrong (never
    // a key byte; the caller names the file), when it holds neither or cannot be read.
    static std::optional<tss_key> from_file(const std::string& path, std::string& error);

  private:
    std::vector<std::byte> bytes_;
};

inline constexpr std::size_t tss_key_size = 32;  // AES-256
// Writes the secure domain's key for sdi and epoch into key; false when it has none. Called
// when the endpoint opens.
using tss_key_provider = std::function<bool(std::uint32_t sdi, std::uint16_t epoch,
                                            std::span<std::byte, tss_key_size> key)>;

struct tss_attr {
    bool enabled = false;
    std::uint32_t sdi = 0;  // secure domain identifier, 24 bits
    tss_mode mode = tss_mode::cluster;
    std::uint16_t epoch = 0;
    // The domain key: tss_key_size bytes, or empty and key_provider set. The endpoint keeps no
    // copy in its attr() (a derived copy lives in its security sublayer, wiped at close).
    tss_key key;
    tss_key_provider key_provider;
    // client_server mode: this host's secure source identifier, sent in every header.
    std::optional<std::uint32_t> ssi;
};

// Why a received frame was dropped by the security sublayer (endpoint_counters::tss).
enum class tss_drop : std::uint8_t {
    malformed,         // not UET over IPv4, a bad checksum, or longer than this MTU allows
    truncated,         // too short for a TSS header and its ICV
    not_tss,           // no TSS header: an unsecured peer's frame
    unknown_sdi,       // another secure domain
    disabled,          // the domain reached its authentication failure limit
    missing_ssi,       // client/server mode, no SSI in the header
    stale_epoch,       // an epoch older than the domain accepts
    future_epoch,      // an epoch more than one ahead
    no_key,            // the AN names a key the domain does not hold
    replay,            // a TSC seen before, or left of the replay window
    bad_icv,           // authentication failed (another key, or the frame was altered)
    too_many_sources,  // authentic, but no replay window is left for a new source
    crypto_error,      // OpenSSL failed
    count_
};
inline constexpr std::size_t tss_drop_count = static_cast<std::size_t>(tss_drop::count_);
const char* to_string(tss_drop r) noexcept;

struct endpoint_attr {
    std::uint32_t job_id = 0;  // 24 bits: the job whose packets and memory keys it accepts
    delivery mode = delivery::rud;
    std::size_t tx_depth = 1024;       // operations outstanding at once
    std::size_t rx_depth = 1024;       // receives posted at once (tx_depth + rx_depth < 65536)
    std::size_t max_unexpected = 256;  // messages that arrived before their receive
    std::size_t max_unexpected_bytes = 16u << 20;
    std::size_t max_deferred = 1024;  // deferred sends remembered until a receive is posted
    std::size_t inject_size = 256;    // inject(): largest message, copied at the call
    // A multi-receive buffer (op_flags::multi_recv) is released once fewer bytes than this are
    // left in it (libfabric's FI_OPT_MIN_MULTI_RECV).
    std::size_t min_multi_recv = 64;
    // Sends of at least this many bytes use DEFERRABLE_SEND: a target with no matching receive
    // answers NO_MATCH instead of buffering, and asks for the message again (DEFERRABLE_RTR)
    // once a receive is posted.
    std::size_t deferrable_threshold = 64u << 10;
    // Sends of at least this many bytes use RENDEZVOUS_SEND: the target pulls them with reads.
    std::size_t rendezvous_threshold = 1u << 20;
    std::size_t max_message_size = std::size_t{1} << 31;
    // Safe on a shared fabric: NSCC backs off on ECN and delay, REPS sprays and steers away
    // from marked, slow or failed paths (docs/api.md describes them). none and static_path keep
    // a fixed window on one path: for point-to-point benchmarks only.
    congestion_control cc = congestion_control::nscc;
    path_policy lb = path_policy::reps;
    double link_gbps = 100;              // NSCC/RCCC scale from the link rate ...
    std::uint64_t base_rtt_ns = 12'000;  // ... and the unloaded round-trip time
    // RUD PDCs to each peer (1..16): messages take them in turn, each with its own window,
    // congestion state and entropy. ROD always uses one.
    std::uint32_t parallel_pdcs = 1;
    // Answer the requests of peers in the PDS ACK where the answer is RC_OK without data (UET's
    // SES response in the ACK): no response message, one frame per request instead of two.
    // Errors, read data and fetched values still go as response messages. Peers understand
    // both; false sends every answer as a message (for comparison).
    bool answers_in_acks = true;
    // The protocol on the wire. roce_rc: RoCEv2 reliable-connected queue pairs, one (or
    // qp_sched.qps) per peer, connected on the first post to it (docs/api.md, "RoCEv2"). It refuses
    // the fields above that mean nothing there (mode, parallel_pdcs, answers_in_acks, the
    // deferrable and rendezvous thresholds) when they are set away from their defaults.
    uet::transport transport = uet::transport::uet;
    roce_attr roce{};          // roce_rc only
    qp_sched_attr qp_sched{};  // roce_rc only: queue pairs per peer and how requests use them
    // Transport security (uet transport only): the payload per packet shrinks by the TSS header
    // and ICV (28 bytes, 32 with an SSI) so that frames keep to the MTU.
    tss_attr tss{};
};

// One queue pair of a roce_rc endpoint's connection to a peer (endpoint::queue_pairs).
struct qp_counters {
    std::uint32_t qp_num = 0;               // 0: none connected in this place now
    std::uint64_t bytes = 0, requests = 0;  // scheduled on it: subchunks and whole requests
    std::uint64_t rtt_samples = 0;          // completions measured (post to completion)
    double rtt_estimate_ns = 0;             // the estimate of CAST's metric (RTT less transmission)
    double weight = 0;                      // its share under CAST (the weights sum to 1)
    std::uint16_t udp_source_port = 0;      // its ECMP path (0: none connected)
};

struct endpoint_counters {
    std::uint64_t rejected_job = 0;      // requests of another job, answered BAD_JOB_ID
    std::uint64_t rejected_key = 0;      // bad key, access or bounds, answered with the code
    std::uint64_t unexpected = 0;        // messages buffered before their receive
    std::uint64_t deferred = 0;          // sends answered NO_MATCH (deferrable)
    std::uint64_t ready_to_receive = 0;  // DEFERRABLE_RTR sent
    std::uint64_t resent_after_rtr = 0;  // deferred sends sent again
    std::uint64_t rendezvous = 0;        // rendezvous sends received
    std::uint64_t stale_responses = 0;   // responses to nothing outstanding
    // Responses whose JobID is not the request's: what a target sends back for a request forged
    // with our address and another job's id, which must not end one of ours.
    std::uint64_t foreign_responses = 0;
    std::uint64_t unanswerable = 0;  // a response could not be queued
    // Messages for a multi-receive buffer that arrived while the completion queue had no room
    // for their entries: answered, and kept until the application read the queue.
    std::uint64_t kept_for_queue_room = 0;
    // Sends asked no completion of (op_flags::no_completion) that went without an operation
    // entry (RUD/ROD with answers in ACKs, below the deferrable threshold), and those of them
    // whose end needed one after all (a failure, or an answer that came as a message).
    std::uint64_t unsignaled_sends = 0, unsignaled_sends_adopted = 0;
    // Small messages placed into their receive as they arrived, without waiting in the engine
    // for the endpoint to poll them (one-packet sends of a receive burst, answers in ACKs, an
    // ordinary receive posted for each).
    std::uint64_t delivered_directly = 0;
    // WRITEs placed straight into the region as they arrived (one copy per byte), and packets
    // of WRITEs refused there (bad key, access or bounds: nothing copied; consecutive packets
    // of a message received in one burst are checked, and refused, together: they count once).
    std::uint64_t writes_placed_directly = 0;
    std::uint64_t write_packets_refused = 0;
    // Packet delivery underneath (the endpoint's engine).
    std::uint64_t pdcs_opened = 0;         // PDCs this endpoint opened as initiator
    std::uint64_t pdcs_failed = 0;         // ... that gave up (retry limit, peer unreachable)
    std::uint64_t target_pdcs_opened = 0;  // PDCs peers opened to this endpoint
    std::uint64_t retransmits = 0;         // data packets sent again (sum of the three causes)
    std::uint64_t retransmits_sack = 0, retransmits_timeout = 0, retransmits_nack = 0;
    std::uint64_t timeouts = 0;  // retransmit timer expiries
    std::uint64_t nacks_received = 0, nacks_sent = 0;
    std::uint64_t duplicates = 0;                          // data packets received again
    std::uint64_t packets_sent = 0, packets_received = 0;  // UET frames (data and control)
    // Data packets read against the packet before them (header prediction: the next packet of
    // a message, or the next one-packet message, compared with the last, word by word) rather
    // than parsed in full.
    std::uint64_t headers_predicted = 0;
    // Of those, the ones taken in runs: consecutive packets of one message in one receive burst,
    // placed with one lookup of their PDC, message and target region.
    std::uint64_t packets_in_runs = 0;
    // Of the packets sent, the ones built in transmit batches of two or more: new packets of one
    // PDC built with their PDC's checks done once.
    std::uint64_t packets_sent_in_runs = 0;
    // How the engine's transmit calls that sent data, or had a PDC with none ready, ended: with
    // a full burst, held by the window (packets in flight or the congestion controller), or
    // with nothing queued. A sender's idle polls are the latter two.
    std::uint64_t transmit_full = 0, transmit_held_by_window = 0, transmit_nothing_queued = 0;
    std::uint64_t packets_dropped = 0;  // engine drops (malformed, unknown PDC, queue full...)
    // Of those, hostile or stray input by reason: ACKs, NACKs, CTRLs and non-SYN requests from
    // a source with no state here; CLOSEs refused or found forged (data came after them); new
    // sources refused with the peer table full of peers holding state.
    std::uint64_t dropped_unknown_source = 0, dropped_forged_close = 0, dropped_peer_table_full = 0;
    // Error answers not sent: their request's PDC never showed that its source address was its
    // initiator's own (a request forged with another host's address).
    std::uint64_t dropped_unvalidated_reply = 0;
    // Sources added by a frame that opened state, and such peers holding no state whose entry
    // went to a new source.
    std::uint64_t peers_learned = 0, peers_forgotten = 0;
    std::uint64_t rtt_samples = 0, rtt_min_ns = 0, rtt_mean_ns = 0;  // over every PDC
    // Answers in ACKs: peers' requests we answered in an ACK / with a response message; our
    // requests a peer answered in an ACK.
    std::uint64_t answers_in_acks = 0, answers_as_messages = 0, answered_by_ack = 0;
    // roce_rc, summed over its queue pairs (those gone included); packets_sent, packets_received,
    // retransmits (retransmits_nack: after a NAK, RNR or implicit; retransmits_timeout),
    // timeouts, nacks_sent, nacks_received (NAK codes 0..4) and duplicates count there too.
    struct roce_counters {
        std::uint64_t go_back_rounds = 0;  // go-back-N restarts (each resends a range)
        std::uint64_t rnr_naks_sent = 0, rnr_naks_received = 0;
        std::uint64_t acks_sent = 0, acks_received = 0;
        std::uint64_t placed_early = 0;  // out-of-order mode: packets placed ahead of a hole
        std::uint64_t cnps_sent = 0, cnps_received = 0;  // DCQCN
        std::uint64_t paced = 0;          // transmit rounds in which a QP waited for its DCQCN rate
        std::uint64_t qps_connected = 0;  // by us or by peers, over the endpoint's life
    } roce;
    // Transport security (tss_attr): frames sealed and opened, frames not sent because they
    // could not be sealed (the TSC used up), and received frames dropped by reason before the
    // packet delivery sublayer saw them.
    struct tss_counters {
        std::uint64_t sealed = 0, opened = 0, seal_failures = 0;
        std::array<std::uint64_t, tss_drop_count> drops{};
        std::uint64_t dropped(tss_drop r) const noexcept {
            return drops[static_cast<std::size_t>(r)];
        }
        std::uint64_t dropped_total() const noexcept {
            std::uint64_t t = 0;
            for (std::uint64_t d : drops)
                t += d;
            return t;
        }
    } tss;
    // UET: received frames refused by reason. refused_by_reason: headers that did not decode
    // (truncated, bad checksums or lengths, unknown PDS type, bad SES opcode...), indexed as
    // refused_frame_reason() names them; dropped_by_reason: packets the engine read and dropped
    // (unknown PDC, PSN beyond the window, unknown source...), as dropped_packet_reason() names
    // them, whose sum is packets_dropped.
    std::array<std::uint64_t, 48> refused_by_reason{};
    std::array<std::uint64_t, 32> dropped_by_reason{};
};

// The name of index i of endpoint_counters::refused_by_reason ("truncated", "bad_udp_checksum",
// ...) and of dropped_by_reason ("unknown_pdc", ...); nullptr past the last reason.
const char* refused_frame_reason(std::size_t i) noexcept;
const char* dropped_packet_reason(std::size_t i) noexcept;

// Flags of one operation (the last argument of send, recv, write, read and the atomics).
enum class op_flags : std::uint8_t {
    none = 0,
    // No completion entry when the operation succeeds (libfabric's selective completion: an
    // operation posted without FI_COMPLETION; perftest's unsignaled work requests). A failure
    // still ends in its error entry, with the context. The operation still takes its place in
    // the queue's capacity while in flight (room for that error entry), and its buffers must stay
    // valid until it ends: endpoint::silent_completions() counts the ones that ended, so that
    // the caller knows how many it still has in flight. Not with recv.
    no_completion = 1,
    // recv only: a multi-receive buffer (libfabric's FI_MULTI_RECV). Eager untagged messages are
    // placed one after another, each at the next free byte, each with its own completion entry
    // (buf points at the message); the buffer is released once fewer than
    // endpoint_attr::min_multi_recv bytes are left, or when a message does not fit what is left.
    // The entry that releases it carries completion_flags::multi_recv (a message's entry, or one
    // of length 0 when nothing was placed by it). A message larger than a fresh buffer fails it
    // (errc::truncated, the sender TOO_LONG). Deferrable and rendezvous sends (at least
    // deferrable_threshold or rendezvous_threshold bytes) are not taken: they wait for a plain
    // receive (under delivery::rod, the order holds among the messages the buffer takes). Each
    // message's entry needs room in the queue: posting fails with errc::cq_full, and arrivals
    // wait in the engine, while the queue holds no room for one. Not with no_completion.
    multi_recv = 2,
};
// One send of a post list (endpoint::send_list, tsend_list): send()'s arguments but the peer.
struct send_work {
    std::span<const std::byte> buf;
    void* context = nullptr;
    op_flags flags = op_flags::none;
    std::uint64_t tag = 0;  // tsend_list only
};

// One receive of a post list (endpoint::recv_list, trecv_list): recv()'s and trecv()'s
// arguments but the source.
struct recv_work {
    std::span<std::byte> buf;
    void* context = nullptr;
    std::uint64_t tag = 0, ignore = 0;  // trecv_list only
};

// A message that arrived before its receive, as endpoint::probe and tprobe find it.
struct probed_message {
    std::size_t len = 0;        // the whole message (a rendezvous or deferred send's too)
    std::uint64_t tag = 0;      // tagged messages: its tag
    peer_addr from = any_peer;  // its sender
    std::uint64_t data = 0;     // immediate data: sends carry none, so 0
    bool tagged = false;
    std::uint64_t claim = 0;  // probe_flags::claim: what recv_claimed() takes; else 0
};

// Flags of endpoint::probe and tprobe.
enum class probe_flags : std::uint8_t {
    none = 0,
    // The message found is claimed (MPI_Improbe; libfabric's FI_PEEK | FI_CLAIM): no receive or
    // probe matches it any more, and recv_claimed() with its claim receives it (MPI_Mrecv).
    claim = 1,
};

namespace detail {
struct endpoint_base;
}

class endpoint {
  public:
    endpoint() = default;
    ~endpoint();
    endpoint(endpoint&&) noexcept;
    endpoint& operator=(endpoint&&) noexcept;
    endpoint(const endpoint&) = delete;
    endpoint& operator=(const endpoint&) = delete;

    endpoint_address address() const noexcept;
    const endpoint_attr& attr() const noexcept;
    endpoint_counters counters() const noexcept;
    // Operations posted with op_flags::no_completion that have ended successfully (so without an
    // entry): cheap to read once per poll.
    std::uint64_t silent_completions() const noexcept;
    // roce_rc: the queue pairs that carry this endpoint's posts to `peer`, one entry per QP of
    // the connection (qp_sched_attr::qps), with the scheduler's view of each; empty before the
    // first post to it, and on transport uet.
    std::vector<qp_counters> queue_pairs(peer_addr peer) const;

    // ---- messages ----
    std::error_code send(peer_addr to, std::span<const std::byte> buf, void* context,
                         op_flags flags = op_flags::none);
    // A post list (ibv_post_send with a chain of work requests; perftest's --post_list): the
    // sends of `list` to one peer, in order, each posted as send() (tsend_list: tsend()) would
    // post it and ending as it would, with what they share done once: sends asked no
    // completion of (op_flags::no_completion) below the deferrable threshold go to the engine
    // together, up to 32 at a time. Returns {} with every one posted (posted == list.size());
    // otherwise the error of list[posted], the first one not posted: the ones before it are
    // posted, the ones after it are not.
    std::error_code send_list(peer_addr to, std::span<const send_work> list, std::size_t& posted);
    // flags: none, or op_flags::multi_recv (one buffer for many messages).
    std::error_code recv(std::span<std::byte> buf, void* context, peer_addr from = any_peer,
                         op_flags flags = op_flags::none);
    // A post list of receives (ibv_post_recv with a chain; perftest's --recv_post_list): each
    // of `list`, in order, as recv() would post it from `from`, with the checks and reservations
    // common to them made once. Returns as send_list: {} with all posted, else the error of
    // list[posted]. Plain receives only (one multi-receive buffer goes by recv()).
    std::error_code recv_list(std::span<const recv_work> list, std::size_t& posted,
                              peer_addr from = any_peer);
    // Small messages (at most attr().inject_size), copied at the call: no completion entry on
    // success; one that fails still gives an error entry (context nullptr; dropped, and the
    // queue reports an overrun, when the queue is full, as it has no room reserved).
    std::error_code inject(peer_addr to, std::span<const std::byte> buf);

    // ---- tagged messages: a receive matches when (tag ^ its tag) & ~ignore == 0 ----
    std::error_code tsend(peer_addr to, std::span<const std::byte> buf, std::uint64_t tag,
                          void* context, op_flags flags = op_flags::none);
    // send_list's tagged form: each send_work's tag.
    std::error_code tsend_list(peer_addr to, std::span<const send_work> list, std::size_t& posted);
    // recv_list's tagged form: each recv_work's tag and ignore mask.
    std::error_code trecv_list(std::span<const recv_work> list, std::size_t& posted,
                               peer_addr from = any_peer);
    std::error_code trecv(std::span<std::byte> buf, std::uint64_t tag, std::uint64_t ignore,
                          void* context, peer_addr from = any_peer);
    std::error_code tinject(peer_addr to, std::span<const std::byte> buf, std::uint64_t tag);

    // ---- probe, claim and cancel (MPI_Iprobe, MPI_Improbe and MPI_Mrecv, MPI_Cancel) ----
    // The message that a receive posted now with these arguments would take, among those that
    // arrived before their receive (held, or deferred sends: a large message is seen by its
    // header, its whole length reported), described in `out` and left where it is (unless
    // flags claim it); errc::no_message when none matches. It sees what progress (a completion
    // queue read) has taken in, not what is still on its way. uet transport only.
    std::error_code probe(probed_message& out, peer_addr from = any_peer,
                          probe_flags flags = probe_flags::none);
    std::error_code tprobe(std::uint64_t tag, std::uint64_t ignore, probed_message& out,
                           peer_addr from = any_peer, probe_flags flags = probe_flags::none);
    // Receives the message claimed as `claim` (probed_message::claim) into buf: it ends as a
    // receive that matched it would (errc::truncated when buf is smaller). errc::invalid_argument
    // when `claim` names no claimed message.
    std::error_code recv_claimed(std::uint64_t claim, std::span<std::byte> buf, void* context);
    // Cancels the receive (tagged or not, a multi-receive buffer too) posted with `context` that
    // no message has matched yet: it ends in an error completion errc::canceled. errc::busy when
    // the operation with that context is under way (a send, RMA or atomic once posted, a receive
    // a message has matched), errc::not_found when no operation has it. uet transport only.
    std::error_code cancel(void* context);

    // ---- RMA: offset is from the start of the peer's region named by key ----
    std::error_code write(peer_addr to, std::span<const std::byte> buf, std::uint64_t offset,
                          std::uint64_t key, void* context, op_flags flags = op_flags::none);
    // Also delivers data to the target's completion queue (remote_cq_data | remote_write).
    std::error_code write_data(peer_addr to, std::span<const std::byte> buf, std::uint64_t offset,
                               std::uint64_t key, std::uint64_t data, void* context,
                               op_flags flags = op_flags::none);
    std::error_code read(peer_addr from, std::span<std::byte> buf, std::uint64_t offset,
                         std::uint64_t key, void* context, op_flags flags = op_flags::none);

    // ---- atomics: operand holds count elements of type; result (fetching) as many ----
    std::error_code atomic(peer_addr to, atomic_op op, atomic_type type,
                           std::span<const std::byte> operand, std::uint64_t offset,
                           std::uint64_t key, void* context, op_flags flags = op_flags::none);
    std::error_code fetch_atomic(peer_addr to, atomic_op op, atomic_type type,
                                 std::span<const std::byte> operand, std::span<std::byte> result,
                                 std::uint64_t offset, std::uint64_t key, void* context,
                                 op_flags flags = op_flags::none);
    // One element: if target == compare then target = swap; result gets the old value.
    std::error_code compare_atomic(peer_addr to, atomic_type type,
                                   std::span<const std::byte> compare,
                                   std::span<const std::byte> swap, std::span<std::byte> result,
                                   std::uint64_t offset, std::uint64_t key, void* context,
                                   op_flags flags = op_flags::none);

    // Cancels what is outstanding (error completions errc::canceled) and leaves the fabric;
    // every later call returns errc::endpoint_closed. The destructor closes too.
    void close() noexcept;
    bool is_open() const noexcept;

  private:
    friend class domain;
    std::shared_ptr<detail::endpoint_base> impl_;
};

}  // namespace uet
