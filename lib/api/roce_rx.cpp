// What arrives at a roce_rc endpoint: the RoCE responder's calls up (roce::delivery_target). A
// SEND's header names its kind, length and tag; it goes to the first posted receive it matches,
// or waits in the unexpected arena, or, with the arena full, is refused (RNR). WRITEs, READs and
// atomics reach our regions through the rkey checks of the domain's region table.
#include <cstring>

#include "api/roce_endpoint.hpp"

namespace uet::detail {

namespace {

constexpr std::uint8_t header_version = 1;

void store_be32(std::uint8_t* p, std::uint32_t v) noexcept {
    for (int i = 0; i < 4; ++i)
        p[i] = static_cast<std::uint8_t>(v >> (24 - 8 * i));
}
void store_be64(std::uint8_t* p, std::uint64_t v) noexcept {
    store_be32(p, static_cast<std::uint32_t>(v >> 32));
    store_be32(p + 4, static_cast<std::uint32_t>(v));
}
std::uint32_t load_be32(const std::uint8_t* p) noexcept {
    return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
           p[3];
}

}  // namespace

void write_roce_header(std::uint8_t* to, const roce_header& h) noexcept {
    to[0] = header_version;
    to[1] = h.tagged ? 1 : 0;
    to[2] = to[3] = 0;
    store_be32(to + 4, h.length);
    store_be64(to + 8, h.tagged ? h.tag : 0);
}

bool read_roce_header(std::span<const std::uint8_t> from, roce_header& out) noexcept {
    if (from.size() < roce_header_bytes || from[0] != header_version || from[1] > 1) return false;
    out.tagged = from[1] == 1;
    out.length = load_be32(from.data() + 4);
    out.tag = (std::uint64_t{load_be32(from.data() + 8)} << 32) | load_be32(from.data() + 12);
    return true;
}

std::uint32_t roce_endpoint::take_unexpected_slot(const roce_header& h, peer_addr from) {
    if (unexpected_free_.empty() || unexpected_bytes_ + h.length > attr.max_unexpected_bytes)
        return none;
    const std::uint32_t slot = unexpected_free_.back();
    unexpected_free_.pop_back();
    unexpected_message& u = unexpected_[slot];
    u.bytes.resize(h.length);
    u.header = h;
    u.from = from;
    u.in_use = true;
    u.done = false;
    u.status = roce::wc_status::success;
    u.claimed_by = none;
    unexpected_bytes_ += h.length;
    unexpected_order_.push_back(slot);
    return slot;
}

void roce_endpoint::free_unexpected(std::uint32_t slot) noexcept {
    unexpected_message& u = unexpected_[slot];
    unexpected_bytes_ -= u.bytes.size();
    u.in_use = false;
    std::erase(unexpected_order_, slot);
    unexpected_free_.push_back(slot);
}

bool roce_endpoint::take_receive(roce::qp& q, std::span<const std::uint8_t> first_payload,
                                 roce::recv_slot& out) {
    roce_header h;
    if (!read_roce_header(first_payload, h)) {
        // Not a message of ours: nothing of it is placed (a byte beyond the header fails it).
        ++dropped_bad_header_;
        out = {nullptr, 0, roce_header_bytes, cookie_of(cookie_kind::discard, 0)};
        return true;
    }
    const peer_addr from = peer_of(q);
    const std::uint32_t source = roce_source_of(from);
    const std::uint32_t node = posted_.find_first(
        h.tagged, [&](std::uint32_t i) { return ops_[i].rule.matches(h.tagged, h.tag, source); });
    if (node != ses::bounded_fifo<std::uint32_t>::none) {
        const std::uint32_t index = posted_.at(h.tagged, node);
        posted_.take_at(h.tagged, node);
        op& o = ops_[index];
        o.msg_len = h.length;
        o.msg_tag = h.tag;
        o.msg_from = from;
        out = {reinterpret_cast<std::uint8_t*>(o.dst), static_cast<std::uint32_t>(o.len),
               roce_header_bytes, cookie_of(cookie_kind::receive, index)};
        return true;
    }
    const std::uint32_t slot = take_unexpected_slot(h, from);
    if (slot == none) return false;  // the sender's QP hears RNR and tries again
    ++counters.unexpected;
    out = {unexpected_[slot].bytes.data(), h.length, roce_header_bytes,
           cookie_of(cookie_kind::unexpected, slot)};
    return true;
}

void roce_endpoint::receive_done(roce::qp&, std::uint64_t cookie, std::uint32_t length, bool,
                                 std::uint32_t, roce::wc_status status) {
    const auto index = static_cast<std::uint32_t>(cookie);
    switch (static_cast<cookie_kind>(cookie >> 32)) {
        case cookie_kind::receive: {
            op& o = ops_[index];
            if (!o.in_use) return;
            if (status == roce::wc_status::loc_len_err)
                fail(o, errc::truncated, static_cast<int>(status),
                     o.msg_len > o.len ? o.msg_len - o.len : 0);
            else if (status != roce::wc_status::success)
                fail(o, errc_of(status, true), static_cast<int>(status));
            else
                o.msg_len = length;
            finish(index);
            return;
        }
        case cookie_kind::unexpected: {
            if (index >= unexpected_.size() || !unexpected_[index].in_use) return;
            unexpected_message& u = unexpected_[index];
            u.done = true;
            u.status = status;
            u.header.length = length;
            if (u.claimed_by != none)
                deliver(u.claimed_by, u);
            else if (status == roce::wc_status::success)
                return;
            free_unexpected(index);
            return;
        }
        case cookie_kind::discard:
            return;
    }
}

void roce_endpoint::deliver(std::uint32_t recv, unexpected_message& u) {
    op& o = ops_[recv];
    o.msg_len = u.header.length;
    o.msg_tag = u.header.tag;
    o.msg_from = u.from;
    if (u.status != roce::wc_status::success)
        fail(o, errc_of(u.status, true), static_cast<int>(u.status));
    else if (o.msg_len > o.len)
        fail(o, errc::truncated, 0, o.msg_len - o.len);
    else if (o.msg_len != 0)
        std::memcpy(o.dst, u.bytes.data(), o.msg_len);
    finish(recv);
}

std::uint8_t* roce_endpoint::region_at(std::uint32_t rkey, std::uint64_t va, std::uint64_t length,
                                       std::uint32_t access) {
    std::uint8_t* where = nullptr;
    if (domain->regions.check_rkey(rkey, attr.job_id, va, length, access, where) !=
        wire::ses_return_code::ok) {
        ++counters.rejected_key;
        return nullptr;
    }
    return where;
}

roce::remote_memory roce_endpoint::place_write(roce::qp&, std::uint32_t rkey, std::uint64_t va,
                                               std::uint32_t length) {
    std::uint8_t* where = region_at(rkey, va, length, ses::mr_remote_write);
    if (where != nullptr) ++counters.writes_placed_directly;
    return {where};
}

std::uint8_t* roce_endpoint::write_packet_at(roce::qp&, std::uint32_t rkey, std::uint64_t va,
                                             std::uint32_t length) {
    return region_at(rkey, va, length, ses::mr_remote_write);
}

void roce_endpoint::remote_data(roce::qp& q, std::uint32_t imm, std::uint32_t length) {
    completion c;
    c.flags =
        completion_flags::rma | completion_flags::remote_write | completion_flags::remote_cq_data;
    c.len = length;
    c.data = imm;
    c.from = peer_of(q);
    cq->push_unreserved(c);
}

// The READ's responses are cut from the region over later bursts: it is held until the last one
// is built, so that memory_region::close() waits for them. No hold to spare refuses the READ
// (remote access error), as no room for a mapping would on a NIC.
roce::remote_memory roce_endpoint::read_source(roce::qp&, std::uint32_t rkey, std::uint64_t va,
                                               std::uint32_t length) {
    std::uint8_t* where = region_at(rkey, va, length, ses::mr_remote_read);
    if (where == nullptr) return {};
    const std::uint32_t hold = holds_.take(domain->regions, domain->regions.hold_rkey(rkey));
    if (hold == none) return {};
    return {where, hold};
}

void roce_endpoint::read_done(roce::qp&, std::uint32_t hold) {
    holds_.release(domain->regions, hold);
}

roce::atomic_outcome roce_endpoint::atomic(roce::qp&, std::uint32_t rkey, std::uint64_t va,
                                           roce::wr_opcode op, std::uint64_t swap_add,
                                           std::uint64_t compare) {
    std::uint8_t* where = region_at(rkey, va, 8, ses::mr_remote_atomic);
    if (where == nullptr) return {};
    std::uint64_t original;
    std::memcpy(&original, where, 8);
    const std::uint64_t next = op == roce::wr_opcode::fetch_add
                                   ? original + swap_add
                                   : (original == compare ? swap_add : original);
    std::memcpy(where, &next, 8);
    return {true, original};
}

}  // namespace uet::detail
