#include "ses/message.hpp"

#include <algorithm>

namespace uet::ses {

tx_messages::tx_messages(std::size_t capacity, std::uint32_t mtu)
    : pool_(capacity), capacity_(capacity), mtu_(mtu) {
    free_.reserve(capacity);
    for (std::size_t i = capacity; i-- > 0;)
        free_.push_back(static_cast<std::uint32_t>(i));
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
    const op_fields& f = m.fields;
    wire::ses_standard_request h;
    static_cast<wire::ses_standard_fields&>(h) = standard_fields(m, s);
    h.atomic = f.atomic;
    h.cas = f.cas;
    h.rendezvous = f.rendezvous;
    return h;
}

wire::ses_header packet_header(const tx_message& m, const segment& s) noexcept {
    const op_fields& f = m.fields;
    if (!f.response) return request_header(m, s);
    if (m.length == 0) {
        wire::ses_response r;
        r.return_code = f.return_code;
        r.message_id = f.message_id;
        r.job_id = f.job_id & 0xffffff;
        r.modified_length = f.request_length;
        return r;
    }
    wire::ses_response_with_data r;
    r.return_code = f.return_code;
    r.message_id = f.message_id;
    r.read_request_message_id = f.message_id;
    r.job_id = f.job_id & 0xffffff;
    r.payload_length = static_cast<std::uint16_t>(s.length);
    r.modified_length = m.length;
    r.message_offset = s.offset;
    return r;
}

bool carried_opcode(wire::ses_opcode op) noexcept {
    using wire::ses_opcode;
    switch (op) {
        case ses_opcode::write:
        case ses_opcode::read:
        case ses_opcode::atomic:
        case ses_opcode::fetching_atomic:
        case ses_opcode::send:
        case ses_opcode::rendezvous_send:
        case ses_opcode::datagram_send:
        case ses_opcode::deferrable_send:
        case ses_opcode::tagged_send:
        case ses_opcode::rendezvous_tsend:
        case ses_opcode::deferrable_tsend:
        case ses_opcode::deferrable_rtr:
            return true;
        default:
            return false;
    }
}

namespace {

// A payload of `length` at `offset` of a `total`-byte message, on the sender's mtu grid.
bool on_grid(std::uint32_t offset, std::size_t length, std::uint32_t total,
             std::uint32_t mtu) noexcept {
    if (offset != 0 && offset % mtu != 0) return false;  // most messages: one packet
    if (total == 0) return offset == 0 && length == 0;
    if (offset >= total) return false;
    return length == std::min(mtu, total - offset);
}

// The 44 fixed bytes' part of a request's op_fields.
void take_standard_fields(const wire::ses_standard_fields& h, rx_segment& r) noexcept {
    r.message_id = h.message_id;
    op_fields& f = r.fields;
    f.opcode = h.opcode;
    f.hd = h.hd;
    f.job_id = h.job_id;
    f.pid_on_fep = h.pid_on_fep;
    f.resource_index = h.resource_index;
    f.initiator = h.initiator;
    f.buffer_offset = h.buffer_offset;
    f.memory_key = h.memory_key;
    f.header_data = h.som ? h.header_data : 0;
    f.request_length = h.request_length;
}

bool check_request(const wire::ses_standard_request& h, std::size_t payload_size, std::uint32_t mtu,
                   std::uint32_t max_message, rx_segment& r) noexcept {
    if (!carried_opcode(h.opcode)) return false;
    take_standard_fields(h, r);
    op_fields& f = r.fields;
    f.atomic = h.atomic;
    f.cas = h.cas;
    f.rendezvous = h.rendezvous;
    const bool single = h.opcode == wire::ses_opcode::read || h.rendezvous.has_value();
    if (single) {
        // The payload is not the message: nothing for a READ, the eager part of a rendezvous.
        const std::size_t eager = h.rendezvous ? h.rendezvous->eager_length : 0;
        if (!h.som || !h.eom || payload_size != eager || eager > mtu) return false;
        r.seg = segment{0, static_cast<std::uint32_t>(eager), true, true};
        r.total = static_cast<std::uint32_t>(eager);
        return true;
    }
    if (!check_segment(h, payload_size, mtu, max_message, r.seg)) return false;
    r.total = h.request_length;
    return true;
}

bool check_response(const wire::ses_response_with_data& h, std::size_t payload_size,
                    std::uint32_t mtu, std::uint32_t max_message, rx_segment& r) noexcept {
    if (h.modified_length == 0 || h.modified_length > max_message) return false;
    if (h.payload_length > payload_size) return false;
    if (!on_grid(h.message_offset, h.payload_length, h.modified_length, mtu)) return false;
    r.message_id = h.message_id;
    r.fields.response = true;
    r.fields.return_code = h.return_code;
    r.fields.job_id = h.job_id;
    r.fields.message_id = h.read_request_message_id;
    r.fields.request_length = h.modified_length;
    r.seg.offset = h.message_offset;
    r.seg.length = h.payload_length;
    r.seg.som = h.message_offset == 0;
    r.seg.eom = h.message_offset + h.payload_length == h.modified_length;
    r.total = h.modified_length;
    return true;
}

}  // namespace

bool check_plain_request(const wire::ses_standard_fields& h, std::size_t payload_size,
                         std::uint32_t mtu, std::uint32_t max_message, rx_segment& r) noexcept {
    // A READ's payload is not the message (see check_request): the general path takes it.
    if (h.opcode == wire::ses_opcode::read || wire::ses_opcode_has_extension(h.opcode) ||
        !check_segment(h, payload_size, mtu, max_message, r.seg))
        return false;
    take_standard_fields(h, r);
    r.total = h.request_length;
    return true;
}

bool check_packet(const wire::ses_header& h, std::size_t payload_size, std::uint32_t mtu,
                  std::uint32_t max_message, rx_segment& r) noexcept {
    if (const auto* req = std::get_if<wire::ses_standard_request>(&h))
        return check_request(*req, payload_size, mtu, max_message, r);
    if (const auto* rsp = std::get_if<wire::ses_response>(&h)) {
        if (payload_size != 0) return false;
        r.message_id = rsp->message_id;
        r.fields.response = true;
        r.fields.return_code = rsp->return_code;
        r.fields.job_id = rsp->job_id;
        r.fields.message_id = rsp->message_id;
        r.fields.request_length = rsp->modified_length;
        r.seg = segment{0, 0, true, true};
        return true;
    }
    if (const auto* rsp = std::get_if<wire::ses_response_with_data>(&h))
        return check_response(*rsp, payload_size, mtu, max_message, r);
    return false;
}

}  // namespace uet::ses
