// Hostile input for the integration tests: malformed frames of every kind a receive path must
// drop and count (random bytes, wrong UDP port, truncated headers, bad IP/UDP/ICMP checksums,
// bad UDP length, fragments, non-IPv4 ethertype, bad ARP, random UET payloads), and the
// outermost frame_handler that sends them ahead of the host stack's own frames.
#pragma once

#include <cstdint>
#include <cstring>
#include <deque>
#include <span>
#include <vector>

#include "host/frame_handler.hpp"
#include "host/host_stack.hpp"
#include "wire/eth.hpp"

namespace uet::itest {

// n malformed frames from my_ip to peer_ip, addressed to the peer's MAC so that they get past
// its MAC filter and reach the deeper checks. Deterministic (seeded).
std::vector<std::vector<std::uint8_t>> make_garbage(std::uint32_t n, std::uint32_t my_ip,
                                                    std::uint32_t peer_ip,
                                                    const wire::mac_address& me,
                                                    const wire::mac_address& peer_mac);

// The outermost handler: raw (garbage) frames first, then the host stack.
class injector final : public host::frame_handler {
  public:
    explicit injector(host::host_stack& host) : host_(host) {}
    void on_start(const host::io_caps& caps) override { host_.on_start(caps); }
    void on_receive(std::span<const std::uint8_t> f, std::uint64_t now) override {
        host_.on_receive(f, now);
    }
    std::size_t on_transmit(std::uint64_t now, std::span<host::tx_frame> frames) override {
        std::size_t n = 0;
        while (n < frames.size() && !raw_.empty() &&
               raw_.front().size() <= frames[n].buffer.size()) {
            std::memcpy(frames[n].buffer.data(), raw_.front().data(), raw_.front().size());
            frames[n++].length = raw_.front().size();
            raw_.pop_front();
        }
        return n + host_.on_transmit(now, frames.subspan(n));
    }
    std::uint64_t next_deadline() const override {
        return raw_.empty() ? host_.next_deadline() : 0;
    }
    std::deque<std::vector<std::uint8_t>> raw_;  // filled before the loop runs, drained by it

  private:
    host::host_stack& host_;
};

}  // namespace uet::itest
