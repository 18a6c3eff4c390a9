// The "pipe" provider: an in-process virtual network. Every endpoint is one uet::engine with its
// own IPv4 address (10.0.0.1, 10.0.0.2, ... in the order they open), and every frame to an
// endpoint crosses that endpoint's pipe::link (impairments from fabric_attr). Time is virtual: a
// progress step runs everything due now and, when nothing is, jumps the clock to the next engine
// deadline or link arrival, so runs are deterministic and need no sleeps.
#include <algorithm>
#include <cerrno>
#include <cstring>

#include "api/api_impl.hpp"
#include "pipe/pipe.hpp"
#include "wire/pcap_file.hpp"

namespace uet::detail {

namespace {

pipe::impairments impairments_of(const link_impairments& l) {
    pipe::impairments i;
    i.loss = l.loss;
    i.reorder = l.reorder;
    i.reorder_max_distance = l.reorder_max_distance;
    i.duplicate = l.duplicate;
    i.delay_ns = l.delay_ns;
    i.rate_gbps = l.rate_gbps;
    i.failed_source_ports = l.failed_paths;
    return i;
}

// Frames built by our engines carry no VLAN tag: the IPv4 destination is at a fixed offset.
constexpr std::size_t ipv4_dst_at = 14 + 16;

class pipe_network final : public network {
  public:
    explicit pipe_network(const fabric_attr& a) : attr_(a), frames_(64) {}

    // fabric_attr::capture_file: false (errno set) when the file cannot be created.
    bool open_capture() { return attr_.capture_file.empty() || capture_.open(attr_.capture_file); }

    std::error_code prepare(engine_config& c, const endpoint_attr&) override {
        c.ip = base_ip + static_cast<std::uint32_t>(nodes_.size());
        c.mac = mac_of(c.ip);
        c.seed = attr_.seed ^ (std::uint64_t{c.ip} << 20);
        // The pipe's links never alter a frame's bytes (as a memif ring does not): frames go
        // without UDP checksums, as the dpdk provider's do on virtual devices, and are read as
        // a port's bursts are (header prediction, receive runs, direct delivery).
        c.udp_checksum = false;
        return {};
    }

    void attach(endpoint_base& ep) override {
        // Each endpoint's link draws from its own seed, so adding one does not change the others.
        const std::uint64_t seed = attr_.seed * 0x9e3779b97f4a7c15ull + nodes_.size() + 1;
        nodes_.push_back(std::make_unique<node>(
            node{&ep, pipe::link(impairments_of(attr_.impairments), seed, 16384, 9216)}));
    }

    void detach(endpoint_base& ep) noexcept override {
        const std::uint32_t index = ep.address.ip - base_ip;
        if (index < nodes_.size()) nodes_[index]->ep = nullptr;
    }

    bool step() override;
    std::uint64_t now() const noexcept override { return now_; }
    fabric_stats stats() const noexcept override;
    std::error_code set_impairments(const link_impairments& l) override {
        attr_.impairments = l;
        for (auto& n : nodes_)
            n->ingress.set_impairments(impairments_of(l));
        return {};
    }

  private:
    struct node {
        endpoint_base* ep = nullptr;
        pipe::link ingress;
    };
    std::uint64_t next_event() const noexcept;
    void route(std::span<const std::uint8_t> frame);
    // The frames due at a node, handed to its engine in bursts (copied out of the link, which
    // frees each as it hands it over), as a port's receive burst would: runs of a message's
    // packets, and of small messages, are taken as a DPDK port's are.
    void receive_due(node& n);

    fabric_attr attr_;
    wire::pcap_writer capture_;
    std::vector<std::unique_ptr<node>> nodes_;  // index = ip - base_ip
    std::uint64_t now_ = 0;
    std::uint64_t unroutable_ = 0;  // frames to no (open) endpoint
    std::vector<tx_frame> frames_;
    static constexpr std::size_t burst = 32;
    std::vector<std::vector<std::uint8_t>> rx_copies_ =
        std::vector<std::vector<std::uint8_t>>(burst);
    std::vector<std::span<const std::uint8_t>> rx_burst_ =
        std::vector<std::span<const std::uint8_t>>(burst);
};

void pipe_network::receive_due(node& n) {
    std::size_t k = 0;
    const auto flush = [&] {
        if (k != 0 && n.ep)
            if (frame_engine* e = n.ep->frames())
                e->receive_burst(std::span(rx_burst_.data(), k), nullptr, now_);
        k = 0;
    };
    n.ingress.receive(now_, [&](std::span<const std::uint8_t> f) {
        rx_copies_[k].assign(f.begin(), f.end());
        rx_burst_[k] = rx_copies_[k];
        if (++k == burst) flush();
    });
    flush();
}

void pipe_network::route(std::span<const std::uint8_t> frame) {
    if (capture_.is_open()) capture_.write(frame, now_);
    if (frame.size() < ipv4_dst_at + 4) {
        ++unroutable_;
        return;
    }
    const std::uint32_t dst = (std::uint32_t{frame[ipv4_dst_at]} << 24) |
                              (std::uint32_t{frame[ipv4_dst_at + 1]} << 16) |
                              (std::uint32_t{frame[ipv4_dst_at + 2]} << 8) | frame[ipv4_dst_at + 3];
    const std::uint32_t index = dst - base_ip;
    if (index >= nodes_.size() || !nodes_[index]->ep) {
        ++unroutable_;  // a closed endpoint: its peers find out by their retry limit
        return;
    }
    nodes_[index]->ingress.send(frame, now_);
}

std::uint64_t pipe_network::next_event() const noexcept {
    std::uint64_t t = pipe::link::none;
    for (const auto& n : nodes_) {
        t = std::min(t, n->ingress.next_arrival());
        if (const frame_engine* e = n->ep ? n->ep->frames() : nullptr)
            t = std::min(t, e->next_deadline());
    }
    return t;
}

bool pipe_network::step() {
    const std::uint64_t t = next_event();
    if (t == pipe::link::none) {
        // Messages an endpoint left in its engine (its completion queue had no room for a
        // multi-receive buffer's entries) are no event of the network's: look at them again.
        bool any = false;
        for (std::size_t i = 0; i < nodes_.size(); ++i)
            if (endpoint_base* ep = nodes_[i]->ep) any |= ep->process();
        if (!any) return false;
    } else {
        now_ = std::max(now_, t);
        for (const auto& n : nodes_)
            receive_due(*n);
        // What arrived is answered before anything is sent, so the answers ride in the ACKs.
        for (std::size_t i = 0; i < nodes_.size(); ++i)
            if (endpoint_base* ep = nodes_[i]->ep) ep->process();
    }
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
        endpoint_base* ep = nodes_[i]->ep;
        frame_engine* e = ep ? ep->frames() : nullptr;
        if (!e) continue;
        std::size_t n;
        do {
            n = e->transmit(now_, frames_);
            for (std::size_t k = 0; k < n; ++k)
                route(frames_[k].data);
        } while (n == frames_.size());
    }
    // Timers that fired in transmit() may have completed operations (a retry limit).
    for (std::size_t i = 0; i < nodes_.size(); ++i)
        if (endpoint_base* ep = nodes_[i]->ep) ep->process();
    return true;
}

fabric_stats pipe_network::stats() const noexcept {
    fabric_stats s;
    for (const auto& n : nodes_) {
        const pipe::stats& l = n->ingress.counters();
        s.frames += l.sent;
        s.lost += l.lost;
        s.path_failed += l.path_failed;
        s.reordered += l.reordered;
        s.duplicated += l.duplicated;
    }
    s.unroutable = unroutable_;
    s.captured_frames = capture_.frames();
    s.capture_failed = capture_.failed();
    return s;
}

std::unique_ptr<network> open_pipe_network(const fabric_attr& attr, std::error_code& ec) {
    if (attr.mtu < 64 || attr.mtu > 8192) {
        set_last_error("fabric_attr.mtu " + std::to_string(attr.mtu) + " is outside 64..8192");
        ec = make_error_code(errc::invalid_argument);
        return nullptr;
    }
    auto net = std::make_unique<pipe_network>(attr);
    if (!net->open_capture()) {
        set_last_error("fabric_attr.capture_file '" + attr.capture_file +
                       "' cannot be created: " + std::strerror(errno));
        ec = make_error_code(errc::invalid_argument);
        return nullptr;
    }
    return net;
}

}  // namespace

}  // namespace uet::detail

UET_REGISTER_PROVIDER(pipe, {"pipe", true, &::uet::detail::open_pipe_network})
