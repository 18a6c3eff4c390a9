// uet-sim sweep: one scenario over a grid of spraying policies x congestion controls x loads x
// seeds, each run a child uet-sim (the simulator is single-threaded), as many at once as there
// are cores; one CSV row per run and, with --plot, one plot set. docs/uet-sim.md.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace uet::simcli {

struct sweep_options {
    std::vector<std::string> lbs, ccs, loads;  // as given (each checked by parse_options)
    // --roce-mode LIST (--transport roce): a grid dimension too; {""} when not given. The
    // (lb, mode) pairs a run refuses (spray with go-back-N) are left out of the grid.
    std::vector<std::string> roce_modes{""};
    std::vector<std::pair<std::string, std::string>> left_out;
    std::vector<std::uint64_t> seeds;
    unsigned jobs = 0;  // 0: every online core
    std::string csv, plot_dir;
    bool progress = true;
    bool help = false;
    std::vector<std::string> scenario;  // the rest: options of a single run
};

// argv[0] is "sweep". Throws usage_error: a bad list ("--seeds: '3-1' is not a range"), a grid
// value or scenario option a single run would refuse, or an option the sweep sets itself.
sweep_options parse_sweep(int argc, const char* const* argv);
const char* sweep_usage() noexcept;

// Runs the grid; exit status: 0 every run finished its flows, 1 some did not (or failed),
// 2 a run refused its options (its message printed).
int run_sweep(const sweep_options& s);

}  // namespace uet::simcli
