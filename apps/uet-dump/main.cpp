// uet-dump: print UET and RoCEv2 packets from a pcap file or a live interface, tcpdump-style.
#include <pcap/pcap.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

#include "decrypt.hpp"
#include "printer.hpp"
#include "tss/key_file.hpp"

namespace {

const char usage_text[] =
    "usage: uet-dump [options] FILE.pcap\n"
    "       uet-dump [options] -i IFACE\n"
    "Prints one line per packet: addresses, entropy (UDP source port), PDS type, PSN, PDCIDs,\n"
    "SES opcode, message id, lengths, NACK codes; RoCEv2 BTH opcode, QP, PSN and extension "
    "headers.\n"
    "Malformed packets are printed with the reason they were rejected.\n"
    "\n"
    "  -v              print every field of every header, one header per line\n"
    "  --json          one JSON object per packet (fields, reject reason, summary)\n"
    "  -i IFACE        capture live on IFACE (needs root or CAP_NET_RAW)\n"
    "  -w FILE         also write every packet read to FILE (pcap), e.g. a live capture to\n"
    "                  attach to a bug report; packets are written as read, malformed or not\n"
    "  -c COUNT        stop after COUNT packets\n"
    "  --uet-port N    UDP destination port of UET (default 4793)\n"
    "  --roce-port N   UDP destination port of RoCEv2 (default 4791)\n"
    "  --key FILE      secure domain key (64 hex digits or 32 raw bytes): TSS frames are\n"
    "                  authenticated, decrypted and printed in full; without it their TSS header\n"
    "                  and ciphertext length are printed\n"
    "  --tss-mode M    cluster (default) or client-server: the KDF label the sender used\n"
    "  --tss-rekey-shift N\n"
    "                  the sender's keys roll every 2^N packets (1..47; default: never)\n"
    "  -h, --help      this text\n"
    "Exit status: 0 when every packet decoded, 1 when some were malformed or failed\n"
    "authentication, 2 on a usage or I/O error.\n";

struct options {
    uet::dump::output_format format = uet::dump::output_format::summary;
    std::string file;
    std::string iface;
    std::string write_file;   // -w: pcap to write what was read
    std::uint64_t count = 0;  // 0 = unlimited
    uet::wire::dissect_options dissect;
    std::string key_file;  // --key
    uet::dump::decrypt_options decrypt;
    bool tss_option = false;  // --tss-mode or --tss-rekey-shift given
};

pcap_t* active_capture = nullptr;

void stop_capture(int) {
    if (active_capture) pcap_breakloop(active_capture);
}

std::optional<std::uint64_t> parse_number(const char* s, std::uint64_t max) {
    char* end = nullptr;
    errno = 0;
    unsigned long long v = std::strtoull(s, &end, 10);
    if (errno || end == s || *end || v > max || s[0] == '-') return std::nullopt;
    return v;
}

// Returns an error message, or empty on success.
std::string parse_args(int argc, char** argv, options& o) {
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto value = [&](const char* what) -> const char* {
            if (i + 1 >= argc) return nullptr;
            (void)what;
            return argv[++i];
        };
        if (a == "-h" || a == "--help") {
            std::fputs(usage_text, stdout);
            std::exit(0);
        } else if (a == "-v") {
            o.format = uet::dump::output_format::verbose;
        } else if (a == "--json") {
            o.format = uet::dump::output_format::json;
        } else if (a == "-i") {
            const char* v = value("-i");
            if (!v) return "-i needs an interface name";
            o.iface = v;
        } else if (a == "-w") {
            const char* v = value("-w");
            if (!v) return "-w needs a file name";
            o.write_file = v;
        } else if (a == "-c") {
            const char* v = value("-c");
            auto n = v ? parse_number(v, UINT64_MAX) : std::nullopt;
            if (!n || *n == 0) return "-c needs a positive count";
            o.count = *n;
        } else if (a == "--uet-port" || a == "--roce-port") {
            const char* v = value(a.c_str());
            auto n = v ? parse_number(v, 65535) : std::nullopt;
            if (!n || *n == 0) return a + " needs a port number 1..65535";
            (a == "--uet-port" ? o.dissect.uet_port : o.dissect.roce_port) =
                static_cast<std::uint16_t>(*n);
        } else if (a == "--key") {
            const char* v = value("--key");
            if (!v) return "--key needs a key file";
            o.key_file = v;
        } else if (a == "--tss-mode") {
            const char* v = value("--tss-mode");
            std::string m = v ? v : "";
            if (m == "cluster")
                o.decrypt.mode = uet::tss::domain_mode::cluster;
            else if (m == "client-server")
                o.decrypt.mode = uet::tss::domain_mode::client_server;
            else
                return "--tss-mode needs cluster or client-server";
            o.tss_option = true;
        } else if (a == "--tss-rekey-shift") {
            const char* v = value("--tss-rekey-shift");
            auto n = v ? parse_number(v, 47) : std::nullopt;
            if (!n || *n == 0) return "--tss-rekey-shift needs a number 1..47";
            o.decrypt.rekey_shift = static_cast<std::uint8_t>(*n);
            o.tss_option = true;
        } else if (!a.empty() && a[0] == '-') {
            return "unknown option " + a;
        } else if (o.file.empty()) {
            o.file = a;
        } else {
            return "more than one file given";
        }
    }
    if (o.file.empty() == o.iface.empty()) return "give exactly one of FILE.pcap or -i IFACE";
    if (o.tss_option && o.key_file.empty()) return "--tss-mode and --tss-rekey-shift need --key";
    return {};
}

struct loop_state {
    uet::dump::printer* printer;
    pcap_dumper_t* dumper = nullptr;  // -w
    std::uint64_t seen = 0;
    std::uint64_t malformed = 0;
};

void on_packet(u_char* user, const pcap_pkthdr* h, const u_char* bytes) {
    auto* st = reinterpret_cast<loop_state*>(user);
    if (st->dumper) {
        pcap_dump(reinterpret_cast<u_char*>(st->dumper), h, bytes);
        pcap_dump_flush(st->dumper);  // a capture cut short by a signal keeps what it read
    }
    uet::dump::packet_record rec{
        .number = ++st->seen,
        .timestamp_us = static_cast<std::uint64_t>(h->ts.tv_sec) * 1000000u +
                        static_cast<std::uint64_t>(h->ts.tv_usec),
        .wire_length = h->len,
        .bytes = {bytes, h->caplen},
    };
    if (!st->printer->print(rec)) ++st->malformed;
    std::fflush(stdout);
}

pcap_t* open_capture(const options& o, char* err) {
    if (!o.file.empty()) return pcap_open_offline(o.file.c_str(), err);
    pcap_t* p = pcap_create(o.iface.c_str(), err);
    if (!p) return nullptr;
    pcap_set_snaplen(p, 65535);
    pcap_set_promisc(p, 1);
    pcap_set_immediate_mode(p, 1);
    int rc = pcap_activate(p);
    if (rc < 0) {
        std::snprintf(err, PCAP_ERRBUF_SIZE, "%s: %s", o.iface.c_str(), pcap_geterr(p));
        pcap_close(p);
        return nullptr;
    }
    return p;
}

}  // namespace

int main(int argc, char** argv) {
    options o;
    if (auto err = parse_args(argc, argv, o); !err.empty()) {
        std::fprintf(stderr, "uet-dump: %s\n%s", err.c_str(), usage_text);
        return 2;
    }
    std::optional<uet::dump::decryptor> decryptor;
    if (!o.key_file.empty()) {
        std::string key_error;
        auto key = uet::tss::read_key_file(o.key_file, key_error);
        if (!key) {
            std::fprintf(stderr, "uet-dump: key file %s: %s\n", o.key_file.c_str(),
                         key_error.c_str());
            return 2;
        }
        decryptor.emplace(*key, o.decrypt);
    }
    char err[PCAP_ERRBUF_SIZE] = {};
    pcap_t* cap = open_capture(o, err);
    if (!cap) {
        std::fprintf(stderr, "uet-dump: %s\n", err);
        return 2;
    }
    if (pcap_datalink(cap) != DLT_EN10MB) {
        std::fprintf(stderr, "uet-dump: link type %s is not Ethernet\n",
                     pcap_datalink_val_to_name(pcap_datalink(cap)));
        pcap_close(cap);
        return 2;
    }
    pcap_dumper_t* dumper = nullptr;
    if (!o.write_file.empty()) {
        dumper = pcap_dump_open(cap, o.write_file.c_str());
        if (!dumper) {
            std::fprintf(stderr, "uet-dump: %s\n", pcap_geterr(cap));
            pcap_close(cap);
            return 2;
        }
    }
    uet::dump::printer printer(o.format, o.dissect, stdout);
    if (decryptor) printer.set_decryptor(&*decryptor);
    loop_state st{&printer, dumper};
    active_capture = cap;
    std::signal(SIGINT, stop_capture);
    std::signal(SIGTERM, stop_capture);
    int rc =
        pcap_loop(cap, o.count ? static_cast<int>(std::min<std::uint64_t>(o.count, INT32_MAX)) : -1,
                  on_packet, reinterpret_cast<u_char*>(&st));
    active_capture = nullptr;
    if (dumper) pcap_dump_close(dumper);
    if (rc == PCAP_ERROR) {
        std::fprintf(stderr, "uet-dump: %s\n", pcap_geterr(cap));
        pcap_close(cap);
        return 2;
    }
    pcap_close(cap);
    if (o.format != uet::dump::output_format::json) {
        std::fprintf(stderr, "%" PRIu64 " packets, %" PRIu64 " malformed", st.seen,
                     st.malformed - printer.failed_authentication());
        if (decryptor)
            std::fprintf(stderr, ", %" PRIu64 " TSS authenticated, %" PRIu64 " not",
                         printer.authenticated(), printer.failed_authentication());
        std::fputc('\n', stderr);
    }
    return st.malformed ? 1 : 0;
}
