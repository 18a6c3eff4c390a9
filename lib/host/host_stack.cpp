#include "host/host_stack.hpp"

#include <algorithm>
#include <array>
#include <cstring>

#include "host/icmp.hpp"
#include "wire/bytes.hpp"
#include "wire/frame.hpp"
#include "wire/ipv4.hpp"

namespace uet::host {

const char* to_string(host_drop d) noexcept {
    switch (d) {
        case host_drop::not_our_mac:
            return "not_our_mac";
        case host_drop::not_our_ip:
            return "not_our_ip";
        case host_drop::other_ethertype:
            return "other_ethertype";
        case host_drop::other_ip:
            return "other_ip";
        case host_drop::other_udp:
            return "other_udp";
        case host_drop::runt:
            return "runt";
        case host_drop::bad_arp:
            return "bad_arp";
        case host_drop::bad_ip:
            return "bad_ip";
        case host_drop::icmp_truncated:
            return "icmp_truncated";
        case host_drop::icmp_bad_checksum:
            return "icmp_bad_checksum";
        case host_drop::icmp_not_echo_request:
            return "icmp_not_echo_request";
        case host_drop::icmp_queue_full:
            return "icmp_queue_full";
        case host_drop::icmp_too_large:
            return "icmp_too_large";
        case host_drop::tx_not_ipv4:
            return "tx_not_ipv4";
        case host_drop::tx_too_large_to_hold:
            return "tx_too_large_to_hold";
        case host_drop::count_:
            break;
    }
    return "unknown";
}

namespace {

byte_pattern<48> uet_frame_to(const host_config& cfg) {
    constexpr std::size_t ip = wire::eth_header::wire_size, udp = ip + 20;
    byte_pattern<48> p;
    for (std::size_t i = 0; i < 6; ++i)
        p.require(i, cfg.iface.mac.octets[i]);
    p.require(12, 0x08);  // IPv4
    p.require(13, 0x00);
    p.require(ip, 0x45);         // version 4, no options
    p.require(ip + 6, 0, 0x3f);  // no more fragments, no fragment offset
    p.require(ip + 7, 0);
    p.require(ip + 9, 17);  // UDP
    for (std::size_t i = 0; i < 4; ++i)
        p.require(ip + 16 + i, static_cast<std::uint8_t>(cfg.iface.ip >> (24 - 8 * i)));
    p.require(udp + 2, static_cast<std::uint8_t>(cfg.steering.uet_port >> 8));
    p.require(udp + 3, static_cast<std::uint8_t>(cfg.steering.uet_port));
    return p;
}

}  // namespace

host_stack::host_stack(const host_config& cfg, frame_handler& inner)
    : cfg_(cfg),
      uet_to_us_(uet_frame_to(cfg)),
      inner_(inner),
      neighbors_(cfg.iface, cfg.neighbors),
      icmp_(cfg.icmp_slots, cfg.neighbors.max_frame),
      loop_(cfg.loopback_slots, cfg.neighbors.max_frame),
      scratch_(cfg.neighbors.max_frame),
      joined_(cfg.neighbors.max_frame) {}

void host_stack::on_start(const io_caps& caps) {
    inner_.on_start(caps);
}

void host_stack::on_receive(std::span<const std::uint8_t> frame, std::uint64_t now) {
    dispatch(frame, classify(frame, cfg_.steering), now);
}

void host_stack::on_receive_classified(std::span<const std::uint8_t> frame, const classification& c,
                                       const steering_config& by, std::uint64_t now) {
    // The port's classification stands when it looked for the same ports as we do.
    if (by.uet_port == cfg_.steering.uet_port && by.roce_port == cfg_.steering.roce_port)
        return dispatch(frame, c, now);
    on_receive(frame, now);
}

void host_stack::on_receive_burst(std::span<const rx_frame> frames, const steering_config* by,
                                  std::uint64_t now) {
    // The port's classification stands when it looked for the same ports as we do.
    const bool trusted =
        by && by->uet_port == cfg_.steering.uet_port && by->roce_port == cfg_.steering.roce_port;
    burst_room<rx_frame> inner;
    std::size_t n = 0;
    // UET frames to us matched by the pattern, counted once for the burst.
    std::uint64_t matched = 0;
    const classification uet_to_us{traffic_class::uet, wire::eth_header::wire_size, cfg_.iface.ip};
    for (const rx_frame& f : frames) {
        // A frame in two pieces has its headers in the first (uet_to_us_ needs 38 bytes).
        const bool headers_there = f.rest.at == nullptr || f.rest.from >= uet_to_us_.size;
        if (!trusted && headers_there && f.bytes.size() >= uet_to_us_.size &&
            uet_to_us_.matches(f.bytes.data())) {
            ++matched;
            inner.set(n++, {f.bytes, uet_to_us, f.rest});
        } else {
            // Read here (classified, or answered as ARP or ICMP): joined first.
            const std::span<const std::uint8_t> whole = f.rest.join(f.bytes, joined_);
            const classification c = trusted ? f.c : classify(whole, cfg_.steering);
            if (!admit(whole, c, now)) continue;
            inner.set(n++, {f.bytes, c, f.rest});
        }
        if (n == inner.size()) {
            inner_.on_receive_burst(std::span(inner.data(), n), &cfg_.steering, now);
            n = 0;
        }
    }
    if (n != 0) inner_.on_receive_burst(std::span(inner.data(), n), &cfg_.steering, now);
    stats_.received.count(traffic_class::uet, matched);
    stats_.to_inner += matched;
}

void host_stack::dispatch(std::span<const std::uint8_t> frame, const classification& c,
                          std::uint64_t now) {
    if (admit(frame, c, now)) inner_.on_receive(frame, now);
}

bool host_stack::admit(std::span<const std::uint8_t> frame, const classification& c,
                       std::uint64_t now) {
    stats_.received.count(c.cls);
    switch (c.cls) {
        case traffic_class::other_ethertype:
            drop(host_drop::other_ethertype);
            return false;
        case traffic_class::other_ip:
            drop(host_drop::other_ip);
            return false;
        case traffic_class::other_udp:
            drop(host_drop::other_udp);
            return false;
        case traffic_class::runt:
            drop(host_drop::runt);
            return false;
        default:
            break;
    }
    // Ports such as af_packet are promiscuous: drop unicast frames for other hosts first.
    wire::mac_address dst;
    std::memcpy(dst.octets.data(), frame.data(), dst.octets.size());
    if (!dst.is_multicast() && dst != cfg_.iface.mac) {
        drop(host_drop::not_our_mac);
        return false;
    }
    if (c.cls == traffic_class::arp) {
        receive_arp(frame, now);
        return false;
    }
    if (c.dst_ip != cfg_.iface.ip) {
        drop(host_drop::not_our_ip);
        return false;
    }
    if (c.cls == traffic_class::icmp) {
        receive_icmp(frame);
        return false;
    }
    ++stats_.to_inner;
    return true;
}

void host_stack::receive_arp(std::span<const std::uint8_t> frame, std::uint64_t now) noexcept {
    wire::l2l4_view view;
    if (wire::parse_l2l4(frame, view) != wire::reject_reason::none ||
        view.l3 != wire::l2l4_view::l3_kind::arp) {
        return drop(host_drop::bad_arp);
    }
    neighbors_.on_arp(view.arp, now);
}

void host_stack::receive_icmp(std::span<const std::uint8_t> frame) noexcept {
    ipv4_frame_view ip;
    if (parse_ipv4_frame(frame, ip) != ipv4_frame_error::none) return drop(host_drop::bad_ip);
    icmp_echo echo;
    switch (parse_icmp_echo(ip.payload, echo)) {
        case icmp_error::none:
            break;
        case icmp_error::truncated:
            return drop(host_drop::icmp_truncated);
        case icmp_error::bad_checksum:
            return drop(host_drop::icmp_bad_checksum);
        case icmp_error::not_echo:
            return drop(host_drop::icmp_not_echo_request);
    }
    if (echo.type != icmp_echo_request || !cfg_.answer_ping) {
        return drop(host_drop::icmp_not_echo_request);
    }
    if (icmp_.full()) return drop(host_drop::icmp_queue_full);
    const std::size_t n =
        build_echo_reply_frame(ip, echo, cfg_.iface.mac, cfg_.iface.ip, icmp_.room());
    if (n == 0) return drop(host_drop::icmp_too_large);
    icmp_.push(n);
}

host_stack::frame_ring::frame_ring(std::size_t slots, std::size_t max_frame)
    : max_frame(max_frame),
      bytes(std::max<std::size_t>(slots, 1) * max_frame),
      len(std::max<std::size_t>(slots, 1)) {}

std::span<std::uint8_t> host_stack::frame_ring::room() noexcept {
    return {&bytes[(head + count) % len.size() * max_frame], max_frame};
}

void host_stack::frame_ring::push(std::size_t length) noexcept {
    len[(head + count) % len.size()] = static_cast<std::uint32_t>(length);
    ++count;
}

std::span<const std::uint8_t> host_stack::frame_ring::front() const noexcept {
    return {&bytes[head * max_frame], len[head]};
}

void host_stack::frame_ring::pop() noexcept {
    head = (head + 1) % len.size();
    --count;
}

// ARP and echo replies, due ARP requests and frames released by resolution go first: they are
// few, and the peer is waiting on them.
std::size_t host_stack::emit_control(std::uint64_t now, std::span<tx_frame> frames) noexcept {
    std::size_t n = 0;
    while (n < frames.size() && icmp_.count > 0) {
        const std::span<const std::uint8_t> reply = icmp_.front();
        if (frames[n].buffer.size() < reply.size()) break;
        std::memcpy(frames[n].buffer.data(), reply.data(), reply.size());
        frames[n].ext = {};
        frames[n++].length = reply.size();
        icmp_.pop();
        ++stats_.echo_replies;
    }
    while (n < frames.size()) {
        const std::size_t len = neighbors_.poll_output(now, frames[n].buffer);
        if (len == 0) break;
        frames[n].ext = {};
        frames[n++].length = len;
    }
    return n;
}

// Fills the Ethernet addresses of a frame from the inner handler. False if the frame was held
// for ARP (copied) or dropped, so the slot is free again.
bool host_stack::address(tx_frame& f, std::uint64_t now, burst_route& last) noexcept {
    const std::span<std::uint8_t> b = f.buffer.first(f.length);
    const classification c = classify(b, cfg_.steering);
    if (c.cls == traffic_class::arp || c.cls == traffic_class::other_ethertype ||
        c.cls == traffic_class::runt) {
        drop(host_drop::tx_not_ipv4);
        return false;
    }
    if (c.dst_ip == cfg_.iface.ip) {
        loop_back(f, c);
        return false;
    }
    const std::uint32_t hop = neighbors_.next_hop(c.dst_ip);
    wire::mac_address mac;
    std::span<const std::uint8_t> whole = b;
    if (f.ext.length != 0 && neighbors_.usable(hop, now) == nullptr) {
        // Held frames are copies: join the external payload so the memory can be reused.
        const std::size_t total = f.length + f.ext.length + f.ext.tail_length;
        if (total > scratch_.size()) {
            neighbors_.resolve(hop, now);
            drop(host_drop::tx_too_large_to_hold);
            return false;
        }
        std::memcpy(scratch_.data(), b.data(), f.length);
        std::memcpy(scratch_.data() + f.length, f.ext.data, f.ext.length);
        std::memcpy(scratch_.data() + f.length + f.ext.length, f.ext.tail.data(),
                    f.ext.tail_length);
        whole = std::span<const std::uint8_t>(scratch_.data(), total);
    }
    switch (neighbors_.send_or_hold(hop, whole, now, mac)) {
        case neighbor_table::send_result::ready:
            std::memcpy(b.data(), mac.octets.data(), 6);
            std::memcpy(b.data() + 6, cfg_.iface.mac.octets.data(), 6);
            last = {true, c.dst_ip, mac};
            return true;
        case neighbor_table::send_result::queued:
            ++stats_.held;
            return false;
        case neighbor_table::send_result::dropped:
            return false;
    }
    return false;
}

// An untagged IPv4 frame to the last frame's destination takes its MACs without a lookup.
// Inline in on_transmit: as part of address(), every frame would pay for saving and restoring
// the registers that its ARP and hold paths use.
bool host_stack::address_again(tx_frame& f, const burst_route& last) noexcept {
    constexpr std::size_t dst_ip_at = wire::eth_header::wire_size + 16;
    if (!last.valid || f.length < dst_ip_at + 4) return false;
    std::uint8_t* b = f.buffer.data();
    if (wire::load_be16(&b[12]) != wire::ethertype_ipv4 ||
        wire::load_be32(&b[dst_ip_at]) != last.dst_ip)
        return false;
    std::memcpy(b, last.mac.octets.data(), 6);
    std::memcpy(b + 6, cfg_.iface.mac.octets.data(), 6);
    return true;
}

void host_stack::loop_back(const tx_frame& f, const classification& c) noexcept {
    const std::size_t length = f.length + f.ext.length;
    if (loop_.full() || length > loop_.max_frame) {
        ++stats_.loopback_dropped;
        return;
    }
    std::uint8_t* b = loop_.room().data();
    std::memcpy(b, f.buffer.data(), f.length);
    if (f.ext.length != 0) std::memcpy(b + f.length, f.ext.data, f.ext.length);
    std::memcpy(b, cfg_.iface.mac.octets.data(), 6);
    std::memcpy(b + 6, cfg_.iface.mac.octets.data(), 6);
    // What the port was to compute: the IPv4 header checksum here, and no UDP checksum (0,
    // which IPv4 allows) rather than the pseudo-header sum the handler left for the NIC.
    const std::size_t ip = c.l3_offset;
    const std::size_t ihl = std::size_t{b[ip] & 0x0fu} * 4;
    if (f.offload_ipv4_checksum && ip + ihl <= length) {
        wire::store_be16(&b[ip + 10], 0);
        wire::store_be16(&b[ip + 10], wire::internet_checksum(std::span(&b[ip], ihl)));
    }
    if (f.offload_udp_checksum && ip + ihl + 8 <= length) wire::store_be16(&b[ip + ihl + 6], 0);
    loop_.push(length);
}

void host_stack::deliver_looped(std::uint64_t now) {
    // Only the frames queued before this call: what answering them sends to ourselves again
    // comes back on the next call.
    for (std::size_t n = loop_.count; n > 0; --n) {
        const std::span<const std::uint8_t> frame = loop_.front();
        ++stats_.looped_back;
        dispatch(frame, classify(frame, cfg_.steering), now);
        loop_.pop();
    }
}

std::size_t host_stack::on_transmit(std::uint64_t now, std::span<tx_frame> frames) {
    if (loop_.count > 0) deliver_looped(now);
    std::size_t n = emit_control(now, frames);
    if (n == frames.size()) return n;
    const std::size_t produced = inner_.on_transmit(now, frames.subspan(n));
    stats_.from_inner += produced;
    // Compact in place: frames that were held or dropped give their slot (and its buffer) back.
    const std::size_t end = n + std::min(produced, frames.size() - n);
    burst_route last;
    for (std::size_t i = n; i < end; ++i) {
        if (!address_again(frames[i], last) && !address(frames[i], now, last)) continue;
        if (i != n) std::swap(frames[i], frames[n]);
        ++n;
    }
    return n;
}

std::uint64_t host_stack::next_deadline() const {
    if (icmp_.count > 0 || loop_.count > 0) return 0;
    return std::min(inner_.next_deadline(), neighbors_.next_deadline());
}

}  // namespace uet::host
