#include "host/pid_mux.hpp"

#include <algorithm>

#include "wire/bytes.hpp"

namespace uet::host {

const char* to_string(pid_drop d) noexcept {
    switch (d) {
        case pid_drop::truncated:
            return "truncated";
        case pid_drop::undecodable:
            return "undecodable";
        case pid_drop::unnamed:
            return "unnamed";
        case pid_drop::no_endpoint:
            return "no_endpoint";
        case pid_drop::not_uet:
            return "not_uet";
        case pid_drop::count_:
            break;
    }
    return "unknown";
}

std::uint64_t pid_mux_stats::dropped() const noexcept {
    std::uint64_t n = 0;
    for (auto d : drops)
        n += d;
    return n;
}

pid_mux::pid_mux() : rx_(routes_.size() * burst_size) {}

bool pid_mux::add(std::uint16_t pid, frame_handler& h) {
    if (pid >= routes_.size() || routes_[pid].h != nullptr) return false;
    if (started_) h.on_start(caps_);
    routes_[pid] = route{&h};
    ++open_;
    only_ = pid;
    return true;
}

void pid_mux::remove(std::uint16_t pid) noexcept {
    if (pid >= routes_.size() || routes_[pid].h == nullptr) return;
    routes_[pid] = route{};
    --open_;
    for (std::uint16_t i = 0; i < routes_.size(); ++i)
        if (routes_[i].h != nullptr) only_ = i;
}

std::uint16_t pid_mux::free_pid() const noexcept {
    for (std::uint16_t i = 0; i < routes_.size(); ++i)
        if (routes_[i].h == nullptr) return i;
    return wire::max_fep_pids;
}

void pid_mux::on_start(const io_caps& caps) {
    caps_ = caps;
    started_ = true;
    joined_.assign(caps.max_frame, 0);
    for (route& r : routes_)
        if (r.h != nullptr) r.h->on_start(caps);
}

std::uint16_t pid_mux::route_of(const rx_frame& f, const classification& c) noexcept {
    constexpr std::uint16_t none = wire::max_fep_pids;
    if (c.cls != traffic_class::uet) {
        drop(pid_drop::not_uet);
        return none;
    }
    // The UDP payload: after the IPv4 header (its IHL) and 8 bytes of UDP. The headers are in
    // the first piece of a frame in two (the payload alone is chained); the rest is joined only
    // where the packet has to be decoded.
    std::span<const std::uint8_t> frame = f.bytes;
    const std::size_t there =
        f.rest.at != nullptr ? std::min<std::size_t>(f.rest.from, frame.size()) : frame.size();
    if (std::size_t{c.l3_offset} + 1 > there) {
        drop(pid_drop::truncated);
        return none;
    }
    const std::size_t l4 = c.l3_offset + std::size_t{(frame[c.l3_offset] & 0x0f) * 4u} + 8;
    if (l4 > there) {
        drop(pid_drop::truncated);
        return none;
    }
    wire::fep_route r = wire::route_to_pid(frame.subspan(l4, there - l4), scratch_);
    if (!r.ok && r.why != wire::fep_route_drop::unnamed && f.rest.at != nullptr) {
        frame = f.rest.join(frame, joined_);
        r = wire::route_to_pid(frame.size() > l4 ? frame.subspan(l4) : frame.subspan(0, 0),
                               scratch_);
    }
    if (!r.ok) {
        drop(r.why == wire::fep_route_drop::truncated     ? pid_drop::truncated
             : r.why == wire::fep_route_drop::undecodable ? pid_drop::undecodable
                                                          : pid_drop::unnamed);
        return none;
    }
    if (r.pid >= routes_.size() || routes_[r.pid].h == nullptr) {
        drop(pid_drop::no_endpoint);
        return none;
    }
    return r.pid;
}

void pid_mux::on_receive(std::span<const std::uint8_t> frame, std::uint64_t now) {
    const steering_config steering;
    const rx_frame f{frame, classify(frame, steering), {}};
    on_receive_burst({&f, 1}, &steering, now);
}

void pid_mux::on_receive_burst(std::span<const rx_frame> frames, const steering_config* by,
                               std::uint64_t now) {
    if (open_ == 0) return;
    if (open_ == 1) {
        // One endpoint: the burst as it came (its engine drops what is for another PIDonFEP).
        routes_[only_].h->on_receive_burst(frames, by, now);
        return;
    }
    const steering_config own;
    const steering_config& classified_by = by != nullptr ? *by : own;
    while (!frames.empty()) {
        const std::size_t n = std::min(frames.size(), burst_size);
        for (const rx_frame& f : frames.first(n)) {
            const classification c = by != nullptr ? f.c : classify(f.bytes, own);
            const std::uint16_t pid = route_of(f, c);
            if (pid >= routes_.size()) continue;
            route& r = routes_[pid];
            rx_frame& to = rx_[std::size_t{pid} * burst_size + r.pending++];
            to = f;
            to.c = c;
        }
        for (std::size_t i = 0; i < routes_.size(); ++i) {
            route& r = routes_[i];
            if (r.pending == 0) continue;
            const std::size_t k = r.pending;
            r.pending = 0;
            r.h->on_receive_burst(std::span(rx_).subspan(i * burst_size, k), &classified_by, now);
        }
        frames = frames.subspan(n);
    }
}

std::size_t pid_mux::on_transmit(std::uint64_t now, std::span<tx_frame> frames) {
    if (open_ == 0) return 0;
    if (open_ == 1) return routes_[only_].h->on_transmit(now, frames);
    const std::size_t n = routes_.size();
    // Each route's equal share first, from the route whose turn it is; then what is left, in the
    // same order, to the routes that filled their share (they may have more).
    const std::size_t share = std::max<std::size_t>(1, frames.size() / open_);
    std::size_t filled = 0;
    for (std::size_t k = 0; k < n && filled < frames.size(); ++k) {
        route& r = routes_[(first_ + k) % n];
        if (r.h == nullptr) continue;
        const std::size_t room = std::min(share, frames.size() - filled);
        const std::size_t got = r.h->on_transmit(now, frames.subspan(filled, room));
        filled += got;
        r.more = got == room;
    }
    for (std::size_t k = 0; k < n && filled < frames.size(); ++k) {
        route& r = routes_[(first_ + k) % n];
        if (r.h != nullptr && r.more) filled += r.h->on_transmit(now, frames.subspan(filled));
    }
    // The next burst starts at the next open route.
    for (std::size_t k = 1; k <= n; ++k)
        if (routes_[(first_ + k) % n].h != nullptr) {
            first_ = static_cast<std::uint16_t>((first_ + k) % n);
            break;
        }
    return filled;
}

std::uint64_t pid_mux::next_deadline() const {
    std::uint64_t t = no_deadline;
    for (const route& r : routes_)
        if (r.h != nullptr) t = std::min(t, r.h->next_deadline());
    return t;
}

}  // namespace uet::host
