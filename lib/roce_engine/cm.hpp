// The connection manager's state: one entry per connection being made, made or being closed
// (IB CM over RoCEv2: REQ/REP/RTU, REJ, DREQ/DREP as UD datagrams to QP 1), and the datagrams
// waiting for a transmit room. The engine (engine_cm.cpp) runs the exchange; this part only
// keeps the table and the queue, so it has no QP and no frame in it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/rng.hpp"
#include "roce/verbs.hpp"
#include "wire/eth.hpp"
#include "wire/roce_cm.hpp"

namespace uet::roce {

// Who may connect, and the attributes the CM gives the QPs it connects.
struct cm_config {
    bool listen = true;                    // answer REQs (the passive side); false: REJ them
    std::uint32_t job_id = 0;              // both ends must name the same job
    std::uint64_t timeout_ns = 1'000'000;  // REQ, REP and DREQ are sent again this often
    std::uint8_t retries = 15;             // and this many times, then the attempt fails
    path_mtu mtu = path_mtu::mtu_4096;     // the largest; both ends take the smaller
    std::uint32_t access = access_remote_write | access_remote_read | access_remote_atomic;
    std::uint8_t max_rd_atomic = max_rd_atomic_limit;  // both directions; the smaller wins
    std::uint8_t ack_timeout = 14;                     // the QP's local ACK timeout code
    std::uint8_t retry_cnt = 7;
    std::uint8_t rnr_retry = 7;
    std::uint8_t min_rnr_timer = 1;
};

struct cm_counters {
    std::uint64_t sent = 0, received = 0;
    std::uint64_t resent = 0;        // REQ, REP or DREQ after a timeout, or for a duplicate
    std::uint64_t timeouts = 0;      // attempts that ran out of retries
    std::uint64_t rejects_sent = 0;  // REJ, by any reason
    std::uint64_t rejects_received = 0;
    std::uint64_t tx_dropped = 0;  // the datagram queue was full (a retry sends it again)
    std::uint64_t established = 0;
    std::uint64_t disconnected = 0;  // by the peer's DREQ
};

enum class cm_state : std::uint8_t {
    free,
    req_sent,     // active: REQ out, waiting for REP
    rep_sent,     // passive: QP in RTR, waiting for RTU or the first request
    established,  // QP in RTS
    dreq_sent,    // DREQ out, waiting for DREP (the QP may be gone)
};

struct cm_entry {
    cm_state state = cm_state::free;
    qpn_t qpn = 0;  // 0 once the QP is destroyed
    std::uint32_t peer_ip = 0;
    wire::mac_address peer_mac{};
    std::uint16_t udp_sport = 0;
    std::uint32_t local_comm_id = 0;
    std::uint32_t remote_comm_id = 0;
    std::uint64_t deadline = 0;  // when `last` goes again; 0: no timer (connection_manager::
                                 // set_deadline sets it)
    std::uint8_t retries_left = 0;
    qp_attr attr;           // what the QP is given at its next transition
    wire::cm_message last;  // the REQ, REP or DREQ a timeout sends again
};

// A CM datagram waiting for a room: its MAD, and where it goes.
struct cm_datagram {
    std::uint32_t peer_ip = 0;
    wire::mac_address peer_mac{};
    std::uint16_t udp_sport = 0;
    std::array<std::uint8_t, wire::mad_size> mad{};
};

class connection_manager {
  public:
    connection_manager(std::size_t entries, std::uint64_t seed);

    // A free entry with a fresh local communication ID, or nullptr when all are in use.
    cm_entry* allocate() noexcept;
    void release(cm_entry& e) noexcept {
        set_deadline(e, 0);
        e = cm_entry{};
    }
    // Sets e's timer (0: none), counting the entries that have one: while none does, which is
    // the whole of a transfer, next_deadline() and the engine's timer pass skip their scans.
    void set_deadline(cm_entry& e, std::uint64_t when) noexcept {
        if ((e.deadline != 0) != (when != 0)) when != 0 ? ++armed_ : --armed_;
        e.deadline = when;
    }
    std::uint32_t armed() const noexcept { return armed_; }
    // The entry whose local communication ID is `id` (REP, RTU, REJ, DREQ and DREP name it).
    cm_entry* by_local_id(std::uint32_t peer_ip, std::uint32_t id) noexcept;
    // The entry a REQ from (peer_ip, id) made: a duplicate REQ finds it.
    cm_entry* by_remote_id(std::uint32_t peer_ip, std::uint32_t id) noexcept;
    cm_entry* by_qpn(qpn_t qpn) noexcept;
    std::vector<cm_entry>& entries() noexcept { return entries_; }
    const std::vector<cm_entry>& entries() const noexcept { return entries_; }

    // Encodes m for e's peer into the queue; false (counted) when the queue is full.
    bool send(const cm_entry& e, const wire::cm_message& m) noexcept;
    bool send_to(std::uint32_t peer_ip, const wire::mac_address& mac, std::uint16_t sport,
                 const wire::cm_message& m) noexcept;
    // Sends m and keeps it as what a timeout sends again, with the retry budget of `c`.
    void send_kept(cm_entry& e, const wire::cm_message& m, const cm_config& c,
                   std::uint64_t now) noexcept;
    const cm_datagram* front() const noexcept {
        return head_ == tail_ ? nullptr : &queue_[head_ % queue_.size()];
    }
    void pop() noexcept { ++head_; }
    bool queued() const noexcept { return head_ != tail_; }
    // The earliest entry deadline, or 0 when none.
    std::uint64_t next_deadline() const noexcept;

    std::uint32_t random_psn() noexcept {
        return static_cast<std::uint32_t>(rng_.next_u64()) & 0xffffff;
    }
    std::uint64_t random_u64() noexcept { return rng_.next_u64(); }

    cm_counters counters;

  private:
    std::vector<cm_entry> entries_;
    std::array<cm_datagram, 64> queue_{};
    std::uint32_t head_ = 0, tail_ = 0;
    std::uint32_t armed_ = 0;  // entries with a deadline
    rng rng_;
};

}  // namespace uet::roce
