// A two-tier leaf-spine (Clos) or three-tier fat-tree fabric in virtual time that carries real
// Ethernet frames between hosts: the test bed for comparing congestion control and packet
// spraying, and the core of the discrete-event simulator (uet-sim). No clock, no threads: every
// call takes the current time in ns.
//
// Topology: `leaves` leaf switches with `hosts_per_leaf` hosts each, and `spines` spine switches
// joined to every leaf. Host h sits on leaf h / hosts_per_leaf; its address is
// ip_base | (leaf mod 256) << 16 | index << 8 | (1 + leaf / 256) (10.<leaf>.<index>.1 by default
// up to 256 leaves; 10.<leaf mod 256>.<index>.<1 + leaf / 256> beyond), its MAC
// 02:00:<leaf / 256>:<leaf mod 256>:<index>:01. A frame to a host on the same leaf goes
// host->leaf->host; to another leaf it goes host->leaf->spine->leaf->host, with the spine chosen by
// the source leaf as a switch's ECMP does: a seeded hash of (src ip, dst ip, protocol, src port,
// dst port), modulo the number of spines. So a flow with a fixed UDP source port (its entropy)
// sticks to one spine and a sprayer that changes the entropy per packet spreads. Routing is by
// destination IP only; frames to an unknown destination (or that are not IPv4) are dropped at the
// first leaf and counted. The switches do not rewrite MACs or TTL: a frame arrives as sent, apart
// from ECN and trimming.
//
// Three tiers (topology::pods > 0, a fat tree): the leaves are edge switches, `leaves / pods` to
// a pod; each pod has `spines` aggregation switches, every one joined to every edge of its pod,
// and aggregation switch a of every pod is joined to cores a x cores_per_agg .. + cores_per_agg
// - 1 (so a k-ary fat tree is pods k, leaves k^2/2, spines k/2, cores_per_agg k/2). A frame to
// another pod goes host->edge->agg->core->agg->edge->host; the source edge's hash picks the
// aggregation switch (hash mod spines) and the core behind it ((hash / spines) mod
// cores_per_agg), the rest of the path follows from the destination. Within a pod it turns at
// the aggregation switch. Ports are named edge<i>, agg<pod x spines + a>, core<a x
// cores_per_agg + c>.
//
// Every link direction is an output-queued port (store and forward): a packet waits in the
// port's queue, is serialised at the port's rate (kept to the picosecond, so back-to-back frames
// add up exactly) and arrives at the next node delay_ns after its last bit left. Each port has
//  - a data queue of queue_bytes (bytes waiting plus the frame being serialised). A data packet
//    that does not fit is tail-dropped or, with trimming on, cut to its headers plus trim_to
//    bytes of UDP payload, re-marked with trim_dscp (IP checksum fixed, UDP checksum 0) and put
//    in the priority queue;
//  - a strict-priority queue of priority_queue_bytes for trimmed headers and for packets that
//    carry priority_dscp or trim_dscp (ACKs, NACKs): it is served first, without preemption;
//  - RED-like ECN marking on enqueue of a data packet: with q the data-queue occupancy found on
//    arrival, an ECT packet is re-marked CE with probability 0 for q <= kmin, pmax x (q - kmin)
//    / (kmax - kmin) in between, 1 for q >= kmax (IP checksum patched). kmax 0 switches it off.
// The host's own transmit queue (NIC port, host->leaf) uses host_link's rate and delay but
// neither marks nor trims, and holds nic_queue_bytes (0: unbounded, i.e. bounded by the pool).
// Any port can be slowed or failed (black hole: the packets it holds and every packet offered to
// it afterwards are dropped and counted) at a given virtual time, and restored later.
//
// Event core: every port holds an intrusive FIFO of packets on its wire besides its queues, and
// its next event (the end of the current serialisation, or the earliest wire arrival) is its key
// in one indexed binary heap of busy ports; scheduled rate and failure changes wait in a second
// heap. One hop costs O(log busy ports). Frames live in a slab pool grown in chunks and recycled
// LIFO, so the steady state does not allocate; construction allocates only the port array.
// Ties are broken by port index and schedule order: same topology, seed and calls give the same
// deliveries.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "core/rng.hpp"
#include "fabric/event_heap.hpp"
#include "wire/eth.hpp"

namespace uet::netmodel {

struct link_params {
    double rate_gbps = 100;
    std::uint64_t delay_ns = 1000;
    // Defaults from the UET studies: queue 1 x BDP (100 Gb/s x 12 us), ECN from 20% to 80% of it.
    std::uint64_t queue_bytes = 150'000;  // 0 = unbounded
    std::uint64_t ecn_kmin_bytes = 30'000;
    std::uint64_t ecn_kmax_bytes = 120'000;  // 0 = no ECN marking
    // The marking probability just below kmax (RED's pmax; DCQCN's switches use a few percent):
    // pmax x (q - kmin) / (kmax - kmin) between the thresholds, 1 from kmax up.
    double ecn_pmax = 1.0;
    bool trimming = false;
    std::uint16_t trim_to = 64;  // UDP payload bytes a trimmed packet keeps
    std::uint8_t trim_dscp = 0x3b;
    std::uint8_t priority_dscp = 46;
    std::uint64_t priority_queue_bytes = 150'000;  // 0 = unbounded
};

// Link parameters scaled to a bandwidth-delay product: queue 1 x BDP, ECN 20%..80% of it,
// trimming on, priority queue 1 x BDP.
link_params uet_link(double rate_gbps, std::uint64_t delay_ns, std::uint64_t bdp_bytes);

struct topology {
    std::uint32_t leaves = 2, hosts_per_leaf = 8, spines = 8;  // at most 65024, 255, 65535
    // 0: two tiers (leaf-spine). Otherwise a fat tree: leaves are edges, `pods` divides them,
    // spines are the aggregation switches of a pod, each with cores_per_agg cores above it.
    std::uint32_t pods = 0, cores_per_agg = 0;
    link_params host_link, fabric_link;
    // A fat tree's aggregation<->core links, when they differ from fabric_link (an
    // oversubscribed aggregation tier).
    std::optional<link_params> core_link;
    std::uint64_t nic_queue_bytes = 0;   // host transmit queue; 0 = unbounded
    std::uint32_t ip_base = 0x0a000000;  // 10.0.0.0: hosts are 10.<leaf>.<index>.1
    std::uint32_t max_frame_bytes = 9216;
    // 0: frames are carried whole. Otherwise only each frame's first carried_bytes (its
    // headers: at least 64) are, and it is delivered with its length intact and 0x5a bytes after
    // them; for senders whose payload nobody reads (a simulation with UDP checksum 0), where
    // the frames in flight at a thousand hosts would otherwise take gigabytes.
    std::uint32_t carried_bytes = 0;
    std::uint32_t max_frames_in_flight = 1u << 20;  // pool limit; beyond it send() drops
    std::uint64_t seed = 1;
    // Per-packet spraying in the switches: a source leaf sends each packet to another leaf on
    // the next spine in turn (round robin per leaf), whatever its entropy, as switches that
    // spray do. false: ECMP, a hash of the flow's addresses and ports.
    bool leaf_spray = false;
    // Path IDs for loss detection at the receiver (engine_config::path_ids): a source leaf
    // writes the spine it sends a packet up to, plus 1, into the packet's IPv4 identification
    // (header checksum patched), whether it sprays or hashes; packets that stay on their leaf
    // are not stamped (0 is left as the sender wrote it, and means no path). A fat tree's
    // source edge stamps the aggregation switch the same way. false: frames are not touched.
    bool stamp_path_id = false;
};

// up/down: leaf<->spine (edge<->agg in a fat tree); agg_up/core_down: agg<->core.
enum class port_kind : std::uint8_t { nic, to_host, up, down, agg_up, core_down };

struct port_stats {
    std::uint64_t tx_packets = 0, tx_bytes = 0;  // serialised onto the link
    std::uint64_t dropped = 0;     // queue full (data without trimming, or priority queue full)
    std::uint64_t trimmed = 0;     // data packets cut to a header instead of dropped
    std::uint64_t ecn_marked = 0;  // ECT packets re-marked CE here
    std::uint64_t blackholed = 0;  // dropped because the port was failed
    std::uint64_t queue_bytes = 0, priority_bytes = 0;  // now
    std::uint64_t peak_queue_bytes = 0, peak_priority_bytes = 0;
    // Lowest data-queue occupancy at which a packet was marked (UINT64_MAX: none was).
    std::uint64_t min_marked_queue_bytes = std::numeric_limits<std::uint64_t>::max();
    double mean_queue_bytes = 0;  // time average of data + priority bytes since time 0
};

struct fabric_stats {
    std::uint64_t sent = 0, delivered = 0;
    std::uint64_t unroutable = 0;      // not IPv4, or no host has the destination address
    std::uint64_t oversized = 0;       // longer than max_frame_bytes
    std::uint64_t pool_exhausted = 0;  // max_frames_in_flight reached
    std::uint64_t hops = 0;            // packet serialisations over all ports
    std::uint64_t events = 0;  // port events (serialisation ends, arrivals) and link changes run
    std::uint64_t dropped = 0, trimmed = 0, ecn_marked = 0, blackholed = 0;  // over all ports
};

class fabric {
  public:
    static constexpr std::uint64_t none = std::numeric_limits<std::uint64_t>::max();
    static constexpr std::uint32_t max_leaves = 254 * 256;  // what the addresses can name
    static constexpr std::uint32_t no_host = std::numeric_limits<std::uint32_t>::max();

    // Throws std::invalid_argument for an empty or oversized topology or a rate <= 0.
    explicit fabric(const topology& t);
    fabric(const fabric&) = delete;
    fabric& operator=(const fabric&) = delete;

    // ---- addressing ----
    const topology& layout() const noexcept { return topo_; }
    std::uint32_t host_count() const noexcept { return hosts_; }
    std::uint32_t host_ip(std::uint32_t host) const noexcept;
    wire::mac_address host_mac(std::uint32_t host) const noexcept;
    std::uint32_t leaf_of(std::uint32_t host) const noexcept { return host / topo_.hosts_per_leaf; }
    std::uint32_t pod_of_leaf(std::uint32_t leaf) const noexcept {
        return topo_.pods ? leaf / (topo_.leaves / topo_.pods) : 0;
    }
    // Links a frame from one host to the other crosses: 2 on one leaf, 4 through a spine (or an
    // aggregation switch), 6 through a core.
    std::uint32_t path_links(std::uint32_t from, std::uint32_t to) const noexcept;
    std::uint32_t host_of_ip(std::uint32_t ip) const noexcept;  // no_host if none
    // The spine the leaf's ECMP picks for this frame (what the fabric does when it forwards it,
    // unless the topology sprays in the leaves).
    std::uint32_t uplink_for(std::uint32_t leaf,
                             std::span<const std::uint8_t> frame) const noexcept;
    // The same for a UDP flow given by its addresses (host order) and ports: where a QP or a
    // sprayer's source port lands, without building a frame.
    std::uint32_t uplink_for_udp(std::uint32_t leaf, std::uint32_t src_ip, std::uint32_t dst_ip,
                                 std::uint16_t src_port, std::uint16_t dst_port) const noexcept;

    // ---- traffic ----
    // The host hands a frame to its NIC (the host->leaf port); the fabric takes a copy. Internal
    // events up to now are processed first; now must not go backwards (earlier is taken as the
    // latest time seen).
    void send(std::uint32_t from_host, std::span<const std::uint8_t> frame, std::uint64_t now);
    // Processes events up to now, then calls to_host(host, frame) -- or to_host(host, frame,
    // arrival_ns) -- for every frame that has arrived at its host, in arrival order. The view is
    // valid during the call; to_host may call send(). Returns the number delivered.
    template <class F>
    std::size_t deliver(std::uint64_t now, F&& to_host);
    // Earliest pending event (serialisation end, arrival, scheduled change, or a frame waiting
    // for deliver), rounded up to the ns; none if nothing is pending.
    std::uint64_t next_event() const noexcept;
    // Processes internal events up to now; arrivals at hosts wait for deliver().
    void advance(std::uint64_t now);
    std::uint64_t now() const noexcept { return (now_ps_ + 999) / 1000; }
    std::size_t in_flight() const noexcept { return used_; }  // frames anywhere in the fabric

    // ---- faults and asymmetry, applied at virtual time at (before packets of the same time) ----
    void set_port_rate(std::uint32_t port, double gbps, std::uint64_t at);
    void fail_port(std::uint32_t port, std::uint64_t at);
    void restore_port(std::uint32_t port, std::uint64_t at);
    // Both directions of the leaf<->spine link.
    void set_spine_link_rate(std::uint32_t leaf, std::uint32_t spine, double gbps,
                             std::uint64_t at);
    void fail_spine_link(std::uint32_t leaf, std::uint32_t spine, std::uint64_t at);
    void restore_spine_link(std::uint32_t leaf, std::uint32_t spine, std::uint64_t at);
    // Both directions of every link of the spine (a slow or degraded spine switch).
    void set_spine_rate(std::uint32_t spine, double gbps, std::uint64_t at);
    // Both directions of the host<->leaf link.
    void set_host_link_rate(std::uint32_t host, double gbps, std::uint64_t at);

    // ---- ports and measurement ----
    std::uint32_t port_count() const noexcept { return static_cast<std::uint32_t>(ports_.size()); }
    std::uint32_t nic_port(std::uint32_t host) const noexcept { return host; }
    std::uint32_t to_host_port(std::uint32_t host) const noexcept { return hosts_ + host; }
    std::uint32_t up_port(std::uint32_t leaf, std::uint32_t spine) const noexcept;
    std::uint32_t down_port(std::uint32_t spine, std::uint32_t leaf) const noexcept;
    // Fat tree: aggregation switch `spine` of `pod` to its core c (0..cores_per_agg-1), and back.
    std::uint32_t agg_up_port(std::uint32_t pod, std::uint32_t spine,
                              std::uint32_t c) const noexcept;
    std::uint32_t core_down_port(std::uint32_t spine, std::uint32_t c,
                                 std::uint32_t pod) const noexcept;
    port_kind kind(std::uint32_t port) const noexcept;
    std::string port_name(std::uint32_t port) const;  // "h3->leaf0", "spine2->leaf1", ...
    port_stats port_counters(std::uint32_t port) const noexcept;
    const fabric_stats& counters() const noexcept { return stats_; }
    std::uint64_t spine_bytes(std::uint32_t spine) const noexcept;    // sent out of the spine
    std::uint64_t spine_packets(std::uint32_t spine) const noexcept;  // sent out of the spine
    std::size_t pool_high_water() const noexcept { return high_water_; }
    std::size_t memory_bytes() const noexcept;  // ports, pool and heaps, as allocated
    // Totals, per-spine shares and, with per_port, every port that carried or lost anything.
    std::string summary(bool per_port = false) const;

  private:
    static constexpr std::uint32_t nil = std::numeric_limits<std::uint32_t>::max();
    static constexpr std::uint32_t chunk_bits = 10;  // pool grows 1024 frames at a time

    struct fifo {
        std::uint32_t head = nil, tail = nil;
        bool empty() const noexcept { return head == nil; }
    };
    struct slot_meta {
        std::uint64_t time_ps = 0;  // on a wire: arrival at the far end; delivered: at the host
        std::uint32_t next = nil;   // in whichever fifo holds it
        std::uint32_t length = 0;
        std::uint32_t dst_host = no_host;
        std::uint16_t uplink = 0;  // spine chosen by the source leaf
        std::uint16_t core = 0;    // fat tree: core (of the spine's) chosen by the source leaf
        std::uint8_t dscp = 0;
        bool priority = false;  // class it was queued in at the current port
    };
    // Fields in order of use: the event path (first cache line) reads only the first block.
    struct port {
        std::uint64_t next_ps = none;  // its key in events_
        std::uint64_t tx_done_ps = none;
        // Arrival of the wire's first frame (none: empty): kept here so that finding a port's
        // next event never reads a frame's record, a cache miss per hop at a thousand hosts.
        std::uint64_t wire_head_ps = none;
        fifo wire, data, prio;
        std::uint32_t in_service = nil;
        bool failed = false;
        bool marks_and_trims = true;  // false on NIC ports
        double rate_gbps = 0;
        std::uint64_t delay_ps = 0;
        std::uint64_t data_bytes = 0, prio_bytes = 0;
        std::uint64_t queue_cap = 0, priority_cap = 0;  // 0 = unbounded
        const link_params* params = nullptr;
        std::uint64_t last_change_ps = 0;
        double area = 0;  // integral of (data + prio) bytes over ps
        port_stats stats;
        rng ecn_rng;
    };
    enum class change_op : std::uint8_t { rate, fail, restore };
    struct change {
        std::uint64_t at_ps;
        std::uint64_t seq;
        std::uint32_t port;
        change_op op;
        double rate_gbps;
    };

    // pool
    std::uint32_t alloc_slot();
    void free_slot(std::uint32_t s) noexcept;
    std::uint8_t* data(std::uint32_t s) noexcept {
        return chunks_[s >> chunk_bits].get() + std::size_t{s & chunk_mask} * slot_bytes_;
    }
    // The whole frame in slot s: the slot itself, or (carried_bytes) a copy of what it carries
    // in `scratch`, filled out to its length; put_back() returns the scratch copy's headers.
    std::span<std::uint8_t> whole(std::uint32_t s, std::vector<std::uint8_t>& scratch) noexcept;
    void put_back(std::uint32_t s, std::span<const std::uint8_t> frame) noexcept;
    void push(fifo& f, std::uint32_t s) noexcept;
    std::uint32_t pop(fifo& f) noexcept;

    // ports and events
    void init_port(std::uint32_t id, const link_params& p, bool nic, std::uint64_t seed);
    void enqueue(std::uint32_t port_id, std::uint32_t s, std::uint64_t t);
    bool admit_data(port& p, std::uint32_t s);
    bool admit_priority(port& p, std::uint32_t s) noexcept;
    void mark(port& p, std::uint32_t s) noexcept;
    void stamp_path(std::uint32_t s) noexcept;
    void account(port& p, std::uint64_t t) noexcept;
    void start_next(port& p, std::uint64_t t) noexcept;
    void finish_tx(port& p, std::uint64_t t) noexcept;
    void forward(std::uint32_t port_id, std::uint32_t s, std::uint64_t t);
    void run_port_event(std::uint32_t port_id);
    void apply(const change& c, std::uint64_t t);
    void flush(port& p);
    void schedule(std::uint32_t port, change_op op, double rate, std::uint64_t at);
    static bool change_later(const change& a, const change& b) noexcept;
    void refresh(std::uint32_t port_id) noexcept;
    std::uint64_t uplink_hash(std::uint32_t leaf,
                              std::span<const std::uint8_t> frame) const noexcept;
    std::uint64_t tuple_hash(std::uint32_t leaf, std::uint64_t addrs,
                             std::uint64_t rest) const noexcept;

    static constexpr std::uint32_t chunk_mask = (1u << chunk_bits) - 1;

    topology topo_;
    std::uint32_t hosts_ = 0;
    std::uint32_t slot_bytes_ = 0;  // max_frame_bytes, or carried_bytes
    // carried_bytes: where frames are filled out, for deliver() and for ECN and trimming (apart,
    // as to_host may send() and so mark or trim while a delivered frame is in use).
    std::vector<std::uint8_t> deliver_scratch_, edit_scratch_;
    std::vector<port> ports_;
    std::vector<std::uint64_t> leaf_seeds_;
    std::vector<std::uint32_t> next_spine_;     // leaf_spray's round robin, per leaf
    std::uint32_t links_ = 0, core_links_ = 0;  // leaf-spine, agg-core (one direction each)
    std::vector<std::unique_ptr<std::uint8_t[]>> chunks_;
    std::vector<slot_meta> meta_;
    std::vector<std::uint32_t> free_;  // LIFO: recently used slots are reused first
    std::size_t used_ = 0, high_water_ = 0;
    event_heap events_;            // busy ports by (next_ps, port index)
    std::vector<change> changes_;  // min-heap by (at_ps, seq)
    std::uint64_t change_seq_ = 0;
    fifo arrived_;  // frames at their host, in arrival order, waiting for deliver()
    std::uint64_t now_ps_ = 0;
    fabric_stats stats_;
};

template <class F>
std::size_t fabric::deliver(std::uint64_t now, F&& to_host) {
    advance(now);
    std::size_t n = 0;
    for (; !arrived_.empty(); ++n) {
        const std::uint32_t s = pop(arrived_);
        // Frees the slot even if to_host throws.
        struct release {
            fabric* f;
            std::uint32_t s;
            ~release() { f->free_slot(s); }
        } guard{this, s};
        // Copies, not references: to_host may send(), which may grow meta_.
        const std::uint32_t host = meta_[s].dst_host;
        const std::uint64_t arrival_ns = (meta_[s].time_ps + 999) / 1000;
        const std::span<const std::uint8_t> frame = whole(s, deliver_scratch_);
        ++stats_.delivered;
        if constexpr (std::is_invocable_v<F&, std::uint32_t, std::span<const std::uint8_t>,
                                          std::uint64_t>) {
            to_host(host, frame, arrival_ns);
        } else {
            to_host(host, frame);
        }
    }
    return n;
}

}  // namespace uet::netmodel
