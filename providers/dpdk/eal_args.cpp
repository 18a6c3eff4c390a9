// build_eal_args: kept apart from eal.cpp so that it is testable without DPDK.
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "dpdk/eal.hpp"

namespace uet::dpdk {

namespace {

// True if args hold any of the options (as "-x", "-xVALUE", "--opt" or "--opt=VALUE").
bool has_option(const std::vector<std::string>& args,
                std::initializer_list<std::string_view> names) {
    return std::any_of(args.begin(), args.end(), [&](const std::string& a) {
        return std::any_of(names.begin(), names.end(), [&](std::string_view n) {
            if (a == n) return true;
            if (n.size() == 2 && n[0] == '-' && n[1] != '-') return a.starts_with(n);
            return a.size() > n.size() && a.starts_with(n) && a[n.size()] == '=';
        });
    });
}

std::string cpu_set(const std::vector<int>& cpus) {
    std::string s = "(";
    for (std::size_t i = 0; i < cpus.size(); ++i) {
        if (i != 0) s += ',';
        s += std::to_string(cpus[i]);
    }
    return s + ")";
}

}  // namespace

std::vector<std::string> build_eal_args(const eal_options& opts, int pid,
                                        const std::vector<int>& cpus) {
    const auto& a = opts.args;
    std::vector<std::string> out{"uet"};
    if (!has_option(a, {"-l", "-c", "--lcores", "--main-lcore"}) && !cpus.empty()) {
        // lcore 0 may run on any of our CPUs: the kernel places it, instead of DPDK pinning
        // every process's main thread to the first CPU.
        out.push_back("--lcores=0@" + cpu_set(cpus));
    }
    const bool no_huge = has_option(a, {"--no-huge"}) ||
                         (opts.no_huge && !has_option(a, {"--socket-mem", "--huge-dir"}));
    if (no_huge && !has_option(a, {"--no-huge"})) out.emplace_back("--no-huge");
    if (opts.no_pci && !has_option(a, {"--no-pci", "-a", "--allow", "-b", "--block"})) {
        out.emplace_back("--no-pci");
    }
    if (opts.memory_mb != 0 && !has_option(a, {"-m", "--socket-mem"})) {
        out.push_back("-m");
        out.push_back(std::to_string(opts.memory_mb));
    }
    // --no-huge implies legacy memory, which DPDK refuses with --in-memory; --no-shconf is the
    // part of it that still applies (no shared config files).
    if (opts.in_memory && !has_option(a, {"--in-memory", "--no-shconf"})) {
        out.emplace_back(no_huge ? "--no-shconf" : "--in-memory");
    }
    if (opts.no_telemetry && !has_option(a, {"--no-telemetry", "--telemetry"})) {
        out.emplace_back("--no-telemetry");
    }
    if (!has_option(a, {"--file-prefix"})) {
        out.push_back("--file-prefix=" +
                      (opts.file_prefix.empty() ? "uet-" + std::to_string(pid) : opts.file_prefix));
    }
    out.insert(out.end(), a.begin(), a.end());
    return out;
}

}  // namespace uet::dpdk
