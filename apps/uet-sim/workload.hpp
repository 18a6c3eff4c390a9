// The flows of a run: generated (permutation, incast, all-to-all, ring collectives, uniform
// random with sizes from a CDF) or read from a connection matrix (uet-sim's own lines or the UEC
// htsim .cm format).
#pragma once

#include <cstdint>
#include <istream>
#include <string>
#include <vector>

#include "options.hpp"

namespace uet::simcli {

struct flow {
    static constexpr std::uint32_t no_flow = ~std::uint32_t{0};
    std::uint32_t src = 0, dst = 0;
    std::uint64_t bytes = 0;
    std::uint64_t start_ns = 0;
    // A ring's next step: starts when flow `after` (an earlier one) has been received.
    std::uint32_t after = no_flow;
};

// A ring collective as generated: N hosts, the steps run (of the collective's total), each
// sending chunk bytes a host.
struct ring_shape {
    std::uint32_t hosts = 0, steps = 0, total_steps = 0;
    std::uint64_t chunk = 0;
};
// Throws usage_error with fewer than 2 hosts, or more than max_ring_flows (steps x hosts).
constexpr std::uint64_t max_ring_flows = std::uint64_t{1} << 21;
ring_shape ring_of(const options& o, std::uint32_t hosts);

// A flow-size distribution: points (size, cumulative probability), sizes and probabilities
// non-decreasing, the last probability 1; drawn by inverse transform, linear between points
// (as the literature's generators do, e.g. HPCC's traffic_gen).
class size_cdf {
  public:
    // `name` is for messages. Lines "size_bytes probability" ('#' starts a comment). Throws
    // usage_error naming the file and line: a malformed line, a negative size, a probability
    // outside [0, 1], a size or probability below the previous one, a last probability not 1.
    static size_cdf read(std::istream& in, const std::string& name);
    double mean() const;  // bytes
    // u uniform in [0, 1): at least 1 byte.
    std::uint64_t draw(double u) const;

  private:
    std::vector<double> size_, prob_;
};

// Throws usage_error (a matrix that cannot be read, a bad line with its number, a host that
// does not exist).
std::vector<flow> make_flows(const options& o, std::uint32_t hosts);

// `name` is for messages. Lines: "src dst bytes [start]" (start a time, ns by default; '#'
// starts a comment), or htsim's: "Nodes N", "Connections C", then "src->dst id I start S size
// B [prio P]" with S in microseconds.
std::vector<flow> read_matrix(std::istream& in, const std::string& name, std::uint32_t hosts);

}  // namespace uet::simcli
