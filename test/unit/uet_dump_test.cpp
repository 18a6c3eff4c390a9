// uet-dump end to end: a pcap of every golden UET and RoCEv2 packet (plus malformed ones) is run
// through the real binary with --json and -v. Every header and every field it prints is compared
// with an in-process decode; malformed packets must carry their reject reason; a live capture on a
// veth pair must print what was sent.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "golden.hpp"
#include "uet_dump_run.hpp"
#include "wire/dissect.hpp"
#include "wire/frame.hpp"
#include "wire/pcap_file.hpp"

namespace uet::wire {
namespace {

using nlohmann::json;

using test::lines_of;
using test::tmpdir;
using test::uet_dump_path;

test::run_result run(const std::string& args) {
    return test::run_uet_dump(args);
}

// The JSON uet-dump must print for a header list, built here from the decoders directly.
class json_recorder final : public field_visitor {
  public:
    void begin(std::string_view h) override { cur_ = json{{"name", std::string(h)}}; }
    void field(std::string_view n, std::uint64_t v) override { cur_[std::string(n)] = v; }
    void field(std::string_view n, std::uint64_t v, std::string_view s) override {
        cur_[std::string(n)] = v;
        cur_[std::string(n) + "_name"] = std::string(s);
    }
    void bytes(std::string_view n, std::span<const std::uint8_t> b) override {
        std::string hex;
        char buf[4];
        for (std::size_t i = 0; i < b.size(); ++i) {
            if (i && b.size() == 6) hex += ':';
            std::snprintf(buf, sizeof buf, "%02x", b[i]);
            hex += buf;
        }
        cur_[std::string(n)] = hex;
    }
    void end() override { headers.push_back(cur_); }
    json headers = json::array();

  private:
    json cur_;
};

struct sample {
    std::string name;
    std::vector<std::uint8_t> bytes;
    std::string expect_reject;  // empty: must decode
};

// A few broken packets: uet-dump must print each with its reason, never skip it.
std::vector<sample> malformed_samples(const std::vector<golden::named_bytes>& uet,
                                      const std::vector<golden::named_bytes>& roce) {
    std::vector<sample> out;
    auto bad_udp = uet.front().bytes;
    bad_udp.back() ^= 0x01;
    out.push_back({"bad_udp_checksum", bad_udp, "bad_udp_checksum"});
    auto cut = uet.front().bytes;
    cut.resize(30);
    out.push_back({"truncated", cut, "truncated"});
    auto bad_icrc = roce.front().bytes;
    bad_icrc.back() ^= 0x80;
    bad_icrc[40] = bad_icrc[41] = 0;  // UDP checksum "none", so only the ICRC can catch it
    out.push_back({"bad_icrc", bad_icrc, "bad_icrc"});
    // Refused in SES (opcode 63), with good checksums: the headers before it are still printed.
    auto payload = golden::uet_udp_payloads().front().bytes;
    payload[12] = 0x3f;
    frame_spec spec;
    spec.src_ip = 0x0a000001;
    spec.dst_ip = 0x0a000002;
    spec.src_port = 0xc100;
    spec.dst_port = uet_udp_port;
    std::vector<std::uint8_t> frame(payload.size() + 64);
    frame.resize(build_udp_frame(spec, payload, frame));
    out.push_back({"bad_ses_opcode", frame, "bad_ses_opcode"});
    return out;
}

constexpr std::size_t malformed_count = 4;

std::vector<sample> all_samples() {
    auto uet = golden::uet_frames();
    auto roce = golden::roce_frames();
    std::vector<sample> out;
    for (auto& f : uet)
        out.push_back({f.name, f.bytes, {}});
    for (auto& f : roce)
        out.push_back({f.name, f.bytes, {}});
    for (auto& f : golden::uet_dissector_only_frames())
        out.push_back({f.name, f.bytes, {}});
    for (auto& s : malformed_samples(uet, roce))
        out.push_back(s);
    return out;
}

std::string write_pcap(const std::vector<sample>& samples, const std::string& name) {
    std::string path = tmpdir() + "/" + name;
    pcap_writer w;
    EXPECT_TRUE(w.open(path));
    std::uint64_t ts = 1700000000ull * 1000000000ull;
    for (const auto& s : samples) {
        EXPECT_TRUE(w.write(s.bytes, ts));
        ts += 1000;
    }
    w.close();
    return path;
}

class uet_dump : public ::testing::Test {
  protected:
    void SetUp() override {
        samples_ = all_samples();
        pcap_ = write_pcap(samples_, "uet_dump_test.pcap");
    }
    std::vector<sample> samples_;
    std::string pcap_;
};

TEST_F(uet_dump, json_prints_every_field_of_every_header) {
    auto r = run("--json " + pcap_);
    EXPECT_EQ(r.exit_code, 1) << "malformed packets present: exit status 1";
    auto lines = lines_of(r.out);
    ASSERT_EQ(lines.size(), samples_.size());
    for (std::size_t i = 0; i < samples_.size(); ++i) {
        const auto& s = samples_[i];
        SCOPED_TRACE(s.name);
        json got = json::parse(lines[i]);
        EXPECT_EQ(got["number"], i + 1);
        EXPECT_EQ(got["length"], s.bytes.size());
        dissection d;
        reject_reason rr = dissect(s.bytes, d);
        json_recorder expect;
        visit(d, expect);
        EXPECT_EQ(got["headers"], expect.headers);
        if (s.expect_reject.empty()) {
            EXPECT_EQ(got["status"], "ok");
            // eth + arp, or eth, ipv4, udp/entropy, then ours
            EXPECT_GE(got["headers"].size(), d.kind == frame_kind::arp ? 2u : 4u);
        } else {
            EXPECT_EQ(got["status"], "malformed");
            EXPECT_EQ(got["reject"], s.expect_reject);
            EXPECT_EQ(got["reject"], reject_name(rr));
        }
    }
}

TEST_F(uet_dump, json_names_uet_and_roce_layers) {
    auto lines = lines_of(run("--json " + pcap_).out);
    ASSERT_EQ(lines.size(), samples_.size());
    std::size_t uet = 0, roce = 0, pds = 0, ses = 0, bth = 0;
    for (const auto& l : lines) {
        json j = json::parse(l);
        if (j["status"] != "ok") continue;
        uet += j["protocol"] == "uet" || j["protocol"] == "uet_ip";
        roce += j["protocol"] == "rocev2";
        for (const auto& h : j["headers"]) {
            std::string n = h["name"];
            pds += n.rfind("pds_", 0) == 0;
            ses += n.rfind("ses_", 0) == 0;
            bth += n == "bth";
        }
    }
    EXPECT_EQ(uet + roce + 2 /* ARP */, samples_.size() - malformed_count);
    EXPECT_GE(pds, 14u);  // every PDS header type at least once
    EXPECT_GE(ses, 8u);   // every SES form at least once
    EXPECT_EQ(bth, golden::roce_frames().size());
}

TEST_F(uet_dump, verbose_prints_one_line_per_header_with_every_field) {
    auto r = run("-v " + pcap_);
    EXPECT_EQ(r.exit_code, 1);
    auto lines = lines_of(r.out);
    std::size_t at = 0;
    for (const auto& s : samples_) {
        SCOPED_TRACE(s.name);
        ASSERT_LT(at, lines.size());
        const std::string& summary = lines[at++];
        EXPECT_EQ(summary.rfind("1700000000.", 0), 0u) << summary;
        if (!s.expect_reject.empty()) {
            EXPECT_NE(summary.find("[malformed: "), std::string::npos) << summary;
        }
        dissection d;
        dissect(s.bytes, d);
        json_recorder expect;
        visit(d, expect);
        for (const auto& h : expect.headers) {
            ASSERT_LT(at, lines.size());
            const std::string& line = lines[at++];
            std::string name = h["name"];
            EXPECT_EQ(line.rfind("    " + name + ":", 0), 0u) << line;
            for (auto& [key, value] : h.items()) {
                if (key == "name" || key.ends_with("_name")) continue;
                std::string want =
                    " " + key + "=" + (value.is_string() ? value.get<std::string>() : value.dump());
                EXPECT_NE(line.find(want), std::string::npos) << line << " lacks" << want;
            }
        }
        if (!s.expect_reject.empty()) {
            // The headers decoded before the fault, then the reason.
            ASSERT_LT(at, lines.size());
            EXPECT_EQ(lines[at++].rfind("    malformed: ", 0), 0u);
        }
    }
    EXPECT_EQ(at, lines.size());
}

std::vector<std::string> header_names(const json& j) {
    std::vector<std::string> names;
    for (const auto& h : j["headers"])
        names.push_back(h["name"]);
    return names;
}

TEST_F(uet_dump, malformed_packets_show_the_headers_before_the_fault) {
    auto lines = lines_of(run("--json " + pcap_).out);
    ASSERT_EQ(lines.size(), samples_.size());
    std::map<std::string, json> by_name;
    for (std::size_t i = 0; i < samples_.size(); ++i)
        by_name[samples_[i].name] = json::parse(lines[i]);
    using names = std::vector<std::string>;
    EXPECT_EQ(header_names(by_name["bad_udp_checksum"]), (names{"eth", "ipv4", "udp"}));
    EXPECT_EQ(header_names(by_name["bad_ses_opcode"]), (names{"eth", "ipv4", "udp", "pds_rud"}));
    EXPECT_EQ(by_name["bad_ses_opcode"]["reject_layer"], "uet");
    EXPECT_EQ(header_names(by_name["truncated"]), (names{"eth"}));
}

TEST_F(uet_dump, truncated_payload_shows_the_headers_and_the_flag) {
    const std::string name = "udp_pds_rud_ses_std_write_truncated_payload";
    auto json_lines = lines_of(run("--json " + pcap_).out);
    auto text_lines = lines_of(run(pcap_).out);
    ASSERT_EQ(json_lines.size(), samples_.size());
    ASSERT_EQ(text_lines.size(), samples_.size());
    std::size_t i = 0;
    while (i < samples_.size() && samples_[i].name != name)
        ++i;
    ASSERT_LT(i, samples_.size());
    json j = json::parse(json_lines[i]);
    EXPECT_EQ(j["status"], "ok");
    EXPECT_EQ(j["truncated_payload"]["declared"], 0x345);
    EXPECT_EQ(j["truncated_payload"]["present"], 0);
    EXPECT_EQ(header_names(j),
              (std::vector<std::string>{"eth", "ipv4", "udp", "pds_rud", "ses_std"}));
    EXPECT_EQ(j["headers"][4]["payload_length"], 0x345);
    EXPECT_EQ(j["headers"][4]["message_offset"], 0x4000);
    EXPECT_NE(text_lines[i].find("WRITE std msg 1799"), std::string::npos) << text_lines[i];
    EXPECT_NE(text_lines[i].find("[truncated payload: 0x345 declared, 0 present]"),
              std::string::npos)
        << text_lines[i];
}

TEST_F(uet_dump, write_option_copies_what_was_read) {
    const std::string copy = tmpdir() + "/uet_dump_test_copy.pcap";
    auto r = run("-w " + copy + " --json " + pcap_);
    EXPECT_EQ(r.exit_code, 1);
    auto again = run("--json " + copy);
    EXPECT_EQ(again.out, r.out);
    EXPECT_EQ(lines_of(again.out).size(), samples_.size());
    EXPECT_EQ(run("-w /nonexistent-dir/x.pcap " + pcap_).exit_code, 2);
}

TEST_F(uet_dump, summary_line_names_the_protocol_and_addresses) {
    auto lines = lines_of(run(pcap_).out);
    ASSERT_EQ(lines.size(), samples_.size());
    for (std::size_t i = 0; i < samples_.size(); ++i) {
        dissection d;
        if (dissect(samples_[i].bytes, d) != reject_reason::none) continue;
        const auto& l = lines[i];
        const char* expect = d.kind == frame_kind::uet_udp  ? " UET "
                             : d.kind == frame_kind::uet_ip ? " UET/IP "
                             : d.kind == frame_kind::roce   ? " RoCEv2 "
                             : d.kind == frame_kind::arp    ? " ARP "
                                                            : nullptr;
        ASSERT_NE(expect, nullptr) << l;
        EXPECT_NE(l.find(expect), std::string::npos) << l;
    }
}

// Connection manager MADs get a line of their own after the UD SEND's; a MAD that is not the
// CM's is malformed in layer "cm", with the RoCEv2 headers before it still shown.
TEST(uet_dump_cm, cm_messages_show_after_the_ud_send) {
    std::vector<sample> samples;
    for (const cm_attribute a : {cm_attribute::req, cm_attribute::rep, cm_attribute::rtu}) {
        cm_message m;
        m.attribute = a;
        m.local_comm_id = 0x51;
        m.remote_comm_id = a == cm_attribute::req ? 0 : 0x52;
        m.local_qpn = 0x123;
        m.starting_psn = 77;
        m.path_mtu = ib_mtu_code(4096);
        samples.push_back({to_string(a), golden::cm_frame(m), {}});
    }
    // A MAD of another management class (0x04), in a UD SEND whose ICRC is right.
    std::array<std::uint8_t, mad_size> mad{};
    ASSERT_EQ(encode(cm_message{}, mad), mad_size);
    mad[1] = 0x04;
    roce_packet_spec r;
    r.bth.opcode = static_cast<std::uint8_t>(roce_opcode::ud_send_only);
    r.bth.dest_qp = gsi_qpn;
    r.deth = deth_header{gsi_qkey, gsi_qpn};
    r.payload = mad;
    frame_spec f;
    f.src_ip = 0x0a000001;
    f.dst_ip = 0x0a000002;
    f.dst_port = roce_udp_port;
    std::vector<std::uint8_t> not_cm(512);
    not_cm.resize(build_roce_frame(f, r, not_cm));
    samples.push_back({"not_cm", not_cm, "not_cm_mad"});
    const auto path = write_pcap(samples, "uet_dump_cm.pcap");
    const auto text = lines_of(run(path).out);
    ASSERT_EQ(text.size(), samples.size());
    EXPECT_NE(text[0].find(" RoCEv2 UD_SEND_ONLY qp 0x000001"), std::string::npos) << text[0];
    EXPECT_NE(text[0].find(" | CM REQ comm 0x51 qpn 0x000123 psn 77 mtu 4096"), std::string::npos)
        << text[0];
    EXPECT_NE(text[1].find(" | CM REP comm 0x51 qpn 0x000123 psn 77"), std::string::npos)
        << text[1];
    EXPECT_NE(text[2].find(" | CM RTU comm 0x51"), std::string::npos) << text[2];
    const auto js = lines_of(run("--json " + path).out);
    ASSERT_EQ(js.size(), samples.size());
    for (std::size_t i = 0; i < 3; ++i) {
        const json j = json::parse(js[i]);
        EXPECT_EQ(j["status"], "ok");
        EXPECT_EQ(header_names(j), (std::vector<std::string>{"eth", "ipv4", "udp", "bth", "deth",
                                                             "roce_payload", "icrc", "cm"}));
    }
    const json bad = json::parse(js[3]);
    EXPECT_EQ(bad["status"], "malformed");
    EXPECT_EQ(bad["reject_layer"], "cm");
    EXPECT_EQ(bad["reject"], "not_cm_mad");
}

TEST(uet_dump_errors, missing_file_and_bad_options_are_usage_errors) {
    EXPECT_EQ(run("/nonexistent/file.pcap").exit_code, 2);
    EXPECT_EQ(run("--bogus x.pcap").exit_code, 2);
    EXPECT_EQ(run("").exit_code, 2);
    EXPECT_EQ(run("-c 0 x.pcap").exit_code, 2);
    EXPECT_EQ(run("--uet-port 70000 x.pcap").exit_code, 2);
    EXPECT_EQ(run("-i uet-no-such-if0 -c 1").exit_code, 2);
    EXPECT_EQ(run("--help").exit_code, 0);
}

TEST(uet_dump_errors, count_stops_early) {
    auto samples = all_samples();
    auto path = write_pcap(samples, "uet_dump_count.pcap");
    auto r = run("-c 3 " + path);
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_EQ(lines_of(r.out).size(), 3u);
}

TEST(uet_dump_errors, custom_uet_port) {
    // With another UET port our packets are plain UDP: decoded, not malformed, not UET.
    auto samples = all_samples();
    samples.resize(3);
    auto path = write_pcap(samples, "uet_dump_port.pcap");
    auto r = run("--uet-port 5000 --json " + path);
    EXPECT_EQ(r.exit_code, 0);
    for (const auto& l : lines_of(r.out))
        EXPECT_EQ(json::parse(l)["protocol"], "udp") << l;
}

// ---- live capture on a veth pair (root only; CI runs as root) ----

struct veth_pair {
    std::string a = "uetdmp" + std::to_string(getpid()) + "a";
    std::string b = "uetdmp" + std::to_string(getpid()) + "b";
    bool ok = false;
    veth_pair() {
        std::string cmd = "ip link add " + a + " type veth peer name " + b +
                          " && sysctl -qw net.ipv6.conf." + a + ".disable_ipv6=1 net.ipv6.conf." +
                          b + ".disable_ipv6=1 && ip link set " + a + " up && ip link set " + b +
                          " up";
        ok = std::system(cmd.c_str()) == 0;
    }
    ~veth_pair() { std::system(("ip link del " + a + " 2>/dev/null").c_str()); }
};

TEST(uet_dump_live, captures_what_is_sent_on_an_interface) {
    if (geteuid() != 0) GTEST_FAIL() << "live capture needs root (CI runs as root)";
    veth_pair veth;
    ASSERT_TRUE(veth.ok) << "could not create a veth pair";
    auto frames = golden::uet_frames();
    frames.resize(4);
    const int count = static_cast<int>(frames.size());

    int out_pipe[2];
    ASSERT_EQ(pipe(out_pipe), 0);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        dup2(out_pipe[1], 1);
        close(out_pipe[0]);
        std::string c = std::to_string(count);
        execl(uet_dump_path().c_str(), "uet-dump", "--json", "-c", c.c_str(), "-i", veth.b.c_str(),
              static_cast<char*>(nullptr));
        _exit(127);
    }
    close(out_pipe[1]);

    int sock = socket(AF_PACKET, SOCK_RAW, 0);
    ASSERT_GE(sock, 0);
    sockaddr_ll to{};
    to.sll_family = AF_PACKET;
    to.sll_ifindex = static_cast<int>(if_nametoindex(veth.a.c_str()));
    to.sll_halen = 6;
    // No timing assumption: resend the frames until uet-dump has printed `count` packets and
    // exited (it may start capturing after the first sends). Bounded at about a minute.
    std::string out;
    bool done = false;
    for (int round = 0; round < 300 && !done; ++round) {
        std::size_t lines_before = lines_of(out).size();
        for (std::size_t i = lines_before; i < frames.size(); ++i)
            sendto(sock, frames[i].bytes.data(), frames[i].bytes.size(), 0,
                   reinterpret_cast<sockaddr*>(&to), sizeof to);
        pollfd p{out_pipe[0], POLLIN, 0};
        while (poll(&p, 1, 200) > 0) {
            char buf[4096];
            ssize_t n = read(out_pipe[0], buf, sizeof buf);
            if (n <= 0) {
                done = true;
                break;
            }
            out.append(buf, static_cast<std::size_t>(n));
        }
    }
    close(sock);
    close(out_pipe[0]);
    if (!done) kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    ASSERT_TRUE(done) << "uet-dump did not finish; output so far:\n" << out;
    EXPECT_TRUE(WIFEXITED(status));
    auto lines = lines_of(out);
    ASSERT_EQ(lines.size(), frames.size()) << out;
    // Frames are resent when uet-dump missed them, so match by content, not order.
    for (const auto& l : lines) {
        json j = json::parse(l);
        EXPECT_EQ(j["status"], "ok") << l;
        EXPECT_EQ(j["protocol"], "uet") << l;
    }
}

}  // namespace
}  // namespace uet::wire
