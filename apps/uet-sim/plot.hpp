// --plot: the python3-matplotlib script that turns a run's (or a sweep's) CSV files into SVG and
// PNG, and the child processes uet-sim starts (the script, and a sweep's runs).
#pragma once

#include <string>
#include <vector>

namespace uet::simcli {

// This executable's path (/proc/self/exe). Throws std::runtime_error if it cannot be read.
std::string self_exe();

// The directory, created if missing (its parent must exist). Throws usage_error naming opt.
void make_dir(const std::string& opt, const std::string& dir);

// A python3 that imports matplotlib: $UET_SIM_PYTHON if set (and then only it), otherwise
// /usr/bin/python3 (Debian's, where python3-matplotlib installs), then python3 on the PATH.
// Throws usage_error if none does.
std::string find_python();

// uet_sim_plot.py: $UET_SIM_PLOT, next to the executable (the build tree), or
// <exe>/../share/uet/ (installed). Throws usage_error if none exists.
std::string plot_script();

// Starts argv[0] (searched on the PATH) with the rest as its arguments, stdout and stderr to
// out_file (empty: inherited); returns its pid. Throws std::runtime_error if it cannot start.
int spawn(const std::vector<std::string>& argv, const std::string& out_file = {});
// Waits for one child (pid -1: any); returns its pid and sets status to its exit status (128 +
// signal if it was killed).
int wait_child(int pid, int& status);

// Runs the script (python, script: find_python(), plot_script()) on dir, mode "run" or "sweep";
// throws std::runtime_error if it fails.
void plot(const std::string& python, const std::string& script, const std::string& mode,
          const std::string& dir);

}  // namespace uet::simcli
