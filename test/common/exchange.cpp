#include "exchange.hpp"

#include <algorithm>

#include "wire/bytes.hpp"
#include "wire/frame.hpp"

namespace uet::itest {

namespace {

constexpr std::uint16_t magic = 0x5545;  // "UE"
constexpr std::size_t l2l4 = 42;         // Ethernet + IPv4 + UDP

}  // namespace

exchange::exchange(const exchange_config& cfg) : cfg_(cfg) {
    cfg_.min_frame = std::max<std::uint32_t>(cfg_.min_frame, l2l4 + header_size);
    cfg_.max_frame = std::max(cfg_.max_frame, cfg_.min_frame);
    if (cfg_.nonce == 0) cfg_.nonce = 1;
}

std::uint32_t exchange::frame_size(const exchange_config& cfg, std::uint32_t seq) noexcept {
    const std::uint32_t lo = std::max<std::uint32_t>(cfg.min_frame, l2l4 + header_size);
    const std::uint32_t hi = std::max(cfg.max_frame, lo);
    // Both ends of the range early and often; a multiplicative hash for the rest.
    if (seq % 97 == 0) return hi;
    if (seq % 97 == 1) return lo;
    return lo + static_cast<std::uint32_t>((std::uint64_t{seq} * 2654435761u) % (hi - lo + 1));
}

bool exchange::finished(std::uint64_t now) const noexcept {
    if (!done()) return false;
    if (peer_done_) return final_fin_sent_;
    const std::uint64_t quiet_since = std::max(done_at_, last_rx_);
    return done_at_ != 0 && now > quiet_since && now - quiet_since > cfg_.linger_ns;
}

std::string exchange::progress() const {
    return "sent-acked " + std::to_string(acked_) + "/" + std::to_string(cfg_.count) +
           ", received " + std::to_string(expected_) + "/" + std::to_string(cfg_.count) +
           ", peer " + (peer_nonce_ == 0 ? std::string("not heard") : "heard") +
           (peer_done_ ? ", peer done" : "");
}

// The first peer we hear is adopted as is: what we sent before knowing it reached it. A later,
// different one is a restarted peer that has none of our frames: start over.
void exchange::restart(std::uint32_t peer_nonce) noexcept {
    const std::uint32_t old = peer_nonce_;
    peer_nonce_ = peer_nonce;
    if (old == 0) return;
    std::rotate(old_nonces_.rbegin(), old_nonces_.rbegin() + 1, old_nonces_.rend());
    ++c_.abandoned;
    old_nonces_[0] = old;
    expected_ = acked_ = next_ = sent_max_ = 0;
    ack_due_ = peer_done_ = final_fin_sent_ = false;
    done_at_ = 0;
}

// A frame from a nonce we do not know: the first peer, or a restarted one. A peer that moves on
// after we are done (it reopened its port, or a new exchange began) means it was done too.
bool exchange::adopt(std::uint32_t nonce) noexcept {
    if (nonce == peer_nonce_) return true;
    if (std::find(old_nonces_.begin(), old_nonces_.end(), nonce) != old_nonces_.end()) {
        ++c_.stale_nonce;
        return false;
    }
    if (peer_nonce_ != 0 && done()) {
        peer_done_ = final_fin_sent_ = true;
        return false;
    }
    restart(nonce);
    return true;
}

void exchange::on_receive(std::span<const std::uint8_t> frame, std::uint64_t now) {
    wire::l2l4_view v;
    if (const auto r = wire::parse_l2l4(frame, v); r != wire::reject_reason::none) {
        ++c_.rejects[static_cast<std::size_t>(r)];
        return;
    }
    if (!v.udp || v.udp->dport != cfg_.udp_port || v.ip.src != cfg_.peer_ip) {
        ++c_.wrong_peer;
        return;
    }
    const auto p = v.l4_payload;
    if (p.size() < header_size || wire::load_be16(&p[0]) != magic || p[2] < data || p[2] > fin ||
        wire::load_be32(&p[4]) == 0) {
        ++c_.bad_magic;
        return;
    }
    if (!adopt(wire::load_be32(&p[4]))) return;
    last_rx_ = now;
    const std::uint32_t echo = wire::load_be32(&p[8]);
    const std::uint32_t seq = wire::load_be32(&p[12]);
    const std::uint32_t ack_value = wire::load_be32(&p[16]);
    // Acks only count for our current nonce and only move forward within what we sent.
    if (echo == cfg_.nonce && ack_value > acked_ && ack_value <= sent_max_) {
        acked_ = ack_value;
        last_progress_ = now;
    }
    if (p[2] == fin) {
        if (echo == cfg_.nonce && ack_value == cfg_.count) peer_done_ = true;
        return;
    }
    if (p[2] != data) return;
    ack_due_ = true;
    if (seq < expected_) {
        ++c_.duplicates;
        return;
    }
    if (seq > expected_) {
        ++c_.out_of_order;
        return;
    }
    const std::uint32_t size = frame_size(cfg_, seq);
    bool intact = seq < cfg_.count && wire::load_be16(&p[20]) == size && p.size() + l2l4 == size;
    for (std::size_t i = header_size; intact && i < p.size(); ++i) {
        intact = p[i] == pattern(seq, i);
    }
    if (!intact) {
        ++c_.corrupt;
        return;
    }
    ++expected_;
    ++c_.data_rx;
    c_.bytes_rx += size;
}

std::size_t exchange::build(host::tx_frame& f, kind k, std::uint32_t seq) noexcept {
    wire::frame_spec s;  // MACs left zero: the host stack fills them
    s.src_ip = cfg_.my_ip;
    s.dst_ip = cfg_.peer_ip;
    s.ip_id = ip_id_++;
    s.src_port = static_cast<std::uint16_t>(49152 + (seq & 0x3fff));
    s.dst_port = cfg_.udp_port;
    const std::uint32_t size = k == data ? frame_size(cfg_, seq) : cfg_.min_frame;
    if (size > f.buffer.size()) return 0;
    std::uint8_t* p = f.buffer.data() + l2l4;
    wire::store_be16(p, magic);
    p[2] = k;
    p[3] = 0;
    wire::store_be32(p + 4, cfg_.nonce);
    wire::store_be32(p + 8, peer_nonce_);
    wire::store_be32(p + 12, seq);
    wire::store_be32(p + 16, expected_);
    wire::store_be16(p + 20, static_cast<std::uint16_t>(size));
    const std::size_t payload = size - l2l4;
    for (std::size_t i = header_size; i < payload; ++i)
        p[i] = pattern(seq, i);
    f.length = wire::finish_udp_frame(s, payload, f.buffer);
    return f.length;
}

std::size_t exchange::on_transmit(std::uint64_t now, std::span<host::tx_frame> frames) {
    std::size_t n = 0;
    if (frames.empty()) return 0;
    if (done()) {
        if (done_at_ == 0) done_at_ = now;
        const bool last = peer_done_ && !final_fin_sent_;
        if (last || ack_due_ || now - last_tx_ >= cfg_.fin_interval_ns) {
            if (build(frames[0], fin, 0) == 0) return 0;
            ++c_.fins_tx;
            final_fin_sent_ = final_fin_sent_ || last;
            ack_due_ = false;
            last_tx_ = now;
            return 1;
        }
        return 0;
    }
    if (last_progress_ == 0) last_progress_ = now;
    if (acked_ < next_ && now - last_progress_ > cfg_.rto_ns) {
        next_ = acked_;  // go back N
        ++c_.retransmits;
        last_progress_ = now;
    }
    while (n < frames.size() && next_ < cfg_.count && next_ < acked_ + cfg_.window) {
        if (build(frames[n], data, next_) == 0) break;
        ++n;
        ++next_;
        sent_max_ = std::max(sent_max_, next_);
        ++c_.data_tx;
    }
    if (n == 0 && (ack_due_ || now - last_tx_ >= cfg_.fin_interval_ns)) {
        if (build(frames[0], ack, 0) != 0) {
            n = 1;
            ++c_.acks_tx;
        }
    }
    if (n != 0) {
        ack_due_ = false;
        last_tx_ = now;
    }
    return n;
}

std::uint64_t exchange::next_deadline() const {
    if (ack_due_ || (!done() && next_ < cfg_.count && next_ < acked_ + cfg_.window)) return 0;
    std::uint64_t t = last_tx_ + cfg_.fin_interval_ns;
    if (acked_ < next_) t = std::min(t, last_progress_ + cfg_.rto_ns);
    return t;
}

}  // namespace uet::itest
