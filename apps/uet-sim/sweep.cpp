#include "sweep.hpp"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include "options.hpp"
#include "plot.hpp"
#include "report.hpp"

namespace uet::simcli {

namespace {

[[noreturn]] void fail(const std::string& what) {
    throw usage_error("sweep: " + what);
}

std::vector<std::string> split(const std::string& opt, const std::string& v) {
    std::vector<std::string> out;
    std::size_t b = 0;
    for (;;) {
        const std::size_t comma = v.find(',', b);
        const std::string item = v.substr(b, comma == std::string::npos ? comma : comma - b);
        if (item.empty()) fail(opt + ": an empty item in '" + v + "' (a comma-separated list)");
        out.push_back(item);
        if (comma == std::string::npos) return out;
        b = comma + 1;
    }
}

std::optional<std::uint64_t> number(std::string_view w) {
    std::uint64_t n = 0;
    const auto [p, ec] = std::from_chars(w.data(), w.data() + w.size(), n);
    if (ec != std::errc{} || p != w.data() + w.size() || w.empty()) return std::nullopt;
    return n;
}

// "1-3,7": 1, 2, 3, 7.
std::vector<std::uint64_t> seed_list(const std::string& v) {
    std::vector<std::uint64_t> out;
    for (const std::string& item : split("--seeds", v)) {
        const std::size_t dash = item.find('-');
        const auto lo = number(std::string_view(item).substr(0, dash));
        const auto hi =
            dash == std::string::npos ? lo : number(std::string_view(item).substr(dash + 1));
        if (!lo || !hi || *hi < *lo || *hi - *lo >= 10000)
            fail("--seeds: '" + item + "' is not a seed or a range A-B (A <= B, e.g. 1-3,7)");
        for (std::uint64_t s = *lo; s <= *hi; ++s)
            out.push_back(s);
    }
    return out;
}

struct run_spec {
    std::string name, lb, cc, mode, load;
    std::uint64_t seed = 0;
    int pid = -1, status = -1;
};

std::string read_text(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    std::ostringstream s;
    s << f.rdbuf();
    return s.str();
}

std::vector<std::string> csv_fields(const std::string& line) {
    std::vector<std::string> out;
    std::size_t b = 0;
    for (;;) {
        const std::size_t comma = line.find(',', b);
        out.push_back(line.substr(b, comma == std::string::npos ? comma : comma - b));
        if (comma == std::string::npos) return out;
        b = comma + 1;
    }
}

// The child's --summary-csv: header and row, or nothing.
std::pair<std::string, std::string> summary_of(const std::string& path) {
    std::istringstream in(read_text(path));
    std::string header, row;
    if (!std::getline(in, header) || !std::getline(in, row)) return {};
    return {header, row};
}

std::string last_line(const std::string& text) {
    std::string t = text;
    while (!t.empty() && t.back() == '\n')
        t.pop_back();
    const std::size_t nl = t.rfind('\n');
    return nl == std::string::npos ? t : t.substr(nl + 1);
}

}  // namespace

const char* sweep_usage() noexcept {
    return R"(usage: uet-sim sweep [grid] [options of a run]
Runs one scenario over a grid, each run a uet-sim of its own, as many at once as there are cores,
and writes one CSV row per run. See docs/uet-sim.md.

grid (comma-separated lists; each value is checked as a run would check it)
  --lb LIST            e.g. static,oblivious,reps (default oblivious)
  --cc LIST            e.g. nscc,rccc,none (default nscc)
  --load LIST          fractions of hosts taking part, e.g. 0.5,1 (default 1)
  --seeds LIST         seeds and ranges, e.g. 1-3,7 (default 1)
  --roce-mode LIST     with --transport roce: gbn,ooo (a pair of --lb and --roce-mode that a
                       run refuses, spray with gbn, is left out)
sweep
  --jobs N             runs at once (default: every online core)
  --csv FILE           one row per run: run, exit, then the run's summary figures
  --plot DIR           DIR/sweep.csv, every run's flows and summary in DIR/runs, and the plots
                       sweep_fct (p50 / p99 FCT per policy) and sweep_cdf (FCT CDFs)
  --no-progress        no progress line
Every other option is the run's (--topology, --workload, --size, --fail, ...); --seed, --json,
--links, --series and --summary-csv are not taken (the sweep sets or collects them).
)";
}

sweep_options parse_sweep(int argc, const char* const* argv) {
    sweep_options s;
    bool lb = false, cc = false, load = false, seeds = false;
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        if (arg == "-h" || arg == "--help") {
            s.help = true;
            continue;
        }
        if (arg == "--no-progress") {
            s.progress = false;
            continue;
        }
        std::string value;
        bool inline_value = false;
        if (const std::size_t eq = arg.find('='); arg.starts_with("--") && eq != arg.npos) {
            value = arg.substr(eq + 1);
            arg = arg.substr(0, eq);
            inline_value = true;
        }
        const bool ours = arg == "--lb" || arg == "--cc" || arg == "--load" || arg == "--seeds" ||
                          arg == "--jobs" || arg == "--csv" || arg == "--plot" ||
                          arg == "--roce-mode";
        for (const char* refused : {"--seed", "--json", "--links", "--series", "--summary-csv"})
            if (arg == refused)
                fail(arg + ": not in a sweep" +
                     (arg == "--seed" ? std::string(" (--seeds LIST)") : std::string()));
        if (!inline_value) {
            if (!ours) {
                // A run's option: passed on as given (parse_options checks it below).
                s.scenario.push_back(arg);
                if (i + 1 < argc && arg.starts_with("--")) s.scenario.push_back(argv[++i]);
                continue;
            }
            if (i + 1 >= argc || std::string_view(argv[i + 1]).starts_with("--"))
                fail(arg + ": needs a value");
            value = argv[++i];
        } else if (!ours) {
            s.scenario.push_back(arg + "=" + value);
            continue;
        }
        if (arg == "--lb") s.lbs = split(arg, value), lb = true;
        if (arg == "--cc") s.ccs = split(arg, value), cc = true;
        if (arg == "--load") s.loads = split(arg, value), load = true;
        if (arg == "--seeds") s.seeds = seed_list(value), seeds = true;
        if (arg == "--roce-mode") s.roce_modes = split(arg, value);
        if (arg == "--csv") s.csv = value;
        if (arg == "--plot") s.plot_dir = value;
        if (arg == "--jobs") {
            const auto n = number(value);
            if (!n || *n < 1 || *n > 1024)
                fail("--jobs: '" + value + "' is not a whole number in 1..1024");
            s.jobs = static_cast<unsigned>(*n);
        }
    }
    if (s.help) return s;
    // Each value as a run takes it: the first one refused is the error.
    const auto check = [&](std::vector<std::string> extra) {
        std::vector<std::string> args = {"uet-sim"};
        args.insert(args.end(), s.scenario.begin(), s.scenario.end());
        args.insert(args.end(), extra.begin(), extra.end());
        std::vector<const char*> v;
        for (const std::string& a : args)
            v.push_back(a.c_str());
        try {
            return parse_options(static_cast<int>(v.size()), v.data());
        } catch (const usage_error& e) {
            fail(e.what());
        }
    };
    // The transport's own defaults (oblivious and nscc; ecmp and dcqcn for RoCE).
    const policy_names defaults = names_of(check({}));
    if (!lb) s.lbs = {defaults.lb};
    if (!cc) s.ccs = {defaults.cc};
    if (!load) s.loads = {"1"};
    if (!seeds) s.seeds = {options{}.seed};
    const auto mode_args = [](const std::string& m) {
        return m.empty() ? std::vector<std::string>{} : std::vector<std::string>{"--roce-mode", m};
    };
    for (const std::string& m : s.roce_modes)
        check(mode_args(m));
    // An lb refused with every mode: the last refusal is the error; with some: left out there.
    for (const std::string& v : s.lbs) {
        std::size_t refused = 0;
        for (const std::string& m : s.roce_modes) {
            std::vector<std::string> extra = mode_args(m);
            extra.insert(extra.end(), {"--lb", v});
            try {
                check(extra);
            } catch (const usage_error&) {
                if (++refused == s.roce_modes.size()) throw;
                s.left_out.emplace_back(v, m);
            }
        }
    }
    for (const std::string& v : s.ccs)
        check({"--cc", v});
    for (const std::string& v : s.loads)
        check({"--load", v});
    const std::size_t runs = (s.lbs.size() * s.roce_modes.size() - s.left_out.size()) *
                             s.ccs.size() * s.loads.size() * s.seeds.size();
    if (runs > 10000) fail("the grid has " + std::to_string(runs) + " runs; at most 10000");
    return s;
}

int run_sweep(const sweep_options& s) {
    std::string python, script, dir;
    if (!s.plot_dir.empty()) {
        python = find_python();
        script = plot_script();
        make_dir("--plot", s.plot_dir);
        dir = s.plot_dir + "/runs";
        make_dir("--plot", dir);
    } else {
        // Scratch for the runs' rows, where the system keeps temporary files (TMPDIR).
        const std::string base = std::filesystem::temp_directory_path().string();
        std::string tmpl = base + "/uet-sim-sweep.XXXXXX";
        if (!mkdtemp(tmpl.data()))
            throw std::runtime_error("sweep: cannot make a directory in " + base);
        dir = tmpl;
    }
    std::vector<run_spec> grid;
    // Without --plot the runs' files are scratch: removed however the sweep ends.
    struct scratch {
        const std::vector<run_spec>& grid;
        std::string dir;
        ~scratch() {
            if (dir.empty()) return;
            for (const run_spec& r : grid)
                for (const char* ext : {".row", ".out"})
                    std::remove((dir + "/" + r.name + ext).c_str());
            rmdir(dir.c_str());
        }
    } cleanup{grid, s.plot_dir.empty() ? dir : std::string()};
    for (const std::string& lb : s.lbs)
        for (const std::string& cc : s.ccs)
            for (const std::string& mode : s.roce_modes) {
                if (std::find(s.left_out.begin(), s.left_out.end(), std::pair{lb, mode}) !=
                    s.left_out.end())
                    continue;
                const std::string policy = lb + "-" + cc + (mode.empty() ? "" : "-" + mode);
                for (const std::string& load : s.loads)
                    for (const std::uint64_t seed : s.seeds)
                        grid.push_back({policy + "-load" + load + "-seed" + std::to_string(seed),
                                        lb, cc, mode, load, seed});
            }
    const std::string exe = self_exe();
    const long cores = sysconf(_SC_NPROCESSORS_ONLN);
    const std::size_t jobs = s.jobs ? s.jobs : static_cast<std::size_t>(std::max(1L, cores));
    const bool tty = isatty(STDERR_FILENO);
    std::map<int, std::size_t> running;  // pid -> run
    std::size_t next = 0, done = 0;
    while (done < grid.size()) {
        while (next < grid.size() && running.size() < jobs) {
            run_spec& r = grid[next];
            std::vector<std::string> argv = {exe};
            argv.insert(argv.end(), s.scenario.begin(), s.scenario.end());
            argv.insert(argv.end(), {"--lb", r.lb, "--cc", r.cc, "--load", r.load, "--seed",
                                     std::to_string(r.seed), "--no-progress", "--summary-csv",
                                     dir + "/" + r.name + ".row"});
            if (!r.mode.empty()) argv.insert(argv.end(), {"--roce-mode", r.mode});
            if (!s.plot_dir.empty())
                argv.insert(argv.end(), {"--csv", dir + "/" + r.name + ".csv"});
            r.pid = spawn(argv, dir + "/" + r.name + ".out");
            running[r.pid] = next++;
        }
        int status = 0;
        const int pid = wait_child(-1, status);
        const auto it = running.find(pid);
        if (it == running.end()) continue;
        grid[it->second].status = status;
        running.erase(it);
        ++done;
        // On a terminal, a line rewritten at each run; elsewhere, ten lines at most.
        const std::size_t every = tty ? 1 : std::max<std::size_t>(1, grid.size() / 10);
        if (s.progress && (done % every == 0 || done == grid.size()))
            std::fprintf(stderr, "uet-sim sweep: %zu/%zu runs done%s", done, grid.size(),
                         tty && done < grid.size() ? "\r" : "\n");
    }

    // One row per run, in grid order; a run that refused its options stops the sweep here.
    std::string header, csv;
    std::vector<std::map<std::string, std::string>> figures(grid.size());
    int worst = 0;
    for (std::size_t i = 0; i < grid.size(); ++i) {
        const run_spec& r = grid[i];
        if (r.status == 2) {
            std::string why = last_line(read_text(dir + "/" + r.name + ".out"));
            if (why.starts_with("uet-sim: ")) why = why.substr(9);
            throw usage_error("sweep: run " + r.name + ": " + why);
        }
        const auto [h, row] = summary_of(dir + "/" + r.name + ".row");
        if (!h.empty()) {
            header = h;
            const auto names = csv_fields(h), values = csv_fields(row);
            for (std::size_t k = 0; k < names.size() && k < values.size(); ++k)
                figures[i][names[k]] = values[k];
        }
        if (r.status != 0) worst = 1;
    }
    if (header.empty()) throw std::runtime_error("sweep: no run wrote its summary");
    const auto names = csv_fields(header);
    csv = "run,exit," + header + "\n";
    for (std::size_t i = 0; i < grid.size(); ++i) {
        csv += grid[i].name + "," + std::to_string(grid[i].status);
        for (const std::string& n : names)
            csv += "," + (figures[i].count(n) ? figures[i][n] : std::string());
        csv += "\n";
    }
    std::printf("%-36s %4s %6s %5s %10s %10s %10s %9s %10s %7s %7s %7s\n", "run", "exit", "flows",
                "unfin", "p50 us", "p99 us", "max us", "slow p99", "goodput", "drops", "retx",
                "tmouts");
    for (std::size_t i = 0; i < grid.size(); ++i) {
        auto& f = figures[i];
        std::printf("%-36s %4d %6s %5s %10s %10s %10s %9s %10s %7s %7s %7s\n", grid[i].name.c_str(),
                    grid[i].status, f["flows"].c_str(), f["unfinished"].c_str(),
                    f["fct_p50_us"].c_str(), f["fct_p99_us"].c_str(), f["fct_max_us"].c_str(),
                    f["slowdown_p99"].c_str(), f["goodput_gbps"].c_str(), f["drops"].c_str(),
                    f["retransmits"].c_str(), f["timeouts"].c_str());
    }
    if (!s.csv.empty()) write_file(s.csv, csv);
    if (!s.plot_dir.empty()) {
        write_file(s.plot_dir + "/sweep.csv", csv);
        plot(python, script, "sweep", s.plot_dir);
    }
    return worst;
}

}  // namespace uet::simcli
