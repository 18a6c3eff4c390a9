#include "message.hpp"

#include <algorithm>

namespace uet::ses {

tx_messages::tx_messages(std::size_t capacity, std::uint32_t mtu) : pool_(capacity), mtu_(mtu) {
    free_.reserve(capacity);
    for (std::size_t i = capacity; i-- > 0;)
        free_.push_back(static_cast<std::uint32_t>(i));
}

std::uint32_t tx_messages::allocate(std::span<const std::uint8_t> data, std::uint64_t context,
                                    std::uint32_t peer, std::uint8_t mode,
                                    std::uint16_t message_id) noexcept {
    if (free_.empty()) return no_index;
    const std::uint32_t index = free_.back();
    free_.pop_back();
    tx_message& m = pool_[index];
    m = tx_message{};
    m.data = data.data();
    m.length = static_cast<std::uint32_t>(data.size());
    m.context = context;
    m.peer = peer;
    m.mode = mode;
    m.message_id = message_id;
    m.packets_total = packets_for(m.length, mtu_);
    m.in_use = true;
    return index;
}

void tx_messages::release(std::uint32_t index) noexcept {
    pool_[index].in_use = false;
    free_.push_back(index);
}

segment tx_messages::segment_at(const tx_message& m, std::uint32_t offset) const noexcept {
    segment s;
    s.offset = offset;
    s.length = std::min(mtu_, m.length - offset);
    s.som = offset == 0;
    s.eom = offset + s.length >= m.length;
    return s;
}

segment tx_messages::next_segment(tx_message& m) const noexcept {
    const segment s = segment_at(m, m.next_offset);
    m.next_offset += s.length;
    m.started = true;
    return s;
}

void message_queue::push(tx_messages& pool, std::uint32_t index) noexcept {
    pool[index].next = no_index;
    if (tail == no_index)
        head = index;
    else
        pool[tail].next = index;
    tail = index;
}

std::uint32_t message_queue::pop(tx_messages& pool) noexcept {
    const std::uint32_t index = head;
    if (index == no_index) return index;
    head = pool[index].next;
    if (head == no_index) tail = no_index;
    return index;
}

wire::ses_standard_request request_header(const tx_message& m, const segment& s) noexcept {
    wire::ses_standard_request h;
    h.opcode = wire::ses_opcode::send;
    h.som = s.som;
    h.eom = s.eom;
    h.message_id = m.message_id;
    h.request_length = m.length;
    if (!s.som) {
        h.payload_length = static_cast<std::uint16_t>(s.length);
        h.message_offset = s.offset;
    }
    return h;
}

std::optional<segment> check_segment(const wire::ses_standard_request& h, std::size_t payload_size,
                                     std::uint32_t mtu, std::uint32_t max_message) noexcept {
    if (h.opcode != wire::ses_opcode::send || h.request_length > max_message) return std::nullopt;
    segment s;
    s.som = h.som;
    s.eom = h.eom;
    s.offset = h.som ? 0 : h.message_offset;
    // SOM packets carry no payload_length (the slot holds header data): the payload is the rest.
    const std::size_t length = h.som ? payload_size : h.payload_length;
    if (length > payload_size) return std::nullopt;
    if (s.offset % mtu != 0) return std::nullopt;
    if (h.request_length != 0 && s.offset >= h.request_length) return std::nullopt;
    const std::uint32_t expected = std::min(mtu, h.request_length - s.offset);
    if (length != expected) return std::nullopt;
    s.length = expected;
    if (s.eom != (s.offset + s.length == h.request_length)) return std::nullopt;
    if (h.request_length == 0 && !(s.som && s.eom)) return std::nullopt;
    return s;
}

}  // namespace uet::ses
