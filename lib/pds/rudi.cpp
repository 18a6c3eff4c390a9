#include "pds/rudi.hpp"

#include "wire/uet_fep.hpp"

#include <algorithm>

namespace uet::pds {

void rtt_estimate::sample(std::uint64_t rtt) noexcept {
    if (srtt_ns == 0) {
        srtt_ns = std::max<std::uint64_t>(rtt, 1);
        rttvar_ns = rtt / 2;
        return;
    }
    const std::uint64_t diff = srtt_ns > rtt ? srtt_ns - rtt : rtt - srtt_ns;
    rttvar_ns = (3 * rttvar_ns + diff) / 4;
    srtt_ns = std::max<std::uint64_t>((7 * srtt_ns + rtt) / 8, 1);
}

std::uint64_t rtt_estimate::rto(std::uint64_t min_ns, std::uint64_t max_ns,
                                std::uint16_t retries) const noexcept {
    std::uint64_t rto = std::clamp(srtt_ns + 4 * rttvar_ns, min_ns, max_ns);
    for (unsigned i = 0; i < retries && rto < max_ns; ++i)
        rto <<= 1;
    return std::min(rto, max_ns);
}

void rudi_window::resize(std::uint32_t max_in_flight) {
    packets_.assign(max_in_flight, rudi_packet{});
    free_.clear();
    free_.reserve(max_in_flight);
    for (std::uint32_t i = max_in_flight; i-- > 0;)
        free_.push_back(i);
    retx_head_ = retx_tail_ = no_packet;
}

void rudi_window::set_pid(std::uint16_t pid) noexcept {
    id_prefix_ = std::uint32_t{pid} << (32 - wire::fep_pid_bits);
    generation_mask_ = 0xffff >> wire::fep_pid_bits;
}

std::uint32_t rudi_window::take(std::uint32_t message, std::uint32_t offset,
                                std::uint32_t length) noexcept {
    const std::uint32_t index = free_.back();
    free_.pop_back();
    rudi_packet& r = packets_[index];
    r.generation = static_cast<std::uint16_t>((r.generation + 1) & generation_mask_);
    r.pkt_id = id_prefix_ | (std::uint32_t{r.generation} << 16) | index;
    r.message = message;
    r.offset = offset;
    r.length = length;
    r.retries = 0;
    return index;
}

void rudi_window::release(std::uint32_t index) noexcept {
    packets_[index].st = rudi_packet::state::free;
    free_.push_back(index);
}

std::uint32_t rudi_window::find(std::uint32_t pkt_id, bool in_flight_only) const noexcept {
    const std::uint32_t index = pkt_id & 0xffff;
    if (index >= size()) return no_packet;
    const rudi_packet& r = packets_[index];
    if (r.pkt_id != pkt_id || r.st == rudi_packet::state::free) return no_packet;
    if (in_flight_only && r.st != rudi_packet::state::in_flight) return no_packet;
    return index;
}

void rudi_window::queue_retransmit(std::uint32_t index, retx_cause cause) noexcept {
    rudi_packet& r = packets_[index];
    r.st = rudi_packet::state::retx_queued;
    r.cause = cause;
    if (r.in_retx_list) return;
    r.in_retx_list = true;
    r.retx_next = no_packet;
    if (retx_tail_ == no_packet)
        retx_head_ = index;
    else
        packets_[retx_tail_].retx_next = index;
    retx_tail_ = index;
}

std::uint32_t rudi_window::pop_retransmit() noexcept {
    while (retx_head_ != no_packet) {
        const std::uint32_t index = retx_head_;
        rudi_packet& r = packets_[index];
        retx_head_ = r.retx_next;
        if (retx_head_ == no_packet) retx_tail_ = no_packet;
        r.in_retx_list = false;
        if (r.st == rudi_packet::state::retx_queued) return index;
    }
    return no_packet;
}

}  // namespace uet::pds
