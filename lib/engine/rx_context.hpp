// What the receive path knows of the frame it is handling beyond its headers, handed to the
// parts that answer it (ACKs, NACKs) or place it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "engine/peer_table.hpp"

namespace uet {

struct rx_context {
    std::uint32_t peer = none;
    std::uint16_t entropy = 0;
    std::uint16_t ip_id = 0;  // the IPv4 identification: a path ID (engine_config::path_ids)
    bool ce = false;
    std::size_t frame_bytes = 0;
    std::uint64_t now = 0;
};

}  // namespace uet
