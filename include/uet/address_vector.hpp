// Address vector: the peers an endpoint may talk to. Inserting an endpoint's address gives a
// peer_addr handle (libfabric's fi_addr_t); operations name their peer by it. Endpoints are
// connectionless: the packet delivery contexts a peer needs are created underneath on demand.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "uet/status.hpp"

namespace uet {

// Where an endpoint is, in UET's addressing: its fabric endpoint (IPv4 address, host order, and
// UDP port) and its PIDonFEP, which tells apart the endpoints that share one fabric endpoint
// (several endpoints opened on one dpdk fabric: docs/api.md). A FEP's first endpoint is
// PIDonFEP 0.
struct endpoint_address {
    std::uint32_t ip = 0;
    std::uint16_t port = 4793;
    std::uint16_t pid = 0;  // PIDonFEP, 12 bits
    friend bool operator==(const endpoint_address&, const endpoint_address&) = default;
};
// "10.0.0.2:4793", and "10.0.0.2:4793/1" for PIDonFEP 1.
std::string to_string(const endpoint_address& a);
std::optional<endpoint_address> parse_endpoint_address(const std::string& text);

enum class peer_addr : std::uint64_t {};
// "Any peer" for receives; in a completion, a source not in the address vector.
inline constexpr peer_addr any_peer = static_cast<peer_addr>(~std::uint64_t{0});

namespace detail {
struct av_impl;
}

class address_vector {
  public:
    address_vector() = default;
    ~address_vector();
    address_vector(address_vector&&) noexcept;
    address_vector& operator=(address_vector&&) noexcept;
    address_vector(const address_vector&) = delete;
    address_vector& operator=(const address_vector&) = delete;

    // The same address twice gives the same handle.
    result<peer_addr> insert(const endpoint_address& a);
    std::optional<endpoint_address> lookup(peer_addr p) const;
    std::size_t size() const noexcept;

  private:
    friend class domain;
    friend class endpoint;
    std::shared_ptr<detail::av_impl> impl_;
};

}  // namespace uet
