// Fabric and domain: the provider (how packets move) and the resources endpoints share.
//
//   auto fab = uet::fabric::open({});            // provider "pipe": in-process, virtual time
//   // or: {.provider = "dpdk", .mtu = 1344, .dpdk = {.device = "eth0", .address = "10.0.0.1/24"}}
//   auto dom = fab->open_domain();
//   auto cq = dom->open_cq(256); auto av = dom->open_av();
//   auto ep = dom->open_endpoint({.job_id = 7}, *cq, *av);
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "uet/address_vector.hpp"
#include "uet/completion_queue.hpp"
#include "uet/endpoint.hpp"
#include "uet/memory_region.hpp"
#include "uet/status.hpp"

namespace uet {

// The pipe provider's links: every frame to an endpoint crosses one, seeded and deterministic.
struct link_impairments {
    double loss = 0;                         // independent drop probability
    double reorder = 0;                      // probability a frame is held back ...
    std::uint32_t reorder_max_distance = 0;  // ... until up to this many later frames passed
    double duplicate = 0;                    // probability a frame is delivered twice
    std::uint64_t delay_ns = 1000;           // propagation delay
    double rate_gbps = 0;                    // serialisation rate; 0: infinite
    // UDP source ports whose frames are all lost, as on an ECMP path through a failed link: a
    // roce_rc queue pair's port (qp_counters::udp_source_port) or a UET PDC's entropy.
    std::vector<std::uint16_t> failed_paths;
};

// dpdk_attr::udp_checksum: whether the frames a port sends carry a UDP checksum.
enum class checksum_policy : std::uint8_t { automatic, on, off };

// dpdk_attr::zero_copy: whether payloads leave registered memory without a copy.
enum class zero_copy_policy : std::uint8_t { automatic, on, off };
// The smallest payload zero_copy_policy::automatic chains on a virtual device.
inline constexpr std::uint32_t virtual_device_zero_copy_min = 4096;

// The dpdk provider: the endpoints of one DPDK port, progressed inline by the thread that reads
// any of their completion queues (or calls progress()); they share it. Addresses are IPv4 on the
// port's subnet; peers are resolved by ARP (or static entries), off-subnet peers through the
// gateway. The port has one address, `address` (UDP port 4793): one UET fabric endpoint, behind
// which up to max_dpdk_endpoints UET endpoints open at once, told apart by PIDonFEP
// (endpoint_address::pid: the first 0, each next the lowest free). A roce_rc or TSS endpoint
// holds the port alone. Beyond either, open_endpoint gives errc::unsupported. The EAL is
// started once per process, by the first dpdk fabric, with that fabric's eal_args. See
// docs/api.md.
inline constexpr std::size_t max_dpdk_endpoints = 16;

struct dpdk_attr {
    // A vdev ("net_memif0,role=server,socket=/tmp/uet.sock", "net_tap0,iface=uet0"), a Linux
    // interface name (af_packet: "eth0"; af_xdp: "xdp:eth0") or a PCI address ("0000:3b:00.0").
    std::string device;
    std::string eal_args;  // extra EAL arguments (defaults: --no-huge --no-pci, a unique prefix)
    std::string address;   // ours, with prefix length: "10.1.0.1/24"
    std::string gateway;   // next hop outside the prefix; empty: none
    // Static neighbours "10.1.0.2=02:00:00:00:00:02": used without ARP.
    std::vector<std::string> neighbors;
    std::uint32_t port_mtu = 0;   // IP MTU to set on the port (576..9000); 0: 1500
    bool trust_link_mtu = false;  // af_packet: take the interface's MTU (jumbo frames)
    bool busy_poll = false;       // never back off while idle (benchmarks)
    // Time the stages of the port's bursts (fabric_stats::rx_driver_ns and the others): a clock
    // read around the driver's and the stack's part of each burst that moves frames.
    bool time_stages = false;
    std::uint64_t rto_ns = 0;  // first retransmit timeout; 0: the provider's default (5 ms)
    std::uint32_t max_retransmits = 0;  // 0: the provider's default (24)
    // ACK coalescing: the receiver owes an ACK once `ack_every` packets, or ack_every x
    // fabric_attr.mtu bytes, arrived since its last one (and at once for a packet that asks for
    // one, an ECN mark or a duplicate); what it owes leaves once per burst of frames it takes
    // (32 at most), one ACK per PDC, so under 32 it acknowledges each burst. 1..256 (the
    // provider's window, in packets); 0: the engine's default, 16 packets or 16 KiB. Fewer ACKs
    // cost both sides less per packet; the sender learns of losses later.
    std::uint32_t ack_every = 0;
    // Zero-copy transmit: a packet payload of at least this many bytes that lies in memory
    // registered with a domain of this fabric (domain::register_memory, any access flags) is
    // not copied: it goes out as an external buffer chained behind the headers, on ports that
    // take multi-segment frames (others copy as usual). The registered memory is then read by
    // the port until deregistration, which waits for the frames still queued. 0: always copy.
    std::uint32_t zero_copy_min = 1024;
    // Where zero-copy transmit is used. automatic: from zero_copy_min bytes on a device that
    // reads frames by DMA (a PCI NIC); on a virtual device (memif, af_packet, af_xdp, tap, pcap),
    // which copies every frame into a ring or socket of its own, only from
    // virtual_device_zero_copy_min bytes (4 KiB): there a chained payload saves uet's copy but
    // costs the driver a second segment to handle, which is more than copying a small payload
    // and less than copying a large one. on: from zero_copy_min wherever the port chains
    // segments. off: never.
    zero_copy_policy zero_copy = zero_copy_policy::automatic;
    // Whether frames go out with a UDP checksum (received ones are verified whenever the sender
    // filled one in). off: checksum 0 ("none", as IPv4 allows and RoCEv2 does), so no payload
    // byte is summed on either side. automatic: off on memif, whose frames never leave this
    // host's memory (nothing on the way can corrupt them, as Linux treats veth; testpmd's
    // txonly sends 0 as well), on for every other port.
    checksum_policy udp_checksum = checksum_policy::automatic;
};

// The most header bytes a UET frame of the dpdk provider puts around its SES payload: Ethernet,
// IPv4, UDP, the entropy header, the largest PDS request and the largest SES request header.
inline constexpr std::uint32_t dpdk_frame_overhead = 142;

// The largest fabric_attr::mtu (a multiple of 64, at most 8192) whose frames fit a dpdk port of
// this IP MTU: 1344 at 1500, 8192 at 9000.
constexpr std::uint32_t largest_dpdk_mtu(std::uint32_t port_mtu) noexcept {
    const std::uint32_t frame = port_mtu + 14;  // the Ethernet header
    if (frame < dpdk_frame_overhead + 64) return 0;
    const std::uint32_t fits = (frame - dpdk_frame_overhead) / 64 * 64;
    return fits < 8192 ? fits : 8192;
}

struct fabric_attr {
    std::string provider = "pipe";  // "pipe" or "dpdk"
    link_impairments impairments;
    // SES payload bytes per packet (64..8192 on the pipe). dpdk: mtu + dpdk_frame_overhead (142)
    // header bytes must fit the port's largest frame (1514 at MTU 1500: mtu <= 1372;
    // largest_dpdk_mtu gives the largest multiple of 64).
    std::uint32_t mtu = 4096;
    // Seeds the pipe's impairments and the PDS's initial values. Memory keys derive from it only
    // on the pipe; the dpdk provider adds the system's entropy, so keys are not guessable.
    std::uint64_t seed = 1;
    dpdk_attr dpdk;  // provider "dpdk"
    // Record every frame in this pcap file (Ethernet, microsecond stamps), to read with uet-dump
    // or Wireshark (tools/wireshark/uet.lua); empty: none. pipe: each frame once, as its sender
    // hands it to the network (before the link's impairments), stamped in virtual time. dpdk:
    // the frames the port received and those handed to it to send, stamped by the wall clock;
    // checksums the port computes (offloads) are not yet in them. Every frame costs a copy: for
    // debugging and bug reports, not for benchmarks. A file that cannot be created fails the
    // fabric's open; a write that fails (a full disk) ends the file (fabric_stats).
    std::string capture_file;
};

// What the pipe provider's links did to the frames they carried, or (dpdk) what the port and
// the host stack under the endpoint saw.
struct fabric_stats {
    std::uint64_t frames = 0;       // frames sent into links (dpdk: = tx_frames)
    std::uint64_t lost = 0;         // dropped by the loss impairment
    std::uint64_t path_failed = 0;  // lost on a failed path (link_impairments::failed_paths)
    std::uint64_t reordered = 0;    // held back and delivered after later frames
    std::uint64_t duplicated = 0;   // delivered twice
    std::uint64_t unroutable = 0;   // addressed to no open endpoint
    // dpdk provider
    std::uint64_t rx_frames = 0, tx_frames = 0;  // through the port
    std::uint64_t rx_dropped = 0;  // not for us, not UET, malformed: counted and dropped
    std::uint64_t tx_dropped = 0;  // ring full, neighbour unresolved, frame too large
    std::uint64_t arp_requests = 0, arp_replies = 0, echo_replies = 0;  // sent
    // Frames whose payload went out of registered memory without a copy (dpdk.zero_copy_min).
    std::uint64_t tx_zero_copy = 0;
    // The poll loop (dpdk): polls, those that moved nothing, and the time from each poll's start
    // to the next, split by whether the poll moved something (busy: it and the caller's work
    // after it; idle: empty polls and back-off). busy_ns / frames is what a frame costs this core.
    std::uint64_t polls = 0, idle_polls = 0;
    std::uint64_t busy_ns = 0, idle_ns = 0;
    // dpdk.time_stages: time spent in the port's bursts that moved frames, by stage. Receive:
    // the driver (its copy out of the ring, for memif), then the stack (the engine's receive
    // and the application's receive-side work in it). Transmit: the stack (the engine's frames
    // built into mbufs), then the driver (for memif, its copy into the ring). Zero when off.
    std::uint64_t rx_driver_ns = 0, rx_stack_ns = 0, tx_stack_ns = 0, tx_driver_ns = 0;
    bool udp_checksum = false;  // dpdk: this side fills in UDP checksums (dpdk.udp_checksum)
    // dpdk: the smallest payload sent without a copy (dpdk.zero_copy, dpdk.zero_copy_min); 0: off
    std::uint32_t zero_copy_from = 0;
    // dpdk: this side's ACK coalescing as a receiver (dpdk.ack_every, or the engine's default)
    std::uint32_t ack_every_packets = 0, ack_every_bytes = 0;
    // fabric_attr::capture_file: frames written, and whether a write failed (the file ends there)
    std::uint64_t captured_frames = 0;
    bool capture_failed = false;
};

struct domain_attr {
    std::size_t max_memory_regions = 4096;
};

namespace detail {
struct fabric_impl;
struct domain_impl;
}  // namespace detail

class domain;

class fabric {
  public:
    // Providers: "pipe" (endpoints of this process over impairment links in virtual time) and
    // "dpdk" (one endpoint on a DPDK port; attr.dpdk).
    static result<fabric> open(const fabric_attr& attr = {});
    // Why the last failed fabric::open or domain::open_endpoint of this thread failed, in a
    // sentence ("dpdk.address \"10.0.0.1\" is not A.B.C.D/LEN ..."); empty after a success.
    static std::string last_error();
    fabric() = default;
    ~fabric();
    fabric(fabric&&) noexcept;
    fabric& operator=(fabric&&) noexcept;
    fabric(const fabric&) = delete;
    fabric& operator=(const fabric&) = delete;

    result<domain> open_domain(const domain_attr& attr = {});
    const fabric_attr& attr() const noexcept;
    // One progress step of every endpoint (pipe: the clock jumps to the next event when nothing
    // is runnable; dpdk: one receive and one transmit burst, then the idle back-off unless
    // busy_poll); false when nothing is left to do anywhere (dpdk: no endpoint is open, as a
    // peer may send at any time).
    bool progress();
    std::uint64_t now_ns() const noexcept;  // pipe: the virtual clock; dpdk: TSC nanoseconds
    fabric_stats stats() const noexcept;
    // pipe: every link's impairments from now on (a path failed or restored, a link slowed);
    // frames in flight keep their fate. dpdk: errc::unsupported. attr() shows what is in effect.
    std::error_code set_impairments(const link_impairments& impairments);

  private:
    std::shared_ptr<detail::fabric_impl> impl_;
};

class domain {
  public:
    domain() = default;
    ~domain();
    domain(domain&&) noexcept;
    domain& operator=(domain&&) noexcept;
    domain(const domain&) = delete;
    domain& operator=(const domain&) = delete;

    // The key is valid for peers of job_id only.
    result<memory_region> register_memory(std::span<std::byte> buf, access flags,
                                          std::uint32_t job_id);
    // capacity: completions that may be awaited at once (posting beyond gives errc::cq_full).
    result<completion_queue> open_cq(std::size_t capacity = 1024);
    result<address_vector> open_av();
    result<endpoint> open_endpoint(const endpoint_attr& attr, completion_queue& cq,
                                   address_vector& av);
    bool progress();  // fabric::progress()

  private:
    friend class fabric;
    std::shared_ptr<detail::domain_impl> impl_;
};

}  // namespace uet
