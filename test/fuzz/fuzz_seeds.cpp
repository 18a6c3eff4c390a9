// Writes the golden packets as a libFuzzer seed corpus: fuzz_seeds {uet|roce|frame} DIR
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "golden.hpp"
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

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: %s {uet|roce|frame} DIR\n", argv[0]);
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
    } else {
        std::fprintf(stderr, "unknown corpus %s\n", kind.c_str());
        return 2;
    }
    return 0;
}
