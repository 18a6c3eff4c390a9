// The endpoint's pools: operations (what the application posted) and message records (one engine
// message of an operation, in flight until it has both left and been answered). Header only:
// taking and giving back an entry is on every post's path.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <type_traits>
#include <vector>

#include "core/flat_map.hpp"
#include "engine/engine.hpp"
#include "ses/matching.hpp"
#include "uet/uet.hpp"

namespace uet::detail {

inline constexpr std::uint32_t none = 0xffffffffu;

// The key of record_pool's index: (peer, mode, message id).
constexpr std::uint64_t record_key_of(std::uint32_t peer, std::uint8_t mode, std::uint16_t id) {
    return (std::uint64_t{peer} << 24) | (std::uint64_t{mode} << 16) | id;
}

// One operation the application posted (or a receive), from the endpoint's pool.
enum class op_kind : std::uint8_t { send, recv, write, read, atomic };

// Its fields in two parts. op_hot holds what the paths of every kind read (posting, matching a
// receive, progress, the completion): cleared when an entry is taken, in the entry's first three
// cache lines. op_cold holds what only some operations use, each group set whole where its
// guard is (an error; kind atomic; reserved; pulling) and read only behind it, so taking an entry
// does not touch it. A receive's entry is taken, matched and completed ~rx_depth messages apart, so
// every line of it that is touched then is a cache miss.
struct op_hot {
    void* context = nullptr;
    const std::byte* src = nullptr;  // send, write, atomic operands
    std::byte* dst = nullptr;        // recv, read, fetched values
    std::size_t len = 0;             // bytes of the operation (a receive: its buffer)
    std::uint64_t offset = 0, key = 0, tag = 0, data = 0;
    peer_addr peer = any_peer;
    // progress
    std::size_t next_offset = 0;
    // sends
    std::uint64_t rendezvous_key = 0;
    // A send's one engine message goes without a record (post_send_message): its id, and its
    // record once the answer turned out to come as a message (none until then).
    std::uint32_t record = none;
    std::uint16_t message_id = 0;
    // receives
    std::size_t msg_len = 0;  // the matched message's length
    peer_addr msg_from = any_peer;
    std::uint64_t msg_tag = 0;
    ses::match_rule rule;
    std::uint32_t engine_peer = none;
    std::uint32_t in_flight = 0;         // engine messages not finished
    std::uint32_t target_token = 0;      // from the RTR, sent back in the restart token
    std::uint32_t unsignaled_token = 0;  // a send posted unsignaled: the restart token it went with
    errc error{};
    completion_flags flags = completion_flags::none;
    std::uint16_t generation = 0;
    op_kind kind = op_kind::send;
    bool in_use = false;
    bool inject = false;  // no completion (but for an error)
    bool silent = false;  // op_flags::no_completion: an entry only for an error
    bool tagged = false;
    bool hd = false;
    bool issued = false;  // at least one message went (zero-length operations)
    wire::ses_opcode opcode = wire::ses_opcode::send;
    bool deferred = false;  // the target answered NO_MATCH: waiting for its RTR
    bool rtr_seen = false;  // the RTR came before the NO_MATCH response
    bool reserved = false;  // a receive promised to a deferred send by an RTR
    bool pulling = false;   // a receive of a rendezvous, pulling the rest
    bool multi = false;     // a multi-receive buffer: next_offset is its first free byte
};

struct op_cold {
    // error (fail() sets them with it)
    std::size_t olen = 0;
    int prov_errno = 0;
    // atomics (kind atomic: post_atomic sets them; compare and swap only with cas)
    wire::ses_atomic_extension atomic{};
    std::array<std::uint8_t, 16> compare{}, swap{};
    bool cas = false, fetching = false;
    // reserved: for whom
    std::uint32_t reserved_peer = none, reserved_token = 0;
    // pulling: what to pull, and whom to answer when done
    std::uint64_t pull_key = 0, pull_offset = 0;
    std::uint32_t origin_peer = none, origin_job = 0;
    delivery_mode origin_mode = delivery_mode::rud;
    std::uint16_t origin_message_id = 0;
    std::uint64_t origin_answer_token = 0;  // the engine's, to answer it (answers in ACKs)
    std::uint32_t origin_request_pdc = 0;   // the engine's, to answer it (held answers)
    // a rendezvous send (rendezvous_key set): read responses cut from its buffer that are still
    // in the engine (rendezvous::register_send sets it)
    std::uint32_t reads_served = 0;
};

// A cleared hot part, copied from here: `= op_hot{}` built the value on the stack and copied it
// over, each line stored twice and read back once.
inline constexpr op_hot cleared_op_hot{};

struct alignas(64) op : op_hot, op_cold {
    // A new operation: the hot part cleared, the cold part left to its groups' setters. Copied
    // whole, a few 32-byte moves, rather than assigned member by member.
    void clear_hot() noexcept {
        std::memcpy(static_cast<op_hot*>(this), &cleared_op_hot, sizeof(op_hot));
    }
};
static_assert(std::is_trivially_copyable_v<op_hot>, "op::clear_hot copies it as bytes");
static_assert(sizeof(op_hot) <= 192, "the hot part of an operation fits three cache lines");

// An RMA operation's fields (kind write or read), as every transport's endpoint sets them.
inline void set_rma(op& o, op_kind kind, const std::byte* src, std::byte* dst, std::size_t len,
                    std::uint64_t offset, std::uint64_t key, bool with_data,
                    std::uint64_t data) noexcept {
    o.src = src;
    o.dst = dst;
    o.len = len;
    o.offset = offset;
    o.key = key;
    o.hd = with_data;
    o.data = data;
    o.flags = completion_flags::rma |
              (kind == op_kind::write ? completion_flags::write : completion_flags::read);
}

// A plain receive's fields (kind recv), before it is matched or posted.
inline void set_recv(op& o, std::span<std::byte> buf, bool tagged, const ses::match_rule& rule,
                     void* context) noexcept {
    o.kind = op_kind::recv;
    o.context = context;
    o.dst = buf.data();
    o.len = buf.size();
    o.tagged = tagged;
    o.rule = rule;
    o.flags = tagged ? completion_flags::recv | completion_flags::tagged : completion_flags::recv;
}

// One engine message of an operation, in flight until both its PDS completion and (for modes
// that answer) its SES response are in.
struct message_record {
    bool in_use = false;
    errc error{};  // RTRs: how the initiator answered
    bool pds_done = false, response_done = false, expects_response = true;
    std::uint32_t op = none;  // none: an RTR whose receive is rtr_recv
    std::uint32_t rtr_recv = none;
    std::size_t offset = 0;  // where in the operation its bytes are
    std::uint32_t length = 0;
    std::uint32_t peer = none;
    std::uint8_t mode = 0;
    std::uint16_t message_id = 0;
    // In the pool's index. A RUD/ROD request goes in only once its PDS completion came without the
    // answer (the engine finds it by id until then); a RUDI request at once.
    bool indexed = false;
    // Acknowledged, the answer still missing: when to give up on it (0: not waiting, or a
    // rendezvous request, which the target answers only once it has pulled the data).
    std::uint64_t answer_by = 0;
};

// The operations, a free list, and one inject buffer per operation. Some free slots are kept for
// unsignaled sends (keep()): each may need its operation at its end (adopt_unsignaled), so they
// are not for others.
class op_pool {
  public:
    op_pool(std::size_t n, std::size_t inject_size)
        : ops_(n), inject_buffers_(n * inject_size), inject_size_(inject_size) {
        free_.reserve(ops_.size());
        for (std::size_t i = ops_.size(); i-- > 0;)
            free_.push_back(static_cast<std::uint32_t>(i));
    }

    // A new operation's index (its hot part cleared, in use), or none.
    std::uint32_t allocate() noexcept {
        if (room() == 0) return none;
        const std::uint32_t index = free_.back();
        free_.pop_back();
        op& o = ops_[index];
        // 15 bits, never 0: a token (generation and index) never has unsignaled_token_bit.
        const auto generation = static_cast<std::uint16_t>((o.generation + 1) & 0x7fff);
        o.clear_hot();
        o.generation = generation == 0 ? 1 : generation;
        o.in_use = true;
        return index;
    }
    void release(std::uint32_t index) noexcept {
        ops_[index].in_use = false;
        free_.push_back(index);
    }
    // Slots free beyond those kept for unsignaled sends.
    std::size_t room() const noexcept { return free_.size() > kept_ ? free_.size() - kept_ : 0; }
    void keep(std::size_t n) noexcept { kept_ += n; }
    void unkeep(std::size_t n) noexcept { kept_ -= n; }
    std::size_t kept() const noexcept { return kept_; }

    // Tokens name an operation on the wire (restart tokens, RTR): generation and index, never 0.
    std::uint32_t token_of(std::uint32_t index) const noexcept {
        return (std::uint32_t{ops_[index].generation} << 16) | index;
    }
    std::uint32_t op_of_token(std::uint32_t token) const noexcept {
        const std::uint32_t index = token & 0xffff;
        if (index >= ops_.size() || !ops_[index].in_use || ops_[index].generation != token >> 16)
            return none;
        return index;
    }
    // The send in use that went with unsignaled restart token `token` to engine_peer, or none.
    // Rare: a scan.
    std::uint32_t find_send_by_unsignaled_token(std::uint32_t token,
                                                std::uint32_t engine_peer) const noexcept {
        for (std::uint32_t i = 0; i < ops_.size(); ++i) {
            const op& o = ops_[i];
            if (o.in_use && o.kind == op_kind::send && o.unsignaled_token == token &&
                o.engine_peer == engine_peer)
                return i;
        }
        return none;
    }

    op& operator[](std::uint32_t index) noexcept { return ops_[index]; }
    const op& operator[](std::uint32_t index) const noexcept { return ops_[index]; }
    std::size_t size() const noexcept { return ops_.size(); }
    std::byte* inject_buffer(std::uint32_t index) noexcept {
        return &inject_buffers_[std::size_t{index} * inject_size_];
    }

  private:
    std::vector<op> ops_;
    std::vector<std::uint32_t> free_;
    std::size_t kept_ = 0;                   // unsignaled sends posted and not yet ended or adopted
    std::vector<std::byte> inject_buffers_;  // one inject_size slot per op
    std::size_t inject_size_;
};

// The message records, a free list, and an index of those whose answer comes as a message. Some
// free records are promised (promise()) to messages in flight without one, which take theirs only
// if their answer comes as a message (a send's, post_send_message; an unsignaled send's).
class record_pool {
  public:
    explicit record_pool(std::size_t n) : records_(n), by_id_(n) {
        free_.reserve(records_.size());
        for (std::size_t i = records_.size(); i-- > 0;)
            free_.push_back(static_cast<std::uint32_t>(i));
    }

    // Takes a record for operation index (the fields post_message would give it) or, with
    // index none, for the RTR of receive rtr_recv.
    std::uint32_t take(std::uint32_t index, std::uint32_t rtr_recv, std::uint32_t peer,
                       delivery_mode mode, std::size_t offset, std::uint32_t length,
                       std::uint16_t id) noexcept {
        const std::uint32_t rec = free_.back();
        free_.pop_back();
        message_record& r = records_[rec];
        r = message_record{};
        r.in_use = true;
        r.expects_response = mode != delivery_mode::uud;
        r.op = index;
        r.rtr_recv = rtr_recv;
        r.offset = offset;
        r.length = length;
        r.peer = peer;
        r.mode = static_cast<std::uint8_t>(mode);
        r.message_id = id;
        return rec;
    }
    // The record take() gives next.
    std::uint32_t next_index() const noexcept { return free_.back(); }
    // The record back in the pool, out of the index.
    void release(std::uint32_t rec) noexcept {
        message_record& r = records_[rec];
        if (r.indexed) by_id_.erase(record_key_of(r.peer, r.mode, r.message_id));
        r.in_use = false;
        free_.push_back(rec);
    }
    void promise(std::size_t n) noexcept { promised_ += n; }
    void unpromise(std::size_t n) noexcept { promised_ -= n; }
    // A record free beyond those promised.
    bool spare() const noexcept { return free_.size() > promised_; }
    // Records free beyond the promised ones.
    std::size_t room() const noexcept { return spare() ? free_.size() - promised_ : 0; }

    void index(std::uint32_t rec) {
        message_record& r = records_[rec];
        by_id_.insert(record_key_of(r.peer, r.mode, r.message_id), rec);
        r.indexed = true;
    }
    std::optional<std::uint32_t> find(std::uint32_t peer, std::uint8_t mode,
                                      std::uint16_t id) const noexcept {
        return by_id_.find(record_key_of(peer, mode, id));
    }

    message_record& operator[](std::uint32_t rec) noexcept { return records_[rec]; }
    const message_record& operator[](std::uint32_t rec) const noexcept { return records_[rec]; }
    std::size_t size() const noexcept { return records_.size(); }

  private:
    std::vector<message_record> records_;
    std::vector<std::uint32_t> free_;  // never fewer than promised_
    std::size_t promised_ = 0;         // messages in flight without one
    pds::flat_map by_id_;              // (peer, mode, message id) -> record
};

}  // namespace uet::detail
