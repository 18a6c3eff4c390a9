// Path-ID-assisted loss detection at the target (engine_config::path_ids), after Wang and Cheng
// (China Mobile), "Load balancing challenges in AI fabric": switches that spray packets stamp
// the path each took (here into the IPv4 identification, 1..path_ids), and a path delivers its
// packets in the order they were sent. So once every path has delivered a PSN above a hole, the
// hole's packet is on none of them: it was lost. The target NACKs it at once (RCVR_INFER_LOSS)
// instead of leaving it to the sender's SACK rule (which waits for ooo_threshold later packets
// and a smoothed RTT) or its retransmit timeout.
//
// Per target PDC: the highest PSN received on each path, in arrays sized when the engine is
// built (max_pdcs x path_ids, none when off), and the PSN below which holes were already
// judged, so that each is NACKed once; a resend that is lost again is the sender's timeout's.
// A path ID above path_ids is counted (engine_counters::path_ids_out_of_range) and ignored:
// it never indexes anything. A path that stops delivering (a failed link) holds its highest
// PSN back, and with it the detection, until it delivers again.
#pragma once

#include <cstdint>
#include <vector>

#include "core/psn.hpp"
#include "engine/engine.hpp"
#include "engine/rx_context.hpp"
#include "pds/pdc.hpp"

namespace uet {

class engine_impl;

class path_loss {
  public:
    explicit path_loss(const engine_config& cfg);
    bool on() const noexcept { return paths_ != 0; }
    // Target PDC p was opened: no path has delivered on it yet.
    void open(const pds::pdc& p) noexcept;
    // A RUD data packet (psn, and rx.ip_id) accepted on target PDC p: the holes that shows lost
    // are NACKed.
    void on_accepted(engine_impl& e, pds::pdc& p, psn_t psn, const rx_context& rx);

  private:
    struct pdc_paths {
        std::uint64_t seen = 0;  // bit k: path k + 1 has delivered on this PDC
        psn_t judged = 0;        // holes below it were NACKed (or were none)
    };
    std::uint32_t paths_ = 0;
    std::uint64_t all_ = 0;  // every path seen
    std::vector<pdc_paths> pdcs_;
    std::vector<psn_t> highest_;  // paths_ a PDC, by PDC index
};

}  // namespace uet
