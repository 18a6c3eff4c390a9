// hostile_sender: an attacker on the victim's L2 segment, with no state of its own, sending
// crafted UET frames (built with lib/wire) through an AF_PACKET raw socket to one victim endpoint,
// in named classes. Used by test/integration/run_hostile_peer.sh (meson test hostile_peer),
// which checks the victim's counters against what this prints:
//   SENT <class> <frames>                one line per class
//   EXPECT <class> <reason> <frames>     where each frame of the class must be counted, by the
//                                        victim's --stats names (see below)
//   ANSWERS <class> <answers> <errors> <data bytes>   answers that came back to us (response
//                                        messages, which we acknowledge)
//   KIND <class> <name> <reason> ...     each malformed frame, each field of bit_flips, and what
//                                        the frames are expected to be dropped for
//
// Against an unsecured victim (--class, repeatable; these five by default):
//   syn_flood     SYN requests from --flood spoofed sources (addresses and MACs nobody owns, on
//                 the victim's subnet), each the first packet of a 64 KiB SEND that never ends:
//                 more than the victim's peer and PDC tables hold.
//   forged_pdc    non-SYN requests, ACKs and NACKs naming random PDC ids and PSNs, with the
//                 legitimate client's IP address (and our MAC); the same from strangers; and
//                 requests on a PDC we really opened with PSNs 2^30 beyond its window.
//   wrong_job     requests (SEND, WRITE, READ) with another JobID, on a PDC we opened.
//   guessed_rkey  WRITEs and READs of the victim's job with random 64-bit memory keys and
//                 offsets inside the victim's region, on a PDC we opened: the error answers come
//                 back to our address; we count them and the bytes they carry.
//   malformed     one frame of each broken header we can make, each expected to be refused for
//                 its own reason.
// A PDC "we opened": a SYN request, the victim's ACK read back (it names the victim's PDC id),
// then requests without SYN, which show the victim our address is our own.
//
// Against a victim in a secure domain (--tss-sdi, --tss-epoch: the victim's), whose client's
// sealed frames we see on a mirror port (the script mirrors the client's switch port to ours).
// Without the key:
//   forged_icv    frames with a valid TSS header and a random ICV: half the client's captured
//                 frames with their TSC moved far ahead of its replay window (which a failed
//                 frame must not move), half our own with random ciphertext.
//   replay        the client's captured frames sent again, as they were.
//   wrong_sdi     the client's captured frames naming another secure domain.
//   truncated_icv the client's captured frames cut to their TSS header (or less) and the first
//                 0..15 bytes of their ICV.
//   unsealed      requests of the victim's job with no TSS header, as an unsecured peer sends.
// With the key (--tss-key-file; refused for the classes above), frames a member of the domain
// seals from our own address, which the victim would accept as they are:
//   stale_epoch   sealed under epochs older than the victim's lifetime allows.
//   bit_flips     each sealed with a fresh TSC, then one bit flipped: every bit of the IPv4
//                 total length, checksum and source, of the UDP header and of the TSS header;
//                 one bit of each byte of the ciphertext (PDS, SES, payload) and of the ICV.
//
// Reasons in EXPECT lines: the victim's "Refused frames:" and "dropped packets:" names;
// "rejected_job" and "rejected_key" (its endpoint counters); "port" (its port's rx dropped:
// frames the host stack drops before the engine: runts, other IP protocols...);
// "syn_accounted" (a target PDC opened, NO_PDC_AVAIL answered, or peer table full);
// "tss_<reason>" (its TSS line's drops by reason).
#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "tss/key_file.hpp"
#include "tss/sublayer.hpp"
#include "wire/frame.hpp"
#include "wire/uet_fep.hpp"
#include "wire/uet_packet.hpp"
#include "wire/uet_tss.hpp"

namespace {

using namespace uet;
using bytes = std::vector<std::uint8_t>;

struct options {
    std::string iface;
    wire::mac_address victim_mac, client_mac;
    std::uint32_t victim_ip = 0, own_ip = 0, client_ip = 0;
    std::uint32_t job = 0;
    std::uint64_t region_bytes = 4096;
    std::uint32_t flood = 2000;        // syn_flood sources
    std::uint32_t count = 200;         // frames of each other class
    std::uint32_t mtu_payload = 1344;  // the victim's payload per packet (uet-perf's "Mtu")
    std::uint32_t rate = 2500;         // frames per second
    std::vector<std::string> classes;
    std::uint64_t seed = 0;
    std::string tss_key_file;  // only for the classes that need a valid frame
    std::uint32_t tss_sdi = 1;
    std::uint16_t tss_epoch = 0;
};

// The classes against a secured victim that are given the key.
bool keyed_class(const std::string& c) {
    return c == "stale_epoch" || c == "bit_flips";
}

[[noreturn]] void usage(const char* why) {
    std::fprintf(stderr,
                 "hostile_sender: %s\nusage: hostile_sender --iface IF --victim-mac MAC "
                 "--victim-ip IP --own-ip IP --client-ip IP --job N [--region-bytes N] "
                 "[--flood N] [--count N] [--mtu-payload N] [--rate FRAMES/S] [--seed N] "
                 "[--tss-sdi N] [--tss-epoch N] [--tss-key-file FILE] [--class NAME]...\n",
                 why);
    std::exit(2);
}

std::uint32_t parse_ip(const char* s) {
    in_addr a{};
    if (inet_pton(AF_INET, s, &a) != 1) usage("bad IPv4 address");
    return ntohl(a.s_addr);
}

options parse(int argc, char** argv) {
    options o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (i + 1 >= argc) usage(("missing value after " + a).c_str());
        const char* v = argv[++i];
        if (a == "--iface") {
            o.iface = v;
        } else if (a == "--victim-mac") {
            const auto m = wire::mac_address::parse(v);
            if (!m) usage("bad MAC");
            o.victim_mac = *m;
        } else if (a == "--victim-ip") {
            o.victim_ip = parse_ip(v);
        } else if (a == "--own-ip") {
            o.own_ip = parse_ip(v);
        } else if (a == "--client-ip") {
            o.client_ip = parse_ip(v);
        } else if (a == "--job") {
            o.job = static_cast<std::uint32_t>(std::strtoul(v, nullptr, 0));
        } else if (a == "--region-bytes") {
            o.region_bytes = std::strtoull(v, nullptr, 0);
        } else if (a == "--flood") {
            o.flood = static_cast<std::uint32_t>(std::strtoul(v, nullptr, 0));
        } else if (a == "--rate") {
            o.rate = static_cast<std::uint32_t>(std::strtoul(v, nullptr, 0));
        } else if (a == "--mtu-payload") {
            o.mtu_payload = static_cast<std::uint32_t>(std::strtoul(v, nullptr, 0));
        } else if (a == "--count") {
            o.count = static_cast<std::uint32_t>(std::strtoul(v, nullptr, 0));
        } else if (a == "--seed") {
            o.seed = std::strtoull(v, nullptr, 0);
        } else if (a == "--class") {
            o.classes.push_back(v);
        } else if (a == "--tss-key-file") {
            o.tss_key_file = v;
        } else if (a == "--tss-sdi") {
            o.tss_sdi = static_cast<std::uint32_t>(std::strtoul(v, nullptr, 0)) & 0xffffff;
        } else if (a == "--tss-epoch") {
            o.tss_epoch = static_cast<std::uint16_t>(std::strtoul(v, nullptr, 0));
        } else {
            usage(("unknown option " + a).c_str());
        }
    }
    if (o.iface.empty() || !o.victim_ip || !o.own_ip || !o.client_ip || !o.job)
        usage("--iface, --victim-ip, --own-ip, --client-ip and --job are needed");
    if (o.count == 0 || o.count > 400) usage("--count must be 1 .. 400 (one PDC's window)");
    if (o.rate < 16 || o.rate > 1'000'000) usage("--rate must be 16 .. 1000000 frames/s");
    if (o.classes.empty())
        o.classes = {"syn_flood", "forged_pdc", "wrong_job", "guessed_rkey", "malformed"};
    bool keyed = false;
    for (const std::string& c : o.classes)
        keyed = keyed || keyed_class(c);
    if (keyed && o.tss_key_file.empty()) usage("stale_epoch and bit_flips need --tss-key-file");
    if (!keyed && !o.tss_key_file.empty())
        usage("--tss-key-file only with a class that needs a valid frame (stale_epoch, bit_flips)");
    return o;
}

// One AF_PACKET socket on the interface: every frame we send, and the IPv4 frames for us.
class raw_link {
  public:
    raw_link(const std::string& iface, std::uint32_t rate) : rate_(rate) {
        fd_ = ::socket(AF_PACKET, SOCK_RAW, htons(ETH_P_IP));
        if (fd_ < 0) fail("socket(AF_PACKET)");
        ifreq ifr{};
        std::snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%s", iface.c_str());
        if (::ioctl(fd_, SIOCGIFHWADDR, &ifr) != 0) fail("SIOCGIFHWADDR");
        std::memcpy(mac_.octets.data(), ifr.ifr_hwaddr.sa_data, 6);
        sockaddr_ll sll{};
        sll.sll_family = AF_PACKET;
        sll.sll_protocol = htons(ETH_P_IP);
        sll.sll_ifindex = static_cast<int>(if_nametoindex(iface.c_str()));
        if (sll.sll_ifindex == 0) fail("if_nametoindex");
        if (::bind(fd_, reinterpret_cast<sockaddr*>(&sll), sizeof sll) != 0) fail("bind");
        const int rcvbuf = 8 << 20;
        ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
    }
    ~raw_link() { ::close(fd_); }
    raw_link(const raw_link&) = delete;
    raw_link& operator=(const raw_link&) = delete;

    const wire::mac_address& mac() const noexcept { return mac_; }

    // Paced at rate_ frames/s (in bursts of 16): the victim's af_packet receive ring, shared
    // with the legitimate transfer, holds 512 frames, which a stall of the victim (a busy host)
    // must not overflow, so that every frame reaches its counters.
    void send(const bytes& frame) {
        if (::send(fd_, frame.data(), frame.size(), 0) != static_cast<ssize_t>(frame.size()))
            fail("send");
        if (++sent_ % 16 != 0) return;
        next_ += std::chrono::microseconds(16'000'000 / rate_);
        next_ = std::max(next_, std::chrono::steady_clock::now() - std::chrono::milliseconds(10));
        std::this_thread::sleep_until(next_);
    }

    // The next frame received (not one we sent) within timeout_ms; empty when none came.
    bytes receive(int timeout_ms) {
        const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
        for (;;) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                end - std::chrono::steady_clock::now());
            if (left.count() <= 0) return {};
            pollfd p{fd_, POLLIN, 0};
            if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) return {};
            bytes b(16384);
            sockaddr_ll from{};
            socklen_t len = sizeof from;
            const ssize_t n =
                ::recvfrom(fd_, b.data(), b.size(), 0, reinterpret_cast<sockaddr*>(&from), &len);
            if (n <= 0 || from.sll_pkttype == PACKET_OUTGOING) continue;
            b.resize(static_cast<std::size_t>(n));
            return b;
        }
    }

  private:
    [[noreturn]] static void fail(const char* what) {
        std::perror(what);
        std::exit(1);
    }
    int fd_ = -1;
    wire::mac_address mac_;
    std::uint64_t sent_ = 0;
    std::uint32_t rate_;
    std::chrono::steady_clock::time_point next_ = std::chrono::steady_clock::now();
};

// The secure domain's key in the attacker's hands (stale_epoch and bit_flips only): it seals
// frames of our own address as any member of the domain would, which the victim would accept as
// they are (cluster mode: one key for every member).
class sealer {
  public:
    sealer(const std::string& key_file, std::uint32_t sdi) {
        std::string why;
        const auto key = tss::read_key_file(key_file, why);
        if (!key) {
            std::fprintf(stderr, "hostile_sender: --tss-key-file %s: %s\n", key_file.c_str(),
                         why.c_str());
            std::exit(2);
        }
        tss::domain_config c;
        c.sdi = sdi;
        domain_ = sublayer_.add_domain(c);
        domain_->set_key(false, key->view());
        domain_->use_an(false);
    }

    // plain sealed under epoch with TSC tsc (strictly increasing from one call to the next).
    bytes seal(const bytes& plain, std::uint16_t epoch, std::uint64_t tsc) {
        domain_->set_epoch(epoch);
        bytes out(plain.size() + tss::seal_overhead(*domain_));
        if (!domain_->advance_tsc(tsc) ||
            sublayer_.seal_frame(*domain_, plain, out) != out.size()) {
            std::fprintf(stderr, "hostile_sender: could not seal (TSC %llu)\n",
                         (unsigned long long)tsc);
            std::exit(1);
        }
        return out;
    }

  private:
    tss::sublayer sublayer_{1};
    tss::secure_domain* domain_ = nullptr;
};

class attacker {
  public:
    explicit attacker(const options& o)
        : o_(o), link_(o.iface, o.rate), rng_(o.seed ? o.seed : seed()) {}

    void run() {
        using attack = void (attacker::*)();
        static constexpr std::pair<std::string_view, attack> classes[] = {
            {"syn_flood", &attacker::syn_flood},
            {"forged_pdc", &attacker::forged_pdc},
            {"wrong_job", &attacker::wrong_job},
            {"guessed_rkey", &attacker::guessed_rkey},
            {"malformed", &attacker::malformed},
            {"forged_icv", &attacker::forged_icv},
            {"replay", &attacker::replay},
            {"wrong_sdi", &attacker::wrong_sdi},
            {"truncated_icv", &attacker::truncated_icv},
            {"stale_epoch", &attacker::stale_epoch},
            {"bit_flips", &attacker::bit_flips},
            {"unsealed", &attacker::unsealed}};
        for (const std::string& c : o_.classes) {
            const auto* it = std::find_if(std::begin(classes), std::end(classes),
                                          [&](const auto& k) { return k.first == c; });
            if (it == std::end(classes)) usage(("unknown class " + c).c_str());
            (this->*it->second)();
        }
    }

  private:
    static std::uint64_t seed() {
        return std::random_device{}() ^ (std::uint64_t{std::random_device{}()} << 32);
    }

    // A source address nobody owns on the victim's /16 (10.x.y.z, y >= 16).
    std::uint32_t stranger_ip(std::uint32_t i) const noexcept {
        return (o_.victim_ip & 0xffff0000u) | ((16 + (i >> 8) % 224) << 8) | (1 + i % 254);
    }
    static wire::mac_address stranger_mac(std::uint32_t ip) noexcept {
        return {{0x02, 0xee, static_cast<std::uint8_t>(ip >> 24),
                 static_cast<std::uint8_t>(ip >> 16), static_cast<std::uint8_t>(ip >> 8),
                 static_cast<std::uint8_t>(ip)}};
    }

    wire::frame_spec spec_from(std::uint32_t src_ip, const wire::mac_address& src_mac) {
        wire::frame_spec s;
        s.src_mac = src_mac;
        s.dst_mac = o_.victim_mac;
        s.src_ip = src_ip;
        s.dst_ip = o_.victim_ip;
        s.src_port = static_cast<std::uint16_t>(0xc000 | (rng_() & 0x3fff));  // entropy
        s.dst_port = wire::uet_udp_port;
        s.ip_id = static_cast<std::uint16_t>(rng_());
        return s;
    }
    wire::frame_spec own_spec() { return spec_from(o_.own_ip, link_.mac()); }

    static bytes encoded(const wire::uet_packet_spec& p) {
        bytes out(16384);
        out.resize(wire::encode_uet(p, out));
        return out;
    }
    static bytes udp_frame(const wire::frame_spec& s, const bytes& payload) {
        bytes out(16384);
        out.resize(wire::build_udp_frame(s, payload, out));
        return out;
    }

    // A standard request of the victim's job (by default): one packet, the whole message.
    wire::ses_standard_request request(wire::ses_opcode op, std::uint32_t length) {
        wire::ses_standard_request r;
        r.opcode = op;
        r.job_id = o_.job;
        r.som = r.eom = true;
        r.message_id = static_cast<std::uint16_t>(next_message_++);
        r.request_length = length;
        return r;
    }

    static wire::uet_packet_spec with_request(wire::pds_rud_rod_request pds,
                                              const wire::ses_standard_request& r,
                                              std::span<const std::uint8_t> payload) {
        wire::uet_packet_spec p;
        p.ses = r;
        pds.next_hdr = wire::next_hdr_for(*p.ses);
        p.pds = pds;
        p.payload = payload;
        return p;
    }

    // A PDC of ours to the victim: SYN requests until its ACK named its PDC id, then plain ones.
    struct pdc {
        std::uint16_t spdcid = 0;
        std::uint32_t start_psn = 0, next_psn = 0;
        std::uint16_t victim_pdc = 0;
        bool established = false;
    };

    // A PDC id of a port's first endpoint (PIDonFEP 0): a UET endpoint keeps its PIDonFEP in
    // the top bits of every PDC id it picks (wire/uet_fep.hpp), so that what comes back names
    // it. We are our address's first endpoint, and so are the victim and its client.
    std::uint16_t first_endpoint_pdc_id() {
        return static_cast<std::uint16_t>(rng_() & wire::fep_id_low_mask);
    }

    pdc new_pdc() {
        pdc p;
        p.spdcid = first_endpoint_pdc_id();
        p.start_psn = p.next_psn = static_cast<std::uint32_t>(rng_());
        return p;
    }

    bytes request_frame(pdc& p, const wire::ses_standard_request& r,
                        std::span<const std::uint8_t> payload, bool ar = false) {
        wire::pds_rud_rod_request h;
        h.psn = p.next_psn++;
        h.spdcid = p.spdcid;
        h.ar = ar;
        if (p.established) {
            h.dpdcid = p.victim_pdc;
        } else {
            h.syn = true;
            h.psn_offset = static_cast<std::uint16_t>((h.psn - p.start_psn) & 0xfff);
        }
        return udp_frame(own_spec(), encoded(with_request(h, r, payload)));
    }

    // The victim's frame to us, decoded; false for anything else.
    bool from_victim(const bytes& f, wire::l2l4_view& v, wire::uet_packet& pkt) const {
        if (wire::parse_l2l4(f, v) != wire::reject_reason::none || !v.udp) return false;
        if (v.ip.src != o_.victim_ip || v.ip.dst != o_.own_ip) return false;
        if (v.udp->dport != wire::uet_udp_port) return false;
        return wire::decode_uet(v.l4_payload, false, pkt) == wire::reject_reason::none;
    }

    // Sends the PDC's first request (SYN, ACK requested) and waits up to 2 s for the victim's
    // ACK of it, which names the victim's PDC id: the PDC is then established.
    void open_pdc(pdc& p, const wire::ses_standard_request& r,
                  std::span<const std::uint8_t> payload) {
        link_.send(request_frame(p, r, payload, true));
        const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(2);
        while (std::chrono::steady_clock::now() < end) {
            const bytes f = link_.receive(100);
            wire::l2l4_view v;
            wire::uet_packet pkt;
            if (f.empty() || !from_victim(f, v, pkt)) continue;
            note_answer(pkt);
            std::visit(
                [&](const auto& h) {
                    using H = std::decay_t<decltype(h)>;
                    if constexpr (std::is_base_of_v<wire::pds_ack_fields, H>) {
                        if (h.dpdcid == p.spdcid) {
                            p.victim_pdc = h.spdcid;
                            p.established = true;
                        }
                    }
                },
                pkt.pds);
            if (p.established) return;
        }
        std::printf("NOTE no ACK from the victim in 2 s: the PDC stays in SYN\n");
    }

    // A packet of the victim's: its answers (response messages, on a PDC the victim opens to
    // us) are acknowledged, as an initiator that wants them would, and counted by request
    // message id and return code, with the bytes they carry. The SES header of an ACK is an
    // answer in an ACK (RC_OK without data only): not one of the error answers counted.
    void note_answer(const wire::uet_packet& pkt) {
        const auto* req = std::get_if<wire::pds_rud_rod_request>(&pkt.pds);
        if (!req || !pkt.ses) return;
        acknowledge(*req);
        std::visit(
            [&](const auto& s) {
                using S = std::decay_t<decltype(s)>;
                if constexpr (std::is_same_v<S, wire::ses_response> ||
                              std::is_same_v<S, wire::ses_response_with_data>) {
                    answers_[s.message_id] = s.return_code;
                    if constexpr (std::is_same_v<S, wire::ses_response_with_data>)
                        answer_bytes_ += pkt.payload.size();
                } else if constexpr (std::is_same_v<S, wire::ses_small_response_with_data>) {
                    answer_bytes_ += pkt.payload.size();
                }
            },
            *pkt.ses);
    }

    // A cumulative ACK of the victim's PDC to us (one at a time: a new one restarts it).
    void acknowledge(const wire::pds_rud_rod_request& r) {
        if (r.syn && r.spdcid != answer_pdc_.victim_pdc) {
            answer_pdc_.victim_pdc = r.spdcid;
            answer_pdc_.expected = r.psn - r.psn_offset;
            answer_pdc_.received.clear();
            answer_pdc_.spdcid = first_endpoint_pdc_id();
        }
        if (r.spdcid != answer_pdc_.victim_pdc) return;
        answer_pdc_.received.insert(r.psn);
        while (answer_pdc_.received.erase(answer_pdc_.expected))
            ++answer_pdc_.expected;
        wire::pds_ack a;
        a.cack_psn = answer_pdc_.expected - 1;
        a.ack_psn_offset = static_cast<std::int16_t>(r.psn - a.cack_psn);
        a.spdcid = answer_pdc_.spdcid;
        a.dpdcid = r.spdcid;
        wire::uet_packet_spec p;
        p.pds = a;
        link_.send(udp_frame(own_spec(), encoded(p)));
    }

    // Reads what the victim sends us for up to 3 s (less once `expected` answers came).
    void collect_answers(const char* cls, std::size_t expected) {
        const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(3);
        while (answers_.size() < expected && std::chrono::steady_clock::now() < end) {
            const bytes f = link_.receive(100);
            wire::l2l4_view v;
            wire::uet_packet pkt;
            if (!f.empty() && from_victim(f, v, pkt)) note_answer(pkt);
        }
        std::size_t errors = 0;
        for (const auto& [id, rc] : answers_)
            if (rc != wire::ses_return_code::ok) ++errors;
        std::printf("ANSWERS %s %zu %zu %llu\n", cls, answers_.size(), errors,
                    (unsigned long long)answer_bytes_);
        answers_.clear();
        answer_bytes_ = 0;
    }

    void report(const char* cls, std::uint64_t sent) {
        std::printf("SENT %s %llu\n", cls, (unsigned long long)sent);
        for (const auto& [reason, n] : expect_)
            std::printf("EXPECT %s %s %llu\n", cls, reason.c_str(), (unsigned long long)n);
        expect_.clear();
        std::fflush(stdout);
    }

    void syn_flood() {
        bytes chunk(o_.mtu_payload, 0xa5);  // a first packet is a whole one
        for (std::uint32_t i = 0; i < o_.flood; ++i) {
            const std::uint32_t ip = stranger_ip(i);
            wire::pds_rud_rod_request h;
            h.syn = true;
            h.psn = static_cast<std::uint32_t>(rng_());
            h.spdcid = static_cast<std::uint16_t>(rng_());
            wire::ses_standard_request r = request(wire::ses_opcode::send, 65536);
            r.eom = false;  // a message that never ends: it holds its PDC and reassembly slot
            link_.send(
                udp_frame(spec_from(ip, stranger_mac(ip)), encoded(with_request(h, r, chunk))));
        }
        expect_["syn_accounted"] = o_.flood;
        report("syn_flood", o_.flood);
    }

    void forged_pdc() {
        std::uint64_t sent = 0;
        const std::uint32_t n = o_.count / 4;
        // Forged as the client's, both PDC ids name first endpoints: another PIDonFEP would be
        // another endpoint at the client's address, a stranger.
        const auto forged = [&](std::uint32_t src_ip, const wire::mac_address& mac, int kind) {
            const auto pdc_id = [&] {
                return src_ip == o_.client_ip ? first_endpoint_pdc_id()
                                              : static_cast<std::uint16_t>(rng_());
            };
            const auto dpdcid = pdc_id();
            const auto psn = static_cast<std::uint32_t>(rng_());
            wire::uet_packet_spec p;
            bytes payload(256, 0x3c);
            if (kind == 0) {  // a data packet of a PDC that does not exist
                wire::pds_rud_rod_request h;
                h.psn = psn;
                h.spdcid = pdc_id();
                h.dpdcid = dpdcid;
                p = with_request(h, request(wire::ses_opcode::write, 256), payload);
            } else if (kind == 1) {  // an ACK of PSNs never sent
                wire::pds_ack_cc a;
                a.cack_psn = psn;
                a.spdcid = pdc_id();
                a.dpdcid = dpdcid;
                p.pds = a;
            } else {  // a NACK of a PSN never sent
                wire::pds_nack k;
                k.code = wire::nack_code::trimmed;
                k.nack_psn = psn;
                k.spdcid = pdc_id();
                k.dpdcid = dpdcid;
                p.pds = k;
            }
            link_.send(udp_frame(spec_from(src_ip, mac), encoded(p)));
            ++sent;
        };
        // The legitimate client's address (our MAC: the victim knows its peers by IP; the
        // client's MAC would make the bridge send the client's frames to us).
        for (std::uint32_t i = 0; i < n; ++i)
            forged(o_.client_ip, link_.mac(), static_cast<int>(i % 3));
        expect_["unknown_pdc"] += n;
        // Strangers: no state at the victim, so no PDC to look up.
        for (std::uint32_t i = 0; i < n; ++i) {
            const std::uint32_t ip = stranger_ip(o_.flood + i);
            forged(ip, stranger_mac(ip), static_cast<int>(i % 3));
        }
        expect_["unknown_source"] += n;
        // A PDC of ours, really open (by a request of another job, refused as such); then
        // requests on it 2^30 PSNs beyond its window (2^31 would read as old duplicates).
        pdc p = new_pdc();
        wire::ses_standard_request r = request(wire::ses_opcode::send, 64);
        r.job_id = (o_.job + 1) & 0xffffff;
        open_pdc(p, r, bytes(64, 1));
        ++sent;
        expect_["rejected_job"] += 1;
        const std::uint32_t far = o_.count - 2 * n - 1;
        for (std::uint32_t i = 0; i < far; ++i) {
            p.next_psn = p.start_psn + 0x40000000u + i;
            link_.send(request_frame(p, request(wire::ses_opcode::send, 64), bytes(64, 2)));
            ++sent;
        }
        expect_["beyond_window"] += far;
        report("forged_pdc", sent);
    }

    // count requests on one PDC of ours, opcodes in turn from ops; answers collected after.
    std::uint64_t requests_on_a_pdc(std::uint32_t job, std::span<const wire::ses_opcode> ops) {
        pdc p = new_pdc();
        bytes payload(256, 0x77);
        for (std::uint32_t i = 0; i < o_.count; ++i) {
            const wire::ses_opcode op = ops[i % ops.size()];
            wire::ses_standard_request r = request(op, 256);
            r.job_id = job;
            r.memory_key = rng_();
            r.buffer_offset = rng_() % (o_.region_bytes > 256 ? o_.region_bytes - 256 : 1);
            const std::span<const std::uint8_t> data =
                op == wire::ses_opcode::read ? std::span<const std::uint8_t>() : payload;
            if (i == 0)
                open_pdc(p, r, data);
            else
                link_.send(request_frame(p, r, data));
        }
        return o_.count;
    }

    void wrong_job() {
        static constexpr wire::ses_opcode ops[] = {wire::ses_opcode::send, wire::ses_opcode::write,
                                                   wire::ses_opcode::read};
        const std::uint64_t sent = requests_on_a_pdc((o_.job + 1) & 0xffffff, ops);
        expect_["rejected_job"] = sent;
        report("wrong_job", sent);
        collect_answers("wrong_job", sent);
    }

    void guessed_rkey() {
        static constexpr wire::ses_opcode ops[] = {wire::ses_opcode::write, wire::ses_opcode::read};
        const std::uint64_t sent = requests_on_a_pdc(o_.job, ops);
        expect_["rejected_key"] = sent;
        report("guessed_rkey", sent);
        collect_answers("guessed_rkey", sent);
    }

    // ---- malformed: a valid request of ours, then each kind broken in one way
    bytes valid_request_frame(const wire::frame_spec& s) {
        wire::pds_rud_rod_request h;
        h.syn = true;
        h.psn = static_cast<std::uint32_t>(rng_());
        h.spdcid = first_endpoint_pdc_id();
        bytes payload(512, 0x5a);
        return udp_frame(s,
                         encoded(with_request(h, request(wire::ses_opcode::send, 512), payload)));
    }
    static constexpr std::size_t ip_at = 14, udp_at = 34, pds_at = 42, ses_at = 54;
    static void fix_ip_checksum(bytes& f) {
        f[ip_at + 10] = f[ip_at + 11] = 0;
        wire::ipv4_fill_checksum(std::span(f).subspan(ip_at, 20));
    }
    static void set_be16(bytes& f, std::size_t at, std::uint16_t v) {
        f[at] = static_cast<std::uint8_t>(v >> 8);
        f[at + 1] = static_cast<std::uint8_t>(v);
    }
    // Request r in a SYN packet of ours with payload_bytes of payload (checksums right).
    bytes syn_frame(const wire::ses_standard_request& r, std::size_t payload_bytes) {
        wire::pds_rud_rod_request h;
        h.syn = true;
        return uet_frame(with_request(h, r, bytes(payload_bytes, 1)));
    }
    // The frame with UET bytes p (checksums right).
    bytes uet_frame(const wire::uet_packet_spec& p) { return udp_frame(own_spec(), encoded(p)); }

    // What lib/wire's decoders (the engine's general receive path) say of frame f.
    static const char* decoded_as(const bytes& f) {
        wire::l2l4_view v;
        if (const auto rc = wire::parse_l2l4(f, v); rc != wire::reject_reason::none)
            return wire::reject_name(rc);
        if (!v.udp) return "not_udp";
        wire::uet_packet pkt;
        return wire::reject_name(wire::decode_uet(v.l4_payload, false, pkt));
    }

    void kind(const char* name, const char* reason, const bytes& f) {
        link_.send(f);
        ++expect_[reason];
        std::printf("KIND malformed %s %s (%zu bytes; lib/wire: %s)\n", name, reason, f.size(),
                    decoded_as(f));
        ++malformed_sent_;
    }

    void malformed() {
        const wire::frame_spec s = own_spec();
        const bytes good = valid_request_frame(s);
        const auto cut = [&](std::size_t n) { return bytes(good.begin(), good.begin() + n); };
        // Inside the IPv4 and UDP headers: the host stack's runts (AF_PACKET sends nothing
        // shorter than the Ethernet header). No IPv4 fragment: DPDK's af_packet port asks the
        // kernel to reassemble fragments (PACKET_FANOUT_FLAG_DEFRAG), which keeps a lone one.
        kind("ipv4_truncated", "port", cut(ip_at + 12));
        kind("udp_truncated", "port", cut(udp_at + 4));
        {  // IPv4 version 6 in an IPv4 frame
            bytes f = good;
            f[ip_at] = 0x65;
            fix_ip_checksum(f);
            kind("ipv4_version", "port", f);
        }
        {  // IHL below 5
            bytes f = good;
            f[ip_at] = 0x44;
            fix_ip_checksum(f);
            kind("ipv4_ihl", "port", f);
        }
        {  // another IP protocol
            bytes f = good;
            f[ip_at + 9] = 6;
            fix_ip_checksum(f);
            kind("ip_protocol", "port", f);
        }
        // IPv4 and UDP: checksums and lengths.
        {
            bytes f = good;
            f[ip_at + 10] ^= 0x5a;
            kind("ipv4_checksum", "bad_ip_checksum", f);
        }
        {
            bytes f = good;
            f[udp_at + 6] ^= 0x5a;
            if (f[udp_at + 6] == 0 && f[udp_at + 7] == 0) f[udp_at + 7] = 1;
            kind("udp_checksum", "bad_udp_checksum", f);
        }
        {
            bytes f = good;
            set_be16(f, ip_at + 2, 12);  // total length shorter than the header
            fix_ip_checksum(f);
            kind("ipv4_total_length_short", "bad_ip_total_length", f);
        }
        {
            bytes f = good;
            set_be16(f, ip_at + 2, static_cast<std::uint16_t>(f.size() - ip_at + 200));
            fix_ip_checksum(f);
            kind("ipv4_total_length_long", "truncated", f);
        }
        {
            bytes f = good;
            set_be16(f, udp_at + 4, static_cast<std::uint16_t>(f.size() - udp_at - 100));
            set_be16(f, udp_at + 6, 0);  // no checksum: the length alone is wrong
            kind("udp_length", "bad_udp_length", f);
        }
        {  // the frame cut inside the SES header, the lengths of the whole
            bytes f = cut(ses_at + 20);
            kind("frame_cut_in_ses", "truncated", f);
        }
        // UET headers, each inside a frame whose IPv4 and UDP are right.
        {
            bytes payload(6, 0);
            payload[0] = static_cast<std::uint8_t>(2 << 3);  // RUD, and nothing after
            kind("pds_truncated", "truncated", udp_frame(s, payload));
        }
        {
            bytes u = encoded(with_request({}, request(wire::ses_opcode::send, 16), bytes(16, 1)));
            u.resize(12 + 20);
            kind("ses_truncated", "truncated", udp_frame(s, u));
        }
        {
            bytes u = encoded(with_request({}, request(wire::ses_opcode::send, 16), bytes(16, 1)));
            u[0] = static_cast<std::uint8_t>((u[0] & 0x07) | (31 << 3));  // PDS type 31
            kind("pds_type", "bad_pds_type", udp_frame(s, u));
        }
        {
            wire::pds_rud_rod_request h;
            h.syn = true;
            wire::uet_packet_spec p =
                with_request(h, request(wire::ses_opcode::send, 16), bytes(16, 1));
            std::get<wire::pds_rud_rod_request>(p.pds).next_hdr =
                static_cast<wire::pds_next_hdr>(15);
            kind("pds_next_hdr", "bad_pds_next_hdr", uet_frame(p));
        }
        {
            wire::pds_ctrl c;
            c.ctrl_type = static_cast<wire::ctrl_type>(15);
            wire::uet_packet_spec p;
            p.pds = c;
            kind("pds_ctrl_type", "bad_pds_ctrl_type", uet_frame(p));
        }
        {
            wire::pds_ack_cc a;
            a.cc_type = static_cast<wire::cc_type>(7);
            wire::uet_packet_spec p;
            p.pds = a;
            kind("ack_cc_type", "bad_pds_cc_type", uet_frame(p));
        }
        {
            wire::ses_standard_request r = request(wire::ses_opcode::send, 16);
            r.version = 3;
            kind("ses_version", "bad_ses_version", syn_frame(r, 16));
        }
        kind("ses_opcode", "bad_ses_opcode",
             syn_frame(request(static_cast<wire::ses_opcode>(0x3f), 16), 16));
        {  // a later packet of a message whose payload_length exceeds the bytes present
            wire::ses_standard_request r = request(wire::ses_opcode::send, 65536);
            r.som = false;
            r.payload_length = 4000;
            r.message_offset = 4096;
            kind("ses_payload_length", "bad_ses_payload_length", syn_frame(r, 100));
        }
        {
            wire::ses_standard_request r = request(wire::ses_opcode::atomic, 8);
            r.atomic = wire::ses_atomic_extension{};
            r.atomic->atomic_opcode = static_cast<wire::ses_atomic_opcode>(0xee);
            kind("ses_atomic_opcode", "bad_ses_atomic_opcode", syn_frame(r, 8));
            r.atomic = wire::ses_atomic_extension{};
            r.atomic->atomic_datatype = static_cast<wire::ses_atomic_datatype>(0xee);
            kind("ses_atomic_datatype", "bad_ses_atomic_datatype", syn_frame(r, 8));
        }
        {
            wire::ses_response rsp;
            rsp.opcode = static_cast<wire::ses_response_opcode>(0x3f);
            wire::uet_packet_spec p;
            p.ses = rsp;
            wire::pds_rud_rod_request h;
            h.syn = true;
            h.next_hdr = wire::next_hdr_for(*p.ses);
            p.pds = h;
            kind("ses_response_opcode", "bad_ses_response_opcode", uet_frame(p));
        }
        {  // a TSS header on an endpoint that has no secure domain
            bytes u = good;
            bytes udp(u.begin() + pds_at, u.end());
            udp.insert(udp.begin(),
                       {static_cast<std::uint8_t>(1 << 3), 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1});
            udp.resize(udp.size() + 16);  // an ICV's room
            kind("tss_unsecured", "unsupported_type", udp_frame(s, udp));
        }
        report("malformed", malformed_sent_);
    }

    // ---- against a secured victim
    static constexpr std::size_t tss_at = udp_at + 8;  // the TSS header, in frames over UDP
    static constexpr std::size_t tss_size = wire::tss_header::wire_size;
    static constexpr std::size_t icv = wire::tss_icv_size;

    // Sealed frames of the legitimate transfer, the client's to the victim, as the mirror port
    // shows them (IPv4 without options, no VLAN, no SSI, the victim's SDI): n, or all that
    // came in 5 s. None at all ends the run.
    std::vector<bytes> capture(std::size_t n) {
        std::vector<bytes> got;
        const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        while (got.size() < n && std::chrono::steady_clock::now() < end) {
            bytes f = link_.receive(100);
            wire::l2l4_view v;
            if (f.empty() || wire::parse_l2l4(f, v) != wire::reject_reason::none || !v.udp ||
                v.vlan || v.ip.header_length() != 20 || v.ip.src != o_.client_ip ||
                v.ip.dst != o_.victim_ip || v.udp->dport != wire::uet_udp_port)
                continue;
            wire::tss_header h;
            if (wire::decode(v.l4_payload, h) != wire::reject_reason::none || h.ssi ||
                h.sdi != o_.tss_sdi || v.l4_payload.size() < tss_size + icv + 1)
                continue;
            f.resize(ip_at + v.ip.total_length);
            got.push_back(std::move(f));
        }
        if (got.empty()) {
            std::printf("NOTE no sealed frame of the client's seen in 5 s: no mirror port?\n");
            std::exit(1);
        }
        if (got.size() < n) std::printf("NOTE captured %zu frames, not %zu\n", got.size(), n);
        return got;
    }

    // A captured frame made ours to send: our MAC as its source (the bridge must not learn the
    // client's MAC on our port; the victim knows its peers by IP address, and nothing covers the
    // MAC), and after a change of its bytes (rewritten) the IPv4 and UDP lengths of its size, the
    // IPv4 checksum, and no UDP checksum.
    void as_ours(bytes& f, bool rewritten) const {
        std::memcpy(&f[6], link_.mac().octets.data(), 6);
        if (!rewritten) return;
        set_be16(f, ip_at + 2, static_cast<std::uint16_t>(f.size() - ip_at));
        set_be16(f, udp_at + 4, static_cast<std::uint16_t>(f.size() - udp_at));
        set_be16(f, udp_at + 6, 0);
        fix_ip_checksum(f);
    }
    static void set_tsc(bytes& f, std::uint64_t tsc) {
        for (int i = 0; i < 6; ++i)
            f[tss_at + 6 + i] = static_cast<std::uint8_t>(tsc >> (8 * (5 - i)));
    }
    void random_bytes(std::span<std::uint8_t> b) {
        for (auto& x : b)
            x = static_cast<std::uint8_t>(rng_());
    }

    // --count frames made from the client's captured ones by change(frame, i), which says
    // whether it rewrote the frame, and sent; each expected to be dropped for reason.
    template <class Change>
    void send_captured(const char* cls, const char* reason, Change change) {
        const std::vector<bytes> cap = capture(o_.count);
        for (std::uint32_t i = 0; i < o_.count; ++i) {
            bytes f = cap[i % cap.size()];
            const bool rewritten = change(f, i);
            as_ours(f, rewritten);
            link_.send(f);
        }
        expect_[reason] = o_.count;
        report(cls, o_.count);
    }

    void forged_icv() {
        send_captured("forged_icv", "tss_bad_icv", [&](bytes& f, std::uint32_t i) {
            if (i % 2 == 0) {
                // The client's frame, its TSC 2^47 ahead: past the replay check, to the ICV.
                set_tsc(f, (std::uint64_t{1} << 47) + i);
            } else {  // ours, random ciphertext
                wire::tss_header h;
                h.sdi = o_.tss_sdi;
                h.epoch = o_.tss_epoch;
                h.tsc = (std::uint64_t{1} << 44) + i;
                bytes u(tss_size + 256 + icv);
                wire::encode(h, u);
                random_bytes(std::span(u).subspan(tss_size));
                f = udp_frame(own_spec(), u);
            }
            random_bytes(std::span(f).last(icv));
            return true;
        });
    }

    void replay() {
        send_captured("replay", "tss_replay", [](bytes&, std::uint32_t) { return false; });
    }

    void wrong_sdi() {
        send_captured("wrong_sdi", "tss_unknown_sdi", [&](bytes& f, std::uint32_t) {
            const std::uint32_t sdi = (o_.tss_sdi + 1 + rng_() % 0xfffffe) & 0xffffff;
            f[tss_at + 1] = static_cast<std::uint8_t>(sdi >> 16);
            f[tss_at + 2] = static_cast<std::uint8_t>(sdi >> 8);
            f[tss_at + 3] = static_cast<std::uint8_t>(sdi);
            return true;
        });
    }

    // After UDP, n = 0 .. 27 bytes: the first n of the TSS header, or all of it and the first
    // n - 12 bytes of the frame's ICV (the ciphertext gone).
    void truncated_icv() {
        send_captured("truncated_icv", "tss_truncated", [&](bytes& f, std::uint32_t i) {
            const std::size_t n = i % (tss_size + icv);
            bytes cut(f.begin(),
                      f.begin() + static_cast<std::ptrdiff_t>(tss_at + std::min(n, tss_size)));
            if (n > tss_size) cut.insert(cut.end(), f.end() - icv, f.end() - icv + (n - tss_size));
            f = std::move(cut);
            return true;
        });
    }

    // A SYN WRITE of the victim's job with a random key, from our address, no UDP checksum: what
    // the keyed classes seal.
    bytes plain_request() {
        wire::pds_rud_rod_request h;
        h.syn = true;
        h.psn = static_cast<std::uint32_t>(rng_());
        h.spdcid = first_endpoint_pdc_id();
        wire::ses_standard_request r = request(wire::ses_opcode::write, 64);
        r.memory_key = rng_();
        wire::frame_spec s = own_spec();
        s.udp_checksum = false;
        return udp_frame(s, encoded(with_request(h, r, bytes(64, 0x6b))));
    }

    // What the victim's domain says of a frame of epoch e: it accepts its own epoch, the
    // lifetime - 1 before it and the next one (then the ICV decides); an epoch up to half the
    // 16-bit space ahead is the future, any other the past. The lifetime is domain_config's
    // default, which an endpoint keeps.
    std::string epoch_reason(std::uint16_t e) const {
        const auto age = static_cast<std::uint16_t>(o_.tss_epoch - e);
        const auto ahead = static_cast<std::uint16_t>(e - o_.tss_epoch);
        if (age < tss::domain_config{}.lifetime || ahead == 1) return "tss_bad_icv";
        return ahead < 0x8000 ? "tss_future_epoch" : "tss_stale_epoch";
    }

    // Frames of a peer outside the domain: SYN WRITEs of the victim's job, not sealed.
    void unsealed() {
        for (std::uint32_t i = 0; i < o_.count; ++i)
            link_.send(plain_request());
        expect_["tss_not_tss"] = o_.count;
        report("unsealed", o_.count);
    }

    void stale_epoch() {
        sealer key(o_.tss_key_file, o_.tss_sdi);
        const std::uint16_t lifetime = tss::domain_config{}.lifetime;
        for (std::uint32_t i = 0; i < o_.count; ++i) {
            const auto e = static_cast<std::uint16_t>(o_.tss_epoch - lifetime - i % 5);
            if (epoch_reason(e) != "tss_stale_epoch") usage("--tss-epoch: no stale epoch");
            link_.send(key.seal(plain_request(), e, (std::uint64_t{1} << 40) + i));
        }
        expect_["tss_stale_epoch"] = o_.count;
        report("stale_epoch", o_.count);
    }

    void bit_flips() {
        sealer key(o_.tss_key_file, o_.tss_sdi);
        // TSCs whose bits 31..16 read as an epoch 256 ahead of the victim's: with the SP bit
        // flipped the header grows an SSI, and the epoch is read from there.
        const auto ssi_epoch = static_cast<std::uint16_t>(o_.tss_epoch + 0x100);
        std::uint64_t tsc = (std::uint64_t{1} << 40) | (std::uint64_t{ssi_epoch} << 16);
        std::uint64_t sent = 0;
        // Flips bit `bit` (0: the lowest of the byte) of byte `at` of a fresh frame and sends it.
        const auto flip = [&](std::size_t at, int bit, bool fix_ip) {
            for (;;) {
                bytes f = key.seal(plain_request(), o_.tss_epoch, tsc++);
                f[at] ^= static_cast<std::uint8_t>(1u << bit);
                if (fix_ip) fix_ip_checksum(f);
                // A zero UDP checksum flipped into one that verifies (the datagram's own, one
                // frame in 65536) would leave a valid frame: that one is sealed again.
                wire::l2l4_view v;
                if (at >= udp_at + 6 && at < tss_at &&
                    wire::parse_l2l4(f, v) == wire::reject_reason::none)
                    continue;
                link_.send(f);
                ++sent;
                return;
            }
        };
        // Every bit of [at, at + n) bytes, each expected for `reason`.
        const auto field = [&](const char* name, std::size_t at, std::size_t n, const char* reason,
                               bool fix_ip = false) {
            for (std::size_t b = 0; b < 8 * n; ++b)
                flip(at + b / 8, 7 - static_cast<int>(b % 8), fix_ip);
            expect_[reason] += 8 * n;
            std::printf("KIND bit_flips %s %zu %s\n", name, 8 * n, reason);
        };
        // Not flipped: Ethernet (another destination MAC or ethertype is dropped by the host
        // stack before TSS, with strays; the source MAC is used by nothing), the IPv4 version,
        // IHL, fragment bits, protocol and destination and the UDP destination port (the host
        // stack's drops too, as the malformed class shows), and the IPv4 TOS, ID, DF and TTL:
        // covered by no ICV (as in IPsec; ECN is set by switches on the way) and read by
        // nothing in UET but ECN, a frame with one of them flipped is the same authentic frame.
        field("ipv4_total_length", ip_at + 2, 2, "tss_malformed", true);
        field("ipv4_checksum", ip_at + 10, 2, "tss_malformed");
        field("ipv4_source", ip_at + 12, 4, "tss_bad_icv", true);
        field("udp_source_port", udp_at, 2, "tss_bad_icv");
        field("udp_length", udp_at + 4, 2, "tss_malformed");
        field("udp_checksum", udp_at + 6, 2, "tss_malformed");
        // The TSS header bit by bit: type (5 bits), SP, reserved, AN, SDI, epoch, TSC.
        std::map<std::string, std::uint64_t> tss_reasons;
        const auto tss_bit = [&](std::size_t b, const std::string& reason) {
            flip(tss_at + b / 8, 7 - static_cast<int>(b % 8), false);
            ++expect_[reason];
            ++tss_reasons[reason];
        };
        for (std::size_t b = 0; b < 5; ++b)
            tss_bit(b, "tss_not_tss");
        tss_bit(5, epoch_reason(ssi_epoch));  // SP: an SSI, and the epoch read from the TSC
        tss_bit(6, "tss_bad_icv");  // reserved: ignored by the decoder, covered by the AAD
        tss_bit(7, "tss_no_key");   // AN 1: the victim holds only AN 0's key
        for (std::size_t b = 8; b < 32; ++b)
            tss_bit(b, "tss_unknown_sdi");
        for (std::size_t b = 32; b < 48; ++b)
            tss_bit(b, epoch_reason(static_cast<std::uint16_t>(o_.tss_epoch ^ (1u << (47 - b)))));
        for (std::size_t b = 48; b < 96; ++b)
            tss_bit(b, "tss_bad_icv");  // a TSC no frame of ours has been accepted with
        std::string kinds;
        for (const auto& [reason, n] : tss_reasons)
            kinds += " " + reason + " " + std::to_string(n);
        std::printf("KIND bit_flips tss_header 96%s\n", kinds.c_str());
        // The ciphertext (PDS and SES headers, payload) and the ICV: one bit of each byte.
        const std::size_t body =
            key.seal(plain_request(), o_.tss_epoch, tsc++).size() - tss_at - tss_size - icv;
        for (std::size_t i = 0; i < body + icv; ++i)
            flip(tss_at + tss_size + i, static_cast<int>(i % 8), false);
        expect_["tss_bad_icv"] += body + icv;
        std::printf("KIND bit_flips ciphertext %zu tss_bad_icv\n", body);
        std::printf("KIND bit_flips icv %zu tss_bad_icv\n", icv);
        report("bit_flips", sent);
    }

    const options& o_;
    raw_link link_;
    std::mt19937_64 rng_;
    std::uint32_t next_message_ = 1;
    std::map<std::string, std::uint64_t> expect_;
    std::map<std::uint16_t, wire::ses_return_code> answers_;
    struct {
        std::uint16_t victim_pdc = 0, spdcid = 0;
        std::uint32_t expected = 0;
        std::set<std::uint32_t> received;
    } answer_pdc_;
    std::uint64_t answer_bytes_ = 0;
    std::uint64_t malformed_sent_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
    const options o = parse(argc, argv);
    attacker a(o);
    a.run();
    return 0;
}
