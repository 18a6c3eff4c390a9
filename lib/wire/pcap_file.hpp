// A minimal classic-pcap writer (LINKTYPE_ETHERNET, microsecond timestamps), no libpcap needed.
#pragma once

#include <cstdint>
#include <cstdio>
#include <span>
#include <string>

namespace uet::wire {

class pcap_writer {
  public:
    static constexpr std::uint32_t snaplen = 262144;

    pcap_writer() = default;
    ~pcap_writer() { close(); }
    pcap_writer(const pcap_writer&) = delete;
    pcap_writer& operator=(const pcap_writer&) = delete;

    // Creates or truncates path and writes the file header. False on any I/O error.
    bool open(const std::string& path);
    // Appends one frame (cut to snaplen, original length kept). False if not open or on error.
    bool write(std::span<const std::uint8_t> frame, std::uint64_t timestamp_ns) {
        return write(frame, {}, timestamp_ns);
    }
    // Appends one frame held in pieces (headers, a payload kept elsewhere, a trailer).
    bool write(std::span<const std::uint8_t> head, std::span<const std::uint8_t> rest,
               std::uint64_t timestamp_ns, std::span<const std::uint8_t> trailer = {});
    // Hands what is buffered to the file (a capture cut short later keeps it).
    void flush() noexcept {
        if (file_) std::fflush(file_);
    }
    void close();
    bool is_open() const noexcept { return file_ != nullptr; }
    std::uint64_t frames() const noexcept { return frames_; }
    // A write failed (the disk is full...): the file stops there and the writer is closed.
    bool failed() const noexcept { return failed_; }

  private:
    std::FILE* file_ = nullptr;
    std::uint64_t frames_ = 0;
    bool failed_ = false;
};

}  // namespace uet::wire
