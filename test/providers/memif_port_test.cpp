// uet's own memif port (providers/memif): both ends of a link in this process, driven burst
// by burst so that every step is deterministic. Frames carry a sequence number and a pattern
// derived from it, so order, loss and content are all checked.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "memif/memif_port.hpp"
#include "uet/shared_buffer.hpp"

namespace uet::memif {
namespace {

std::size_t frame_length(std::uint32_t seq) {
    return 60 + (seq * 37) % 1400;
}

std::uint8_t pattern(std::uint32_t seq, std::size_t i) {
    return static_cast<std::uint8_t>(seq * 7 + i);
}

// Sends `to_send` numbered frames when asked; checks what it receives against the numbering.
class sequence_handler final : public host::frame_handler {
  public:
    std::uint32_t to_send = 0, sent = 0, received = 0, bad = 0;
    // Build each frame in a slot from the back and swap it to the front (a handler may reorder
    // whole slots), and fill nothing on every idle_every-th call (the port may offer the same
    // slots again).
    bool reorder = false;
    unsigned idle_every = 0, calls = 0;
    // At most this many frames per call (0: as many as fit), as a receiver sends one ACK in a
    // call offered a whole burst: the slots left over are offered again.
    std::size_t max_per_call = 0;
    // Every bad_every-th slot filled is a bad frame (length 0) among the good ones: the port
    // counts and drops it, and must neither lose its buffer nor send it.
    unsigned bad_every = 0, slots_filled = 0, made_bad = 0;
    // Swap the last two slots of every 4th offer (from the 2nd) when neither was filled (whole
    // slots, as allowed): with 3 frames a call, a swapped pair reaches the offer's front as the
    // port moves the offer to the front of its arrays.
    bool swap_unused = false;
    unsigned transmit_calls = 0;
    // Zero-copy transmit: every other frame longer than its 64-byte head takes the rest from
    // `shared` (registered as shared_region), which holds byte x at offset x mod 256 (so a
    // frame's pattern continues there at an offset of its own).
    const std::uint8_t* shared = nullptr;
    std::uint32_t shared_region = 0;
    unsigned by_reference = 0;
    // With tails: a frame sent by reference leaves its last 0..8 bytes (by its number) to
    // ext.tail, a trailer the port sends after the payload (RoCEv2's ICRC).
    bool with_tails = false;
    unsigned with_a_tail = 0;
    // Takes frames in pieces as the port hands them (joined here to be checked); counts them.
    bool split = false;
    unsigned in_two = 0, in_three = 0;

    bool takes_split_frames() const noexcept override { return split; }
    void on_receive_burst(std::span<const host::rx_frame> frames, const host::steering_config*,
                          std::uint64_t now) override {
        std::vector<std::uint8_t> room(9216);
        for (const host::rx_frame& f : frames) {
            in_two += f.rest.at != nullptr && f.rest.tail_at == nullptr;
            in_three += f.rest.tail_at != nullptr;
            on_receive(f.rest.join(f.bytes, room), now);
        }
    }

    void on_receive(std::span<const std::uint8_t> f, std::uint64_t) override {
        std::uint32_t seq = 0;
        if (f.size() < 4) {
            ++bad;
            return;
        }
        std::memcpy(&seq, f.data(), 4);
        bool ok = seq == received && f.size() == frame_length(seq);
        for (std::size_t i = 4; ok && i < f.size(); ++i)
            ok = f[i] == pattern(seq, i);
        bad += !ok;
        ++received;
    }
    std::size_t on_transmit(std::uint64_t now, std::span<host::tx_frame> frames) override {
        const std::size_t n = fill_some(now, frames);
        if (swap_unused && ++transmit_calls % 4 == 2 && frames.size() >= n + 2)
            std::swap(frames[frames.size() - 1], frames[frames.size() - 2]);
        return n;
    }
    std::size_t fill_some(std::uint64_t, std::span<host::tx_frame> frames) {
        if (idle_every != 0 && ++calls % idle_every == 0) return 0;
        if (max_per_call != 0) frames = frames.first(std::min(frames.size(), max_per_call * 2));
        if (reorder) return fill_reordered(frames);
        if (max_per_call != 0) frames = frames.first(std::min(frames.size(), max_per_call));
        std::size_t n = 0;
        while (n < frames.size() && sent < to_send) {
            if (bad_every != 0 && ++slots_filled % bad_every == 0) {
                frames[n].ext = {};
                frames[n++].length = 0;
                ++made_bad;
                continue;
            }
            if (!fill(frames[n])) break;
            by_reference += frames[n].ext.length != 0;
            with_a_tail += frames[n].ext.tail_length != 0;
            ++n;
            ++sent;
        }
        return n;
    }
    std::uint64_t next_deadline() const override { return host::no_deadline; }

  private:
    // Frame number `sent` into f; false when it does not fit.
    bool fill(host::tx_frame& f) const {
        const std::size_t len = frame_length(sent);
        if (f.buffer.size() < len) return false;
        std::memcpy(f.buffer.data(), &sent, 4);
        const bool by_ref = shared != nullptr && sent % 2 == 0 && len > head_bytes;
        const std::size_t in_buffer = by_ref ? head_bytes : len;
        for (std::size_t i = 4; i < in_buffer; ++i)
            f.buffer[i] = pattern(sent, i);
        f.length = in_buffer;
        f.ext = {};
        if (!by_ref) return true;
        const std::size_t tail =
            with_tails ? std::min<std::size_t>(sent % 9, len - head_bytes - 1) : 0;
        f.ext = {shared + pattern(sent, head_bytes), len - head_bytes - tail, shared_region};
        f.ext.tail_length = static_cast<std::uint8_t>(tail);
        for (std::size_t i = 0; i < tail; ++i)
            f.ext.tail[i] = pattern(sent, len - tail + i);
        return true;
    }
    static constexpr std::size_t head_bytes = 64;
    std::size_t fill_reordered(std::span<host::tx_frame> frames) {
        const std::size_t last = frames.size() - 1;
        std::size_t n = 0;
        for (; n < frames.size() / 2 && sent < to_send && fill(frames[last - n]); ++n, ++sent) {
            by_reference += frames[last - n].ext.length != 0;
            with_a_tail += frames[last - n].ext.tail_length != 0;
            std::swap(frames[n], frames[last - n]);
        }
        return n;
    }
};

class uet_memif : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ = std::filesystem::temp_directory_path() / ("uet-memif-" + std::to_string(getpid()));
        std::filesystem::create_directories(dir_);
        sock_ = (dir_ / "s.sock").string();
        server_ = open("uet_memif0,role=server,socket=" + sock_);
        client_ = open("uet_memif1,role=client,rsize=6,socket=" + sock_);
    }
    void TearDown() override {
        client_.reset();
        server_.reset();
        std::filesystem::remove_all(dir_);
    }
    static std::unique_ptr<port> open(const std::string& device) {
        std::string why;
        auto cfg = parse_device(device, why);
        EXPECT_TRUE(cfg) << why;
        cfg->quiet = true;
        return port::open(*cfg);
    }
    // Both ports served until both see the link up (the client connects, the server accepts).
    void connect() {
        for (int i = 0; i < 5000 && !(server_->connected() && client_->connected()); ++i) {
            server_->queue().receive_burst(sh_, 0);
            client_->queue().receive_burst(ch_, 0);
            usleep(1000);
        }
        ASSERT_TRUE(server_->connected() && client_->connected());
    }
    // Bursts on both sides until each has received what the other sent (bounded).
    void exchange() {
        for (int i = 0; i < 100000 && (sh_.received < ch_.to_send || ch_.received < sh_.to_send);
             ++i) {
            client_->queue().transmit_burst(ch_, 0);
            server_->queue().transmit_burst(sh_, 0);
            server_->queue().receive_burst(sh_, 0);
            client_->queue().receive_burst(ch_, 0);
        }
    }

    // The client sends `from_client` frames and the server `from_server`: all arrive intact, no
    // descriptor or frame refused on either side.
    void exchange_intact(std::uint32_t from_client, std::uint32_t from_server) {
        ch_.to_send = from_client;
        sh_.to_send = from_server;
        exchange();
        EXPECT_EQ(sh_.received, from_client);
        EXPECT_EQ(ch_.received, from_server);
        EXPECT_EQ(sh_.bad + ch_.bad, 0u);
        const auto s = server_->counters(), c = client_->counters();
        EXPECT_EQ(s.rx_bad_descriptor + c.rx_bad_descriptor, 0u);
        EXPECT_EQ(s.tx_bad_frame + c.tx_bad_frame, 0u);
    }

    std::uint32_t share(const std::uint8_t* base);
    std::uint32_t send_by_reference_variants();
    host::port_counters expect_all_by_reference(std::uint32_t handle);

    std::filesystem::path dir_;
    std::string sock_;
    std::unique_ptr<port> server_, client_;
    sequence_handler sh_, ch_;
};

TEST_F(uet_memif, frames_cross_both_ways_in_order_and_intact_across_ring_wraps) {
    connect();
    ch_.to_send = 5000;  // the client's ring has 64 slots: ~80 wraps
    sh_.to_send = 4000;
    exchange();
    EXPECT_EQ(sh_.received, 5000u);
    EXPECT_EQ(ch_.received, 4000u);
    EXPECT_EQ(sh_.bad + ch_.bad, 0u);
    const auto s = server_->counters(), c = client_->counters();
    EXPECT_EQ(s.rx_frames, 5000u);
    EXPECT_EQ(c.tx_frames, 5000u);
    EXPECT_EQ(s.tx_frames, 4000u);
    EXPECT_EQ(c.rx_frames, 4000u);
    EXPECT_EQ(s.rx_bad_descriptor + c.rx_bad_descriptor, 0u);
}

TEST_F(uet_memif, slots_reordered_or_offered_again_keep_every_buffer_once) {
    connect();
    for (sequence_handler* h : {&sh_, &ch_}) {
        h->reorder = true;
        h->idle_every = 3;
    }
    exchange_intact(3000, 2000);  // ~50 wraps of the client's 64 slots
}

TEST_F(uet_memif, slots_left_over_by_short_bursts_are_offered_again_whole) {
    connect();
    sh_.max_per_call = 1;  // from the back of two slots, swapped to the front
    sh_.reorder = true;
    ch_.max_per_call = 3;
    ch_.idle_every = 4;
    exchange_intact(3000, 3000);
}

TEST_F(uet_memif, unused_slots_swapped_by_the_handler_keep_their_buffers) {
    connect();
    for (sequence_handler* h : {&sh_, &ch_}) {
        h->max_per_call = 3;
        h->swap_unused = true;
    }
    exchange_intact(3000, 3000);
}

TEST_F(uet_memif, bad_frames_among_good_ones_are_dropped_and_their_slots_offered_again) {
    connect();
    ch_.max_per_call = 3;
    ch_.bad_every = 5;
    ch_.to_send = 3000;
    sh_.bad_every = 7;  // whole bursts
    sh_.to_send = 3000;
    exchange();
    EXPECT_EQ(sh_.received, 3000u);
    EXPECT_EQ(ch_.received, 3000u);
    EXPECT_EQ(sh_.bad + ch_.bad, 0u);
    EXPECT_GT(ch_.made_bad, 500u);
    EXPECT_EQ(client_->counters().tx_bad_frame, ch_.made_bad);
    EXPECT_EQ(server_->counters().tx_bad_frame, sh_.made_bad);
    EXPECT_EQ(server_->counters().rx_bad_descriptor + client_->counters().rx_bad_descriptor, 0u);
}

TEST_F(uet_memif, a_full_ring_holds_frames_back_and_loses_none) {
    connect();
    ch_.to_send = 1000;
    for (int i = 0; i < 100; ++i)
        client_->queue().transmit_burst(ch_, 0);
    EXPECT_EQ(ch_.sent, 64u) << "the client's ring has 64 slots and the server read none";
    exchange();
    EXPECT_EQ(sh_.received, 1000u);
    EXPECT_EQ(sh_.bad, 0u);
}

// The sender keeps the reader's counter as last read while it shows room for a burst, and reads
// it again once it does not: each slot the server gives back is used again at once, however few.
TEST_F(uet_memif, slots_given_back_are_used_again_however_few) {
    connect();
    ch_.to_send = 1000;
    for (int i = 0; i < 4; ++i)
        client_->queue().transmit_burst(ch_, 0);
    ASSERT_EQ(ch_.sent, 64u);  // full
    for (std::uint32_t expect = 64; sh_.received < 400;) {
        // One burst read by the server (at most 32 frames, the rest left in the ring), then
        // every slot it gave back is filled again.
        const std::uint32_t before = sh_.received;
        server_->queue().receive_burst(sh_, 0);
        ASSERT_GT(sh_.received, before);
        expect += sh_.received - before;
        client_->queue().transmit_burst(ch_, 0);
        ASSERT_EQ(ch_.sent, expect) << "after the server had read " << sh_.received;
    }
    exchange();
    EXPECT_EQ(sh_.received, 1000u);
    EXPECT_EQ(sh_.bad, 0u);
}

TEST_F(uet_memif, nothing_leaves_before_the_link_is_up) {
    ch_.to_send = 10;
    EXPECT_EQ(client_->queue().transmit_burst(ch_, 0), 0u);
    EXPECT_EQ(ch_.sent, 0u);
    connect();
    exchange();
    EXPECT_EQ(sh_.received, 10u);
}

TEST_F(uet_memif, a_client_that_leaves_takes_the_link_down_and_a_new_one_connects) {
    connect();
    ch_.to_send = 100;
    exchange();
    client_.reset();  // says DISCONNECT and unmaps its memory
    for (int i = 0; i < 5000 && server_->connected(); ++i)
        server_->queue().receive_burst(sh_, 0);
    EXPECT_FALSE(server_->connected());
    EXPECT_EQ(server_->counters().peer_left, 1u);
    sh_ = {};
    ch_ = {};
    client_ = open("uet_memif1,role=client,socket=" + sock_);
    connect();
    ch_.to_send = 300;
    sh_.to_send = 300;
    exchange();
    EXPECT_EQ(sh_.received, 300u);
    EXPECT_EQ(ch_.received, 300u);
    EXPECT_EQ(sh_.bad + ch_.bad, 0u);
}

TEST_F(uet_memif, a_client_with_another_interface_id_is_refused) {
    client_ = open("uet_memif1,role=client,id=7,socket=" + sock_);
    for (int i = 0; i < 50; ++i) {
        server_->queue().receive_burst(sh_, 0);
        client_->queue().receive_burst(ch_, 0);
        usleep(1000);
    }
    EXPECT_FALSE(server_->connected());
    EXPECT_FALSE(client_->connected());
}

// Shared memory holding byte x at offset x mod 256 (sequence_handler::shared).
uet::shared_buffer counting_buffer() {
    auto b = uet::shared_buffer::allocate(4096);
    EXPECT_TRUE(b);
    for (std::size_t i = 0; i < b->size(); ++i)
        b->data()[i] = static_cast<std::byte>(i);
    return std::move(*b);
}

// Zero-copy transmit: the client hands its shared memory to the server once connected (ADD_REGION
// after CONNECTED, acknowledged); half the frames then take their payload from it in a slot of
// their own, which the server gathers whole. Frames arrive intact and in order, through ring
// wraps, with the handler reordering slots and making bad frames among them; every chained
// payload slot comes back (in_flight 0) and the memory can then be unregistered.
// The client registers memory and waits until the server shares it; its handle.
std::uint32_t uet_memif::share(const std::uint8_t* base) {
    const std::uint32_t handle = client_->register_memory(base + 100, 2000);
    EXPECT_NE(handle, 0u);
    connect();
    for (int i = 0; i < 20000 && !client_->shares(handle); ++i) {
        server_->queue().receive_burst(sh_, 0);
        client_->queue().receive_burst(ch_, 0);
    }
    EXPECT_TRUE(client_->shares(handle));
    ch_.shared = base;
    ch_.shared_region = handle;
    return handle;
}

// Every payload the client offered by reference left so and arrived in a frame of its own
// slots, nothing refused, nothing still in flight; the client's counters.
host::port_counters uet_memif::expect_all_by_reference(std::uint32_t handle) {
    const auto c = client_->counters(), s = server_->counters();
    EXPECT_EQ(c.tx_zero_copy, ch_.by_reference);
    EXPECT_EQ(c.tx_copied, 0u);
    EXPECT_EQ(s.rx_multiseg, ch_.by_reference);
    EXPECT_EQ(s.rx_bad_descriptor + c.rx_bad_descriptor + s.rx_oversize, 0u);
    EXPECT_EQ(client_->in_flight(handle), 0u);
    return c;
}

// 300 frames each with slots reordered, bad frames among them, short calls with unused slots
// swapped: every frame arrives intact, its payload sent by reference every other frame.
std::uint32_t uet_memif::send_by_reference_variants() {
    std::uint32_t total = sh_.received;
    for (int variant = 0; variant < 4; ++variant) {
        ch_.reorder = variant == 1;
        ch_.bad_every = variant == 2 ? 5 : 0;
        ch_.max_per_call = variant == 3 ? 3 : 0;
        ch_.swap_unused = variant == 3;
        ch_.to_send += 300;
        exchange();
        total += 300;
        EXPECT_EQ(sh_.received, total) << "variant " << variant;
        EXPECT_EQ(client_->counters().tx_bad_frame, ch_.made_bad) << "variant " << variant;
    }
    EXPECT_EQ(sh_.bad, 0u);
    return total;
}

TEST_F(uet_memif, payloads_with_a_trailer_take_a_third_slot_and_arrive_whole) {
    const uet::shared_buffer mem = counting_buffer();
    EXPECT_TRUE(client_->caps().zero_copy_tail);
    const std::uint32_t handle = share(reinterpret_cast<const std::uint8_t*>(mem.data()));
    ch_.with_tails = true;
    // Two rounds: the slots that held payloads and trailers are offered again with spare
    // buffers, and every buffer stays in the ring once. The server takes the frames gathered
    // whole, then in their pieces.
    send_by_reference_variants();
    EXPECT_EQ(sh_.in_two + sh_.in_three, 0u);
    sh_.split = true;
    const unsigned tails_before = ch_.with_a_tail;
    send_by_reference_variants();
    EXPECT_EQ(sh_.in_three, ch_.with_a_tail - tails_before);
    EXPECT_GT(sh_.in_three, 400u);
    EXPECT_GT(sh_.in_two, 0u);  // frames by reference without a trailer (number divisible by 9)
    EXPECT_GT(ch_.with_a_tail, 800u);
    const auto c = expect_all_by_reference(handle);
    // A payload the port cannot chain (a handle it never gave) is copied, its trailer after it.
    ch_.shared_region = handle + 100;
    ch_.to_send += 300;
    exchange();
    EXPECT_EQ(sh_.received, ch_.to_send);
    EXPECT_EQ(sh_.bad, 0u);
    EXPECT_EQ(client_->counters().tx_copied, ch_.by_reference - c.tx_zero_copy);
}

TEST_F(uet_memif, a_client_sends_payloads_of_shared_memory_in_slots_of_their_own) {
    const uet::shared_buffer mem = counting_buffer();
    EXPECT_TRUE(client_->caps().zero_copy);
    EXPECT_FALSE(server_->caps().zero_copy);
    const std::uint32_t handle = share(reinterpret_cast<const std::uint8_t*>(mem.data()));
    const std::uint32_t total = send_by_reference_variants();
    EXPECT_GT(ch_.by_reference, 500u);
    expect_all_by_reference(handle);
    // Frames the server has not read yet still name the memory: it cannot be unregistered.
    ch_.to_send += 6;
    ch_.reorder = false;
    ch_.bad_every = 0;
    ch_.max_per_call = 0;
    ch_.swap_unused = false;
    client_->queue().transmit_burst(ch_, 0);
    EXPECT_GT(client_->in_flight(handle), 0u);
    EXPECT_FALSE(client_->unregister_memory(handle));
    EXPECT_TRUE(client_->shares(handle));
    server_->queue().receive_burst(sh_, 0);
    EXPECT_EQ(sh_.received, total + 6);
    EXPECT_EQ(client_->in_flight(handle), 0u);
    EXPECT_TRUE(client_->unregister_memory(handle));
    EXPECT_FALSE(client_->shares(handle));
}

// Until the server has mapped the memory (and for memory that is not a shared_buffer), a payload
// is copied behind the headers: nothing is lost while zero-copy transmit is not ready.
TEST_F(uet_memif, payloads_are_copied_until_the_server_maps_the_memory) {
    const uet::shared_buffer mem = counting_buffer();
    const auto* base = reinterpret_cast<const std::uint8_t*>(mem.data());
    std::vector<std::uint8_t> heap(4096);
    for (std::size_t i = 0; i < heap.size(); ++i)
        heap[i] = static_cast<std::uint8_t>(i);
    EXPECT_EQ(client_->register_memory(heap.data(), heap.size()), 0u);  // not shared memory
    EXPECT_EQ(server_->register_memory(base, 4096), 0u);                // a server never chains
    connect();
    ch_.shared = heap.data();
    ch_.shared_region = 0;
    exchange_intact(100, 0);
    EXPECT_EQ(client_->counters().tx_copied, ch_.by_reference);
    EXPECT_EQ(client_->counters().tx_zero_copy, 0u);
    // Registered now, used at once: copied until the server's ACK comes back.
    const std::uint32_t handle = client_->register_memory(base, 4096);
    ASSERT_NE(handle, 0u);
    ch_.shared = base;
    ch_.shared_region = handle;
    ch_.to_send = 200;
    exchange();
    EXPECT_EQ(sh_.received, 200u);
    EXPECT_EQ(sh_.bad, 0u);
    EXPECT_EQ(client_->counters().tx_copied + client_->counters().tx_zero_copy, ch_.by_reference);
}

// A control message's header for sendmsg and recvmsg, with room for one descriptor. It points
// into itself, so it is never copied.
struct control_header {
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    iovec iov;
    msghdr h{};
    explicit control_header(message& m) : iov{&m, sizeof m} {
        h.msg_iov = &iov;
        h.msg_iovlen = 1;
        h.msg_control = control;
        h.msg_controllen = sizeof control;
    }
    control_header(const control_header&) = delete;
    control_header& operator=(const control_header&) = delete;
};

// A memif server written out by hand, to play a peer that lies: it takes the client's memory
// and rings, then writes into the server-to-client ring whatever a test wants.
class raw_server {
  public:
    explicit raw_server(const std::string& path) {
        listen_ = socket(AF_UNIX, SOCK_SEQPACKET, 0);
        sockaddr_un a{};
        a.sun_family = AF_UNIX;
        std::strncpy(a.sun_path, path.c_str(), sizeof a.sun_path - 1);
        EXPECT_EQ(bind(listen_, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
        EXPECT_EQ(listen(listen_, 1), 0);
    }
    ~raw_server() {
        if (base_ != nullptr) munmap(base_, size_);
        for (int fd : {conn_, listen_, region_fd_})
            if (fd >= 0) close(fd);
    }
    // One step of the handshake per call, so the client (same thread) can answer in between.
    void step() {
        if (conn_ < 0) {
            pollfd p{listen_, POLLIN, 0};
            if (poll(&p, 1, 0) != 1) return;
            conn_ = accept(listen_, nullptr, nullptr);
            message m{};
            m.type = static_cast<std::uint16_t>(msg_type::hello);
            m.hello.min_version = m.hello.max_version = protocol_version;
            m.hello.max_log2_ring_size = 14;
            send(conn_, &m, sizeof m, 0);
            return;
        }
        pollfd p{conn_, POLLIN, 0};
        if (poll(&p, 1, 0) != 1) return;
        message m{};
        control_header ch(m);
        ASSERT_GT(recvmsg(conn_, &ch.h, 0), 0);
        int fd = -1;
        if (cmsghdr* c = CMSG_FIRSTHDR(&ch.h); c != nullptr)
            std::memcpy(&fd, CMSG_DATA(c), sizeof fd);
        const auto type = static_cast<msg_type>(m.type);
        if (type == msg_type::add_region) {
            size_ = m.add_region.size;
            region_fd_ = fd;
            base_ = static_cast<std::uint8_t*>(
                mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
        } else if (type == msg_type::add_ring) {
            if (!(m.add_ring.flags & add_ring_flag_c2s)) {
                s2c_ = reinterpret_cast<ring_header*>(base_ + m.add_ring.offset);
                slots_ = 1u << m.add_ring.log2_ring_size;
            }
            close(fd);
        } else if (type == msg_type::connect) {
            message c{};
            c.type = static_cast<std::uint16_t>(msg_type::connected);
            send(conn_, &c, sizeof c, 0);
            connected_ = true;
            return;
        }
        message ack{};
        ack.type = static_cast<std::uint16_t>(msg_type::ack);
        send(conn_, &ack, sizeof ack, 0);
    }
    bool connected() const { return connected_; }
    // Fills the next S2C slot as the peer says (the client posted it) and publishes it (with
    // desc_flag_next in flags, the frame goes on in the next slot; publish false: not yet).
    void put(std::uint32_t offset, std::uint32_t length, std::uint16_t region = 0,
             std::uint16_t flags = 0, bool publish = true) {
        descriptor* d = reinterpret_cast<descriptor*>(reinterpret_cast<std::uint8_t*>(s2c_) + 128);
        descriptor& slot = d[tail_ & (slots_ - 1)];
        slot.offset = offset;
        slot.length = length;
        slot.region = region;
        slot.flags = flags;
        ++tail_;
        if (publish) __atomic_store_n(&s2c_->tail, tail_, __ATOMIC_RELEASE);
    }
    // A slot's own buffer (the next one, or `ahead` after it), as the client posted it.
    std::uint32_t posted_offset(std::uint16_t ahead = 0) const {
        const descriptor* d =
            reinterpret_cast<const descriptor*>(reinterpret_cast<std::uint8_t*>(s2c_) + 128);
        return d[(tail_ + ahead) & (slots_ - 1)].offset;
    }
    // Frame number seq (sequence_handler's numbering and pattern) written at offset.
    void write_frame(std::uint32_t offset, std::uint32_t seq) {
        std::memcpy(at(offset), &seq, 4);
        for (std::size_t i = 4; i < frame_length(seq); ++i)
            at(offset)[i] = pattern(seq, i);
    }
    std::uint8_t* at(std::uint32_t offset) { return base_ + offset; }
    std::uint64_t size() const { return size_; }
    void set_tail(std::uint16_t t) { __atomic_store_n(&s2c_->tail, t, __ATOMIC_RELEASE); }

  private:
    int listen_ = -1, conn_ = -1, region_fd_ = -1;
    std::uint8_t* base_ = nullptr;
    std::uint64_t size_ = 0;
    ring_header* s2c_ = nullptr;
    std::uint32_t slots_ = 0;
    std::uint16_t tail_ = 0;
    bool connected_ = false;
};

// A uet_memif client connected to a raw_server (a lying server), in a directory of its own.
class uet_memif_lying_server : public ::testing::Test {
  protected:
    void SetUp() override {
        std::filesystem::create_directories(dir_);
        const std::string sock = (dir_ / "h.sock").string();
        peer_ = std::make_unique<raw_server>(sock);
        std::string why;
        auto cfg = parse_device("uet_memif0,role=client,rsize=6,socket=" + sock, why);
        ASSERT_TRUE(cfg) << why;
        cfg->quiet = true;
        client_ = port::open(*cfg);
        for (int i = 0; i < 5000 && !(peer_->connected() && client_->connected()); ++i) {
            peer_->step();
            client_->queue().receive_burst(h_, 0);
            usleep(200);
        }
        ASSERT_TRUE(peer_->connected() && client_->connected());
    }
    void TearDown() override {
        client_.reset();
        peer_.reset();
        std::filesystem::remove_all(dir_);
    }

    std::filesystem::path dir_ =
        std::filesystem::temp_directory_path() / ("uet-memif-h-" + std::to_string(getpid()));
    std::unique_ptr<raw_server> peer_;
    std::unique_ptr<port> client_;
    sequence_handler h_;
};

TEST_F(uet_memif_lying_server, descriptors_outside_the_shared_memory_are_counted_and_dropped) {
    raw_server& peer = *peer_;
    port* client = client_.get();
    sequence_handler& h = h_;
    // Past the end of the region, straddling its end, in a region that does not exist, empty.
    const auto size = static_cast<std::uint32_t>(peer.size());
    peer.put(size + 4096, 100);
    peer.put(size - 50, 100);
    peer.put(0, 100, 3);
    peer.put(peer.posted_offset(), 0);
    // Then one honest frame, numbered 0, in the buffer the client posted.
    const std::uint32_t honest = peer.posted_offset();
    peer.write_frame(honest, 0);
    peer.put(honest, static_cast<std::uint32_t>(frame_length(0)));
    EXPECT_EQ(client->queue().receive_burst(h, 0), 5u);
    EXPECT_EQ(client->counters().rx_bad_descriptor, 4u);
    EXPECT_EQ(h.received, 1u);
    EXPECT_EQ(h.bad, 0u);
    // A tail that runs past the ring: nothing in it can be trusted, the link goes down.
    peer.set_tail(5 + 1000);
    EXPECT_EQ(client->queue().receive_burst(h, 0), 0u);
    EXPECT_FALSE(client->connected());
}

// Frames over several slots (what zero-copy transmit sends) are gathered whole and checked as a
// whole: a slot outside the shared memory or a frame larger than the port's refuses the frame,
// all its slots taken; a frame whose last slot is not published is refused, and its slots are
// skipped when they come. Honest chained frames arrive intact among them.
TEST_F(uet_memif_lying_server, chained_frames_are_gathered_and_refused_whole) {
    raw_server& peer = *peer_;
    port* client = client_.get();
    sequence_handler& h = h_;
    constexpr std::uint16_t next = desc_flag_next;
    // Frame 0 in two slots: its first 32 bytes in one buffer, the rest in the next one's.
    const std::uint32_t a = peer.posted_offset(), b = peer.posted_offset(1);
    const auto len0 = static_cast<std::uint32_t>(frame_length(0));
    peer.write_frame(a, 0);
    std::memcpy(peer.at(b), peer.at(a) + 32, len0 - 32);
    peer.put(a, 32, 0, next, false);
    peer.put(b, len0 - 32);
    // A second slot past the shared memory; three slots of 1000 bytes (over a 1514-byte frame).
    peer.put(peer.posted_offset(), 64, 0, next, false);
    peer.put(static_cast<std::uint32_t>(peer.size()) + 64, 100);
    for (int k = 0; k < 3; ++k)
        peer.put(peer.posted_offset(), 1000, 0, k < 2 ? next : 0, k == 2);
    EXPECT_EQ(client->queue().receive_burst(h, 0), 7u);
    EXPECT_EQ(h.received, 1u);
    EXPECT_EQ(h.bad, 0u);
    auto c = client->counters();
    EXPECT_EQ(c.rx_multiseg, 1u);
    EXPECT_EQ(c.rx_bad_descriptor, 1u);
    EXPECT_EQ(c.rx_oversize, 1u);
    // A slot that says the frame goes on, published alone: refused; its rest skipped later.
    peer.put(peer.posted_offset(), 64, 0, next);
    EXPECT_EQ(client->queue().receive_burst(h, 0), 1u);
    EXPECT_EQ(client->counters().rx_bad_descriptor, 2u);
    peer.put(peer.posted_offset(), 100);  // the rest of the refused frame
    const std::uint32_t honest = peer.posted_offset(1);
    peer.write_frame(honest, 1);
    peer.put(honest, static_cast<std::uint32_t>(frame_length(1)));
    EXPECT_EQ(client->queue().receive_burst(h, 0), 2u);
    EXPECT_EQ(h.received, 2u);
    EXPECT_EQ(h.bad, 0u);
    c = client->counters();
    EXPECT_EQ(c.rx_bad_descriptor, 2u);
    EXPECT_EQ(c.rx_multiseg, 1u);
}

// A client that says its memory is larger than the file it passes: mapped as said, the server
// would fault (SIGBUS) on the first read past the file's end. It is refused with the reason.
TEST(uet_memif_hostile_peer, a_region_larger_than_its_memory_is_refused) {
    const auto dir =
        std::filesystem::temp_directory_path() / ("uet-memif-r-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir);
    const std::string sock = (dir / "r.sock").string();
    std::string why;
    auto cfg = parse_device("uet_memif0,role=server,socket=" + sock, why);
    ASSERT_TRUE(cfg) << why;
    cfg->quiet = true;
    auto server = port::open(*cfg);
    const int conn = socket(AF_UNIX, SOCK_SEQPACKET, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::strncpy(a.sun_path, sock.c_str(), sizeof a.sun_path - 1);
    ASSERT_EQ(connect(conn, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    sequence_handler h;
    // Each reply of the server comes within its next few polls.
    const auto reply = [&](msg_type want) {
        message m{};
        for (int i = 0; i < 2000; ++i) {
            server->queue().receive_burst(h, 0);
            pollfd p{conn, POLLIN, 0};
            if (poll(&p, 1, 1) == 1) break;
        }
        // Not waiting: a server that never answers fails the test rather than hanging it.
        EXPECT_GT(recv(conn, &m, sizeof m, MSG_DONTWAIT), 0);
        EXPECT_EQ(m.type, static_cast<std::uint16_t>(want));
        return m;
    };
    reply(msg_type::hello);
    message init{};
    init.type = static_cast<std::uint16_t>(msg_type::init);
    init.init.version = protocol_version;
    init.init.mode = interface_mode_ethernet;
    ASSERT_EQ(send(conn, &init, sizeof init, 0), static_cast<ssize_t>(sizeof init));
    reply(msg_type::ack);
    // 4 KiB of memory, said to be 1 MiB.
    const int fd = memfd_create("hostile", MFD_CLOEXEC);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(ftruncate(fd, 4096), 0);
    message region{};
    region.type = static_cast<std::uint16_t>(msg_type::add_region);
    region.add_region.size = 1u << 20;
    control_header ch(region);
    cmsghdr* c = CMSG_FIRSTHDR(&ch.h);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
    ASSERT_EQ(sendmsg(conn, &ch.h, 0), static_cast<ssize_t>(sizeof region));
    const message refused = reply(msg_type::disconnect);
    const std::string reason(reinterpret_cast<const char*>(refused.disconnect.reason));
    EXPECT_NE(reason.find("larger than its memory"), std::string::npos) << reason;
    EXPECT_FALSE(server->connected());
    close(fd);
    close(conn);
    server.reset();
    std::filesystem::remove_all(dir);
}

TEST(uet_memif_device, parses_the_keys_and_refuses_nonsense) {
    std::string why;
    auto c = parse_device(
        "uet_memif3,role=client,socket=/tmp/a.sock,socket-abstract=no,id=9,"
        "rsize=11,bsize=4096,mac=02:00:00:00:00:05",
        why);
    ASSERT_TRUE(c) << why;
    EXPECT_EQ(c->name, "uet_memif3");
    EXPECT_FALSE(c->server);
    EXPECT_EQ(c->socket, "/tmp/a.sock");
    EXPECT_EQ(c->id, 9u);
    EXPECT_EQ(c->log2_ring_size, 11);
    EXPECT_EQ(c->buffer_size, 4096u);
    ASSERT_TRUE(c->mac);
    EXPECT_FALSE(parse_device("uet_memif0,role=boss", why));
    EXPECT_NE(why.find("server or client"), std::string::npos);
    EXPECT_FALSE(parse_device("uet_memif0,rsize=20", why));
    EXPECT_FALSE(parse_device("uet_memif0,colour=blue", why));
    EXPECT_FALSE(parse_device("uet_memif0,socket", why));
    EXPECT_FALSE(parse_device("net_memif0", why));
}

}  // namespace
}  // namespace uet::memif
