// libfabric_multi_ep: two FI_EP_RDM endpoints of one process on one dpdk port, through libfabric
// itself, against a peer process with one (run_multi_ep.sh starts both over a memif link).
//   fi_multi_ep host: fi_getinfo's ep_cnt says 16; both endpoints open on the port's one
//     address, told apart by PIDonFEP (fi_getname: 10.78.0.1, PIDonFEP 0 and 1 in the first two
//     bytes of sin_zero), a second fi_domain on the port is refused; each endpoint takes the
//     peer's messages and answers them.
//   fi_multi_ep peer: one endpoint, sends to both of the host's and checks the answers. It
//     sends one message to each endpoint first, and the others once both completed: a window of
//     packets sent while ARP still resolves the address is mostly dropped by the host stack's
//     few hold slots, a loss this test is not about.
// Sizes from 8 B to 300 kB, every byte checked (its pattern names the endpoint that sent it),
// both directions. Peers' names are known
// (10.78.0.1 with PIDonFEP 0 and 1 for the host, 10.78.0.2 for the peer): no out-of-band
// exchange. Exit status 0 when every check holds.
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <netinet/in.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MESSAGES 4
static const size_t sizes[MESSAGES] = {8, 1000, 20000, 300000};

static int failures;
static const char* role;

static void check(int ok, const char* what) {
    printf("%s: %-56s %s\n", role, what, ok ? "ok" : "FAILED");
    fflush(stdout);
    if (!ok) ++failures;
}
// check() for each post of a loop: a line only when it fails.
static void require(int ok, const char* what) {
    if (!ok) check(0, what);
}

// The byte at i of message `seq` from the endpoint whose address ends in `from`.
static unsigned char pattern(int from, int seq, size_t i) {
    return (unsigned char)(from * 37 + seq * 101 + i * 7 + (i >> 10));
}
static void fill(unsigned char* b, size_t len, int from, int seq) {
    for (size_t i = 0; i < len; ++i)
        b[i] = pattern(from, seq, i);
}
// The sender (from) and sequence number of a received message whose every byte is right.
static int verify(const unsigned char* b, size_t len, int* from, int* seq) {
    for (*seq = 0; *seq < MESSAGES && sizes[*seq] != len; ++*seq)
        ;
    if (*seq == MESSAGES) return 0;
    for (*from = 1; *from <= 3; ++*from) {
        size_t i = 0;
        while (i < len && b[i] == pattern(*from, *seq, i))
            ++i;
        if (i == len) return 1;
    }
    return 0;
}

// 10.78.0.x with PIDonFEP pid: uet's name (a sockaddr_in, the PIDonFEP big-endian in the first
// two bytes of sin_zero).
static struct sockaddr_in addr_of(int last_octet, int pid) {
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(4793)};
    a.sin_addr.s_addr = htonl(0x0a4e0000u | (unsigned)last_octet);
    a.sin_zero[0] = (unsigned char)(pid >> 8);
    a.sin_zero[1] = (unsigned char)pid;
    return a;
}

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec / 1e9;
}

struct ep {
    int id;  // the peer: 2; the host's: 1 (PIDonFEP 0) and 3 (PIDonFEP 1)
    struct fid_ep* ep;
    struct fid_cq* cq;
    struct fid_av* av;
    fi_addr_t peers[2];
    int received, sent, done;  // messages received, sends posted, sends completed
    unsigned char* rx[2 * MESSAGES];
    unsigned char* tx[2 * MESSAGES];
    int seen[4][MESSAGES];  // by sender and sequence number
};

static int open_ep(struct fid_domain* dom, struct fi_info* info, struct ep* e, int id) {
    struct fi_cq_attr cq_attr = {.format = FI_CQ_FORMAT_MSG, .size = 64};
    struct fi_av_attr av_attr = {.type = FI_AV_TABLE};
    e->id = id;
    if (fi_cq_open(dom, &cq_attr, &e->cq, NULL) || fi_av_open(dom, &av_attr, &e->av, NULL) ||
        fi_endpoint(dom, info, &e->ep, NULL) || fi_ep_bind(e->ep, &e->av->fid, 0) ||
        fi_ep_bind(e->ep, &e->cq->fid, FI_TRANSMIT | FI_RECV))
        return -1;
    return fi_enable(e->ep);
}

static void post_recvs(struct ep* e, int n) {
    for (int i = 0; i < n; ++i) {
        e->rx[i] = malloc(sizes[MESSAGES - 1]);
        require(fi_recv(e->ep, e->rx[i], sizes[MESSAGES - 1], NULL, FI_ADDR_UNSPEC, e->rx[i]) == 0,
                "fi_recv");
    }
}

// Messages [first, end) of the sequence, to peers[peer].
static void post_sends(struct ep* e, int peer, int first, int end) {
    for (int s = first; s < end; ++s) {
        unsigned char* b = malloc(sizes[s]);
        fill(b, sizes[s], e->id, s);
        e->tx[e->sent++] = b;
        ssize_t rc;
        while ((rc = fi_send(e->ep, b, sizes[s], NULL, e->peers[peer], b)) == -FI_EAGAIN) {
            struct fi_cq_msg_entry c;
            fi_cq_read(e->cq, &c, 0);
        }
        require(rc == 0, "fi_send");
    }
}

// One CQ read: counts sends, checks receives. -1 on an error entry.
static int poll_ep(struct ep* e) {
    struct fi_cq_msg_entry c[8];
    ssize_t n = fi_cq_read(e->cq, c, 8);
    if (n == -FI_EAVAIL) {
        struct fi_cq_err_entry err = {0};
        fi_cq_readerr(e->cq, &err, 0);
        printf("%s: endpoint %d: error completion %d (%s)\n", role, e->id, err.err,
               fi_strerror(err.err));
        return -1;
    }
    for (ssize_t i = 0; i < n; ++i) {
        if (c[i].flags & FI_SEND) {
            ++e->done;
            continue;
        }
        int from, seq;
        const int ok = verify(c[i].op_context, c[i].len, &from, &seq);
        if (!ok || e->seen[from][seq]++) {
            check(0, "a received message is one of the peer's, once");
            return -1;
        }
        ++e->received;
    }
    return 0;
}

static struct fi_info* get_info(void) {
    struct fi_info* hints = fi_allocinfo();
    struct fi_info* info = NULL;
    hints->ep_attr->type = FI_EP_RDM;
    hints->caps = FI_MSG;
    hints->fabric_attr->prov_name = strdup("uet");
    if (fi_getinfo(FI_VERSION(1, 5), NULL, NULL, 0, hints, &info)) info = NULL;
    fi_freeinfo(hints);
    return info;
}

int main(int argc, char** argv) {
    role = argc > 1 ? argv[1] : "";
    const int host = strcmp(role, "host") == 0;
    struct fi_info* info = get_info();
    check(info != NULL, "fi_getinfo");
    if (!info) return 1;
    struct fid_fabric* fab;
    struct fid_domain* dom;
    check(fi_fabric(info->fabric_attr, &fab, NULL) == 0 && fi_domain(fab, info, &dom, NULL) == 0,
          "fi_fabric, fi_domain");
    struct ep eps[2];
    memset(eps, 0, sizeof(eps));
    const int n_eps = host ? 2 : 1;
    if (host) {
        check(info->domain_attr->ep_cnt == 16, "ep_cnt: 16 (PIDonFEPs of the port's address)");
        struct fid_domain* second;
        check(fi_domain(fab, info, &second, NULL) == -FI_EBUSY,
              "a second fi_domain on the port: -FI_EBUSY");
    }
    for (int i = 0; i < n_eps; ++i) {
        const int id = host ? 1 + 2 * i : 2;
        check(open_ep(dom, info, &eps[i], id) == 0, "an endpoint");
        struct sockaddr_in name;
        size_t len = sizeof(name);
        const struct sockaddr_in want = addr_of(host ? 1 : 2, i);
        check(fi_getname(&eps[i].ep->fid, &name, &len) == 0 && len == sizeof(name) &&
                  memcmp(&name, &want, sizeof(name)) == 0,
              "... named by the port's address and its PIDonFEP (fi_getname)");
    }
    if (host) {
        struct sockaddr_in peer = addr_of(2, 0);
        for (int i = 0; i < 2; ++i) {
            check(fi_av_insert(eps[i].av, &peer, 1, &eps[i].peers[0], 0, NULL) == 1,
                  "fi_av_insert of the peer");
            post_recvs(&eps[i], MESSAGES);
        }
        // Ready: the peer may connect to the memif link now.
        FILE* f = fopen(argv[2], "w");
        if (f) fclose(f);
    } else {
        struct sockaddr_in hosts[2] = {addr_of(1, 0), addr_of(1, 1)};
        check(fi_av_insert(eps[0].av, hosts, 2, eps[0].peers, 0, NULL) == 2,
              "fi_av_insert of the host's two endpoints");
        post_recvs(&eps[0], 2 * MESSAGES);
        post_sends(&eps[0], 0, 0, 1);
        post_sends(&eps[0], 1, 0, 1);
    }
    // The host answers each endpoint's messages once they are all in.
    const int expect = host ? MESSAGES : 2 * MESSAGES;
    const double give_up = now_s() + 20;
    int finished = 0;
    while (!failures && !finished && now_s() < give_up) {
        finished = 1;
        for (int i = 0; i < n_eps; ++i) {
            struct ep* e = &eps[i];
            if (poll_ep(e) != 0) failures++;
            if (host && e->received == expect && e->sent == 0) post_sends(e, 0, 0, MESSAGES);
            // The peer's first message to each address resolved it (ARP): the rest follow.
            if (!host && e->done == 2 && e->sent == 2) {
                post_sends(e, 0, 1, MESSAGES);
                post_sends(e, 1, 1, MESSAGES);
            }
            finished &= e->received == expect && e->sent == expect && e->done == e->sent;
        }
    }
    for (int i = 0; i < n_eps && !finished; ++i)
        printf("%s: endpoint %d: %d of %d messages in, %d of %d sends completed\n", role, eps[i].id,
               eps[i].received, expect, eps[i].done, eps[i].sent);
    check(finished, host ? "both endpoints: the peer's messages in, answers out"
                         : "messages to both of the host's endpoints, their answers in");
    for (int i = 0; i < n_eps; ++i)
        check(fi_close(&eps[i].ep->fid) == 0 && fi_close(&eps[i].cq->fid) == 0 &&
                  fi_close(&eps[i].av->fid) == 0,
              "fi_close");
    fi_close(&dom->fid);
    fi_close(&fab->fid);
    fi_freeinfo(info);
    printf("%s: %s\n", role, failures ? "FAILED" : "all passed");
    return failures != 0;
}
