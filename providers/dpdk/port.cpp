// Opening, configuring, steering and closing a port. The burst paths are in port_io.cpp.
#include "dpdk/port.hpp"

#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "dpdk/device.hpp"
#include "dpdk/dpdk_include.hpp"
#include "dpdk/eal.hpp"
#include "dpdk/port_io.hpp"

namespace uet::dpdk {

namespace {

std::string dpdk_error(const char* what, int rc) {
    return std::string(what) + ": " + rte_strerror(rc < 0 ? -rc : rc);
}

// Pool names must be unique in the process and at most RTE_MEMPOOL_NAMESIZE - 1 bytes.
std::string pool_name(const char* kind, std::uint16_t port_id) {
    static unsigned generation = 0;
    return std::string(kind) + std::to_string(port_id) + "_" + std::to_string(generation++);
}

void sleep_ms(unsigned ms) {
    const timespec ts{0, static_cast<long>(ms) * 1'000'000};
    nanosleep(&ts, nullptr);
}

constexpr std::uint32_t ext_mbufs = 2047;

}  // namespace

std::string offload_info::describe() const {
    std::string s = driver + ": tx{";
    s += multi_seg_tx ? " multi_seg" : "";
    s += ipv4_cksum_tx ? " ipv4_cksum" : "";
    s += udp_cksum_tx ? " udp_cksum" : "";
    s += " } rx{";
    s += ipv4_cksum_rx ? " ipv4_cksum" : "";
    s += udp_cksum_rx ? " udp_cksum" : "";
    s += scatter_rx ? " scatter" : "";
    s += " } max_rx_pktlen=" + std::to_string(max_rx_pktlen) +
         " min_rx_bufsize=" + std::to_string(min_rx_bufsize) + " mtu=[" + std::to_string(min_mtu) +
         "," + std::to_string(max_mtu) + "]";
    return s;
}

port::port(const port_config& cfg) : cfg_(cfg) {}

std::unique_ptr<port> port::open(const port_config& cfg) {
    if (!dpdk::eal::running()) dpdk::eal::start();
    if (cfg.rx_queues == 0 || cfg.tx_queues == 0 || cfg.steer_queue >= cfg.rx_queues) {
        throw std::runtime_error("uet: port " + cfg.device + ": bad queue configuration");
    }
    std::unique_ptr<port> p(new port(cfg));
    try {
        p->probe();
        p->configure();
        p->setup_steering();
    } catch (...) {
        p->close();
        throw;
    }
    return p;
}

port::~port() {
    close();
}

void port::log(const std::string& line) const {
    if (!cfg_.quiet) std::fprintf(stderr, "uet: port %s: %s\n", name_.c_str(), line.c_str());
}

void port::probe() {
    const auto spec = parse_device(cfg_.device);
    if (!spec) throw std::runtime_error("uet: cannot make a port of \"" + cfg_.device + "\"");
    name_ = spec->name;
    devargs_ = spec->args;
    is_vdev_ = spec->type == device_spec::kind::vdev;
    // DPDK 22.11's memif splits a frame longer than its buffers (bsize, 2048 by default) over
    // several descriptors and its receive path then returns bogus frames and can crash inside
    // rte_eth_rx_burst (seen with 8 KiB payloads). Give a jumbo memif link buffers that hold a
    // whole frame, unless the device string chose a size; both peers derive the same value.
    if (is_memif() && cfg_.trust_link_mtu && cfg_.mtu > 1500 &&
        devargs_.find("bsize=") == std::string::npos) {
        const std::uint32_t frame = std::min<std::uint32_t>(cfg_.mtu, 9000) + 18;
        const std::string bsize = std::to_string((frame + 1023) / 1024 * 1024);
        devargs_ += (devargs_.empty() ? "bsize=" : ",bsize=") + bsize;
        log("memif buffers of " + bsize + " bytes for jumbo frames (bsize)");
    }
    std::uint16_t id = 0;
    if (rte_eth_dev_get_port_by_name(name_.c_str(), &id) == 0) {
        throw std::runtime_error("uet: port " + name_ + " is already open in this process");
    }
    const int rc = is_vdev_ ? rte_eal_hotplug_add("vdev", name_.c_str(), devargs_.c_str())
                            : rte_dev_probe(spec->devargs().c_str());
    if (rc < 0 && !(rc == -EEXIST && !is_vdev_)) {
        std::string why = dpdk_error(("probing " + spec->devargs()).c_str(), rc);
        if (memif_zero_copy())
            why += " (memif zero-copy needs the EAL option --single-file-segments)";
        throw std::runtime_error("uet: " + why);
    }
    detach_ = rc == 0;  // a PCI device someone else probed (e.g. EAL -a) stays attached
    if (rte_eth_dev_get_port_by_name(name_.c_str(), &id) != 0) {
        throw std::runtime_error("uet: " + name_ + " probed but has no ethdev port");
    }
    port_id_ = id;
    probed_ = true;
}

// memif's own zero-copy mode (devargs zero-copy=yes, client side): the peer reads our mbufs in
// place, so every segment must live in DPDK memory.
bool port::memif_zero_copy() const noexcept {
    return is_memif() && devargs_.find("zero-copy=yes") != std::string::npos;
}

void port::configure() {
    rte_eth_dev_info info{};
    if (int rc = rte_eth_dev_info_get(port_id_, &info); rc != 0) {
        throw std::runtime_error("uet: " + dpdk_error("rte_eth_dev_info_get", rc));
    }
    offloads_.driver = info.driver_name ? info.driver_name : "?";
    offloads_.multi_seg_tx = info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
    offloads_.ipv4_cksum_tx = info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_IPV4_CKSUM;
    offloads_.udp_cksum_tx = info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_UDP_CKSUM;
    offloads_.ipv4_cksum_rx = info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_IPV4_CKSUM;
    offloads_.udp_cksum_rx = info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_UDP_CKSUM;
    offloads_.scatter_rx = info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_SCATTER;
    offloads_.max_rx_pktlen = info.max_rx_pktlen;
    offloads_.min_mtu = info.min_mtu;
    offloads_.max_mtu = info.max_mtu;
    offloads_.min_rx_bufsize = info.min_rx_bufsize;

    // The MTU ethdev accepts: asked for, capped at 9000, at the driver's limits.
    const std::uint32_t wanted = std::min<std::uint32_t>(cfg_.mtu, 9000);
    std::uint32_t mtu = wanted;
    if (info.max_mtu != 0) mtu = std::min<std::uint32_t>(mtu, info.max_mtu);
    if (info.max_rx_pktlen > RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN) {
        mtu = std::min<std::uint32_t>(mtu,
                                      info.max_rx_pktlen - RTE_ETHER_HDR_LEN - RTE_ETHER_CRC_LEN);
    }
    mtu = std::max<std::uint32_t>(mtu, std::max<std::uint16_t>(info.min_mtu, 68));
    // What the link carries: the same, unless the caller vouches for a bigger link MTU that the
    // PMD reports too low (DPDK 22.11's af_packet, tap and memif say 1518 bytes but pass jumbo
    // frames up to their buffer or ring sizes).
    link_mtu_ = mtu;
    if (mtu < wanted && cfg_.trust_link_mtu) {
        link_mtu_ = wanted;
        log("ethdev allows MTU " + std::to_string(mtu) + "; carrying frames for MTU " +
            std::to_string(wanted) + " as the link is configured (trust_link_mtu)");
    } else if (mtu != wanted) {
        log("MTU " + std::to_string(wanted) + " not possible, using " + std::to_string(mtu));
    }

    // One mbuf holds a whole frame (VLAN tag included), so the receive path rarely linearises.
    // Jumbo buffers get 1 KiB of slack: af_packet wants room for its whole ring frame.
    std::uint32_t frame_room = std::max<std::uint32_t>(2048, (link_mtu_ + 18 + 63) / 64 * 64);
    if (link_mtu_ > 1500) frame_room = (link_mtu_ + 18 + 1023) / 1024 * 1024 + 1024;
    frame_room = std::max<std::uint32_t>(frame_room, info.min_rx_bufsize);
    // af_packet copies whole ring frames into one mbuf and refuses mbufs smaller than its
    // frame size, which it does not report: read it from the devargs.
    if (const auto at = devargs_.find("framesz="); at != std::string::npos) {
        frame_room = std::max<std::uint32_t>(
            frame_room,
            static_cast<std::uint32_t>(std::strtoul(devargs_.c_str() + at + 8, nullptr, 10)));
    }
    const auto data_room = static_cast<std::uint16_t>(RTE_PKTMBUF_HEADROOM + frame_room);
    const int socket = rte_eth_dev_socket_id(port_id_);
    pool_ = rte_pktmbuf_pool_create(pool_name("uet_mb", port_id_).c_str(), cfg_.mbufs, 256, 0,
                                    data_room, socket);
    ext_pool_ = rte_pktmbuf_pool_create(pool_name("uet_ext", port_id_).c_str(), ext_mbufs, 64, 0, 0,
                                        socket);
    if (pool_ == nullptr || ext_pool_ == nullptr) {
        throw std::runtime_error("uet: " + dpdk_error("creating mbuf pools", rte_errno));
    }

    rte_eth_conf conf{};
    conf.rxmode.mtu = mtu;
    std::uint64_t tx_offloads = 0;
    if (offloads_.multi_seg_tx) tx_offloads |= RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
    if (offloads_.ipv4_cksum_tx) tx_offloads |= RTE_ETH_TX_OFFLOAD_IPV4_CKSUM;
    if (offloads_.udp_cksum_tx) tx_offloads |= RTE_ETH_TX_OFFLOAD_UDP_CKSUM;
    conf.txmode.offloads = tx_offloads;
    if (int rc = rte_eth_dev_configure(port_id_, cfg_.rx_queues, cfg_.tx_queues, &conf); rc != 0) {
        throw std::runtime_error("uet: " + dpdk_error("rte_eth_dev_configure", rc));
    }
    std::uint16_t nb_rx = cfg_.rx_descriptors, nb_tx = cfg_.tx_descriptors;
    rte_eth_dev_adjust_nb_rx_tx_desc(port_id_, &nb_rx, &nb_tx);
    for (std::uint16_t q = 0; q < cfg_.rx_queues; ++q) {
        if (int rc = rte_eth_rx_queue_setup(port_id_, q, nb_rx, socket, nullptr, pool_); rc != 0) {
            throw std::runtime_error("uet: " + dpdk_error("rte_eth_rx_queue_setup", rc));
        }
    }
    rte_eth_txconf txconf = info.default_txconf;
    txconf.offloads = tx_offloads;
    for (std::uint16_t q = 0; q < cfg_.tx_queues; ++q) {
        if (int rc = rte_eth_tx_queue_setup(port_id_, q, nb_tx, socket, &txconf); rc != 0) {
            throw std::runtime_error("uet: " + dpdk_error("rte_eth_tx_queue_setup", rc));
        }
    }
    // Some PMDs (net_tap: the kernel interface) apply the MTU only through set_mtu. Not when the
    // link was configured bigger: af_packet and tap would shrink the kernel interface's MTU.
    if (link_mtu_ == mtu) {
        if (int rc = rte_eth_dev_set_mtu(port_id_, static_cast<std::uint16_t>(mtu)); rc != 0) {
            log(dpdk_error("rte_eth_dev_set_mtu", rc) + " (keeping the configured MTU)");
        }
    }
    if (int rc = rte_eth_dev_start(port_id_); rc != 0) {
        throw std::runtime_error("uet: " + dpdk_error("rte_eth_dev_start", rc));
    }
    started_ = true;
    std::uint16_t actual = 0;
    mtu_ = rte_eth_dev_get_mtu(port_id_, &actual) == 0 && actual != 0 ? actual : mtu;
    mtu_ = std::max(mtu_, link_mtu_);
    rte_ether_addr addr{};
    rte_eth_macaddr_get(port_id_, &addr);
    std::copy(std::begin(addr.addr_bytes), std::end(addr.addr_bytes), mac_.octets.begin());
    if (offloads_.driver == "net_tap") {
        // A tap's MAC is the kernel interface's own: the stack behind the fd needs another one,
        // or the kernel's ARP replies would look like they came from ourselves. The fd gets
        // every frame the kernel sends, whatever its destination MAC.
        mac_.octets[0] = static_cast<std::uint8_t>((mac_.octets[0] | 0x02) & 0xfe);
        mac_.octets[5] ^= 0x01;
    }

    tx_offload_flags_ = tx_offloads;
    caps_.max_frame = mtu_ + RTE_ETHER_HDR_LEN;
    caps_.ipv4_checksum_offload = offloads_.ipv4_cksum_tx;
    caps_.udp_checksum_offload = offloads_.udp_cksum_tx;
    caps_.zero_copy = offloads_.multi_seg_tx;
    if (caps_.zero_copy && memif_zero_copy()) {
        // memif's zero-copy mode hands the peer each segment as an offset into the DPDK memory
        // it shares: a payload chained from the application's memory would reach the peer as
        // a bogus descriptor (seen: a peer crashing in rte_eth_rx_burst, a sender that never
        // heard back). Payloads are copied into the mbuf instead.
        caps_.zero_copy = false;
        log("memif zero-copy: payloads are copied into mbufs (only DPDK memory is shared)");
    }
    for (std::uint16_t q = 0; q < std::max(cfg_.rx_queues, cfg_.tx_queues); ++q) {
        queues_.push_back(std::make_unique<queue_io>(*this, q, data_room - RTE_PKTMBUF_HEADROOM));
    }
    log("up, mac " + mac_.to_string() + ", mtu " + std::to_string(mtu_) + ", " +
        offloads_.describe());
}

// UDP to the UET and RoCEv2 ports goes to steer_queue. Only a dedicated engine queue makes the
// rules worth having: with everything on queue 0 the receive path must classify anyway.
void port::setup_steering() {
    steering_ = steering_mode::software;
    if (!cfg_.try_flow_rules) {
        log("steering in software (flow rules not tried)");
        return;
    }
    for (std::uint16_t udp_port : {cfg_.steering.uet_port, cfg_.steering.roce_port}) {
        rte_flow_attr attr{};
        attr.ingress = 1;
        rte_flow_item_udp udp_spec{}, udp_mask{};
        udp_spec.hdr.dst_port = rte_cpu_to_be_16(udp_port);
        udp_mask.hdr.dst_port = 0xffff;
        rte_flow_item pattern[4]{};
        pattern[0].type = RTE_FLOW_ITEM_TYPE_ETH;
        pattern[1].type = RTE_FLOW_ITEM_TYPE_IPV4;
        pattern[2].type = RTE_FLOW_ITEM_TYPE_UDP;
        pattern[2].spec = &udp_spec;
        pattern[2].mask = &udp_mask;
        pattern[3].type = RTE_FLOW_ITEM_TYPE_END;
        rte_flow_action_queue queue{};
        queue.index = cfg_.steer_queue;
        rte_flow_action actions[2]{};
        actions[0].type = RTE_FLOW_ACTION_TYPE_QUEUE;
        actions[0].conf = &queue;
        actions[1].type = RTE_FLOW_ACTION_TYPE_END;
        rte_flow_error err{};
        rte_flow* flow = nullptr;
        if (rte_flow_validate(port_id_, &attr, pattern, actions, &err) == 0) {
            flow = rte_flow_create(port_id_, &attr, pattern, actions, &err);
        }
        if (flow == nullptr) {
            flow_refusal_ = err.message ? err.message : rte_strerror(rte_errno);
            rte_flow_error ignored{};
            for (rte_flow* f : flows_)
                rte_flow_destroy(port_id_, f, &ignored);
            flows_.clear();
            log("rte_flow refused (" + flow_refusal_ + "): steering in software");
            return;
        }
        flows_.push_back(flow);
    }
    if (cfg_.steer_queue != 0) {
        steering_ = steering_mode::hardware;
        log("rte_flow steers UDP " + std::to_string(cfg_.steering.uet_port) + "/" +
            std::to_string(cfg_.steering.roce_port) + " to queue " +
            std::to_string(cfg_.steer_queue));
    } else {
        log("rte_flow rules accepted, but the engine shares queue 0: classifying in software");
    }
}

host::packet_io& port::queue(std::uint16_t q) {
    if (q >= queues_.size()) throw std::out_of_range("uet: no such queue");
    return *queues_[q];
}

bool port::set_mtu(std::uint32_t mtu) {
    if (closed_ || mtu > 9000 ||
        rte_eth_dev_set_mtu(port_id_, static_cast<std::uint16_t>(mtu)) != 0) {
        return false;
    }
    mtu_ = mtu;
    caps_.max_frame = mtu_ + RTE_ETHER_HDR_LEN;
    return true;
}

port::link_state port::link() const {
    rte_eth_link l{};
    if (closed_ || rte_eth_link_get_nowait(port_id_, &l) != 0) return {};
    return {l.link_status == RTE_ETH_LINK_UP, l.link_speed};
}

bool port::wait_link_up(std::uint32_t timeout_ms) const {
    for (std::uint32_t waited = 0;; waited += 10) {
        if (link().up) return true;
        if (waited >= timeout_ms) return false;
        sleep_ms(10);
    }
}

std::uint32_t port::register_memory(const void* addr, std::size_t length) {
    region r;
    r.addr = static_cast<const std::uint8_t*>(addr);
    r.length = length;
    r.shinfo = new rte_mbuf_ext_shared_info{};
    // The region holds one reference itself, so the free callback never runs: the memory is
    // the application's. Every attached mbuf adds one until the PMD frees it.
    r.shinfo->free_cb = [](void*, void*) {};
    r.shinfo->fcb_opaque = nullptr;
    rte_mbuf_ext_refcnt_set(r.shinfo, 1);
    void* va = const_cast<void*>(addr);
    const std::size_t page = 4096;
    if (reinterpret_cast<std::uintptr_t>(addr) % page == 0 && length % page == 0) {
        r.extmem = rte_extmem_register(va, length, nullptr, 0, page) == 0;
        // A NIC behind an IOMMU needs the mapping; vdevs answer ENOTSUP, which is fine.
        rte_eth_dev_info info{};
        if (r.extmem && rte_eth_dev_info_get(port_id_, &info) == 0 && info.device != nullptr) {
            r.dma_mapped =
                rte_dev_dma_map(info.device, va, reinterpret_cast<std::uintptr_t>(va), length) == 0;
        }
    }
    // A free slot first: applications register and deregister regions all the time.
    for (std::uint32_t id = 0; id < regions_.size(); ++id) {
        if (regions_[id].shinfo == nullptr) {
            regions_[id] = r;
            return id;
        }
    }
    regions_.push_back(r);
    return static_cast<std::uint32_t>(regions_.size() - 1);
}

void port::reclaim_tx() noexcept {
    if (!started_ || closed_) return;
    for (std::uint16_t q = 0; q < cfg_.tx_queues; ++q)
        rte_eth_tx_done_cleanup(port_id_, q, 0);  // ENOTSUP on PMDs that free at once
}

std::uint32_t port::in_flight(std::uint32_t id) const {
    if (id >= regions_.size() || regions_[id].shinfo == nullptr) return 0;
    return rte_mbuf_ext_refcnt_read(regions_[id].shinfo) - 1;
}

bool port::unregister_memory(std::uint32_t id) {
    if (id >= regions_.size() || regions_[id].shinfo == nullptr || in_flight(id) != 0) {
        return false;
    }
    region& r = regions_[id];
    void* va = const_cast<std::uint8_t*>(r.addr);
    rte_eth_dev_info info{};
    if (r.dma_mapped && rte_eth_dev_info_get(port_id_, &info) == 0) {
        rte_dev_dma_unmap(info.device, va, reinterpret_cast<std::uintptr_t>(va), r.length);
    }
    if (r.extmem) rte_extmem_unregister(va, r.length);
    delete r.shinfo;
    r = region{};
    return true;
}

port_counters port::counters() const {
    port_counters total;
    for (const auto& q : queues_)
        q->add_counters(total);
    return total;
}

bool port::peer_back() noexcept {
    rte_eth_link l{};
    if (rte_eth_link_get_nowait(port_id_, &l) != 0) return false;
    if (l.link_status == RTE_ETH_LINK_DOWN) {
        link_went_down_.store(true);
        ack_owed_.store(false);  // the peer has closed: it no longer waits for an answer
        return false;
    }
    // Up after down: the driver has set up a new connection, with rings it has mapped anew.
    if (!link_went_down_.load()) return false;
    link_went_down_.store(false);
    if (peer_left_.exchange(false)) log("the memif link is back: bursting again");
    return true;
}

bool port::link_up() const noexcept {
    rte_eth_link l{};
    return rte_eth_link_get_nowait(port_id_, &l) == 0 && l.link_status == RTE_ETH_LINK_UP;
}

// goodbye.hpp: a memif peer still polling its port must hear that we leave before our
// rte_eth_dev_stop makes its driver unmap the rings under it.
void port::leave_peer() noexcept {
    if (!is_memif() || queues_.empty()) return;
    if (link_up()) {
        const bool after_goodbye = peer_left_.load();
        left_ = after_goodbye ? queues_.front()->after_peer_left(cfg_.goodbye_timeout_ms)
                              : queues_.front()->leave(cfg_.goodbye_timeout_ms);
        if (left_ == leave_outcome::timed_out)
            log(std::string(after_goodbye ? "the memif peer said goodbye but did not close"
                                          : "the memif peer did not answer our goodbye") +
                " within " + std::to_string(cfg_.goodbye_timeout_ms) + " ms: closing anyway");
    }
    if (!link_up()) settle_peer_disconnect();
}

// The peer has disconnected: the driver tears the connection down in the interrupt thread, and
// our rte_eth_dev_stop tears it down too. The two at once freed the same regions twice (seen
// as a crash in close, right after the link went down). The link goes down at the start of that
// teardown, so a callback of ours, which the same thread runs only after it, says when it is
// over: an eventfd registered for the moment and unregistered before returning. (An EAL alarm
// did the same, but leaves its timer registered with that thread for good, and rte_eal_cleanup
// then freed it under the thread: a crash at exit.)
void port::settle_peer_disconnect() noexcept {
    const int fd = eventfd(1, EFD_NONBLOCK | EFD_CLOEXEC);  // readable at once
    rte_intr_handle* h = fd < 0 ? nullptr : rte_intr_instance_alloc(RTE_INTR_INSTANCE_F_PRIVATE);
    std::atomic<bool> ran{false};
    const auto mark = [](void* flag) { static_cast<std::atomic<bool>*>(flag)->store(true); };
    if (h != nullptr && rte_intr_fd_set(h, fd) == 0 &&
        rte_intr_type_set(h, RTE_INTR_HANDLE_EXT) == 0 &&
        rte_intr_callback_register(h, mark, &ran) == 0) {
        const auto deadline =
            std::chrono::steady_clock::now() + std::chrono::milliseconds(cfg_.goodbye_timeout_ms);
        const timespec pause{0, 100'000};
        while (!ran.load() && std::chrono::steady_clock::now() < deadline)
            nanosleep(&pause, nullptr);
        // Waits for a callback that is running; afterwards nothing refers to `ran` any more.
        rte_intr_callback_unregister_sync(h, mark, &ran);
    }
    rte_intr_instance_free(h);
    if (fd >= 0) ::close(fd);
}

void port::close() noexcept {
    if (closed_) return;
    closed_ = true;
    if (started_) {
        // Let queued frames leave and take what is still arriving, so the mbufs are back in the
        // pool before it is freed.
        for (auto& q : queues_)
            q->drain();
        leave_peer();
        rte_flow_error err{};
        for (rte_flow* f : flows_)
            rte_flow_destroy(port_id_, f, &err);
        flows_.clear();
        rte_eth_dev_stop(port_id_);
    }
    queues_.clear();  // returns their cached mbufs
    if (probed_) {
        rte_eth_dev_info info{};
        rte_device* dev = rte_eth_dev_info_get(port_id_, &info) == 0 ? info.device : nullptr;
        rte_eth_dev_close(port_id_);
        if (detach_) {
            const int rc = is_vdev_ ? rte_eal_hotplug_remove("vdev", name_.c_str())
                                    : (dev != nullptr ? rte_dev_remove(dev) : -ENODEV);
            if (rc != 0) log(dpdk_error("detaching the device", rc));
        }
    }
    for (std::uint32_t r = 0; r < regions_.size(); ++r) {
        if (regions_[r].shinfo != nullptr && !unregister_memory(r)) {
            // Still referenced (cannot happen after close: the PMD freed its mbufs); keep the
            // shared info alive rather than free memory an mbuf points to.
            log("memory region " + std::to_string(r) + " still in flight at close");
        }
    }
    rte_mempool_free(pool_);
    rte_mempool_free(ext_pool_);
    pool_ = ext_pool_ = nullptr;
    if (!started_) return;
    switch (left_) {
        case leave_outcome::acknowledged:
            return log("closed (the memif peer heard our goodbye)");
        case leave_outcome::yielded:
            return log("closed (the memif peer was leaving too)");
        case leave_outcome::peer_closed:
            return log("closed (after the memif peer)");
        default:
            return log("closed");
    }
}

}  // namespace uet::dpdk
