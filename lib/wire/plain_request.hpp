// The frame nearly every data packet arrives in, read in one pass: untagged Ethernet, IPv4
// without options and not a fragment, UDP, a RUD or ROD request header, then a standard SES
// request without extension headers.
//
// The general path (parse_l2l4, then decode_uet) reads the same frame into a view of every
// header, with a variant for the PDS header and one for the SES header that the engine then
// visits and copies again. On the receiver of a bulk transfer that cost ~400 instructions per
// frame, a fifth of all it spends (docs/results.md). read_plain_request accepts a subset of what
// those accept, with the same checks, and reads the same values: plain_request_test compares
// the two on generated and mutated frames. false says only "not this shape, or not valid": the
// caller then takes the general path, which gives the reason.
#pragma once

#include <cstdint>
#include <span>

#include "eth.hpp"
#include "uet_pds.hpp"
#include "uet_ses.hpp"

namespace uet::wire {

struct plain_request {
    mac_address src_mac;
    std::uint32_t src_ip = 0, dst_ip = 0;  // host order
    std::uint8_t dscp = 0, ecn = 0;
    std::uint16_t src_port = 0, dst_port = 0;
    pds_rud_rod_request pds;
    ses_standard_fields ses;
    std::span<const std::uint8_t> payload;  // after the SES header, up to the IP total length
};

// On false out is partly written: use it only when true is returned.
bool read_plain_request(std::span<const std::uint8_t> frame, plain_request& out) noexcept;

}  // namespace uet::wire
