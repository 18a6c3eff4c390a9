// The DPDK Environment Abstraction Layer, started once per process. DPDK cannot initialise its
// EAL twice in one process (not even after rte_eal_cleanup), so the first start() initialises it
// and every later start() reuses it and says so (started_now() == false; the later options are
// ignored). Defaults are the safe ones for tests and shared machines: no hugepages, no PCI scan,
// a small memory budget, a file prefix unique to the process, and the main lcore allowed on
// every CPU of the process's affinity (so two processes are not pinned to the same core).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace uet::dpdk {

struct eal_options {
    std::vector<std::string> args;  // EAL arguments, without a program name
    // Each default below is added only if args do not already say the same thing.
    bool no_huge = true;       // --no-huge (unless --socket-mem / --huge-dir given)
    bool no_pci = true;        // --no-pci (unless -a/--allow/-b/--block given)
    bool in_memory = true;     // --in-memory (--no-shconf with --no-huge): no files left behind
    bool no_telemetry = true;  // --no-telemetry: no socket, one thread fewer
    unsigned memory_mb = 512;  // -m (unless -m/--socket-mem given)
    std::string file_prefix;   // --file-prefix; empty = "uet-<pid>"
};

class eal {
  public:
    // Initialises the EAL, or reuses the one already up in this process. Throws
    // std::runtime_error with DPDK's reason if initialisation fails.
    static eal& start(const eal_options& opts = {});
    static bool running() noexcept;
    // The running EAL's TSC rate in Hz; 0 when none runs. Unlike start(), says nothing.
    static std::uint64_t running_tsc_hz() noexcept;
    // rte_eal_cleanup at the very end of a process; start() afterwards throws.
    static void shutdown() noexcept;

    // True for the call that initialised the EAL, false when it was already up.
    bool started_now() const noexcept { return started_now_; }
    // The argument vector given to rte_eal_init (program name first).
    const std::vector<std::string>& effective_args() const noexcept { return args_; }
    std::uint64_t tsc_hz() const noexcept { return tsc_hz_; }

  private:
    eal() = default;
    std::vector<std::string> args_;
    std::uint64_t tsc_hz_ = 0;
    bool started_now_ = false;
};

// The EAL argument vector start() would use for opts (program name first): testable without
// starting DPDK.
std::vector<std::string> build_eal_args(const eal_options& opts, int pid,
                                        const std::vector<int>& cpus);

// Nanoseconds from the TSC (the EAL must be running). One rdtsc and one multiply-divide: meant to
// be read once per burst.
std::uint64_t now_ns() noexcept;

}  // namespace uet::dpdk
