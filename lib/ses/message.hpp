// SES send side: messages waiting for or in transmission, cut into mtu_payload segments, each
// carried by a standard request header (opcode SEND, SOM/EOM, message_id, request_length = the
// whole message on every packet; SOM=0 packets carry payload_length and message_offset so the
// target can place out-of-order packets).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "uet_ses.hpp"

namespace uet::ses {

inline constexpr std::uint32_t no_index = 0xffffffffu;

struct segment {
    std::uint32_t offset = 0;
    std::uint32_t length = 0;
    bool som = false, eom = false;
};

struct tx_message {
    const std::uint8_t* data = nullptr;  // the application's bytes, valid until completion
    std::uint32_t length = 0;
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
};

// How many packets a message of `length` bytes takes (an empty message still takes one).
constexpr std::uint32_t packets_for(std::uint32_t length, std::uint32_t mtu) noexcept {
    return length == 0 ? 1 : (length + mtu - 1) / mtu;
}

// Fixed pool of send-side message descriptors (max_pending_messages).
class tx_messages {
  public:
    tx_messages(std::size_t capacity, std::uint32_t mtu);

    std::uint32_t allocate(std::span<const std::uint8_t> data, std::uint64_t context,
                           std::uint32_t peer, std::uint8_t mode,
                           std::uint16_t message_id) noexcept;
    void release(std::uint32_t index) noexcept;
    tx_message& operator[](std::uint32_t index) noexcept { return pool_[index]; }
    const tx_message& operator[](std::uint32_t index) const noexcept { return pool_[index]; }
    std::size_t in_use() const noexcept { return pool_.size() - free_.size(); }
    std::size_t capacity() const noexcept { return pool_.size(); }
    std::uint32_t mtu() const noexcept { return mtu_; }

    bool fully_segmented(const tx_message& m) const noexcept {
        return m.started && m.next_offset >= m.length;
    }
    // The next piece of m (advances its cursor).
    segment next_segment(tx_message& m) const noexcept;
    // The piece at a given offset again (retransmission).
    segment segment_at(const tx_message& m, std::uint32_t offset) const noexcept;

  private:
    std::vector<tx_message> pool_;
    std::vector<std::uint32_t> free_;
    std::uint32_t mtu_;
};

// FIFO of message indices linked through tx_message::next.
struct message_queue {
    std::uint32_t head = no_index, tail = no_index;

    bool empty() const noexcept { return head == no_index; }
    void push(tx_messages& pool, std::uint32_t index) noexcept;
    std::uint32_t pop(tx_messages& pool) noexcept;
};

// The SES header of one segment of m.
wire::ses_standard_request request_header(const tx_message& m, const segment& s) noexcept;

// Checks an arriving SEND segment and says where it goes; nullopt for anything malformed
// (wrong opcode, a segment outside the message or not on the sender's mtu grid, SOM/EOM lying).
// Peers must share mtu_payload: the grid is what lets the target count packets exactly.
std::optional<segment> check_segment(const wire::ses_standard_request& h, std::size_t payload_size,
                                     std::uint32_t mtu, std::uint32_t max_message) noexcept;

}  // namespace uet::ses
