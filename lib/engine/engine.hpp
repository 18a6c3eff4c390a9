// The per-core, sans-I/O UET engine: PDS (RUD, ROD, RUDI, UUD) with a minimal SES on top.
//
// It is driven entirely by its caller: receive() takes one Ethernet frame and the current time
// (ns), transmit() hands back frames to put on the wire, next_deadline() says when it next needs
// a call, poll_send_completions() / poll_received() return what the application is owed. It
// never reads a clock, never does I/O, never allocates per packet (pools are sized by
// engine_config in the constructor), and draws every random number from a generator seeded by
// engine_config::seed: the same inputs give the same outputs.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "cc/cc_factory.hpp"
#include "lb/lb_factory.hpp"
#include "pds/counters.hpp"
#include "ses/message.hpp"
#include "wire/eth.hpp"
#include "wire/frame_engine.hpp"
#include "wire/ipv4.hpp"
#include "wire/plain_request.hpp"
#include "wire/reject.hpp"

namespace uet {

enum class delivery_mode : std::uint8_t { rud, rod, rudi, uud };
inline constexpr std::size_t delivery_mode_count = 4;
const char* to_string(delivery_mode m) noexcept;

using peer_id = std::uint32_t;
inline constexpr peer_id invalid_peer = 0xffffffffu;

enum class status_code : std::uint8_t {
    ok,
    retry_limit,       // a packet went unacknowledged max_retransmits times
    peer_unreachable,  // ... before the peer ever answered (no PDC established)
    message_too_long,  // above max_message_size, or a UUD message above one packet
    too_many_pending,  // max_pending_messages already posted and not completed
    unknown_peer,
    not_unsignaled,  // post_unsignaled_message() of a mode or kind that cannot be unsignaled
                     // (RUD/ROD requests)
};

struct status {
    status_code code = status_code::ok;
    bool ok() const noexcept { return code == status_code::ok; }
    explicit operator bool() const noexcept { return ok(); }
    const char* message() const noexcept;
    friend bool operator==(const status&, const status&) = default;
};

inline constexpr std::uint32_t max_parallel_pdcs = 16;

// What the engine hands the layer above as packets arrive, instead of through poll_received():
// the one interface by which the engine calls up. Each part is optional: the engine asks once,
// when it is built, which ones the layer takes. Called from receive() and receive_burst(); an
// implementation must not call the engine.
class delivery_target {
  public:
    // Direct placement of RMA WRITEs: for each new packet of a WRITE request the engine asks
    // where its payload goes and copies it there, once (never for a duplicate); the message is
    // then delivered with no data (received_message::placed). f is what the packet says (key,
    // job, buffer_offset and request_length: the whole message's range, in every packet), offset
    // where the packet sits in the message (offset + length <= request_length). nullptr refuses
    // the packet: nothing is copied and the message is delivered with placement_failed. For a
    // run of consecutive packets of one message, asked once (offset and length span them all;
    // refused, none of them is copied).
    virtual bool places_writes() const noexcept { return false; }
    virtual std::uint8_t* place_write(std::uint32_t /*from*/, const ses::op_fields& /*f*/,
                                      std::uint32_t /*offset*/, std::uint32_t /*length*/) noexcept {
        return nullptr;
    }

    // Direct delivery (with answers in ACKs): the single-packet requests of a receive run of
    // small messages, offered as they arrive, in order, in one call. They come from one peer
    // and share their SES fields (`common`: opcode, job, ...; its own fields are not theirs) and
    // their payload length, but for each one's own: id, buffer_offset, memory_key, header_data
    // and payload (`own`). Returns how many of the first it took (placed and completed; their
    // answer is RC_OK, which the ACK gives); the others go the ordinary way (poll_received()).
    // Offered only while no earlier message waits to be polled, so that none overtakes another.
    // Saves a reassembly slot filled, handed over and released per message.
    virtual bool takes_single_packet_messages() const noexcept { return false; }
    virtual std::size_t take_single_packet_messages(
        std::uint32_t /*from*/, const ses::op_fields& /*common*/, std::uint32_t /*length*/,
        std::span<const wire::next_request_fields> /*own*/) noexcept {
        return 0;
    }

  protected:
    ~delivery_target() = default;
};

// The longest frame an engine builds is its mtu_payload and at most this many bytes of headers
// (Ethernet, IPv4, UDP, PDS, SES with its largest extension).
inline constexpr std::size_t frame_header_room = 192;

// Most paths path-ID loss detection tells apart (engine_config::path_ids).
inline constexpr std::uint32_t max_path_ids = 64;

struct engine_config {
    wire::mac_address mac;
    std::uint32_t ip = 0;  // our address (host order)
    std::uint16_t udp_port = wire::uet_udp_port;
    // Several endpoints behind one address (wire/uet_fep.hpp): this engine's PDC ids, RUD/ROD
    // message ids and RUDI pkt_ids carry pid_on_fep (below wire::max_fep_pids) in their top
    // bits; a PDC packet's source PIDonFEP is read from its SPDCID, a RUDI/UUD request's from
    // its SES initiator field; a request for another PIDonFEP is dropped (wrong_pid). Peers
    // must keep to it too. max_pdcs then at most 2047. false: every peer is PIDonFEP 0.
    bool fep_pids = false;
    std::uint16_t pid_on_fep = 0;
    std::uint32_t max_pdcs = 256;  // initiator and target PDCs together (at most 4095)
    // RUD initiator PDCs per peer (1..max_parallel_pdcs): messages go to them round robin, each
    // PDC with its own window, congestion state and entropy. ROD keeps one (its order is one
    // PDC's PSN order).
    std::uint32_t parallel_pdcs = 1;
    std::uint32_t mpr = 512;  // packets in flight per PDC (at most 4095)
    // SES payload bytes per packet (at most 16383); peers must agree (segments sit on its grid).
    std::uint32_t mtu_payload = 4096;
    std::uint32_t ack_every_bytes = 16384;
    std::uint32_t ack_every_packets = 16;
    // A coalesced ACK waits at most this long: packets already in flight when the sender's
    // window shrank (trimming overtook them) must not wait for a retransmit timeout.
    std::uint64_t ack_delay_ns = 5'000;
    // RUD: transmissions after a hole that must be acknowledged before it counts as lost.
    std::uint32_t ooo_threshold = 8;
    // rto_ns: the initial retransmit timeout; once RTTs are measured the RTO adapts (RFC 6298:
    // srtt + 4 rttvar) between rto_min_ns and rto_max_ns, doubled per timeout round until the next
    // clean sample (of a packet sent once).
    std::uint64_t rto_ns = 200'000, rto_max_ns = 50'000'000;
    std::uint64_t rto_min_ns = 100'000;
    std::uint32_t max_retransmits = 24;
    std::uint8_t data_dscp = 0, ack_dscp = 46, trim_dscp = 0x3b;
    std::uint64_t seed = 1;
    std::size_t max_pending_messages = 4096;           // send side, posted and not completed
    std::uint64_t window_bytes = 0;                    // fixed-window CC; 0: mpr x mtu_payload
    std::uint64_t pdc_idle_close_ns = 50'000;          // initiator closes a PDC idle this long
    std::uint64_t pdc_target_idle_ns = 2'000'000'000;  // target forgets a PDC silent this long
    std::uint32_t max_peers = 1024;
    std::size_t max_rx_messages = 1024;              // being reassembled or awaiting release
    std::uint64_t max_rx_buffer_bytes = 256u << 20;  // reassembly buffers of multi-packet messages
    std::uint32_t max_message_size = 16u << 20;
    std::size_t remembered_messages = 4096;  // completed RUDI/UUD ids kept for dedup
    std::uint32_t rudi_max_in_flight = 512;  // RUDI request packets awaiting a response
    std::size_t control_queue = 8192;        // ACK/NACK/response frames waiting to go out
    std::size_t tx_burst = 64;               // data frames built per transmit() call
    // false: the runs a receive burst reads are taken packet by packet, as frames that arrive
    // one at a time are (a test knob: the differential tests compare the two).
    bool rx_batches = true;
    std::uint64_t timer_tick_ns = 1000;
    // Congestion control and path selection of every PDC this engine opens. NSCC/RCCC take
    // their parameters from the link rate and base RTT (nscc_params::from_link).
    cc::algorithm cc = cc::algorithm::none;
    lb::algorithm lb = lb::algorithm::static_path;
    double link_gbps = 100;
    std::uint64_t base_rtt_ns = 12'000;
    bool trimming = false;  // whether the network trims (NSCC's target delay)
    // false: frames go with UDP checksum 0 ("none", which IPv4 allows and RoCEv2 does), so the
    // engine never sums a payload; for links with no wire to corrupt (memif's shared memory)
    // or where the link's CRC is trusted. Received frames with checksum 0 are accepted either
    // way; others are verified.
    bool udp_checksum = true;
    // Path-ID loss detection (target side, RUD): switches that spray stamp the path a data
    // packet took into its IPv4 identification, as 1..path_ids (0: not stamped). Per PDC the
    // target keeps the highest PSN received on each path; a hole below the highest PSN of every
    // path cannot still be on its way (each path delivers in order) and is NACKed at once
    // (RCVR_INFER_LOSS), once, instead of waiting for the sender's SACK rule or timeout.
    // An engine with path_ids sends identification 0 (its frames are never fragmented, RFC
    // 6864), so that a packet no switch stamped reads as carrying none; peers need not agree.
    // 0: off (identifications are not read). At most max_path_ids.
    std::uint32_t path_ids = 0;
    // Spraying: 2^lb_path_bits entropy values per PDC; how long REPS freezes after a timeout.
    std::uint8_t lb_path_bits = 8;
    std::uint64_t reps_freeze_ns = 10'000'000;
    // What the layer above takes straight from receive(), as packets arrive (see delivery_target);
    // nullptr: every message goes through poll_received().
    delivery_target* deliver_to = nullptr;
    // Zero-copy transmit (see payload_memory); nullptr: every payload is copied into the room.
    payload_memory* zero_copy = nullptr;
    // Payloads shorter than this are copied; zero_copy is not asked about them. Set it
    // to the smallest payload the hook would take: a run of small sends then copies its frames
    // from the run's first, as without zero-copy (a payload that might go by reference has to
    // be built frame by frame). 0: every data payload is offered.
    std::uint32_t reference_min_bytes = 0;
    // The port chains a trailer after a payload sent by reference too (io_caps::zero_copy_tail):
    // a RoCE engine on the same provider may then send its payloads, whose ICRC follows them,
    // by reference as well. UET's engine does not look at it.
    bool zero_copy_tail = false;
    // Answers in ACKs (target side; every initiator understands them): a RUD/ROD request
    // answered by post_response() with RC_OK and no data costs no frame: the PDS ACK covering
    // it says so. Each ACK carries a RESPONSE header whose modified_length counts the PDC's
    // requests answered by a response message of their own (errors, data, answers given after
    // the ACK left); the initiator takes every other acknowledged request as answered OK once it
    // has received that many. The caller must then answer every request it polls, once, with
    // post_response(), best before its next transmit().
    bool answers_in_acks = false;
    // Initiator: how long an acknowledged request waits for the response messages its ACK
    // announced before it completes without its answer (the caller then waits for a response
    // message). 0: rto_max_ns x (max_retransmits + 1).
    std::uint64_t answer_wait_ns = 0;
};

struct send_completion {
    std::uint64_t context = 0;
    status result;
    // The target's answer was RC_OK, given in the PDS ACK: no response message follows.
    bool answered = false;
    // An unsignaled request's end (engine::post_unsignaled_message) that was not a good, answered
    // one: message names it, kept for engine::message() until engine::release_unsignaled_message().
    bool unsignaled = false;
    std::uint32_t message = 0;
};

// The SES fields of a message (opcode, job, key, offsets, extensions; or a response): see
// lib/ses/message.hpp. post_send() uses the defaults (a SEND of job 0).
using ses_fields = ses::op_fields;

// What a received_message points to before a message is polled into it.
inline constexpr ses_fields no_ses_fields{};

// The two SES fields of an unsignaled request that differ from send to send
// (post_unsignaled_message): the match bits and the buffer offset (the initiator's token).
struct own_request_fields {
    std::uint64_t memory_key = 0;
    std::uint64_t buffer_offset = 0;
};

// One request of a list of unsignaled ones (post_unsignaled_messages): its own fields, data and
// context.
struct unsignaled_request {
    own_request_fields own;
    std::span<const std::uint8_t> data;
    std::uint64_t context = 0;
};

struct received_message {
    peer_id from = invalid_peer;
    delivery_mode mode = delivery_mode::rud;
    std::uint16_t message_id = 0;        // a response's is the id of the request it answers
    std::span<const std::uint8_t> data;  // valid until release(handle)
    std::uint64_t handle = 0;
    // Its SES fields, where the engine keeps them: valid, like data, until release(handle). Not a
    // copy: 128 bytes copied per message received cost ~16 instructions and two cache lines.
    const ses_fields* ses = &no_ses_fields;
    // A WRITE placed by delivery_target::place_write: data is empty, its ses->request_length bytes
    // are already in place, except when the hook refused some packet (placement_failed).
    bool placed = false, placement_failed = false;
    // What post_response() needs to answer this request in an ACK (answers_in_acks); 0: none.
    std::uint64_t answer_token = 0;
    // The PDC the request came on, for post_response() (an error answer waits there until the
    // PDC's initiator has shown that the source address is its own); 0: none.
    std::uint32_t request_pdc = 0;
};

// Engine-level reasons for dropping a received frame (wire decoders have their own).
enum class drop_reason : std::uint8_t {
    not_udp,             // ARP or IP without UDP
    not_for_us,          // another destination IP
    wrong_port,          // another UDP destination port
    peer_table_full,     // a new source with max_peers already known
    unsupported_type,    // a PDS type or CTRL this engine does not handle
    unknown_pdc,         // DPDCID names no PDC of ours (or of another peer / mode / role)
    stale_syn,           // a SYN packet of a PDC already closed
    beyond_window,       // PSN beyond the receive window
    out_of_order,        // ROD: not the expected PSN
    malformed_ses,       // SES header missing, opcode not carried, or a bad segment
    no_rx_buffer,        // no reassembly slot: left unacknowledged for the sender to retry
    bad_ack,             // ACK for PSNs never sent
    stale_response,      // RUDI response / NACK for a request no longer outstanding
    trimmed_dropped,     // trimmed packet of a mode that cannot ask for it again (UUD)
    control_queue_full,  // no room to queue an ACK/NACK/response
    unknown_source,      // an ACK, NACK, CTRL or non-SYN request from a source not in the table
    forged_close,        // a CLOSE refused: data still owed on the PDC, or data came after it
    unvalidated_reply,   // an error answer to a request whose PDC never showed its source real
    wrong_pid,           // a request for another PIDonFEP (engine_config::fep_pids)
    count_
};
inline constexpr std::size_t drop_reason_count = static_cast<std::size_t>(drop_reason::count_);
const char* to_string(drop_reason r) noexcept;

struct engine_counters {
    pds::pdc_counters pds;  // summed over every PDC, open or closed, plus RUDI/UUD traffic
    lb::lb_stats lb;        // path selectors' events (REPS freezes), over every PDC
    std::uint64_t frames_tx = 0, bytes_tx = 0, frames_rx = 0, bytes_rx = 0;
    // Data frames read against the one before them (header prediction), not in full.
    std::uint64_t frames_predicted = 0;
    // Of those, the ones taken as part of a run: consecutive packets of one message, or
    // consecutive one-packet messages of one PDC, in one receive burst, placed with one lookup
    // of their PDC (and message) (receive_burst()). A predicted frame received alone
    // (receive()) is a run of one: it counts too.
    std::uint64_t frames_in_runs = 0;
    // Data frames built in a transmit batch of two or more: new packets of one PDC built with
    // their PDC's checks done once, inside one message or one-packet messages built from the
    // one before them (transmit()).
    std::uint64_t frames_sent_in_runs = 0;
    // How transmit() calls that built data frames, or found none to build, ended: with the
    // burst full; held by a PDC's window (packets in flight, or the congestion controller);
    // with nothing queued to send. Where a sender's idle polls come from.
    std::uint64_t tx_calls_full = 0, tx_calls_held_by_window = 0, tx_calls_nothing_queued = 0;
    std::uint64_t pdcs_opened = 0, pdcs_closed = 0, pdcs_failed = 0;
    // Peers added by their first packet, and learned peers holding no state forgotten to make
    // room for a new source (the table full).
    std::uint64_t peers_learned = 0, peers_forgotten = 0;
    std::uint64_t target_pdcs_opened = 0, target_pdcs_closed = 0, target_pdcs_expired = 0;
    std::uint64_t messages_posted = 0, messages_completed = 0, messages_failed = 0;
    std::uint64_t messages_delivered = 0;
    std::uint64_t taken_single_packet =
        0;  // of those, taken by delivery_target::take_single_packet_messages
    std::uint64_t rudi_requests_tx = 0, rudi_responses_rx = 0, uud_tx = 0, uud_rx = 0;
    // Target: requests answered in an ACK (answers_in_acks), and answered by a response message
    // (all of them without answers_in_acks); initiator: completions answered by an ACK, and those
    // that waited too long for announced response messages.
    std::uint64_t answers_in_acks = 0, answers_as_messages = 0;
    std::uint64_t answered_by_ack = 0, answer_waits_expired = 0;
    // Path-ID loss detection (engine_config::path_ids): data packets whose path ID was above
    // path_ids, ignored for detection (the packet itself is taken as usual). The holes it found
    // are pds.nacks_sent[inferred_loss].
    std::uint64_t path_ids_out_of_range = 0;
    std::array<std::uint64_t, wire::reject_reason_count> rejects{};
    std::array<std::uint64_t, drop_reason_count> drops{};

    std::uint64_t dropped(drop_reason r) const noexcept {
        return drops[static_cast<std::size_t>(r)];
    }
    std::uint64_t rejected(wire::reject_reason r) const noexcept {
        return rejects[static_cast<std::size_t>(r)];
    }
};

// One PDC as seen from outside (diagnostics).
struct pdc_info {
    peer_id peer = invalid_peer;
    delivery_mode mode = delivery_mode::rud;
    bool initiator = true;
    const char* state = "";
    std::uint16_t local_id = 0, remote_id = 0;
    pds::pdc_counters counters;
};

class engine_impl;

class engine final : public frame_engine {
  public:
    explicit engine(const engine_config& cfg);
    ~engine();
    engine(engine&&) noexcept;
    engine& operator=(engine&&) noexcept;
    engine(const engine&) = delete;
    engine& operator=(const engine&) = delete;

    // Registers a destination, a UET address: IPv4 address and PIDonFEP (12 bits; the SES
    // requests to it carry it, so that a FEP with several processes behind it hands them to the
    // right one). The same address twice gives the same id. invalid_peer when max_peers are
    // known. Sources that send to us are added when their first packet opens state
    // here (a PDC, a message); such a learned peer may later be forgotten, when it holds no
    // state and the table is full, unless add_peer() or keep_peer() named it.
    peer_id add_peer(const wire::mac_address& mac, std::uint32_t ip, std::uint16_t pid = 0);
    // A learned peer the caller keeps a reference to (an address-vector entry it maps to): never
    // forgotten from now on.
    void keep_peer(peer_id p) noexcept;
    // Queues a message; data must stay valid until its completion is polled.
    status post_send(peer_id to, delivery_mode mode, std::span<const std::uint8_t> data,
                     std::uint64_t context);
    // post_send() with the SES fields given (any carried opcode, or a response when
    // ses.response: its message id is then ses.message_id). message_id, if given, receives the
    // id the message goes out with, which the target's response will name.
    status post_message(peer_id to, delivery_mode mode, const ses_fields& ses,
                        std::span<const std::uint8_t> data, std::uint64_t context,
                        std::uint16_t* message_id = nullptr);
    // Our RUD/ROD request `id` to `to` while its PDS completion is still to come (the engine
    // tracks those by id): its message index, for message() (its context) and make_loud(). A
    // response that overtook the completion finds its request here. nullopt for any other.
    std::optional<std::uint32_t> pending_request(peer_id to, delivery_mode mode,
                                                 std::uint16_t id) const;

    // ---- unsignaled requests: most end without a completion ----
    // A RUD/ROD request as post_message() posts it, whose good end (PDS-acknowledged and
    // answered RC_OK in the ACK) gives no completion: it is only counted, for
    // take_unsignaled_ended(). Any other end gives a completion with `unsignaled` set and the
    // message kept (message(c.message): what was posted) until release_unsignaled_message(). An
    // application that asked for no completion of most of its sends pays nothing per send for the
    // end of each. Its fields are `common`'s with `own`'s in place of theirs: a caller keeps one
    // `common` per kind of send, built once, rather than building all 128 bytes of fields for each
    // send
    // (~15 instructions of endpoint::send under callgrind).
    status post_unsignaled_message(peer_id to, delivery_mode mode, const ses_fields& common,
                                   own_request_fields own, std::span<const std::uint8_t> data,
                                   std::uint64_t context);
    // post_unsignaled_message() of each of `list` in turn, to one peer with one `common` (a post
    // list): what they share is checked and updated once. Returns how many were posted, from
    // the first; the first one not posted is one post_unsignaled_message() would refuse (no room, a
    // message too long, an unknown peer, a mode that cannot be unsignaled: then none).
    std::size_t post_unsignaled_messages(peer_id to, delivery_mode mode, const ses_fields& common,
                                         std::span<const unsignaled_request> list);
    // Unsignaled requests that ended well since the last call.
    std::uint64_t take_unsignaled_ended() noexcept;
    // A message posted and not yet released: its data, length, peer, id, fields and context.
    const ses::tx_message& message(std::uint32_t index) const noexcept;
    // An unsignaled request from now on an ordinary one with this context: its end, or the
    // completion of its end already given, carries it (message(index).unsignaled is then false).
    void make_loud(std::uint32_t index, std::uint64_t context) noexcept;
    void release_unsignaled_message(std::uint32_t index) noexcept;
    // The first unsignaled request (in flight or kept) at message index `from` or above; 0xffffffff
    // when there is none. A scan of the pool: for rare paths (an RTR, close), allocating
    // nothing (close() is noexcept).
    std::uint32_t next_unsignaled_message(std::uint32_t from) const noexcept;
    // One received Ethernet frame (any content: hostile input is counted and dropped): a burst
    // of one.
    void receive(std::span<const std::uint8_t> frame, std::uint64_t now);
    // A burst of received frames, all valid during the call: the same as receive() for each in
    // turn, except that consecutive data packets of one message (header prediction) are taken
    // as a run, with one lookup of their PDC, message and target region.
    void receive_burst(std::span<const std::span<const std::uint8_t>> frames, std::uint64_t now);
    // The same, some frames in two pieces (rests[i] for frames[i]; see wire::frame_rest): a run
    // reads their payloads where they are; any other reading joins the frame first (a copy).
    void receive_burst(std::span<const std::span<const std::uint8_t>> frames,
                       const wire::frame_rest* rests, std::uint64_t now) override;
    // Fires due timers, then fills out with up to out.size() frames to send now.
    std::size_t transmit(std::uint64_t now, std::span<tx_frame> out) override;
    // Fires due timers only (transmit() does this too).
    void advance(std::uint64_t now);
    // When the engine next needs a call: the current time if it has frames ready, else its
    // earliest timer; UINT64_MAX when idle.
    std::uint64_t next_deadline() const override;

    // Answers a request poll_received() gave (ses.response set, ses.message_id its id): in the
    // PDS ACK when answers_in_acks and the answer is RC_OK without data, else as a response
    // message (post_message()).
    status post_response(const received_message& request, const ses_fields& ses,
                         std::span<const std::uint8_t> data, std::uint64_t context);
    // The common answer, RC_OK without data, where it goes in the PDS ACK: what post_response()
    // would do with it, without the response's fields built first. false: nothing done (the
    // answer must go as a message: post_response()).
    bool answer_ok_in_ack(const received_message& request);
    // answer_ok_in_ack(), and where it answered, release(request.handle): the end of nearly every
    // message delivered, in one call. false: nothing done (the answer goes as a message).
    bool release_answering_ok(const received_message& request);
    // poll_received() of up to out.size() messages at once; how many.
    std::size_t poll_received(std::span<received_message> out);
    std::size_t poll_send_completions(std::span<send_completion> out);
    bool poll_received(received_message& out);
    void release(std::uint64_t handle);

    const engine_counters& counters() const;
    // The IPv4 address (host order) of a known peer; 0 for an unknown id.
    std::uint32_t peer_ip(peer_id p) const noexcept;
    // Its PIDonFEP (a source's: what its requests' SES initiator field said); 0 for an unknown id.
    std::uint16_t peer_pid(peer_id p) const noexcept;
    std::vector<pdc_info> pdcs() const;  // allocates: diagnostics only
    const engine_config& config() const;
    // True when nothing is queued, in flight or open on the send side.
    bool idle() const;
    // From now on transmit() sends control frames only (ACKs, NACKs, RUDI responses): for a
    // last flush before the engine goes, when the memory of posted messages may be gone.
    void stop_data() noexcept override;

  private:
    std::unique_ptr<engine_impl> impl_;
};

}  // namespace uet
