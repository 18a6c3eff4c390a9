// capture_handler: every frame it passes reaches the handler behind it unchanged and the pcap
// file as the wire carries it (a split received frame joined, a chained payload after its
// headers), stamped by the handler's clock plus the offset, and on disk once a transmit call
// finds nothing to send.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "host/capture_handler.hpp"

namespace uet::host {
namespace {

struct record {
    std::uint64_t sec = 0, usec = 0;
    std::uint32_t length = 0;
    std::vector<std::uint8_t> bytes;
};

std::uint32_t le32(const std::vector<std::uint8_t>& b, std::size_t at) {
    return b[at] | b[at + 1] << 8 | b[at + 2] << 16 | std::uint32_t{b[at + 3]} << 24;
}

std::vector<record> read_pcap(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    std::vector<std::uint8_t> b((std::istreambuf_iterator<char>(f)), {});
    std::vector<record> out;
    if (b.size() < 24 || le32(b, 0) != 0xa1b2c3d4) return out;
    for (std::size_t at = 24; at + 16 <= b.size();) {
        record r{le32(b, at), le32(b, at + 4), le32(b, at + 12), {}};
        const std::uint32_t caplen = le32(b, at + 8);
        at += 16;
        if (at + caplen > b.size()) break;
        r.bytes.assign(b.begin() + static_cast<std::ptrdiff_t>(at),
                       b.begin() + static_cast<std::ptrdiff_t>(at + caplen));
        at += caplen;
        out.push_back(std::move(r));
    }
    return out;
}

// Records what it was handed; sends `to_send` frames once (the second with a chained payload).
class recording_handler final : public frame_handler {
  public:
    void on_receive(std::span<const std::uint8_t> frame, std::uint64_t) override {
        received.emplace_back(frame.begin(), frame.end());
    }
    void on_receive_burst(std::span<const rx_frame> frames, const steering_config*,
                          std::uint64_t) override {
        for (const rx_frame& f : frames) {
            received.emplace_back(f.bytes.begin(), f.bytes.end());
            split.push_back(f.rest.at != nullptr);
        }
    }
    bool takes_split_frames() const noexcept override { return true; }
    std::size_t on_transmit(std::uint64_t, std::span<tx_frame> frames) override {
        std::size_t n = 0;
        for (; n < to_send && n < frames.size(); ++n) {
            for (std::size_t i = 0; i < 20; ++i)
                frames[n].buffer[i] = static_cast<std::uint8_t>(0x40 + n + i);
            frames[n].length = 20;
            if (n == 1) frames[n].ext = {payload.data(), payload.size(), 7};
        }
        to_send = 0;
        return n;
    }
    std::uint64_t next_deadline() const override { return 1234; }

    std::vector<std::vector<std::uint8_t>> received;
    std::vector<bool> split;
    std::size_t to_send = 0;
    std::vector<std::uint8_t> payload = std::vector<std::uint8_t>(100, 0xab);
};

class CaptureHandler : public ::testing::Test {
  protected:
    void SetUp() override {
        path = ::testing::TempDir() + "host_capture_test.pcap";
        ASSERT_TRUE(out.open(path));
    }
    void TearDown() override { std::remove(path.c_str()); }

    std::string path;
    wire::pcap_writer out;
    recording_handler inner;
    capture_handler capture{inner, out, 5'000'000'000};  // +5 s
};

TEST_F(CaptureHandler, records_received_frames_whole_and_passes_them_on) {
    std::vector<std::uint8_t> whole(60, 0x11), head(64, 0x22), tail(1000, 0x33);
    std::vector<std::uint8_t> split_frame(1064, 0);  // only the first 64 bytes are read here
    std::copy(head.begin(), head.end(), split_frame.begin());
    const rx_frame frames[] = {
        {whole, {}, {}},
        {split_frame, {}, {tail.data(), 64}},
    };
    EXPECT_TRUE(capture.takes_split_frames());
    EXPECT_EQ(capture.next_deadline(), 1234u);
    capture.on_receive_burst(frames, nullptr, 2'500'000);
    ASSERT_EQ(inner.received.size(), 2u);
    EXPECT_EQ(inner.split, (std::vector<bool>{false, true}));
    out.close();
    const auto r = read_pcap(path);
    ASSERT_EQ(r.size(), 2u);
    EXPECT_EQ(r[0].bytes, whole);
    EXPECT_EQ(r[0].sec, 5u);
    EXPECT_EQ(r[0].usec, 2500u);
    std::vector<std::uint8_t> joined = head;
    joined.insert(joined.end(), tail.begin(), tail.end());
    EXPECT_EQ(r[1].length, 1064u);
    EXPECT_EQ(r[1].bytes, joined);
}

TEST_F(CaptureHandler, records_sent_frames_with_their_chained_payload_and_flushes_when_idle) {
    std::vector<std::vector<std::uint8_t>> rooms(4, std::vector<std::uint8_t>(64));
    std::vector<tx_frame> slots(4);
    for (std::size_t i = 0; i < slots.size(); ++i)
        slots[i].reset(rooms[i], nullptr);
    inner.to_send = 2;
    ASSERT_EQ(capture.on_transmit(0, slots), 2u);
    EXPECT_EQ(out.frames(), 2u);
    EXPECT_TRUE(read_pcap(path).empty());  // still buffered
    ASSERT_EQ(capture.on_transmit(1, slots), 0u);
    const auto r = read_pcap(path);  // flushed, the writer still open
    ASSERT_EQ(r.size(), 2u);
    EXPECT_EQ(r[0].bytes.size(), 20u);
    EXPECT_EQ(r[0].bytes[0], 0x40);
    ASSERT_EQ(r[1].bytes.size(), 120u);
    EXPECT_EQ(r[1].bytes[0], 0x41);
    EXPECT_EQ(r[1].bytes[20], 0xab);
    EXPECT_EQ(r[1].bytes[119], 0xab);
}

TEST(PcapWriter, a_failed_write_ends_the_file_and_says_so) {
    wire::pcap_writer w;
    ASSERT_TRUE(w.open("/dev/full"));
    const std::vector<std::uint8_t> frame(9000, 1);
    bool ok = true;
    for (int i = 0; i < 64 && ok; ++i)  // the first writes may only fill stdio's buffer
        ok = w.write(frame, 0);
    EXPECT_FALSE(ok);
    EXPECT_TRUE(w.failed());
    EXPECT_FALSE(w.is_open());
    EXPECT_FALSE(w.write(frame, 0));
    EXPECT_FALSE(w.open("/nonexistent-dir/x.pcap"));
}

}  // namespace
}  // namespace uet::host
