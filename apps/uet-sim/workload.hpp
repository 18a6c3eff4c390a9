// The flows of a run: generated (permutation, incast, all-to-all) or read from a connection
// matrix (uet-sim's own lines or the UEC htsim .cm format).
#pragma once

#include <cstdint>
#include <istream>
#include <string>
#include <vector>

#include "options.hpp"

namespace uet::simcli {

struct flow {
    std::uint32_t src = 0, dst = 0;
    std::uint64_t bytes = 0;
    std::uint64_t start_ns = 0;
};

// Throws usage_error (a matrix that cannot be read, a bad line with its number, a host that
// does not exist).
std::vector<flow> make_flows(const options& o, std::uint32_t hosts);

// `name` is for messages. Lines: "src dst bytes [start]" (start a time, ns by default; '#'
// starts a comment), or htsim's: "Nodes N", "Connections C", then "src->dst id I start S size
// B [prio P]" with S in microseconds.
std::vector<flow> read_matrix(std::istream& in, const std::string& name, std::uint32_t hosts);

}  // namespace uet::simcli
