// uet-perf command line: perftest's options where they mean the same thing, plus UET ones.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <uet/uet.hpp>

namespace uet::perf {

enum class test_kind : std::uint8_t {
    write_bw,
    read_bw,
    send_bw,
    atomic_bw,
    write_lat,
    read_lat,
    send_lat,
    atomic_lat,
};
inline constexpr std::size_t test_count = 8;

std::string_view name_of(test_kind t) noexcept;   // "write_bw"
std::string_view title_of(test_kind t) noexcept;  // "RDMA_Write BW Test" style
// The bandwidth tests come first in test_kind. Inline: asked per operation.
inline bool is_bw(test_kind t) noexcept {
    return static_cast<int>(t) < 4;
}
bool is_atomic(test_kind t) noexcept;
inline bool is_send(test_kind t) noexcept {  // the tests whose target posts receives
    return t == test_kind::send_bw || t == test_kind::send_lat;
}
std::string_view name_of(delivery d) noexcept;  // "rud"
std::string_view name_of(congestion_control c) noexcept;
std::string_view name_of(path_policy p) noexcept;

// Sends of this many bytes or more are deferrable (endpoint_attr::deferrable_threshold, which
// uet-perf leaves at its default): multi-receive buffers do not take them.
inline const std::uint64_t multi_recv_below = endpoint_attr{}.deferrable_threshold;

// Everything both sides must agree on travels in the hello; the rest is local.
struct settings {
    test_kind test = test_kind::write_bw;
    std::uint64_t size = 65536;       // -s; atomics are always 8 bytes
    bool all_sizes = false;           // -a: 2 .. 2^23
    std::uint64_t iterations = 5000;  // -n (lat tests: 1000 unless given)
    std::uint64_t duration_ms = 0;    // -D, 0: run -n iterations
    std::uint32_t tx_depth = 128;     // -t (lat tests: always 1 outstanding)
    // -m: SES payload bytes per packet. Default 4096 on the pipe; on dpdk what fits the port's
    // MTU with room for the headers (largest_dpdk_mtu: 1344 for 1500).
    std::uint32_t mtu = 4096;
    bool bidirectional = false;   // -b
    std::uint32_t job_id = 4793;  // -p: the uet job both sides use
    delivery mode = delivery::rud;
    // --cc, --lb: the API's defaults (NSCC, REPS); none/static for point-to-point benchmarks.
    congestion_control cc = endpoint_attr{}.cc;
    path_policy lb = endpoint_attr{}.lb;
    std::uint32_t pdcs = 1;
    bool verify = false;
    // -A (perftest's --atomic_type): atomic tests' operation. CMP_AND_SWAP's k-th operation on a
    // region slot compares with k and swaps in k + 1, so on a transport that executes in posting
    // order every one succeeds and the slot ends where FETCH_AND_ADD's would.
    bool compare_and_swap = false;
    // Self-test of --verify: the data of this iteration (1-based; 0: none) is corrupted at its
    // source, so the receiving side must report a verification failure.
    std::uint64_t corrupt_iteration = 0;
    // --multi-recv (send_bw, send_lat): the side that receives sends keeps a few multi-receive
    // buffers posted (op_flags::multi_recv, libfabric's FI_MULTI_RECV), each taking many
    // messages, instead of one receive per message. Sizes of multi_recv_below and above fall
    // back to plain receives (see multi_recv_for in traffic.hpp).
    bool multi_recv = false;
    // --transport roce: RoCEv2 RC queue pairs (endpoint_attr::transport roce_rc), in the
    // retransmission mode of --roce-mode.
    uet::transport transport = uet::transport::uet;
    uet::roce_mode roce_mode = uet::roce_mode::go_back_n;
    bool roce_attr_given = false;  // one of -u, --retry_count, --rnr_retry, --min_rnr_timer
    // --qps, --qp-sched and the scheduler's knobs (endpoint_attr::qp_sched); what is not given
    // comes from the NCCL_IB_* variables, as in the library.
    uet::qp_sched_attr qp_sched;
    // -u (perftest's --qp-timeout), --retry_count (perftest's), --rnr_retry, --min_rnr_timer:
    // the QPs' verbs attributes (endpoint_attr::roce).
    uet::roce_attr roce;
    // --tss: every frame sealed (endpoint_attr::tss, cluster mode) under the key of
    // --tss-key-file or UET_TSS_KEY, never given on the command line. Both sides must use it
    // with the same key and SDI: a mismatch is dropped as unauthentic, and the run times out.
    bool tss = false;
    std::uint32_t tss_sdi = 1;    // --tss-sdi
    std::uint16_t tss_epoch = 0;  // --tss-epoch
    tss_key tss_key_bytes;        // read by the parser; wiped when the settings go

    // Local only.
    // Every operation in flight gets buffers of its own (tx depth x size on each side), instead
    // of perftest's cycle buffer (see cycle_buffer_bytes in traffic.hpp). --verify implies it.
    bool distinct_buffers = false;
    // -Q: perftest's --cq-mod: of a bandwidth test's operations, one in cq_mod asks for a
    // completion entry, the others are posted with op_flags::no_completion (their failures
    // still give entries) and counted by endpoint::silent_completions(). Only where the
    // operations share perftest's cycle buffer (no --verify, no --distinct-buffers: 1 there),
    // and at most the tx depth.
    std::uint32_t cq_mod = 100;
    bool cq_mod_given = false;
    // -l: perftest's --post_list: send_bw's sends are posted in lists of this many, each list in
    // one call (endpoint::send_list). With -l and no -Q, -Q is the list's length (perftest's
    // rule); with both, -l must be a multiple of -Q.
    std::uint32_t post_list = 1;
    // --recv_post_list: perftest's: send_bw's receiving side posts its receives in lists of this
    // many, each list in one call (endpoint::recv_list).
    std::uint32_t recv_post_list = 1;
    std::string server;  // client: the server's address ("10.9.0.1" or "10.9.0.1:4793")
    std::string provider = "dpdk";
    std::string dev;
    std::string eal;
    std::string ip;  // ours, "A.B.C.D/LEN"
    std::string gw;
    bool trust_link_mtu = false;  // af_packet: the interface's MTU (jumbo frames)
    std::uint32_t port_mtu = 0;   // --port-mtu: the DPDK port's IP MTU (0: the provider's 1500)
    std::uint32_t ack_every = 0;  // --ack-every (fabric_attr::dpdk.ack_every); 0: the default
    std::uint32_t zero_copy_min = 1024;  // --zero-copy-min (fabric_attr::dpdk.zero_copy_min)
    // --zero-copy / --no-zero-copy (fabric_attr::dpdk.zero_copy); default: from 4 KiB on a vdev
    zero_copy_policy zero_copy = zero_copy_policy::automatic;
    // --udp-checksum / --no-udp-checksum (fabric_attr::dpdk.udp_checksum); default: off on memif
    checksum_policy udp_checksum = checksum_policy::automatic;
    bool ack_answers = true;  // --no-ack-answers (endpoint_attr::answers_in_acks)
    bool report_gbits = false;
    bool out_json = false;
    std::string out_json_file;
    std::string pcap_file;  // --pcap: record this side's frames (fabric_attr::capture_file)
    bool stats = false;
    // --time-stages: the port times its bursts by stage (fabric_attr::dpdk.time_stages), shown in
    // --stats. Its own option: its TSC reads slow a small-message run down.
    bool time_stages = false;
    bool busy_poll = true;
    double timeout_s = 10;  // control answers
    bool help = false;

    bool is_client() const noexcept { return !server.empty(); }
    // The message sizes of the run, in order.
    std::vector<std::uint64_t> sizes() const;
};

// The transport of a run as the header and a settings mismatch name it: "UET", "RoCEv2 RC
// go-back-N" or "RoCEv2 RC out-of-order".
std::string transport_name(const settings& s);
// The report's title: title_of(s.test), with -A's operation for atomic tests.
std::string title_of(const settings& s);

struct parse_result {
    settings s;
    std::string error;  // empty: ok
};

// argv[0] is the program name.
parse_result parse_options(int argc, const char* const* argv);
std::string usage();

}  // namespace uet::perf
