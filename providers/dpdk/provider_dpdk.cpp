// The "dpdk" provider: the endpoints of one DPDK port, behind its one address (one UET fabric
// endpoint), told apart by PIDonFEP. Under the endpoints' engines sit an engine_handler each, a
// pid_mux that hands each its frames and shares the transmit bursts among them, and one
// host_stack (ARP with static neighbours and a gateway, ICMP echo; it fills the Ethernet
// addresses of the engines' frames), driven by an inline poll_loop: the thread that reads a
// completion queue moves the port's frames, one receive and one transmit burst per progress
// step, running every open endpoint between them, backing off while idle unless busy_poll. Time
// is the TSC.
//
// The port, host stack and loop stay for the fabric's life; an endpoint's engine and handler
// come and go with the endpoint. The first endpoint is PIDonFEP 0, each next one the lowest
// PIDonFEP free. A RoCE or TSS endpoint holds the port alone: their frames name no PIDonFEP the
// mux could read (RoCE's queue pair numbers are not partitioned; TSS encrypts the PDS header).
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <stdexcept>

#include "api/api_impl.hpp"
#include "api/tx_memory.hpp"
#include "dpdk/dpdk_settings.hpp"
#include "dpdk/eal.hpp"
#include "dpdk/poll_loop.hpp"
#include "dpdk/port.hpp"
#include "host/capture_handler.hpp"
#include "host/engine_handler.hpp"
#include "host/host_stack.hpp"
#include "host/pid_mux.hpp"
#include "memif/memif_port.hpp"
#include "wire/pcap_file.hpp"

namespace uet::detail {

namespace {

constexpr std::uint64_t host_rto_min_ns = 1'000'000;
static_assert(max_dpdk_endpoints == wire::max_fep_pids);

// memif's frames never leave this host's memory (uet's own port or DPDK's PMD).
bool is_memif(const std::string& driver) {
    return driver == "net_memif" || driver == "uet_memif";
}

template <class Array>
std::uint64_t total(const Array& a) {
    std::uint64_t s = 0;
    for (auto v : a)
        s += v;
    return s;
}

class dpdk_network final : public network {
  public:
    dpdk_network(const fabric_attr& a, dpdk_settings s, std::unique_ptr<host::net_port> p)
        : attr_(a), s_(std::move(s)), port_(std::move(p)) {
        tx_memory_.set_min_bytes(zero_copy_from());
    }
    ~dpdk_network() override {
        for (std::uint16_t pid = 0; pid < eps_.size(); ++pid)
            stop_endpoint(pid);
        port_->close();
    }

    // fabric_attr::capture_file: false (errno set) when the file cannot be created.
    bool open_capture() { return attr_.capture_file.empty() || capture_.open(attr_.capture_file); }

    std::error_code prepare(engine_config& c, const endpoint_attr& attr) override;
    void attach(endpoint_base& ep) override;
    void detach(endpoint_base& ep) noexcept override;
    void poll_frames_only();
    static bool process_endpoints(void* self, std::uint64_t now);
    void on_new_peer(std::uint32_t ip) noexcept override;
    bool step() override;
    std::uint64_t now() const noexcept override { return dpdk::now_ns(); }
    fabric_stats stats() const noexcept override;
    std::uint32_t register_memory(const void* addr, std::size_t length) override;
    void unregister_memory(std::uint32_t handle) noexcept override;

  private:
    struct open_endpoint {
        endpoint_base* ep = nullptr;
        std::unique_ptr<host::engine_handler> handler;
    };
    // The host stack and loop over the mux, built at the first endpoint and kept.
    void start_host();
    void stop_endpoint(std::uint16_t pid) noexcept;
    std::uint16_t pid_of(const endpoint_base& ep) const noexcept;
    bool zero_copy() const noexcept { return zero_copy_from() != 0; }
    std::uint32_t zero_copy_from() const noexcept;
    bool udp_checksum() const noexcept;
    // dpdk_attr::ack_every into the engine's ACK policy (0 keeps the engine's default).
    void coalesce_acks(engine_config& c) const noexcept;
    void add_host_counters(fabric_stats& s) const noexcept;
    void add_loop_counters(fabric_stats& s) const noexcept;

    fabric_attr attr_;
    dpdk_settings s_;
    std::unique_ptr<host::net_port> port_;
    std::array<open_endpoint, wire::max_fep_pids> eps_;
    std::size_t open_ = 0;
    // A RoCE or TSS endpoint is open: it holds the port alone.
    bool alone_ = false;
    host::pid_mux mux_;
    std::unique_ptr<host::host_stack> host_;
    wire::pcap_writer capture_;
    std::unique_ptr<host::capture_handler> capturing_;  // in front of host_ when capturing
    std::unique_ptr<dpdk::poll_loop> loop_;
    fabric_stats closed_;  // handler counters of endpoints that closed
    tx_memory tx_memory_;
};

std::error_code dpdk_network::prepare(engine_config& c, const endpoint_attr& attr) {
    const bool alone = attr.transport != transport::uet || attr.tss.enabled;
    if (open_ != 0 && (alone || alone_)) {
        set_last_error(
            "a roce_rc or TSS endpoint holds a dpdk fabric (one port) alone: its frames name "
            "no PIDonFEP to tell endpoints apart by. Close the open endpoints first, or open "
            "another fabric on another port");
        return errc::unsupported;
    }
    const std::uint16_t pid = mux_.free_pid();
    if (pid >= wire::max_fep_pids) {
        set_last_error("a dpdk fabric (one port) holds at most " +
                       std::to_string(max_dpdk_endpoints) +
                       " endpoints (PIDonFEPs 0..15): close one first, or open another fabric on "
                       "another port");
        return errc::unsupported;
    }
    c.ip = s_.ip;
    c.fep_pids = true;
    c.pid_on_fep = pid;
    c.mac = port_->mac();
    // PDC identifiers and PSNs must not be guessable by an off-path sender (a forged CLOSE or
    // data packet needs them), nor repeat those of a restarted process, which its peers may
    // still remember: the seed comes from the system's entropy.
    std::random_device entropy;
    c.seed = attr_.seed ^ (std::uint64_t{entropy()} << 32) ^ entropy() ^ dpdk::now_ns();
    c.rto_ns = s_.rto_ns;
    c.rto_max_ns = std::max(s_.rto_ns, dpdk_rto_max_ns);
    // The adaptive RTO's floor. RTTs between two polling processes are short, but a peer
    // descheduled for a time slice, or a ring's worth of frames queued at a busy receiver,
    // holds ACKs back many times longer: an RTO that follows the measured RTT down to the
    // engine's default floor fires on every such hiccup and resends a whole window into the
    // very queue that caused it. Losses within a window are found by SACK, not by this timer.
    c.rto_min_ns = std::min(s_.rto_ns, host_rto_min_ns);
    c.max_retransmits = s_.max_retransmits;
    c.mpr = dpdk_window_packets;
    coalesce_acks(c);
    c.timer_tick_ns = 10'000;
    c.pdc_idle_close_ns = 1'000'000;
    c.udp_checksum = udp_checksum();
    if (zero_copy()) {
        c.zero_copy = &tx_memory_;
        c.reference_min_bytes = zero_copy_from();  // tx_memory_ refuses what is shorter
        c.zero_copy_tail = port_->caps().zero_copy_tail;
    }
    return {};
}

void dpdk_network::coalesce_acks(engine_config& c) const noexcept {
    if (s_.ack_every == 0) return;
    c.ack_every_packets = s_.ack_every;
    c.ack_every_bytes = s_.ack_every * attr_.mtu;
}

bool dpdk_network::udp_checksum() const noexcept {
    if (s_.udp_checksum != checksum_policy::automatic)
        return s_.udp_checksum == checksum_policy::on;
    return !is_memif(port_->driver());
}

// The smallest payload that leaves registered memory without a copy; 0: none does.
std::uint32_t dpdk_network::zero_copy_from() const noexcept {
    // Only where the port chains external buffers: elsewhere the port would copy the payload
    // after the engine summed it, two passes where checksum_copy makes one.
    if (s_.zero_copy_min == 0 || !port_->caps().zero_copy) return 0;
    switch (s_.zero_copy) {
        case zero_copy_policy::on:
            return s_.zero_copy_min;
        case zero_copy_policy::off:
            return 0;
        case zero_copy_policy::automatic:
            break;
    }
    // A virtual device copies each frame into its own ring or socket whatever we hand it: a
    // second segment costs it more than uet's copy of a small payload, less than a large one's.
    return port_->is_virtual() ? std::max(s_.zero_copy_min, virtual_device_zero_copy_min)
                               : s_.zero_copy_min;
}

std::uint32_t dpdk_network::register_memory(const void* addr, std::size_t length) {
    const std::uint32_t from = zero_copy_from();
    if (from == 0 || addr == nullptr || length < from) return no_memory_handle;
    return tx_memory_.add(addr, length, port_->register_memory(addr, length));
}

void dpdk_network::unregister_memory(std::uint32_t handle) noexcept {
    const std::uint32_t region = tx_memory_.port_region(handle);
    if (!tx_memory_.remove(handle)) return;  // no new frame refers to it from here on
    // Frames still queued on the port may point into it (a NIC frees transmitted mbufs
    // lazily): wait for them, bounded, before the application may reuse the memory.
    const std::uint64_t give_up = dpdk::now_ns() + 1'000'000'000;
    while (!port_->unregister_memory(region)) {
        if (dpdk::now_ns() > give_up) {
            std::fprintf(stderr,
                         "uet: a memory region is still referenced by %u queued frames after 1 s; "
                         "kept registered on the port\n",
                         port_->in_flight(region));
            return;
        }
        port_->reclaim_tx();
        if (loop_) poll_frames_only();
    }
}

// One poll that moves frames without running the endpoint (it is closing, or in the middle of
// an application call).
void dpdk_network::poll_frames_only() {
    loop_->set_between_bursts(nullptr, nullptr);
    loop_->poll_once();
    loop_->set_between_bursts(&process_endpoints, this);
}

bool dpdk_network::process_endpoints(void* self, std::uint64_t now) {
    auto& net = *static_cast<dpdk_network*>(self);
    if (net.open_ == 1) [[likely]]
        return net.eps_[net.mux_.only()].ep->process(now);
    bool any = false;
    for (open_endpoint& o : net.eps_)
        if (o.ep) any |= o.ep->process(now);
    return any;
}

std::uint16_t dpdk_network::pid_of(const endpoint_base& ep) const noexcept {
    for (std::uint16_t pid = 0; pid < eps_.size(); ++pid)
        if (eps_[pid].ep == &ep) return pid;
    return wire::max_fep_pids;
}

void dpdk_network::start_host() {
    host::host_config hc;
    hc.iface = {port_->mac(), s_.ip, s_.prefix_len, s_.gateway};
    hc.neighbors.max_frame = std::max<std::size_t>(9216, port_->caps().max_frame);
    host_ = std::make_unique<host::host_stack>(hc, mux_);
    for (const auto& [ip, mac] : s_.neighbors)
        host_->neighbors().add_static(ip, mac);
    host::backoff_config bc;
    bc.enabled = !s_.busy_poll;
    host::frame_handler* top = host_.get();
    if (capture_.is_open()) {
        const auto wall = std::chrono::duration_cast<std::chrono::nanoseconds>(
                              std::chrono::system_clock::now().time_since_epoch())
                              .count();
        capturing_ = std::make_unique<host::capture_handler>(
            *host_, capture_,
            static_cast<std::int64_t>(wall) - static_cast<std::int64_t>(dpdk::now_ns()));
        top = capturing_.get();
    }
    loop_ = std::make_unique<dpdk::poll_loop>(port_->queue(0), *top, bc);
    // The endpoints answer what a receive burst brought before the transmit burst, so their
    // answers ride in the ACKs that burst sends (answers in ACKs) and leave without a wait.
    loop_->set_between_bursts(&process_endpoints, this);
}

void dpdk_network::attach(endpoint_base& ep) {
    const std::uint16_t pid = ep.address.pid;
    if (pid >= eps_.size() || eps_[pid].ep) return;  // prepare() gave it: cannot happen
    if (!host_) start_host();
    open_endpoint& o = eps_[pid];
    o.handler = std::make_unique<host::engine_handler>(*ep.frames());
    o.ep = &ep;
    mux_.add(pid, *o.handler);
    ++open_;
    alone_ = ep.kind != transport::uet || ep.attr.tss.enabled;
}

void dpdk_network::detach(endpoint_base& ep) noexcept {
    const std::uint16_t pid = pid_of(ep);
    if (pid >= eps_.size()) return;
    // What the engine already owes its peers (acknowledgements, with the answers they carry)
    // leaves before the engine goes; otherwise a peer whose request was acknowledged would wait
    // for an answer that never comes. Control frames only: the memory of the messages still
    // queued may be gone already (their operations end canceled). Bounded: a few bursts.
    frame_engine* e = ep.frames();
    if (e) e->stop_data();
    for (int i = 0; i < 64 && e && e->next_deadline() <= dpdk::now_ns(); ++i)
        poll_frames_only();
    stop_endpoint(pid);
}

void dpdk_network::stop_endpoint(std::uint16_t pid) noexcept {
    open_endpoint& o = eps_[pid];
    if (!o.ep) return;
    closed_.tx_dropped += o.handler->stats().tx_too_large;
    mux_.remove(pid);
    o = open_endpoint{};
    --open_;
    if (open_ == 0) alone_ = false;
}

void dpdk_network::on_new_peer(std::uint32_t ip) noexcept {
    // Resolve the next hop now, so that the first window of data is not held (and, beyond the
    // host stack's few hold slots, dropped) while ARP runs.
    if (!host_) return;
    const std::uint32_t hop = host_->neighbors().next_hop(ip);
    if (hop != 0) host_->neighbors().resolve(hop, dpdk::now_ns());
}

bool dpdk_network::step() {
    if (open_ == 0) return false;
    loop_->poll_and_backoff();  // the endpoints' process() runs between its bursts
    return true;
}

void dpdk_network::add_host_counters(fabric_stats& s) const noexcept {
    if (!host_) return;
    const auto& h = host_->stats();
    const auto& n = host_->neighbors().stats();
    const std::uint64_t tx_host = h[host::host_drop::tx_not_ipv4] +
                                  h[host::host_drop::tx_too_large_to_hold] + h.loopback_dropped;
    s.rx_dropped += total(h.drops) - tx_host + n[host::neighbor_drop::arp_not_for_us] +
                    n[host::neighbor_drop::arp_bad_sender] +
                    n[host::neighbor_drop::arp_unsolicited] +
                    n[host::neighbor_drop::static_protected];
    s.tx_dropped += tx_host + n[host::neighbor_drop::table_full] +
                    n[host::neighbor_drop::pending_full] + n[host::neighbor_drop::frame_too_large] +
                    n[host::neighbor_drop::no_route] + n[host::neighbor_drop::unresolved] +
                    n[host::neighbor_drop::output_full];
    for (const open_endpoint& o : eps_)
        if (o.handler) s.tx_dropped += o.handler->stats().tx_too_large;
    // Frames for our address that name no open endpoint (a PIDonFEP none holds, or none).
    s.unroutable += mux_.stats()[host::pid_drop::no_endpoint];
    s.rx_dropped += mux_.stats().dropped();
    s.arp_requests += n.requests_sent;
    s.arp_replies += n.replies_sent;
    s.echo_replies += h.echo_replies;
}

void dpdk_network::add_loop_counters(fabric_stats& s) const noexcept {
    if (!loop_) return;
    const dpdk::loop_stats l = loop_->stats();
    s.polls += l.polls;
    s.idle_polls += l.idle_polls;
    s.busy_ns += l.busy_ns;
    s.idle_ns += l.idle_ns;
}

fabric_stats dpdk_network::stats() const noexcept {
    fabric_stats s = closed_;
    add_host_counters(s);
    add_loop_counters(s);
    const host::port_counters p = port_->counters();
    s.rx_frames = p.rx_frames;
    s.tx_frames = p.tx_frames;
    s.frames = p.tx_frames;
    s.rx_dropped += p.rx_oversize + p.steered_away + p.rx_bad_descriptor;
    s.tx_dropped += p.tx_ring_full + p.tx_alloc_failed + p.tx_bad_frame + p.tx_peer_left;
    s.tx_zero_copy = p.tx_zero_copy;
    // The port runs on the EAL, so it is up: read its TSC rate without start(), which would
    // print its "already initialised" line on every call.
    const std::uint64_t hz = dpdk::eal::running_tsc_hz();
    const double ns_per_tick = hz != 0 ? 1e9 / static_cast<double>(hz) : 0.0;
    s.rx_driver_ns = static_cast<std::uint64_t>(p.rx_driver_ticks * ns_per_tick);
    s.rx_stack_ns = static_cast<std::uint64_t>(p.rx_stack_ticks * ns_per_tick);
    s.tx_stack_ns = static_cast<std::uint64_t>(p.tx_stack_ticks * ns_per_tick);
    s.tx_driver_ns = static_cast<std::uint64_t>(p.tx_driver_ticks * ns_per_tick);
    s.udp_checksum = udp_checksum();
    s.zero_copy_from = zero_copy_from();
    engine_config acks;
    coalesce_acks(acks);
    s.ack_every_packets = acks.ack_every_packets;
    s.ack_every_bytes = acks.ack_every_bytes;
    s.captured_frames = capture_.frames();
    s.capture_failed = capture_.failed();
    return s;
}

// uet's own memif port for "uet_memif..." devices, else a DPDK ethdev port. Throws with the
// reason.
std::unique_ptr<host::net_port> open_port(const dpdk_settings& s) {
    if (memif::is_uet_memif(s.device)) {
        std::string why;
        auto mc = memif::parse_device(s.device, why);
        if (!mc) throw std::runtime_error(why);
        mc->mtu = std::min<std::uint32_t>(s.port_mtu, 9000);
        mc->time_stages = s.time_stages;
        return memif::port::open(*mc);
    }
    dpdk::port_config pc;
    pc.device = s.device;
    pc.mtu = s.port_mtu;
    pc.trust_link_mtu = s.trust_link_mtu;
    pc.time_stages = s.time_stages;
    return dpdk::port::open(pc);
}

// Validates attr.dpdk, starts the EAL (once per process) and opens the port.
std::unique_ptr<network> open_dpdk_network(const fabric_attr& attr, std::error_code& ec) {
    ec = make_error_code(errc::invalid_argument);
    dpdk_settings s;
    std::string why;
    if (!parse_dpdk_settings(attr, s, why)) {
        set_last_error(why);
        return nullptr;
    }
    try {
        dpdk::eal_options eo;
        eo.args = s.eal_args;
        dpdk::eal::start(eo);
    } catch (const std::exception& e) {
        set_last_error(std::string("cannot start the DPDK EAL: ") + e.what());
        return nullptr;
    }
    std::unique_ptr<host::net_port> port;
    try {
        port = open_port(s);
    } catch (const std::exception& e) {
        set_last_error("cannot open dpdk.device \"" + s.device + "\": " + e.what());
        return nullptr;
    }
    if (port->driver() == "uet_memif" && s.zero_copy == zero_copy_policy::on &&
        !port->caps().zero_copy)
        std::fprintf(stderr,
                     "uet: a uet_memif server builds every frame in memif's shared ring: zero-copy "
                     "transmit has nothing to chain (only a client sends payloads of shared "
                     "memory without a copy)\n");
    const std::size_t max_frame = port->caps().max_frame;
    if (attr.mtu + frame_overhead > max_frame) {
        set_last_error("fabric_attr.mtu " + std::to_string(attr.mtu) + " plus " +
                       std::to_string(frame_overhead) + " header bytes exceeds the port's " +
                       std::to_string(max_frame) + "-byte frames (MTU " +
                       std::to_string(port->mtu()) + "): use fabric_attr.mtu <= " +
                       std::to_string(max_frame - std::min(max_frame, frame_overhead)) +
                       " or a larger dpdk.port_mtu");
        port->close();
        return nullptr;
    }
    auto net = std::make_unique<dpdk_network>(attr, std::move(s), std::move(port));
    if (!net->open_capture()) {
        set_last_error("fabric_attr.capture_file '" + attr.capture_file +
                       "' cannot be created: " + std::strerror(errno));
        return nullptr;
    }
    ec = {};
    return net;
}

}  // namespace

}  // namespace uet::detail

UET_REGISTER_PROVIDER(dpdk, {"dpdk", false, &::uet::detail::open_dpdk_network})
