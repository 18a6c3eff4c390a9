// uet's own memif port: the memif protocol (memif_proto.hpp) spoken without DPDK's PMD, so that
// no frame is copied by the port. A frame is built by the stack straight into a buffer of the
// shared ring and read by the peer's stack in place; DPDK's net_memif copies each frame into the
// ring from an mbuf on one side and out of it into an mbuf on the other.
//
// Zero-copy transmit (the client's side, toward a uet server): memory the application allocated
// as a uet::shared_buffer and registered is handed to the server as a memif region of its own
// (a late ADD_REGION, which only a uet server is sent); a data packet's payload then leaves it
// without a copy, as a two-slot frame: the headers in a ring buffer, the payload named where it
// lies. The receiver gathers such a frame whole before its stack reads it (the sender's memory is
// never written by the receiver, so its lines do not travel back and forth between the cores).
//
// Device string: "uet_memif0,role=server|client,socket=PATH[,socket-abstract=yes|no][,id=N]
// [,rsize=LOG2][,bsize=BYTES][,mac=02:..]" (the same keys as net_memif's). One queue pair.
// It interoperates with net_memif and libmemif peers (tested against net_memif).
//
// The control channel is served from the burst calls, on the thread that polls the port: a
// server accepts a client and a client tries to connect (every few milliseconds) while the link
// is down; the handshake then runs to its end at once (bounded waits, the peer is local).
// Either side leaving (DISCONNECT, or its socket closing) brings the link down; each process
// maps the shared memory itself, so a peer that goes never pulls memory from under us.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "host/net_port.hpp"
#include "memif/memif_proto.hpp"

namespace uet::memif {

struct port_config {
    std::string name = "uet_memif0";
    bool server = true;
    std::string socket = "/run/memif.sock";
    bool abstract_socket = false;
    std::uint32_t id = 0;
    std::uint8_t log2_ring_size = 10;      // the client's choice; the server takes the client's
    std::uint32_t buffer_size = 2048;      // the client's choice; one frame per buffer
    std::optional<wire::mac_address> mac;  // else a random locally administered address
    std::uint32_t mtu = 1500;
    bool quiet = false;
    bool time_stages = false;  // count TSC ticks by stage (port_counters::*_ticks)
};

// True for device strings this driver takes ("uet_memif0,...").
bool is_uet_memif(std::string_view device) noexcept;
// Parses a device string; nullopt with the reason in why.
std::optional<port_config> parse_device(std::string_view device, std::string& why);

class port final : public host::net_port {
  public:
    // Creates the socket (a server listens at once). Throws std::runtime_error with the reason.
    static std::unique_ptr<port> open(const port_config& cfg);
    ~port() override;
    port(const port&) = delete;
    port& operator=(const port&) = delete;

    void close() noexcept override;
    host::packet_io& queue(std::uint16_t q = 0) override;
    wire::mac_address mac() const noexcept override { return mac_; }
    std::uint32_t mtu() const noexcept override { return cfg_.mtu; }
    host::io_caps caps() const noexcept override;
    const std::string& driver() const noexcept override { return driver_; }
    // The server copies every payload into the ring; the client chains payloads of shared memory.
    bool is_virtual() const noexcept override { return cfg_.server; }
    // Memory inside a uet::shared_buffer, on a client: a handle (1...) whose payloads leave
    // without a copy once the server mapped it. 0 (payloads copied) for any other memory.
    std::uint32_t register_memory(const void* addr, std::size_t length) override;
    // False while frames in the ring still name the memory.
    bool unregister_memory(std::uint32_t region) override;
    std::uint32_t in_flight(std::uint32_t region) const override;
    void reclaim_tx() noexcept override;
    host::port_counters counters() const override { return c_; }

    bool connected() const noexcept { return connected_; }
    // Whether payloads in the memory behind handle (register_memory) now leave without a copy.
    bool shares(std::uint32_t handle) const noexcept;
    // Serves the control channel until the link is up or timeout_ms passed (tests, tools that
    // want the link before their first frame). The burst calls serve it too.
    bool wait_connected(std::uint32_t timeout_ms);

  private:
    class io;
    // One ring as this side sees it.
    struct ring {
        ring_header* hdr = nullptr;
        std::uint16_t size = 0, mask = 0;
        std::uint16_t next = 0;  // our free-running position (head or tail, by role)
        // TX: the peer's counter (the server's tail, the client's head) as last read. It only
        // moves on, so the room it shows is never too much; it is read again only when that
        // room is less than a full offer (io::tx_room).
        std::uint16_t peer_seen = 0;
        int kick_fd = -1;  // the reader's eventfd: written when it has not masked kicks
        descriptor* desc() const noexcept {
            return reinterpret_cast<descriptor*>(reinterpret_cast<std::uint8_t*>(hdr) + 128);
        }
    };
    struct region {
        std::uint8_t* base = nullptr;
        std::uint64_t size = 0;
        int fd = -1;
    };
    // A shared_buffer registered on a client (handle = index + 1), handed to a uet server as
    // memif region `index` once connected; the application keeps the memory.
    struct app_region {
        const std::uint8_t* base = nullptr;
        std::uint64_t size = 0;
        int fd = -1;  // our dup of the buffer's file
        enum class state : std::uint8_t { unsent, sent, shared } st = state::unsent;
        std::uint16_t index = 0;         // the memif region, once sent
        std::uint32_t refs = 0;          // registrations over it (0: no new frame names it)
        std::uint64_t last_chained = 0;  // the TX slot (tx_slots_ count) of its last payload, + 1
    };

    explicit port(const port_config& cfg);
    void listen_or_prepare();
    void serve_control();
    void try_accept(std::uint64_t now);
    void try_connect(std::uint64_t now);
    bool server_step(const message& m, int got_fd, std::string& why);
    bool client_step(const message& m, int got_fd, std::string& why);
    bool create_client_memory(std::string& why);
    bool map_region(const msg_add_region& m, int fd, std::string& why);
    bool add_ring(const msg_add_ring& m, int fd, std::string& why);
    void link_up();
    void link_down(const std::string& why, bool tell_peer) noexcept;
    void check_peer() noexcept;
    void share_app_regions() noexcept;
    void on_late_message(const message& m, int got_fd) noexcept;
    // The shared region holding all of ext (by its handle), ready to be named; nullptr if none.
    const app_region* chainable(const host::ext_payload& ext) const noexcept {
        if (ext.region == 0 || ext.region > app_regions_.size()) return nullptr;
        const app_region& a = app_regions_[ext.region - 1];
        if (a.st != app_region::state::shared || a.refs == 0 || ext.data < a.base ||
            ext.length > a.size || std::uint64_t(ext.data - a.base) > a.size - ext.length)
            return nullptr;
        return &a;
    }
    void log(const std::string& line) const;
    // The buffer a descriptor names, if it lies wholly in a mapped region; nullptr otherwise.
    // Inline: asked for every frame received and every slot offered.
    std::uint8_t* buffer_of(const descriptor& d, std::uint32_t length) const noexcept {
        return buffer_in(regions_, d, length);
    }
    // The same among `regions`: a burst reads the regions once (their count is a division by
    // the entry's size, too dear to redo for every frame).
    static std::uint8_t* buffer_in(std::span<const region> regions, const descriptor& d,
                                   std::uint32_t length) noexcept {
        if (d.region >= regions.size()) return nullptr;
        const region& g = regions[d.region];
        if (std::uint64_t{d.offset} + length > g.size) return nullptr;
        return g.base + d.offset;
    }

    port_config cfg_;
    std::string driver_ = "uet_memif";
    wire::mac_address mac_{};
    int listen_fd_ = -1, ctl_fd_ = -1;
    // The connection being set up (link down): its socket, how far it got, until when it may.
    int hs_fd_ = -1;
    int hs_step_ = 0;
    std::uint64_t hs_deadline_ = 0;
    bool connected_ = false, closed_ = false;
    std::uint64_t next_connect_ns_ = 0;
    unsigned bursts_since_check_ = 0;
    std::vector<region> regions_;
    ring tx_, rx_;  // client: tx = C2S, rx = S2C; server: the other way round
    std::uint32_t max_frame_ = 1514;
    // The client's buffers: ring slot s of its TX (C2S) and RX (S2C) ring at these offsets of
    // region 0, plus s * buffer_size.
    std::uint32_t tx_buffers_at_ = 0, rx_buffers_at_ = 0;
    // Then, from trailers_at_, trailer_cell bytes per TX ring slot: the trailer (ext_payload's
    // tail) of a frame whose payload is chained, named by the ring slot after the payload's.
    static constexpr std::uint32_t trailer_cell = host::ext_payload::max_tail;
    std::uint32_t trailers_at_ = UINT32_MAX;
    // Whether a client's TX descriptor names one of its buffers (not a chained payload or a
    // trailer): such a slot is offered with its buffer, any other with a spare one.
    bool names_tx_buffer(const descriptor& d) const noexcept {
        return d.region == 0 && d.offset < trailers_at_;
    }
    // Zero-copy transmit (client): the regions, whether the server is uet's (only uet's is sent
    // late regions), the next memif region index, an ADD_REGION awaiting its ACK, and the TX
    // slots published (a region's payloads are in flight until the server's tail passes its last).
    std::vector<app_region> app_regions_;
    bool peer_is_uet_ = false, awaiting_ack_ = false;
    bool chains_ = false;  // some region is shared: frames may take three slots
    std::uint16_t next_region_index_ = 1;
    std::uint64_t tx_slots_ = 0;  // TX slots published on this link, all told
    std::unique_ptr<io> io_;
    host::port_counters c_;
};

}  // namespace uet::memif
