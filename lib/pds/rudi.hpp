// RUDI's request packets in flight. RUDI (reliable, unordered, for idempotent operations) has no
// PDC: every request packet carries its own id, has its own timer and is answered by its own
// response. Lost packets are resent from a FIFO of retransmissions; the RTO adapts per peer.
#pragma once

#include <cstdint>
#include <vector>

#include "core/timer_wheel.hpp"
#include "pds/pdc.hpp"

namespace uet::pds {

// RFC 6298's smoothed RTT and variation, of a RUDI peer (a PDC keeps its own, beside its window).
struct rtt_estimate {
    std::uint64_t srtt_ns = 0, rttvar_ns = 0;

    void sample(std::uint64_t rtt_ns) noexcept;
    // The RTO of a packet sent `retries` times before: srtt + 4 rttvar within [min_ns, max_ns],
    // doubled per retry up to max_ns. RUDI has no timeout rounds (every request packet has its
    // own timer), so a spurious timeout costs a resend per packet in flight: the RTO only adapts
    // upwards from min_ns, to what a slow path (a kernel-socket port under load) needs.
    std::uint64_t rto(std::uint64_t min_ns, std::uint64_t max_ns,
                      std::uint16_t retries) const noexcept;
};

struct rudi_packet {
    timer_node timer;
    std::uint32_t message = 0;
    std::uint32_t offset = 0, length = 0;
    std::uint32_t pkt_id = 0;  // generation << 16 | index
    std::uint64_t sent_ns = 0;
    bool resent = false;  // the last transmission was a retransmission (no RTT sample: Karn)
    std::uint32_t retx_next = 0;
    std::uint16_t retries = 0;
    std::uint16_t generation = 0;
    retx_cause cause = retx_cause::timeout;
    enum class state : std::uint8_t { free, in_flight, retx_queued } st = state::free;
    bool in_retx_list = false;
};

class rudi_window {
  public:
    static constexpr std::uint32_t no_packet = 0xffffffffu;

    // Room for max_in_flight packets (at most 65536: the index is the id's low 16 bits).
    void resize(std::uint32_t max_in_flight);
    // Ids carry pid in their top wire::fep_pid_bits (engine_config::fep_pids), so that a
    // response finds this endpoint among those sharing its FEP.
    void set_pid(std::uint16_t pid) noexcept;
    std::uint32_t size() const noexcept { return static_cast<std::uint32_t>(packets_.size()); }
    rudi_packet& operator[](std::uint32_t index) noexcept { return packets_[index]; }

    bool has_room() const noexcept { return !free_.empty(); }
    // A free packet for bytes [offset, offset + length) of message, with a new id. has_room().
    std::uint32_t take(std::uint32_t message, std::uint32_t offset, std::uint32_t length) noexcept;
    // Back to the free list (its timer already cancelled).
    void release(std::uint32_t index) noexcept;
    // The packet a response or NACK names: its index, or no_packet when no such id is in use
    // (in flight, or also queued for retransmission unless in_flight_only).
    std::uint32_t find(std::uint32_t pkt_id, bool in_flight_only) const noexcept;

    void queue_retransmit(std::uint32_t index, retx_cause cause) noexcept;
    // The next packet queued for retransmission, or no_packet.
    std::uint32_t pop_retransmit() noexcept;
    bool retransmit_pending() const noexcept { return retx_head_ != no_packet; }

    // Every packet of message, freed; cancel(timer) is called for each first.
    template <class CancelTimer>
    void release_message(std::uint32_t message, CancelTimer&& cancel) {
        for (std::uint32_t i = 0; i < size(); ++i) {
            rudi_packet& r = packets_[i];
            if (r.st == rudi_packet::state::free || r.message != message) continue;
            cancel(r.timer);
            release(i);
        }
    }

  private:
    std::uint32_t id_prefix_ = 0;
    std::uint16_t generation_mask_ = 0xffff;
    std::vector<rudi_packet> packets_;
    std::vector<std::uint32_t> free_;
    std::uint32_t retx_head_ = no_packet, retx_tail_ = no_packet;
};

}  // namespace uet::pds
