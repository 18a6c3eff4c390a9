// SES send side: messages waiting for or in transmission, cut into mtu_payload segments, each
// carried by a standard request header (SOM/EOM, message_id, request_length = the whole message
// on every packet; SOM=0 packets carry payload_length and message_offset so the target can place
// out-of-order packets) or, for a response, by a RESPONSE / RESPONSE_WITH_DATA header. The
// operation's own fields (opcode, job, key or match bits, offset, extensions) ride in every
// packet: op_fields says what they are; their meaning is the API layer's business.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "wire/uet_ses.hpp"

namespace uet::ses {

inline constexpr std::uint32_t no_index = 0xffffffffu;

// The SES fields of one message, the same in every packet of it (header_data only in the SOM
// packet). On receive they are what the message's packets said.
struct op_fields {
    wire::ses_opcode opcode = wire::ses_opcode::send;
    // A response (to request message_id of the same peer and mode) instead of a request.
    bool response = false;
    wire::ses_return_code return_code = wire::ses_return_code::ok;  // responses
    bool hd = false;
    std::uint32_t job_id = 0;  // 24 bits
    // The target's PIDonFEP (12 bits): which process behind the target's FEP a request is for.
    // The engine sets it from the peer a message goes to.
    std::uint16_t pid_on_fep = 0;
    std::uint16_t resource_index = 0;
    // Who sent it, in the job: uet puts the initiator's PIDonFEP here (its IPv4 address is the
    // frame's source), so that a target tells apart the processes behind one FEP.
    std::uint32_t initiator = 0;
    std::uint64_t buffer_offset = 0;
    std::uint64_t memory_key = 0;  // match bits for tagged sends
    std::uint64_t header_data = 0;
    // The announced length when the payload is not the message: the bytes a READ asks for, the
    // whole of a rendezvous send, a response's modified_length. 0: the payload's size.
    std::uint32_t request_length = 0;
    std::uint16_t message_id = 0;  // responses: the request they answer
    std::optional<wire::ses_atomic_extension> atomic;
    std::optional<wire::ses_cas_extension> cas;
    std::optional<wire::ses_rendezvous_extension> rendezvous;
};

struct segment {
    std::uint32_t offset = 0;
    std::uint32_t length = 0;
    bool som = false, eom = false;
};

struct tx_message {
    const std::uint8_t* data = nullptr;  // the application's bytes, valid until completion
    std::uint32_t length = 0;
    // A tracked request's entry in the engine's request_index (its erase hint), else no_index.
    std::uint32_t request_slot = no_index;
    std::uint64_t context = 0;
    std::uint32_t peer = 0;
    std::uint8_t mode = 0;
    std::uint16_t message_id = 0;
    std::uint32_t next_offset = 0;  // first byte not yet handed to PDS
    std::uint32_t packets_total = 0, packets_done = 0;
    std::uint32_t next = no_index;   // queue link
    std::uint32_t owner = no_index;  // PDC carrying it, once its first packet left
    bool started = false;
    bool failed = false;
    bool in_use = false;
    // Answers in ACKs (initiator): a response message answered it; it waits, acknowledged, in
    // its PDC's list for the response messages an ACK announced (since undecided_since).
    bool answered_by_message = false;
    bool undecided = false;
    // An unsignaled request (engine::post_unsignaled_message): its good end is only counted. kept:
    // it ended otherwise, and stays (in use) until the caller has read it
    // (release_unsignaled_message).
    bool unsignaled = false;
    bool kept = false;
    // An unsignaled request whose good end, answered in an ACK, is only counted, at once:
    // unsignaled, not kept, not answered by a message, not a response and not an opcode whose
    // answer is a message (answer_tracker::on_data_acked's one test, in the byte these leave
    // spare). Whatever makes one of those false clears it.
    bool ends_counted = false;
    std::uint32_t next_undecided = no_index;
    std::uint64_t undecided_since = 0;
    op_fields fields;
};

// Requests whose answer never rides in a PDS ACK (answers in ACKs): it carries data (READ, the
// fetching atomics) or comes only after more traffic (a rendezvous send is answered once its
// data has been pulled). Both sides decide by the opcode: the target does not count these
// answers in its ACKs and the initiator does not wait for them in the count, so a long transfer
// does not hold back the answers of the other requests of its PDC.
constexpr bool answer_needs_message(wire::ses_opcode op) noexcept {
    using wire::ses_opcode;
    return op == ses_opcode::read || op == ses_opcode::fetching_atomic ||
           op == ses_opcode::tsend_fetch_atomic || op == ses_opcode::rendezvous_send ||
           op == ses_opcode::rendezvous_tsend;
}

// How many packets a message of `length` bytes takes (an empty message still takes one).
constexpr std::uint32_t packets_for(std::uint32_t length, std::uint32_t mtu) noexcept {
    return length <= mtu ? 1 : (length + mtu - 1) / mtu;  // one packet: no division
}

// Fixed pool of send-side message descriptors (max_pending_messages).
class tx_messages {
  public:
    tx_messages(std::size_t capacity, std::uint32_t mtu);

    std::uint32_t allocate(std::span<const std::uint8_t> data, std::uint64_t context,
                           std::uint32_t peer, std::uint8_t mode, std::uint16_t message_id,
                           const op_fields& fields = {}) noexcept;
    void release(std::uint32_t index) noexcept;
    tx_message& operator[](std::uint32_t index) noexcept { return pool_[index]; }
    const tx_message& operator[](std::uint32_t index) const noexcept { return pool_[index]; }
    // capacity_ rather than pool_.size(): the latter divides by sizeof(tx_message) (200).
    std::size_t in_use() const noexcept { return capacity_ - free_.size(); }
    std::size_t available() const noexcept { return free_.size(); }
    std::size_t capacity() const noexcept { return capacity_; }
    std::uint32_t mtu() const noexcept { return mtu_; }

    bool fully_segmented(const tx_message& m) const noexcept {
        return m.started && m.next_offset >= m.length;
    }
    // The piece at a given offset (every packet built, retransmissions too). Inline: returned
    // from another translation unit, the 10-byte segment is assembled on the stack byte by byte
    // and read back whole, a store-forwarding stall on every packet.
    segment segment_at(const tx_message& m, std::uint32_t offset) const noexcept {
        segment s;
        s.offset = offset;
        s.length = std::min(mtu_, m.length - offset);
        s.som = offset == 0;
        s.eom = offset + s.length >= m.length;
        return s;
    }
    // The next piece of m (advances its cursor).
    segment next_segment(tx_message& m) const noexcept {
        const segment s = segment_at(m, m.next_offset);
        m.next_offset += s.length;
        m.started = true;
        return s;
    }

  private:
    std::vector<tx_message> pool_;
    std::vector<std::uint32_t> free_;
    std::size_t capacity_;
    std::uint32_t mtu_;
};

// Inline: one of each per message sent, from the engine's post and its ACK handlers.
inline std::uint32_t tx_messages::allocate(std::span<const std::uint8_t> data,
                                           std::uint64_t context, std::uint32_t peer,
                                           std::uint8_t mode, std::uint16_t message_id,
                                           const op_fields& fields) noexcept {
    if (free_.empty()) return no_index;
    const std::uint32_t index = free_.back();
    free_.pop_back();
    // Every member stored once, in place: zeroing the entry first wrote the 128-byte fields
    // twice, and a designated-initializer temporary left eight dead stores of them on the stack.
    // A member added to tx_message must be set here too (the size check says so).
    static_assert(sizeof(tx_message) == 200, "tx_messages::allocate() sets every member");
    tx_message& m = pool_[index];
    const auto length = static_cast<std::uint32_t>(data.size());
    m.data = data.data();
    m.length = length;
    m.request_slot = no_index;
    m.context = context;
    m.peer = peer;
    m.mode = mode;
    m.message_id = message_id;
    m.next_offset = 0;
    m.packets_total = packets_for(length, mtu_);
    m.packets_done = 0;
    m.next = no_index;
    m.owner = no_index;
    m.started = false;
    m.failed = false;
    m.in_use = true;
    m.answered_by_message = false;
    m.undecided = false;
    m.unsignaled = false;
    m.kept = false;
    m.ends_counted = false;
    m.next_undecided = no_index;
    m.undecided_since = 0;
    m.fields = fields;
    return index;
}

inline void tx_messages::release(std::uint32_t index) noexcept {
    pool_[index].in_use = false;
    free_.push_back(index);
}

// FIFO of message indices linked through tx_message::next.
struct message_queue {
    std::uint32_t head = no_index, tail = no_index;

    bool empty() const noexcept { return head == no_index; }
    void push(tx_messages& pool, std::uint32_t index) noexcept;
    std::uint32_t pop(tx_messages& pool) noexcept;
};

// The SES request header of one segment of m (its fields, SEND by default).
wire::ses_standard_request request_header(const tx_message& m, const segment& s) noexcept;
// Its 44 fixed bytes alone, which is all of it unless has_extensions(m.fields). Inline: with
// wire::store_standard_fields inline too, a data packet's header goes from the message into the
// frame without a header struct in between (built, returned and read back).
inline wire::ses_standard_fields standard_fields(const tx_message& m, const segment& s) noexcept {
    const op_fields& f = m.fields;
    wire::ses_standard_fields h;
    h.opcode = f.opcode;
    h.som = s.som;
    h.eom = s.eom;
    h.hd = f.hd;
    h.message_id = m.message_id;
    h.job_id = f.job_id & 0xffffff;
    h.pid_on_fep = f.pid_on_fep & 0xfff;
    h.resource_index = f.resource_index & 0xfff;
    h.initiator = f.initiator;
    h.buffer_offset = f.buffer_offset;
    h.memory_key = f.memory_key;
    h.request_length = f.request_length != 0 ? f.request_length : m.length;
    if (s.som) {
        h.header_data = f.header_data;
    } else {
        h.payload_length = static_cast<std::uint16_t>(s.length);
        h.message_offset = s.offset;
    }
    return h;
}
inline bool has_extensions(const op_fields& f) noexcept {
    return f.atomic.has_value() || f.cas.has_value() || f.rendezvous.has_value();
}
// The SES header of one segment of m: request_header(), or the response form m.fields asks for.
wire::ses_header packet_header(const tx_message& m, const segment& s) noexcept;

// An arriving packet's SES header checked and reduced to where its payload goes.
struct rx_segment {
    segment seg;
    std::uint32_t total = 0;  // bytes of the message the payloads add up to
    std::uint16_t message_id = 0;
    op_fields fields;
};

// Checks any SES header the engine carries (requests of the opcodes in `carried_opcode`,
// RESPONSE, RESPONSE_WITH_DATA) into out, which must be fresh (only the header's fields are
// written, in place: every received packet comes here); false for anything malformed. READ
// requests, rendezvous sends and responses without data are single packets whose payload is
// not the message.
bool check_packet(const wire::ses_header& h, std::size_t payload_size, std::uint32_t mtu,
                  std::uint32_t max_message, rx_segment& out) noexcept;
bool carried_opcode(wire::ses_opcode op) noexcept;
// The same check for a standard request without extension headers, from its 44 bytes alone
// (wire::read_plain_request); false also for a READ, whose payload is not the message: the
// caller then takes check_packet's path, which decides. On true out equals what check_packet
// writes for the same header.
bool check_plain_request(const wire::ses_standard_fields& h, std::size_t payload_size,
                         std::uint32_t mtu, std::uint32_t max_message, rx_segment& out) noexcept;

// Checks an arriving SEND segment and says where it goes (into s); false for anything malformed
// (wrong opcode, a segment outside the message or not on the sender's mtu grid, SOM/EOM lying).
// Peers must share mtu_payload: the grid is what lets the target count packets exactly.
// Inline and written in place for the same reason as segment_at: every received packet is
// checked here, and a segment returned by value is read back whole from narrower stores.
inline bool check_segment(const wire::ses_standard_fields& h, std::size_t payload_size,
                          std::uint32_t mtu, std::uint32_t max_message, segment& s) noexcept {
    if (!carried_opcode(h.opcode) || h.request_length > max_message) return false;
    s.som = h.som;
    s.eom = h.eom;
    s.offset = h.som ? 0 : h.message_offset;
    // SOM packets carry no payload_length (the slot holds header data): the payload is the rest.
    const std::size_t length = h.som ? payload_size : h.payload_length;
    if (length > payload_size) return false;
    if (s.offset != 0 && s.offset % mtu != 0) return false;  // most: one packet
    if (h.request_length != 0 && s.offset >= h.request_length) return false;
    const std::uint32_t expected = std::min(mtu, h.request_length - s.offset);
    if (length != expected) return false;
    s.length = expected;
    if (s.eom != (s.offset + s.length == h.request_length)) return false;
    return h.request_length != 0 || (s.som && s.eom);
}

// check_plain_request of the next packet of a message (wire::read_next_plain_request: its header
// differs from an earlier packet's only in message_offset), in place: r holds what
// check_plain_request gave for that packet and becomes this one's; only the segment is read
// and checked again. False where check_plain_request would refuse the packet.
inline bool check_next_plain_request(const wire::ses_standard_fields& h, std::size_t payload_size,
                                     std::uint32_t mtu, std::uint32_t max_message,
                                     rx_segment& r) noexcept {
    return check_segment(h, payload_size, mtu, max_message, r.seg);
}

// check_segment of a packet whose SES header is that of the packet before it in a run (`prev`,
// which check_segment accepted) but for message_offset `offset`, where it follows prev (offset =
// prev's end): the same verdict and segment without the general checks. prev is neither first
// nor last of its message, so a full packet (a multiple of the MTU ends it) with eom clear; this
// one, with the same flags and payload_length, is accepted exactly when it too ends before the
// message. False also where it does not follow prev (or prev is a first or last packet).
inline bool check_following_segment(const segment& prev, std::uint32_t offset,
                                    std::uint32_t request_length, segment& s) noexcept {
    if (prev.som || prev.eom || offset != prev.offset + prev.length) return false;
    if (std::uint64_t{offset} + prev.length >= request_length) return false;
    s = prev;
    s.offset = offset;
    return true;
}

}  // namespace uet::ses
