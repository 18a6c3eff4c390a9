// Writes the golden packets as a libFuzzer seed corpus: fuzz_seeds
// {uet|roce|frame|roce_engine|tss} DIR. The roce_engine corpus also holds the traffic of an engine
// pair, recorded as its input.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "golden.hpp"
#include "roce_fuzz.hpp"
#include "tss_fuzz.hpp"
#include "wire/frame.hpp"

namespace {

void write_file(const std::string& dir, const std::string& name,
                std::span<const std::uint8_t> bytes) {
    std::ofstream out(dir + "/" + name, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
}

// The roce harness takes the bytes after the UDP header, as decode_roce does.
std::span<const std::uint8_t> udp_payload_of(const std::vector<std::uint8_t>& frame) {
    uet::wire::l2l4_view view;
    if (uet::wire::parse_l2l4(frame, view) != uet::wire::reject_reason::none) return {};
    return view.l4_payload;
}

// The first rounds of the fuzzer's own engine pair, in its input format: each round's frames to
// B, then those to A, replayed without mending (the ICRC and addresses are the engines' own).
std::vector<std::uint8_t> engine_capture(std::uint8_t mode, int rounds) {
    using namespace uet::roce::fuzz;
    fuzz_pair fp(mode);
    std::vector<std::vector<std::uint8_t>> to_b, to_a;
    fp.p.ab.capture = &to_b;
    fp.p.ba.capture = &to_a;
    fp.p.step();  // the harness carries this round itself
    std::vector<std::uint8_t> input{mode};
    for (int r = 0; r < rounds; ++r) {
        to_b.clear();
        to_a.clear();
        fp.p.step(50'000);
        for (const auto& f : to_b)
            append_record(input, 0, f);
        for (const auto& f : to_a)
            append_record(input, record_to_a, f);
    }
    return input;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: %s {uet|roce|frame|roce_engine|tss} DIR\n", argv[0]);
        return 2;
    }
    const std::string kind = argv[1], dir = argv[2];
    if (kind == "uet") {
        for (const auto& s : uet::golden::uet_udp_payloads())
            write_file(dir, s.name, s.bytes);
    } else if (kind == "roce") {
        for (const auto& s : uet::golden::roce_frames())
            write_file(dir, s.name, udp_payload_of(s.bytes));
    } else if (kind == "frame") {
        for (const auto& s : uet::golden::uet_frames())
            write_file(dir, s.name, s.bytes);
        for (const auto& s : uet::golden::roce_frames())
            write_file(dir, s.name, s.bytes);
    } else if (kind == "tss") {
        // Each UET frame to seal under either domain, and sealed, to open (tss_fuzz.hpp).
        uet::tss::sublayer tx;
        uet::tss::fuzz::add_domains(tx);
        for (const auto& s : uet::golden::uet_frames()) {
            for (const std::uint8_t mode : {1, 2}) {
                std::vector<std::uint8_t> input{mode};
                input.insert(input.end(), s.bytes.begin(), s.bytes.end());
                write_file(dir, s.name + "_seal" + std::to_string(mode), input);
                // Sealed twice (two TSCs): to open whole, and in two pieces.
                for (const std::uint8_t how :
                     {uet::tss::fuzz::open_as_received, uet::tss::fuzz::in_two_pieces}) {
                    std::vector<std::uint8_t> sealed(1 + s.bytes.size() + 64);
                    const std::size_t n = tx.seal_frame(*tx.find_domain(mode == 1 ? 7 : 9), s.bytes,
                                                        std::span(sealed).subspan(1));
                    sealed[0] = how;
                    if (n)
                        write_file(dir,
                                   s.name + (how ? "_open_pieces" : "_open") + std::to_string(mode),
                                   std::span(sealed).first(1 + n));
                }
            }
        }
    } else if (kind == "roce_engine") {
        using namespace uet::roce::fuzz;
        for (const std::uint8_t mode : {mode_mend, std::uint8_t(mode_mend | mode_out_of_order)})
            for (const auto& s : uet::golden::roce_frames()) {
                std::vector<std::uint8_t> input{mode};
                append_record(input, record_carry, s.bytes);
                write_file(dir, s.name + (mode & mode_out_of_order ? "_ooo" : "_gbn"), input);
            }
        write_file(dir, "engine_gbn", engine_capture(0, 3));
        write_file(dir, "engine_ooo", engine_capture(mode_out_of_order, 3));
    } else {
        std::fprintf(stderr, "unknown corpus %s\n", kind.c_str());
        return 2;
    }
    return 0;
}
