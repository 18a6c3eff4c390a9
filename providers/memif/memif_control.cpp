// The memif control channel: the socket, the handshake of either role, the shared memory and
// the link going up and down. The burst paths are in memif_io.cpp.
#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "core/shared_memory.hpp"
#include "memif/memif_io.hpp"

namespace uet::memif {

namespace {

constexpr std::uint16_t max_regions = 16;  // a zero-copy net_memif client sends several
constexpr std::uint8_t max_log2_ring = 14;
constexpr std::uint64_t handshake_timeout_ns = 5'000'000'000;  // the peer is a local process
constexpr std::uint64_t connect_retry_ns = 5'000'000;
constexpr char app_name[] = "uet";

std::uint64_t steady_ns() {
    return static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch() /
                                      std::chrono::nanoseconds(1));
}

std::string sys_error(const char* what) {
    return std::string(what) + ": " + std::strerror(errno);
}

void put_name(std::uint8_t (&dst)[name_size], std::string_view name) {
    std::memset(dst, 0, name_size);
    std::memcpy(dst, name.data(), std::min(name.size(), name_size - 1));
}

std::string get_name(const std::uint8_t* src, std::size_t size) {
    return std::string(reinterpret_cast<const char*>(src),
                       strnlen(reinterpret_cast<const char*>(src), size));
}

sockaddr_un socket_address(const port_config& cfg, socklen_t& len) {
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    // An abstract name starts with a NUL byte and has no file.
    const std::size_t at = cfg.abstract_socket ? 1 : 0;
    std::memcpy(a.sun_path + at, cfg.socket.data(),
                std::min(cfg.socket.size(), sizeof(a.sun_path) - 1 - at));
    len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + at + cfg.socket.size() +
                                 (cfg.abstract_socket ? 0 : 1));
    return a;
}

bool send_message(int fd, const message& m, int pass_fd = -1) {
    iovec iov{const_cast<message*>(&m), sizeof m};
    msghdr h{};
    h.msg_iov = &iov;
    h.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    if (pass_fd >= 0) {
        h.msg_control = control;
        h.msg_controllen = sizeof control;
        cmsghdr* c = CMSG_FIRSTHDR(&h);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        std::memcpy(CMSG_DATA(c), &pass_fd, sizeof(int));
    }
    return sendmsg(fd, &h, MSG_NOSIGNAL) == static_cast<ssize_t>(sizeof m);
}

// One message within timeout_ms; a file descriptor passed with it goes to *got_fd (else -1).
// 0: a message; 1: nothing in time; -1: the peer closed or the socket failed.
int receive_message(int fd, message& m, int* got_fd, int timeout_ms) {
    if (got_fd) *got_fd = -1;
    pollfd p{fd, POLLIN, 0};
    const int ready = poll(&p, 1, timeout_ms);
    if (ready == 0) return 1;
    if (ready < 0) return -1;
    std::memset(&m, 0, sizeof m);
    iovec iov{&m, sizeof m};
    msghdr h{};
    h.msg_iov = &iov;
    h.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 4)] = {};
    h.msg_control = control;
    h.msg_controllen = sizeof control;
    const ssize_t n = recvmsg(fd, &h, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return 1;
    if (n <= 0) return -1;
    for (cmsghdr* c = CMSG_FIRSTHDR(&h); c != nullptr; c = CMSG_NXTHDR(&h, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
        const std::size_t fds = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (std::size_t i = 0; i < fds; ++i) {
            int f = -1;
            std::memcpy(&f, CMSG_DATA(c) + i * sizeof(int), sizeof f);
            if (got_fd && *got_fd < 0)
                *got_fd = f;
            else
                ::close(f);  // one per message is all the protocol passes
        }
    }
    return 0;
}

message make(msg_type t) {
    message m;
    std::memset(&m, 0, sizeof m);
    m.type = static_cast<std::uint16_t>(t);
    return m;
}

void refuse(int fd, const std::string& why) {
    message m = make(msg_type::disconnect);
    std::memcpy(m.disconnect.reason, why.data(),
                std::min(why.size(), sizeof m.disconnect.reason - 1));
    send_message(fd, m);
}

std::size_t ring_bytes(std::uint8_t log2) {
    return (sizeof(ring_header) + (std::size_t{1} << log2) * sizeof(descriptor) + 63) / 64 * 64;
}

}  // namespace

port::port(const port_config& cfg) : cfg_(cfg) {}

std::unique_ptr<port> port::open(const port_config& cfg_in) {
    port_config cfg = cfg_in;
    // One buffer holds a whole frame (a VLAN tag included): sized for the MTU unless given.
    const std::uint32_t frame = cfg.mtu + 18;
    if (cfg.buffer_size == 0)
        cfg.buffer_size = std::max<std::uint32_t>(2048, (frame + 1023) / 1024 * 1024);
    if (!cfg.server && cfg.buffer_size < frame) {
        throw std::runtime_error("uet: " + cfg.name + ": bsize " + std::to_string(cfg.buffer_size) +
                                 " is smaller than a frame of MTU " + std::to_string(cfg.mtu));
    }
    std::unique_ptr<port> p(new port(cfg));
    p->max_frame_ = frame;
    if (cfg.mac) {
        p->mac_ = *cfg.mac;
    } else {
        std::uint8_t r[4] = {};
        if (getrandom(r, sizeof r, 0) != sizeof r) std::memcpy(r, &cfg.id, sizeof r);
        p->mac_ = wire::mac_address{{0x02, 0x75, r[0], r[1], r[2], r[3]}};
    }
    p->io_ = std::make_unique<io>(*p);
    if (cfg.server) p->listen_or_prepare();
    p->log(std::string(cfg.server ? "server" : "client") + " on " +
           (cfg.abstract_socket ? "@" : "") + cfg.socket + ", id " + std::to_string(cfg.id));
    return p;
}

port::~port() {
    close();
}

void port::log(const std::string& line) const {
    if (!cfg_.quiet) std::fprintf(stderr, "uet: port %s: %s\n", cfg_.name.c_str(), line.c_str());
}

host::packet_io& port::queue(std::uint16_t q) {
    if (q != 0) throw std::out_of_range("uet: a uet_memif port has one queue pair");
    return *io_;
}

host::io_caps port::caps() const noexcept {
    host::io_caps c;
    c.max_frame = max_frame_;
    // A client chains payloads of the shared memory the server mapped (and copies the others).
    c.zero_copy = c.zero_copy_tail = !cfg_.server;
    return c;
}

void port::listen_or_prepare() {
    listen_fd_ = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (listen_fd_ < 0) throw std::runtime_error("uet: " + cfg_.name + ": " + sys_error("socket"));
    if (!cfg_.abstract_socket) {
        // A socket file left by a process that died: nobody listens on it any more.
        struct stat st {};
        if (stat(cfg_.socket.c_str(), &st) == 0 && S_ISSOCK(st.st_mode))
            unlink(cfg_.socket.c_str());
    }
    socklen_t len = 0;
    const sockaddr_un a = socket_address(cfg_, len);
    if (bind(listen_fd_, reinterpret_cast<const sockaddr*>(&a), len) != 0 ||
        listen(listen_fd_, 4) != 0) {
        const std::string why = sys_error(("listening on " + cfg_.socket).c_str());
        ::close(listen_fd_);
        listen_fd_ = -1;
        throw std::runtime_error("uet: " + cfg_.name + ": " + why);
    }
}

void port::close() noexcept {
    if (closed_) return;
    if (connected_) {
        link_down("closed", true);
        log("closed (told the peer)");
    }
    if (hs_fd_ >= 0) {
        refuse(hs_fd_, "closed");
        ::close(hs_fd_);
        hs_fd_ = -1;
        link_down("closed", false);
    }
    if (listen_fd_ >= 0) {
        ::close(listen_fd_);
        listen_fd_ = -1;
        if (!cfg_.abstract_socket) unlink(cfg_.socket.c_str());
    }
    for (app_region& a : app_regions_) {
        if (a.fd >= 0) ::close(a.fd);
        a.fd = -1;
        a.refs = 0;
    }
    closed_ = true;
}

bool port::wait_connected(std::uint32_t timeout_ms) {
    for (std::uint32_t waited = 0; !connected_ && waited <= timeout_ms; ++waited) {
        serve_control();
        if (!connected_) usleep(1000);
    }
    return connected_;
}

// While the link is down: accepts or connects, then moves the handshake on by the messages that
// have arrived, never waiting for one (both ends may be polled by one thread).
void port::serve_control() {
    if (closed_ || connected_) return;
    const std::uint64_t now = steady_ns();
    if (hs_fd_ < 0) {
        if (cfg_.server)
            try_accept(now);
        else
            try_connect(now);
        if (hs_fd_ < 0) return;
    }
    std::string why;
    for (;;) {
        message m;
        int got = -1;
        const int rc = receive_message(hs_fd_, m, &got, 0);
        if (rc > 0) {
            if (now < hs_deadline_) return;
            why = "the peer stopped in the middle of the handshake";
        } else if (rc < 0) {
            why = "the peer closed the connection";
        } else if (m.type == static_cast<std::uint16_t>(msg_type::disconnect)) {
            if (got >= 0) ::close(got);
            why = "the peer refused: " + get_name(m.disconnect.reason, sizeof m.disconnect.reason);
        } else if ((cfg_.server ? server_step(m, got, why) : client_step(m, got, why))) {
            if (connected_) return;
            continue;
        }
        log((cfg_.server ? "a client failed to connect: " : "could not connect: ") + why);
        refuse(hs_fd_, why);
        ::close(hs_fd_);
        hs_fd_ = -1;
        link_down(why, false);
        return;
    }
}

void port::try_accept(std::uint64_t now) {
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;
    message m = make(msg_type::hello);
    put_name(m.hello.name, app_name);
    m.hello.min_version = m.hello.max_version = protocol_version;
    m.hello.max_region = max_regions - 1;
    m.hello.max_s2c_ring = m.hello.max_c2s_ring = 0;  // one queue pair
    m.hello.max_log2_ring_size = max_log2_ring;
    if (!send_message(fd, m)) {
        ::close(fd);
        return;
    }
    hs_fd_ = fd;
    hs_step_ = 0;
    hs_deadline_ = now + handshake_timeout_ns;
}

void port::try_connect(std::uint64_t now) {
    if (now < next_connect_ns_) return;
    next_connect_ns_ = now + connect_retry_ns;
    const int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return;
    socklen_t len = 0;
    const sockaddr_un a = socket_address(cfg_, len);
    if (connect(fd, reinterpret_cast<const sockaddr*>(&a), len) != 0) {
        ::close(fd);  // no server yet: try again later
        return;
    }
    hs_fd_ = fd;
    hs_step_ = 0;
    hs_deadline_ = now + handshake_timeout_ns;
}

// The server's side of one handshake message: INIT first, then regions and rings, then
// CONNECT. False with the reason in why.
bool port::server_step(const message& m, int got, std::string& why) {
    const auto type = static_cast<msg_type>(m.type);
    if (hs_step_ == 0) {
        if (got >= 0) ::close(got);
        if (type != msg_type::init) return why = "the first message is not INIT", false;
        if (m.init.version != protocol_version)
            return why = "memif version " + std::to_string(m.init.version >> 8) + "." +
                         std::to_string(m.init.version & 0xff) + " (this side speaks 2.0)",
                   false;
        if (m.init.id != cfg_.id)
            return why = "no interface with id " + std::to_string(m.init.id) + " here", false;
        if (m.init.mode != interface_mode_ethernet)
            return why = "only ethernet mode is served", false;
        peer_is_uet_ = get_name(m.init.name, name_size) == app_name;
        hs_step_ = 1;
    } else if (type == msg_type::add_region) {
        if (!map_region(m.add_region, got, why)) return false;
    } else if (type == msg_type::add_ring) {
        if (!add_ring(m.add_ring, got, why)) return false;
    } else if (type == msg_type::connect) {
        if (got >= 0) ::close(got);
        if (tx_.hdr == nullptr || rx_.hdr == nullptr)
            return why = "CONNECT before both rings", false;
        message c = make(msg_type::connected);
        put_name(c.connect.if_name, cfg_.name);
        if (!send_message(hs_fd_, c)) return why = sys_error("sending CONNECTED"), false;
        log("client \"" + get_name(m.connect.if_name, name_size) + "\" connected");
        link_up();
        return true;
    } else {
        if (got >= 0) ::close(got);
        return why = "unexpected message type " + std::to_string(m.type), false;
    }
    if (!send_message(hs_fd_, make(msg_type::ack))) return why = sys_error("sending ACK"), false;
    return true;
}

// The client's side: HELLO, then each request (INIT, the region, the two rings) once the
// previous one was acknowledged, then CONNECT and its CONNECTED.
bool port::client_step(const message& m, int got, std::string& why) {
    if (got >= 0) ::close(got);      // a server passes no descriptor
    constexpr int last_request = 4;  // INIT, ADD_REGION, ADD_RING x2: steps 1-4; CONNECT: 5
    const auto type = static_cast<msg_type>(m.type);
    if (hs_step_ == 0) {
        if (type != msg_type::hello) return why = "the server did not say HELLO", false;
        if (m.hello.min_version > protocol_version || m.hello.max_version < protocol_version)
            return why = "the server speaks no memif 2.0", false;
        cfg_.log2_ring_size = std::min(cfg_.log2_ring_size, m.hello.max_log2_ring_size);
        peer_is_uet_ = get_name(m.hello.name, name_size) == app_name;
        if (!create_client_memory(why)) return false;
    } else if (hs_step_ <= last_request) {
        if (type != msg_type::ack) return why = "the server did not acknowledge a request", false;
    } else {
        if (type != msg_type::connected) return why = "the server did not say CONNECTED", false;
        log("connected to server \"" + get_name(m.connect.if_name, name_size) + "\"");
        link_up();
        return true;
    }
    ++hs_step_;
    message r = make(msg_type::none);
    int pass = -1;
    switch (hs_step_) {
        case 1:
            r = make(msg_type::init);
            r.init.version = protocol_version;
            r.init.id = cfg_.id;
            r.init.mode = interface_mode_ethernet;
            put_name(r.init.name, app_name);
            break;
        case 2:
            r = make(msg_type::add_region);
            r.add_region.size = regions_[0].size;
            pass = regions_[0].fd;
            break;
        case 3:
        case 4: {
            const ring& g = hs_step_ == 3 ? tx_ : rx_;
            r = make(msg_type::add_ring);
            r.add_ring.flags = hs_step_ == 3 ? add_ring_flag_c2s : 0;
            r.add_ring.offset = static_cast<std::uint32_t>(reinterpret_cast<std::uint8_t*>(g.hdr) -
                                                           regions_[0].base);
            r.add_ring.log2_ring_size = cfg_.log2_ring_size;
            pass = g.kick_fd;
            break;
        }
        default:
            r = make(msg_type::connect);
            put_name(r.connect.if_name, cfg_.name);
    }
    if (!send_message(hs_fd_, r, pass)) return why = sys_error("sending to the server"), false;
    return true;
}

bool port::map_region(const msg_add_region& m, int fd, std::string& why) {
    if (fd < 0) return why = "ADD_REGION without its file descriptor", false;
    // Mapped beyond the end of its file, a region would fault (SIGBUS) where it is read.
    struct stat st {};
    const bool in_file =
        fstat(fd, &st) == 0 && st.st_size >= 0 && m.size <= static_cast<std::uint64_t>(st.st_size);
    if (m.index != regions_.size() || m.index >= max_regions || m.size == 0 ||
        m.size > (std::uint64_t{1} << 36) || !in_file) {
        ::close(fd);
        return why = "ADD_REGION " + std::to_string(m.index) + " of " + std::to_string(m.size) +
                     (in_file ? " bytes refused" : " bytes, larger than its memory"),
               false;
    }
    void* base = mmap(nullptr, m.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) {
        why = sys_error("mapping a region");
        ::close(fd);
        return false;
    }
    regions_.push_back({static_cast<std::uint8_t*>(base), m.size, fd});
    return true;
}

bool port::add_ring(const msg_add_ring& m, int fd, std::string& why) {
    const bool c2s = m.flags & add_ring_flag_c2s;
    ring& r = c2s ? rx_ : tx_;  // the server receives what the client sends
    if (m.index != 0 || r.hdr != nullptr || m.region >= regions_.size() ||
        m.log2_ring_size > max_log2_ring || m.private_hdr_size != 0 ||
        std::uint64_t{m.offset} + ring_bytes(m.log2_ring_size) > regions_[m.region].size) {
        if (fd >= 0) ::close(fd);
        return why = "ADD_RING " + std::to_string(m.index) +
                     " refused (one ring each way, inside its region)",
               false;
    }
    r.hdr = reinterpret_cast<ring_header*>(regions_[m.region].base + m.offset);
    r.size = static_cast<std::uint16_t>(1u << m.log2_ring_size);
    r.mask = static_cast<std::uint16_t>(r.size - 1);
    r.kick_fd = fd;
    return true;
}

bool port::create_client_memory(std::string& why) {
    const std::uint8_t log2 = cfg_.log2_ring_size;
    const std::size_t rb = ring_bytes(log2), slots = std::size_t{1} << log2;
    const std::size_t buffers_at = (2 * rb + 4095) / 4096 * 4096;
    // After the buffers, a trailer cell per TX ring slot (a chained payload's trailer).
    const std::size_t trailers_at = buffers_at + 2 * slots * cfg_.buffer_size;
    const std::size_t size = trailers_at + slots * trailer_cell;
    const int fd = memfd_create("uet_memif", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0) return why = sys_error("memfd_create"), false;
    if (ftruncate(fd, static_cast<off_t>(size)) != 0) {
        why = sys_error("sizing the shared memory");
        ::close(fd);
        return false;
    }
    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK);  // the server may rely on the size it maps
    void* base = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) {
        why = sys_error("mapping the shared memory");
        ::close(fd);
        return false;
    }
    regions_.push_back({static_cast<std::uint8_t*>(base), size, fd});
    tx_buffers_at_ = static_cast<std::uint32_t>(buffers_at);
    rx_buffers_at_ = static_cast<std::uint32_t>(buffers_at + slots * cfg_.buffer_size);
    trailers_at_ = static_cast<std::uint32_t>(trailers_at);
    // C2S ring first (our TX), S2C second (our RX); the buffers after both.
    ring* rings[2] = {&tx_, &rx_};
    for (std::size_t k = 0; k < 2; ++k) {
        ring& r = *rings[k];
        r.hdr = reinterpret_cast<ring_header*>(regions_[0].base + k * rb);
        r.size = static_cast<std::uint16_t>(slots);
        r.mask = static_cast<std::uint16_t>(slots - 1);
        r.hdr->cookie = ring_cookie;
        r.hdr->flags = k == 1 ? ring_flag_mask_int : 0;  // we poll what we receive
        for (std::size_t i = 0; i < slots; ++i) {
            descriptor& d = r.desc()[i];
            d = {};
            d.offset = (k == 0 ? tx_buffers_at_ : rx_buffers_at_) +
                       static_cast<std::uint32_t>(i * cfg_.buffer_size);
            d.length = cfg_.buffer_size;
        }
        r.kick_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        if (r.kick_fd < 0) return why = sys_error("eventfd"), false;
    }
    tx_.hdr->head = tx_.hdr->tail = 0;
    rx_.hdr->head = rx_.hdr->tail = 0;  // posted when the link comes up
    return true;
}

void port::link_up() {
    // Every ring's counters start at 0 when the link comes up (net_memif zeroes them on both
    // sides as it connects); the client then posts its whole S2C ring to the server.
    tx_.next = rx_.next = 0;
    tx_.peer_seen = 0;  // the peer's counter as it starts (io::tx_room)
    if (cfg_.server)
        rx_.hdr->flags |= ring_flag_mask_int;  // we poll what we receive: no kicks
    else
        __atomic_store_n(&rx_.hdr->head, rx_.size, __ATOMIC_RELEASE);
    ctl_fd_ = hs_fd_;
    hs_fd_ = -1;
    bursts_since_check_ = 0;
    io_->forget_offers();
    next_region_index_ = static_cast<std::uint16_t>(regions_.size());
    tx_slots_ = 0;
    connected_ = true;
    share_app_regions();
}

void port::link_down(const std::string& why, bool tell_peer) noexcept {
    if (connected_ && !tell_peer) {
        ++c_.peer_left;
        log("link down: " + why);
    }
    if (ctl_fd_ >= 0) {
        if (tell_peer) refuse(ctl_fd_, why);
        ::close(ctl_fd_);
        ctl_fd_ = -1;
    }
    for (ring* r : {&tx_, &rx_}) {
        if (r->kick_fd >= 0) ::close(r->kick_fd);
        *r = ring{};
    }
    for (const region& g : regions_) {
        munmap(g.base, g.size);
        ::close(g.fd);
    }
    regions_.clear();
    // The application's regions are its own: sent again, under new indices, on the next link.
    for (app_region& a : app_regions_) {
        a.st = app_region::state::unsent;
        a.last_chained = 0;
    }
    awaiting_ack_ = chains_ = false;
    connected_ = false;
}

// Between bursts while the link is up: has the peer left? (Also what zero-copy transmit says
// on the control channel: a late region, its acknowledgement.)
void port::check_peer() noexcept {
    message m;
    int got = -1;
    while (connected_) {
        const int rc = receive_message(ctl_fd_, m, &got, 0);
        if (rc > 0) return;
        if (rc < 0) return link_down("the peer closed its socket", false);
        if (m.type == static_cast<std::uint16_t>(msg_type::disconnect)) {
            if (got >= 0) ::close(got);
            return link_down(
                "the peer left (" + get_name(m.disconnect.reason, sizeof m.disconnect.reason) + ")",
                false);
        }
        on_late_message(m, got);
    }
    if (got >= 0) ::close(got);
}

// A message after CONNECTED. A uet client's ADD_REGION (its application's shared memory) is
// mapped and acknowledged as in the handshake, with the same checks; a client takes the ACK of
// the region it sent. Anything else is ignored, as before zero-copy transmit existed.
void port::on_late_message(const message& m, int got) noexcept {
    const auto type = static_cast<msg_type>(m.type);
    if (cfg_.server && peer_is_uet_ && type == msg_type::add_region) {
        std::string why;
        if (!map_region(m.add_region, got, why)) return link_down(why, true);
        if (!send_message(ctl_fd_, make(msg_type::ack)))
            return link_down(sys_error("sending ACK"), false);
        return;
    }
    if (got >= 0) ::close(got);
    if (cfg_.server || !awaiting_ack_ || type != msg_type::ack) return;
    awaiting_ack_ = false;
    for (app_region& a : app_regions_) {
        if (a.st != app_region::state::sent) continue;
        a.st = app_region::state::shared;
        chains_ = true;
        break;
    }
    share_app_regions();
}

// A client's next application region the server has not been sent: one ADD_REGION at a time
// (its ACK names no region). Only a uet server is sent any: net_memif and libmemif take regions
// during the handshake only.
void port::share_app_regions() noexcept {
    if (cfg_.server || !connected_ || !peer_is_uet_ || awaiting_ack_) return;
    for (app_region& a : app_regions_) {
        if (a.st != app_region::state::unsent || a.refs == 0 || a.fd < 0) continue;
        if (next_region_index_ >= max_regions) {
            log("no memif region left for shared memory: its payloads are copied");
            return;
        }
        message m = make(msg_type::add_region);
        m.add_region.index = next_region_index_;
        m.add_region.size = a.size;
        if (!send_message(ctl_fd_, m, a.fd)) return;  // copied until the link comes up again
        a.index = next_region_index_++;
        a.st = app_region::state::sent;
        awaiting_ack_ = true;
        return;
    }
}

std::uint32_t port::register_memory(const void* addr, std::size_t length) {
    if (cfg_.server || closed_ || addr == nullptr || length == 0) return 0;
    const auto m = core::find_shared_mapping(addr, length);
    // A descriptor's offset is 32 bits: larger memory is copied from.
    if (!m || m->size > (std::uint64_t{1} << 32)) return 0;
    struct stat want {};
    if (fstat(m->fd, &want) != 0) return 0;
    for (std::size_t k = 0; k < app_regions_.size(); ++k) {
        app_region& a = app_regions_[k];
        struct stat have {};
        // The same buffer again (not another one mapped where a freed one was): the same file.
        if (a.base != m->base || a.size != m->size || a.fd < 0 || fstat(a.fd, &have) != 0 ||
            have.st_ino != want.st_ino || have.st_dev != want.st_dev)
            continue;
        ++a.refs;
        share_app_regions();
        return static_cast<std::uint32_t>(k + 1);
    }
    const int fd = fcntl(m->fd, F_DUPFD_CLOEXEC, 0);
    if (fd < 0) return 0;
    app_region a;
    a.base = m->base;
    a.size = m->size;
    a.fd = fd;
    a.refs = 1;
    app_regions_.push_back(a);
    share_app_regions();
    return static_cast<std::uint32_t>(app_regions_.size());
}

bool port::unregister_memory(std::uint32_t handle) {
    if (handle == 0 || handle > app_regions_.size()) return true;
    if (in_flight(handle) != 0) return false;
    app_region& a = app_regions_[handle - 1];
    if (a.refs != 0) --a.refs;
    return true;
}

// The TX slots from the server's tail up to the region's last chained payload: frames that may
// still name it (an upper bound), 0 once the server gave that slot back.
std::uint32_t port::in_flight(std::uint32_t handle) const {
    if (handle == 0 || handle > app_regions_.size() || !connected_ || cfg_.server) return 0;
    const std::uint64_t last = app_regions_[handle - 1].last_chained;
    const auto out = static_cast<std::uint16_t>(
        tx_.next - __atomic_load_n(&tx_.hdr->tail, __ATOMIC_ACQUIRE));  // slots not given back
    const std::uint64_t given_back = tx_slots_ - std::min<std::uint64_t>(out, tx_slots_);
    return last > given_back ? static_cast<std::uint32_t>(last - given_back) : 0;
}

bool port::shares(std::uint32_t handle) const noexcept {
    return handle != 0 && handle <= app_regions_.size() &&
           app_regions_[handle - 1].st == app_region::state::shared &&
           app_regions_[handle - 1].refs != 0;
}

// Nothing to do: in_flight reads the server's tail itself.
void port::reclaim_tx() noexcept {}

}  // namespace uet::memif
