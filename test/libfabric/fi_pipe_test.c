// The uet libfabric provider on its pipe fabric, through libfabric itself (FI_PROVIDER_PATH):
// two FI_EP_RDM endpoints of this process exchange messages, tagged messages and injects, and
// bad use gets libfabric's errors; two ordered endpoints opened as Open MPI opens them take
// directed receives and messages to themselves; two FI_EP_DGRAM endpoints exchange datagrams;
// multi-receive buffers (FI_MULTI_RECV) take several messages each; FI_PEEK and FI_CLAIM probe
// and claim messages that arrived before their receive, fi_cancel takes a receive back.
// Exit status 0 when every check holds.
#define _POSIX_C_SOURCE 200809L
#include <netinet/in.h>
#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

static void check(int ok, const char* what) {
    printf("%-52s %s\n", what, ok ? "ok" : "FAILED");
    if (!ok) ++failures;
}

struct side {
    struct fid_ep* ep;
    struct fid_cq* tx;
    struct fid_cq* rx;
};

// Reads cq until an entry (or an error entry: -FI_EAVAIL) comes; bounded.
static ssize_t wait_cq(struct fid_cq* cq, struct fi_cq_tagged_entry* e) {
    for (long i = 0; i < 10000000; ++i) {
        ssize_t n = fi_cq_read(cq, e, 1);
        if (n != -FI_EAGAIN) return n;
    }
    return -FI_EAGAIN;
}

static int open_side(struct fid_domain* dom, struct fi_info* info, struct fid_av* av,
                     struct side* s) {
    struct fi_cq_attr cq_attr = {
        .format = FI_CQ_FORMAT_TAGGED, .wait_obj = FI_WAIT_NONE, .size = 64};
    if (fi_cq_open(dom, &cq_attr, &s->tx, NULL) || fi_cq_open(dom, &cq_attr, &s->rx, NULL) ||
        fi_endpoint(dom, info, &s->ep, NULL))
        return -1;
    if (fi_ep_bind(s->ep, &av->fid, 0) || fi_ep_bind(s->ep, &s->tx->fid, FI_TRANSMIT) ||
        fi_ep_bind(s->ep, &s->rx->fid, FI_RECV))
        return -1;
    return fi_enable(s->ep);
}

// What Open MPI's mtl ofi asks for: tagged messages with directed receives, send-after-send
// order, 4 bytes of remote CQ data (it carries the source rank in the tag when it gets none),
// one CQ for both directions with selective completion, messages to its own address.
static void ordered_tagged(struct fid_domain* dom, struct fid_av* av) {
    struct fi_info* hints = fi_allocinfo();
    struct fi_info* info = NULL;
    struct fi_info* no = NULL;
    hints->mode = FI_CONTEXT | FI_CONTEXT2;
    hints->ep_attr->type = FI_EP_RDM;
    hints->caps = FI_MSG | FI_TAGGED | FI_DIRECTED_RECV | FI_LOCAL_COMM | FI_REMOTE_COMM;
    hints->tx_attr->msg_order = hints->rx_attr->msg_order = FI_ORDER_SAS;
    hints->tx_attr->op_flags = hints->rx_attr->op_flags = FI_COMPLETION;
    hints->domain_attr->cq_data_size = 4;
    hints->fabric_attr->prov_name = strdup("uet");
    setenv("FI_UET_MODE", "rud", 1);
    check(fi_getinfo(FI_VERSION(1, 5), NULL, NULL, 0, hints, &no) == -FI_ENODATA,
          "FI_ORDER_SAS with FI_UET_MODE=rud: -FI_ENODATA");
    unsetenv("FI_UET_MODE");
    int rc = fi_getinfo(FI_VERSION(1, 5), NULL, NULL, 0, hints, &info);
    check(rc == 0 && info->tx_attr->msg_order == FI_ORDER_SAS &&
              info->rx_attr->msg_order == FI_ORDER_SAS && (info->caps & FI_DIRECTED_RECV) &&
              info->domain_attr->cq_data_size == 0 && !(info->caps & FI_REMOTE_CQ_DATA) &&
              (info->ep_attr->mem_tag_format >> 63) == 1,
          "Open MPI's hints: FI_ORDER_SAS, no CQ data, 64 tag bits");
    hints->caps |= FI_REMOTE_CQ_DATA;
    check(fi_getinfo(FI_VERSION(1, 5), NULL, NULL, 0, hints, &no) == -FI_ENODATA,
          "caps FI_REMOTE_CQ_DATA: -FI_ENODATA");
    if (rc) return;
    struct fid_ep* ep[2];
    struct fid_cq* cq[2];
    struct sockaddr_in names[2];
    fi_addr_t addr[2];
    struct fi_cq_attr cq_attr = {.format = FI_CQ_FORMAT_TAGGED, .size = 64};
    for (int i = 0; i < 2; ++i) {
        size_t len = sizeof(names[i]);
        check(fi_cq_open(dom, &cq_attr, &cq[i], NULL) == 0 &&
                  fi_endpoint(dom, info, &ep[i], NULL) == 0 &&
                  fi_ep_bind(ep[i], &av->fid, 0) == 0 &&
                  fi_ep_bind(ep[i], &cq[i]->fid, FI_TRANSMIT | FI_RECV | FI_SELECTIVE_COMPLETION) ==
                      0 &&
                  fi_enable(ep[i]) == 0 && fi_getname(&ep[i]->fid, &names[i], &len) == 0,
              "an ordered endpoint, one CQ with FI_SELECTIVE_COMPLETION");
    }
    check(fi_av_insert(av, names, 2, addr, 0, NULL) == 2, "fi_av_insert of both");
    struct fi_cq_tagged_entry e;
    unsigned long long mine = 1, theirs = 2, got[2] = {0, 0};
    int ctx[2];
    struct iovec iov = {.iov_base = &got[0], .iov_len = 8};
    struct fi_msg_tagged m = {.msg_iov = &iov, .iov_count = 1, .addr = addr[1], .tag = 1};
    check(fi_trecvmsg(ep[0], &m, 0) == -FI_EBADFLAGS,
          "a receive without FI_COMPLETION there: -FI_EBADFLAGS");
    // ep[0]'s receive names ep[1]: its own message, sent first, waits for the second receive.
    fi_trecv(ep[0], &got[0], 8, NULL, addr[1], 1, 0, &ctx[0]);
    check(fi_tinject(ep[0], &mine, 8, addr[0], 1) == 0, "fi_tinject to its own address");
    check(fi_tinject(ep[1], &theirs, 8, addr[0], 1) == 0, "fi_tinject from the other");
    check(wait_cq(cq[0], &e) == 1 && e.op_context == &ctx[0] && got[0] == theirs,
          "FI_DIRECTED_RECV: the receive takes its source's message");
    fi_trecv(ep[0], &got[1], 8, NULL, FI_ADDR_UNSPEC, 1, 0, &ctx[1]);
    check(wait_cq(cq[0], &e) == 1 && e.op_context == &ctx[1] && got[1] == mine,
          "... and a message to oneself arrives");
    for (int i = 0; i < 2; ++i)
        check(fi_close(&ep[i]->fid) == 0 && fi_close(&cq[i]->fid) == 0, "fi_close");
    fi_freeinfo(info);
    fi_freeinfo(hints);
}

// FI_EP_DGRAM: UET's unreliable datagrams, one packet per message.
static void datagrams(struct fid_domain* dom, struct fid_av* av) {
    struct fi_info* hints = fi_allocinfo();
    struct fi_info* info = NULL;
    struct fi_info* no = NULL;
    hints->ep_attr->type = FI_EP_DGRAM;
    hints->caps = FI_MSG | FI_TAGGED | FI_MULTI_RECV;
    hints->fabric_attr->prov_name = strdup("uet");
    hints->tx_attr->msg_order = FI_ORDER_SAS;
    check(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &no) == -FI_ENODATA,
          "FI_EP_DGRAM with FI_ORDER_SAS: -FI_ENODATA");
    hints->tx_attr->msg_order = 0;
    int rc = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info);
    check(rc == 0 && info->ep_attr->type == FI_EP_DGRAM && info->ep_attr->max_msg_size == 4096 &&
              info->next == NULL,
          "fi_getinfo(FI_EP_DGRAM): one packet (4096 B on the pipe)");
    if (rc) return;
    struct side d[2];
    struct sockaddr_in names[2];
    fi_addr_t addr[2];
    for (int i = 0; i < 2; ++i) {
        size_t len = sizeof(names[i]);
        check(
            open_side(dom, info, av, &d[i]) == 0 && fi_getname(&d[i].ep->fid, &names[i], &len) == 0,
            "a datagram endpoint");
    }
    check(fi_av_insert(av, names, 2, addr, 0, NULL) == 2, "fi_av_insert of both");
    static char big[4097], in[4097];
    struct fi_cq_tagged_entry e;
    int ctx_r, ctx_s;
    memset(big, 'd', sizeof(big));
    check(fi_send(d[0].ep, big, sizeof(big), NULL, addr[1], &ctx_s) == -FI_EMSGSIZE,
          "a datagram above one packet: -FI_EMSGSIZE");
    fi_recv(d[1].ep, in, sizeof(in), NULL, FI_ADDR_UNSPEC, &ctx_r);
    check(fi_send(d[0].ep, big, 4096, NULL, addr[1], &ctx_s) == 0, "fi_send of 4096 B");
    check(wait_cq(d[1].rx, &e) == 1 && e.op_context == &ctx_r && e.len == 4096 &&
              !memcmp(in, big, 4096),
          "... arrives whole");
    check(wait_cq(d[0].tx, &e) == 1 && e.op_context == &ctx_s, "... and completes");
    unsigned long long v = 99, got = 0;
    fi_trecv(d[0].ep, &got, sizeof(got), NULL, FI_ADDR_UNSPEC, 0x77, 0, &ctx_r);
    check(fi_tinject(d[1].ep, &v, sizeof(v), addr[0], 0x77) == 0, "fi_tinject of a datagram");
    check(wait_cq(d[0].rx, &e) == 1 && e.tag == 0x77 && got == v, "... matches its tag");
    check(fi_write(d[0].ep, &v, sizeof(v), NULL, addr[1], 0, 1, &ctx_s) == -FI_EOPNOTSUPP,
          "fi_write on a datagram endpoint: -FI_EOPNOTSUPP");
    // FI_MULTI_RECV: two datagrams of 1000 B in one 2100-byte buffer, whose
    // 100 B left (>= 64) stay posted until a third does not fit (an entry of its own).
    static char mb[2100];
    static char dg[3][1000];
    struct iovec miov = {.iov_base = mb, .iov_len = sizeof(mb)};
    struct fi_msg mm = {
        .msg_iov = &miov, .iov_count = 1, .addr = FI_ADDR_UNSPEC, .context = &ctx_r};
    check(fi_recvmsg(d[1].ep, &mm, FI_MULTI_RECV) == 0, "a datagram multi-receive buffer");
    int sent = 0, placed = 0, release = 0;
    char seen[2] = {0, 0};
    for (int i = 0; i < 3; ++i) {
        memset(dg[i], 'a' + i, sizeof(dg[i]));
        sent += fi_send(d[0].ep, dg[i], sizeof(dg[i]), NULL, addr[1], NULL) == 0;
    }
    for (int n = 0; n < 3 && wait_cq(d[1].rx, &e) == 1; ++n) {
        char* at = e.buf;
        if (e.flags == FI_MULTI_RECV && e.len == 0 && at == NULL) {
            release += n == 2;
            continue;
        }
        const int slot = at == mb ? 0 : at == mb + 1000 ? 1 : -1;
        if (slot < 0 || e.len != 1000 || e.op_context != &ctx_r || (e.flags & FI_MULTI_RECV) ||
            at[0] < 'a' || at[0] > 'c' || memcmp(at, dg[at[0] - 'a'], 1000))
            continue;
        seen[slot] = at[0];
        ++placed;
    }
    check(sent == 3 && placed == 2 && release == 1 && seen[0] != seen[1],
          "... takes two datagrams, then its release entry");
    char last[1000];
    fi_recv(d[1].ep, last, sizeof(last), NULL, FI_ADDR_UNSPEC, &ctx_r);
    check(wait_cq(d[1].rx, &e) == 1 && e.len == 1000 && last[0] != seen[0] && last[0] != seen[1],
          "... and the third goes to the next receive");
    for (int i = 0; i < 3; ++i)
        wait_cq(d[0].tx, &e);
    for (int i = 0; i < 2; ++i)
        check(fi_close(&d[i].ep->fid) == 0 && fi_close(&d[i].tx->fid) == 0 &&
                  fi_close(&d[i].rx->fid) == 0,
              "fi_close");
    fi_freeinfo(info);
    fi_freeinfo(hints);
}

// Counters: a sender whose transmit CQ takes only what asks for FI_COMPLETION, with a send
// counter that counts every send (inject and quiet ones too) and its errors; a receiver with a
// receive counter and no CQ at all.
static void counters(struct fid_domain* dom, struct fi_info* info, struct fid_av* av) {
    struct fid_cntr *sc, *rc;
    struct fi_cntr_attr ca = {.events = FI_CNTR_EVENTS_COMP, .wait_obj = FI_WAIT_NONE};
    check(fi_cntr_open(dom, &ca, &sc, NULL) == 0 && fi_cntr_open(dom, &ca, &rc, NULL) == 0,
          "fi_cntr_open");
    struct fid_cq* tx;
    struct fid_ep *s, *r;
    struct fi_cq_attr cq_attr = {.format = FI_CQ_FORMAT_TAGGED, .size = 64};
    check(fi_cq_open(dom, &cq_attr, &tx, NULL) == 0 && fi_endpoint(dom, info, &s, NULL) == 0 &&
              fi_ep_bind(s, &av->fid, 0) == 0 &&
              fi_ep_bind(s, &tx->fid, FI_TRANSMIT | FI_SELECTIVE_COMPLETION) == 0 &&
              fi_ep_bind(s, &sc->fid, FI_SEND) == 0 && fi_enable(s) == 0,
          "a sender: selective transmit CQ, send counter");
    check(fi_endpoint(dom, info, &r, NULL) == 0 && fi_ep_bind(r, &av->fid, 0) == 0 &&
              fi_ep_bind(r, &rc->fid, FI_REMOTE_WRITE) == -FI_ENOSYS &&
              fi_ep_bind(r, &rc->fid, FI_RECV) == 0 && fi_enable(r) == 0,
          "a receiver: a receive counter, no CQ (FI_REMOTE_WRITE: -FI_ENOSYS)");
    struct sockaddr_in names[2];
    size_t len = sizeof(names[0]);
    fi_addr_t addr[2];
    fi_getname(&s->fid, &names[0], &len);
    fi_getname(&r->fid, &names[1], &len);
    check(fi_av_insert(av, names, 2, addr, 0, NULL) == 2, "fi_av_insert of both");
    char in[3][8], out[8] = "count";
    int ctx[3];
    for (int i = 0; i < 3; ++i)
        fi_recv(r, in[i], sizeof(in[i]), NULL, FI_ADDR_UNSPEC, &ctx[i]);
    struct iovec iov = {.iov_base = out, .iov_len = sizeof(out)};
    struct fi_msg msg = {.msg_iov = &iov, .iov_count = 1, .addr = addr[1], .context = &ctx[2]};
    check(fi_send(s, out, sizeof(out), NULL, addr[1], &ctx[0]) == 0 &&
              fi_inject(s, out, sizeof(out), addr[1]) == 0 &&
              fi_sendmsg(s, &msg, FI_COMPLETION) == 0,
          "fi_send, fi_inject, fi_sendmsg(FI_COMPLETION)");
    check(fi_cntr_wait(sc, 3, 10000) == 0 && fi_cntr_read(sc) == 3 && fi_cntr_readerr(sc) == 0,
          "the send counter counts all three");
    check(fi_cntr_wait(rc, 3, 10000) == 0 && fi_cntr_read(rc) == 3 && !strcmp(in[2], "count"),
          "the receive counter counts the three receives");
    struct fi_cq_tagged_entry e;
    check(fi_cq_read(tx, &e, 1) == 1 && e.op_context == &ctx[2] &&
              fi_cq_read(tx, &e, 1) == -FI_EAGAIN,
          "one CQ entry: the send that asked for it");
    struct sockaddr_in nobody = names[0];
    nobody.sin_addr.s_addr = htonl(0x0a630002);  // 10.99.0.2
    fi_addr_t dead;
    fi_av_insert(av, &nobody, 1, &dead, 0, NULL);
    check(fi_send(s, out, sizeof(out), NULL, dead, &ctx[0]) == 0 &&
              fi_cntr_wait(sc, 4, 10000) == -FI_EAVAIL && fi_cntr_readerr(sc) == 1 &&
              fi_cntr_read(sc) == 3,
          "a failed send: the error count, -FI_EAVAIL from fi_cntr_wait");
    struct fi_cq_err_entry err = {0};
    check(fi_cq_read(tx, &e, 1) == -FI_EAVAIL && fi_cq_readerr(tx, &err, 0) == 1 &&
              err.op_context == &ctx[0],
          "... and its error entry, selective or not");
    check(fi_cntr_add(sc, 2) == 0 && fi_cntr_read(sc) == 5 && fi_cntr_set(sc, 0) == 0 &&
              fi_cntr_seterr(sc, 0) == 0 && fi_cntr_read(sc) == 0 && fi_cntr_readerr(sc) == 0,
          "fi_cntr_add, fi_cntr_set, fi_cntr_seterr");
    check(fi_close(&sc->fid) == -FI_EBUSY, "closing a bound counter: -FI_EBUSY");
    check(fi_close(&s->fid) == 0 && fi_close(&r->fid) == 0 && fi_close(&tx->fid) == 0 &&
              fi_close(&sc->fid) == 0 && fi_close(&rc->fid) == 0,
          "fi_close");
}

// FI_MULTI_RECV: one buffer takes several messages, each with its own entry whose buf points
// into it; the buffer's last entry carries FI_MULTI_RECV (a message's, or one of length 0 when
// the next message does not fit what is left). FI_OPT_MIN_MULTI_RECV set before fi_enable.
// Ordered endpoints (FI_ORDER_SAS), so that where each message lands is known.
static void multi_recv(struct fid_domain* dom, struct fid_av* av) {
    struct fi_info* hints = fi_allocinfo();
    struct fi_info* info = NULL;
    hints->ep_attr->type = FI_EP_RDM;
    hints->caps = FI_MSG | FI_TAGGED | FI_MULTI_RECV;
    hints->tx_attr->msg_order = hints->rx_attr->msg_order = FI_ORDER_SAS;
    hints->fabric_attr->prov_name = strdup("uet");
    int rc = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info);
    check(rc == 0 && (info->caps & FI_MULTI_RECV), "fi_getinfo(FI_MULTI_RECV)");
    if (rc) return;
    struct side s, r;
    struct fi_cq_attr cq_attr = {.format = FI_CQ_FORMAT_TAGGED, .size = 64};
    size_t min = 0, len = sizeof(min);
    check(open_side(dom, info, av, &s) == 0 && fi_cq_open(dom, &cq_attr, &r.tx, NULL) == 0 &&
              fi_cq_open(dom, &cq_attr, &r.rx, NULL) == 0 &&
              fi_endpoint(dom, info, &r.ep, NULL) == 0,
          "a sender, and a receiver not yet enabled");
    check(fi_getopt(&r.ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV, &min, &len) == 0 &&
              len == sizeof(size_t) && min == 64,
          "fi_getopt(FI_OPT_MIN_MULTI_RECV): 64 by default");
    min = 100;
    len = 1;
    check(fi_setopt(&r.ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV, &min, sizeof(min)) == 0 &&
              fi_getopt(&r.ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV, &min, &len) ==
                  -FI_ETOOSMALL &&
              fi_getopt(&r.ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV, &min, &len) == 0 &&
              min == 100,
          "fi_setopt(FI_OPT_MIN_MULTI_RECV, 100), read back");
    check(fi_setopt(&r.ep->fid, FI_OPT_ENDPOINT, FI_OPT_CM_DATA_SIZE, &min, sizeof(min)) ==
              -FI_ENOPROTOOPT,
          "fi_setopt of another option: -FI_ENOPROTOOPT");
    struct fid_cntr* cntr = NULL;
    struct fi_cntr_attr ca = {.events = FI_CNTR_EVENTS_COMP, .wait_obj = FI_WAIT_NONE};
    check(fi_cntr_open(dom, &ca, &cntr, NULL) == 0 && fi_ep_bind(r.ep, &av->fid, 0) == 0 &&
              fi_ep_bind(r.ep, &r.tx->fid, FI_TRANSMIT) == 0 &&
              fi_ep_bind(r.ep, &r.rx->fid, FI_RECV) == 0 &&
              fi_ep_bind(r.ep, &cntr->fid, FI_RECV) == 0 && fi_enable(r.ep) == 0,
          "... a receive counter, fi_enable");
    check(fi_setopt(&r.ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV, &min, sizeof(min)) ==
              -FI_EOPBADSTATE,
          "fi_setopt(FI_OPT_MIN_MULTI_RECV) after fi_enable: -FI_EOPBADSTATE");
    struct sockaddr_in names[2];
    fi_addr_t addr[2];
    len = sizeof(names[0]);
    fi_getname(&s.ep->fid, &names[0], &len);
    fi_getname(&r.ep->fid, &names[1], &len);
    check(fi_av_insert(av, names, 2, addr, 0, NULL) == 2, "fi_av_insert of both");

    static char buf[2][1024];
    int ctx[2];
    struct iovec iov = {.iov_base = buf[0], .iov_len = 99};
    struct fi_msg m = {.msg_iov = &iov, .iov_count = 1, .addr = FI_ADDR_UNSPEC, .context = &ctx[0]};
    check(fi_recvmsg(r.ep, &m, FI_MULTI_RECV) == -FI_EINVAL,
          "a multi-receive buffer below the minimum: -FI_EINVAL");
    struct fi_msg_tagged tm = {.msg_iov = &iov, .iov_count = 1, .addr = FI_ADDR_UNSPEC};
    check(fi_trecvmsg(r.ep, &tm, FI_MULTI_RECV) == -FI_EBADFLAGS,
          "a tagged multi-receive: -FI_EBADFLAGS");
    // Buffer 0 (1024 B) takes 300, 300, 300; 124 B are left (>= 100), too few for the 200 that
    // follow: it is released by an entry of length 0, and buffer 1 (512 B) takes 200 and 230,
    // leaving 82 (< 100, not < 64, the default): the 230's entry releases it.
    const size_t sizes[5] = {300, 300, 300, 200, 230};
    const int in_buf[5] = {0, 0, 0, 1, 1};
    const size_t at[5] = {0, 300, 600, 0, 200};
    for (int i = 0; i < 2; ++i) {
        iov.iov_base = buf[i];
        iov.iov_len = i == 0 ? 1024 : 512;
        m.context = &ctx[i];
        check(fi_recvmsg(r.ep, &m, FI_MULTI_RECV) == 0, "fi_recvmsg(FI_MULTI_RECV)");
    }
    static char out[5][300];
    int sent = 0;
    for (int i = 0; i < 5; ++i) {
        memset(out[i], 'A' + i, sizeof(out[i]));
        sent += fi_send(s.ep, out[i], sizes[i], NULL, addr[1], NULL) == 0;
    }
    check(sent == 5, "five fi_send of 300, 300, 300, 200, 230 B");
    // Expected entries, in order: the three messages in buffer 0, its release (length 0), the
    // two in buffer 1, the last with FI_MULTI_RECV.
    struct fi_cq_tagged_entry e;
    int placed = 0, releases[2] = {0, 0}, order_ok = 1, next = 0;
    for (int n = 0; n < 6; ++n) {
        if (wait_cq(r.rx, &e) != 1) {
            order_ok = 0;
            break;
        }
        const int b = e.op_context == &ctx[1];
        const int release = (e.flags & FI_MULTI_RECV) != 0;
        releases[b] += release;
        if (release && e.len == 0) {  // buffer 0's own release: FI_MULTI_RECV alone
            order_ok &= b == 0 && next == 3 && e.buf == NULL && e.flags == FI_MULTI_RECV;
            continue;
        }
        const int i = next++;
        const int ok = i < 5 && b == in_buf[i] && e.len == sizes[i] && e.buf == buf[b] + at[i] &&
                       (e.flags & (FI_RECV | FI_MSG)) == (FI_RECV | FI_MSG) &&
                       release == (i == 4) && !memcmp(e.buf, out[i], sizes[i]);
        placed += ok;
        order_ok &= ok;
    }
    check(placed == 5 && order_ok, "each message's entry: its bytes, buf into the buffer");
    check(releases[0] == 1 && releases[1] == 1, "FI_MULTI_RECV once per buffer, on its last entry");
    check(fi_cq_read(r.rx, &e, 1) == -FI_EAGAIN && fi_cntr_read(cntr) == 5,
          "... no entry more; the counter counts the 5 messages");
    int done = 0;
    for (int i = 0; i < 5; ++i)
        done += wait_cq(s.tx, &e) == 1;
    check(done == 5, "the five sends complete");
    check(fi_close(&s.ep->fid) == 0 && fi_close(&r.ep->fid) == 0 && fi_close(&s.tx->fid) == 0 &&
              fi_close(&s.rx->fid) == 0 && fi_close(&r.tx->fid) == 0 && fi_close(&r.rx->fid) == 0 &&
              fi_close(&cntr->fid) == 0,
          "fi_close");
    fi_freeinfo(info);
    fi_freeinfo(hints);
}

// Bad use, beyond what main() tries: posts before fi_enable, closing what an endpoint still
// uses, every operation to an address the AV does not hold (an FI_AV_TABLE index never given or
// removed, an FI_AV_MAP handle never given), receives past the queue depth, closing an endpoint
// with receives posted, sends to an endpoint that closed. Local buffers need no registration
// (mr_mode has no FI_MR_LOCAL): every buffer here and in main() is plain memory.
static void bad_use(struct fid_domain* dom, struct fid_av* av) {
    struct fi_info* hints = fi_allocinfo();
    struct fi_info* info = NULL;
    hints->ep_attr->type = FI_EP_RDM;
    hints->caps = FI_MSG | FI_TAGGED | FI_DIRECTED_RECV | FI_RMA | FI_ATOMIC;
    hints->domain_attr->mr_mode = FI_MR_PROV_KEY | FI_MR_LOCAL;
    hints->fabric_attr->prov_name = strdup("uet");
    int rc = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info);
    check(rc == 0 && !(info->domain_attr->mr_mode & FI_MR_LOCAL),
          "mr_mode without FI_MR_LOCAL: local buffers unregistered");
    if (rc) return;
    struct fi_cq_attr cq_attr = {.format = FI_CQ_FORMAT_TAGGED, .size = 64};
    struct side x, y;
    char buf[16] = "bad use";
    int ctx;
    size_t len = sizeof(struct sockaddr_in);
    struct sockaddr_in names[2];
    check(fi_cq_open(dom, &cq_attr, &x.tx, NULL) == 0 &&
              fi_cq_open(dom, &cq_attr, &x.rx, NULL) == 0 &&
              fi_endpoint(dom, info, &x.ep, NULL) == 0,
          "an endpoint, not enabled");
    check(fi_send(x.ep, buf, 4, NULL, 0, &ctx) == -FI_EOPBADSTATE &&
              fi_recv(x.ep, buf, 4, NULL, FI_ADDR_UNSPEC, &ctx) == -FI_EOPBADSTATE &&
              fi_getname(&x.ep->fid, &names[0], &len) == -FI_EOPBADSTATE,
          "... posts and fi_getname: -FI_EOPBADSTATE");
    check(fi_ep_bind(x.ep, &x.tx->fid, FI_TRANSMIT) == 0 && fi_enable(x.ep) == -FI_ENOAV,
          "fi_enable without an AV: -FI_ENOAV");
    check(fi_ep_bind(x.ep, &av->fid, 0) == 0 && fi_ep_bind(x.ep, &x.rx->fid, FI_RECV) == 0 &&
              fi_enable(x.ep) == 0 && open_side(dom, info, av, &y) == 0,
          "... fi_enable with one; a second endpoint");
    check(fi_close(&x.tx->fid) == -FI_EBUSY && fi_close(&av->fid) == -FI_EBUSY,
          "closing a CQ or AV an endpoint uses: -FI_EBUSY");
    len = sizeof(names[0]);
    fi_getname(&x.ep->fid, &names[0], &len);
    fi_getname(&y.ep->fid, &names[1], &len);
    fi_addr_t addr[2];
    check(fi_av_insert(av, names, 2, addr, 0, NULL) == 2, "fi_av_insert of both");
    const fi_addr_t never = addr[1] + 100;
    unsigned long long word = 1, old = 0;
    check(fi_tsend(x.ep, buf, 4, NULL, never, 1, &ctx) == -FI_EINVAL &&
              fi_write(x.ep, buf, 4, NULL, never, 0, 1, &ctx) == -FI_EINVAL &&
              fi_read(x.ep, buf, 4, NULL, never, 0, 1, &ctx) == -FI_EINVAL &&
              fi_atomic(x.ep, &word, 1, NULL, never, 0, 1, FI_UINT64, FI_SUM, &ctx) == -FI_EINVAL &&
              fi_fetch_atomic(x.ep, &word, 1, NULL, &old, NULL, never, 0, 1, FI_UINT64, FI_SUM,
                              &ctx) == -FI_EINVAL &&
              fi_trecv(x.ep, buf, 4, NULL, never, 1, 0, &ctx) == -FI_EINVAL,
          "tsend, write, read, atomics, directed trecv to an index never given: -FI_EINVAL");
    fi_addr_t gone = addr[1];
    struct fi_cq_tagged_entry e;
    check(
        fi_av_remove(av, &gone, 1, 0) == 0 && fi_send(x.ep, buf, 4, NULL, gone, &ctx) == -FI_EINVAL,
        "fi_send to an index fi_av_remove removed: -FI_EINVAL");
    check(fi_av_insert(av, &names[1], 1, &addr[1], 0, NULL) == 1, "... inserted again");
    struct fid_av* map;
    struct fi_av_attr map_attr = {.type = FI_AV_MAP};
    struct side z;
    check(fi_av_open(dom, &map_attr, &map, NULL) == 0 && open_side(dom, info, map, &z) == 0,
          "an endpoint on an FI_AV_MAP");
    check(fi_send(z.ep, buf, 4, NULL, (fi_addr_t)0x7777, &ctx) == -FI_EINVAL &&
              fi_write(z.ep, buf, 4, NULL, (fi_addr_t)0x7777, 0, 1, &ctx) == -FI_EINVAL,
          "fi_send, fi_write to a handle never given: -FI_EINVAL");
    check(fi_close(&z.ep->fid) == 0 && fi_close(&z.tx->fid) == 0 && fi_close(&z.rx->fid) == 0 &&
              fi_close(&map->fid) == 0,
          "fi_close");
    // receives past the depth: 4 receive and 4 transmit slots, shared
    struct fi_info* small = fi_dupinfo(info);
    small->tx_attr->size = small->rx_attr->size = 4;
    struct side q;
    check(open_side(dom, small, av, &q) == 0, "an endpoint with 4 + 4 slots");
    static char sink[100][8];
    int posted = 0;
    ssize_t rq = 0;
    while (posted < 100 && (rq = fi_recv(q.ep, sink[posted], 8, NULL, FI_ADDR_UNSPEC, &ctx)) == 0)
        ++posted;
    check(rq == -FI_EAGAIN && posted >= 4 && posted <= 8,
          "receives past the slots: -FI_EAGAIN (after 4 to 8)");
    check(fi_close(&q.ep->fid) == 0 && fi_cq_read(q.rx, &e, 1) == -FI_EAGAIN,
          "closing it with receives posted: no entry for them");
    check(fi_close(&q.tx->fid) == 0 && fi_close(&q.rx->fid) == 0, "fi_close of its CQs");
    fi_freeinfo(small);
    // y closes: x's send to it ends in an error entry
    check(fi_close(&y.ep->fid) == 0, "the peer closes");
    check(fi_send(x.ep, buf, 4, NULL, addr[1], &ctx) == 0, "fi_send to it posted");
    struct fi_cq_err_entry err = {0};
    const ssize_t r = wait_cq(x.tx, &e);
    check(r == -FI_EAVAIL && fi_cq_readerr(x.tx, &err, 0) == 1 && err.op_context == &ctx &&
              err.err != 0,
          "... ends in an error entry");
    printf("  error: %s\n", fi_strerror(err.err));
    check(fi_close(&x.ep->fid) == 0 && fi_close(&x.tx->fid) == 0 && fi_close(&x.rx->fid) == 0 &&
              fi_close(&y.tx->fid) == 0 && fi_close(&y.rx->fid) == 0,
          "fi_close");
    fi_freeinfo(info);
    fi_freeinfo(hints);
}

// Peeks until one finds a message (as MPI_Probe does: the peek's completion, or FI_ENOMSG, each
// time); bounded. Returns the entry's fi_cq_readfrom result (1 when found), its source in src.
static ssize_t peek_until_found(struct side* s, struct fi_msg_tagged* m, uint64_t flags,
                                struct fi_cq_tagged_entry* e, fi_addr_t* src) {
    for (int i = 0; i < 100000; ++i) {
        if (fi_trecvmsg(s->ep, m, flags) != 0) return -FI_EOTHER;
        ssize_t n = -FI_EAGAIN;
        for (long k = 0; k < 1000000 && n == -FI_EAGAIN; ++k)
            n = fi_cq_readfrom(s->rx, e, 1, src);
        if (n != -FI_EAVAIL) return n;
        struct fi_cq_err_entry err = {0};
        if (fi_cq_readerr(s->rx, &err, 0) != 1 || err.err != FI_ENOMSG) return -FI_EOTHER;
    }
    return -FI_EAGAIN;
}

// FI_PEEK, FI_CLAIM and fi_cancel: what Open MPI's mtl ofi builds MPI_Iprobe, MPI_Improbe with
// MPI_Mrecv, and MPI_Cancel of a receive on.
static void probe_and_cancel(struct side* a, struct side* b, fi_addr_t to_b, fi_addr_t from_a) {
    struct fi_cq_tagged_entry e;
    struct fi_cq_err_entry err = {0};
    struct fi_context pctx, cctx, rctx;
    fi_addr_t src = FI_ADDR_NOTAVAIL;
    struct fi_msg_tagged peek = {.addr = FI_ADDR_UNSPEC, .tag = 0x77, .context = &pctx};
    check(fi_trecvmsg(b->ep, &peek, FI_PEEK | FI_COMPLETION) == 0 &&
              wait_cq(b->rx, &e) == -FI_EAVAIL && fi_cq_readerr(b->rx, &err, 0) == 1 &&
              err.err == FI_ENOMSG && err.op_context == &pctx,
          "FI_PEEK with nothing there: error entry FI_ENOMSG");
    unsigned long long v1 = 0xabc, v2 = 0xdef, got = 0;
    int s1, s2;
    check(fi_tsend(a->ep, &v1, 8, NULL, to_b, 0x77, &s1) == 0 &&
              fi_tsend(a->ep, &v2, 8, NULL, to_b, 0x78, &s2) == 0,
          "two tagged sends, no receive posted");
    check(peek_until_found(b, &peek, FI_PEEK | FI_COMPLETION, &e, &src) == 1 &&
              e.op_context == &pctx && e.len == 8 && e.tag == 0x77 &&
              (e.flags & (FI_TAGGED | FI_RECV)) == (FI_TAGGED | FI_RECV) && src == from_a,
          "FI_PEEK finds it: length, tag, FI_SOURCE");
    check(peek_until_found(b, &peek, FI_PEEK, &e, &src) == 1 && e.tag == 0x77,
          "... and again: a peek takes nothing");
    struct fi_msg_tagged claim = {
        .addr = FI_ADDR_UNSPEC, .tag = 0x70, .ignore = 0xf, .context = &cctx};
    check(peek_until_found(b, &claim, FI_PEEK | FI_CLAIM, &e, &src) == 1 && e.op_context == &cctx &&
              e.tag == 0x77,
          "FI_PEEK | FI_CLAIM under an ignore mask: the oldest");
    check(fi_trecvmsg(b->ep, &peek, FI_PEEK) == 0 && wait_cq(b->rx, &e) == -FI_EAVAIL &&
              fi_cq_readerr(b->rx, &err, 0) == 1 && err.err == FI_ENOMSG,
          "... claimed: a peek no longer finds it");
    struct iovec iov = {.iov_base = &got, .iov_len = 8};
    claim.msg_iov = &iov;
    claim.iov_count = 1;
    check(fi_trecvmsg(b->ep, &claim, FI_CLAIM | FI_DISCARD) == -FI_EBADFLAGS,
          "FI_CLAIM | FI_DISCARD: -FI_EBADFLAGS");
    struct fi_msg_tagged no_ctx = claim;
    no_ctx.context = NULL;
    check(fi_trecvmsg(b->ep, &no_ctx, FI_CLAIM) == -FI_EINVAL,
          "FI_CLAIM without a context: -FI_EINVAL");
    check(fi_trecvmsg(b->ep, &claim, FI_CLAIM) == 0 && wait_cq(b->rx, &e) == 1 &&
              e.op_context == &cctx && e.tag == 0x77 && e.len == 8 && got == v1,
          "the FI_CLAIM receive takes the claimed message");
    check(fi_trecv(b->ep, &got, 8, NULL, FI_ADDR_UNSPEC, 0, ~0ull, &rctx) == 0 &&
              wait_cq(b->rx, &e) == 1 && e.tag == 0x78 && got == v2,
          "a wildcard receive takes the other");
    check(wait_cq(a->tx, &e) == 1 && wait_cq(a->tx, &e) == 1, "... both sends complete");
    struct fi_msg untagged = {
        .msg_iov = &iov, .iov_count = 1, .addr = FI_ADDR_UNSPEC, .context = &cctx};
    check(fi_recvmsg(b->ep, &untagged, FI_CLAIM) == -FI_EBADFLAGS,
          "an untagged FI_CLAIM: -FI_EBADFLAGS");

    check(fi_trecv(b->ep, &got, 8, NULL, FI_ADDR_UNSPEC, 0x99, 0, &rctx) == 0 &&
              fi_cancel(&b->ep->fid, &rctx) == 0,
          "fi_cancel of a posted fi_trecv");
    check(wait_cq(b->rx, &e) == -FI_EAVAIL && fi_cq_readerr(b->rx, &err, 0) == 1 &&
              err.err == FI_ECANCELED && err.op_context == &rctx && (err.flags & FI_TAGGED),
          "... an error entry FI_ECANCELED with its context");
    check(fi_cancel(&b->ep->fid, &rctx) == -FI_ENOENT, "... once: then -FI_ENOENT");
    check(fi_recv(b->ep, &got, 8, NULL, FI_ADDR_UNSPEC, &rctx) == 0 &&
              fi_cancel(&b->ep->fid, &rctx) == 0 && wait_cq(b->rx, &e) == -FI_EAVAIL &&
              fi_cq_readerr(b->rx, &err, 0) == 1 && err.err == FI_ECANCELED,
          "fi_cancel of a posted fi_recv");
    check(fi_cancel(&b->ep->fid, &pctx) == -FI_ENOENT && fi_cancel(&b->ep->fid, NULL) == -FI_ENOENT,
          "fi_cancel of nothing: -FI_ENOENT");
}

int main(void) {
    struct fi_info* hints = fi_allocinfo();
    struct fi_info* info = NULL;
    hints->ep_attr->type = FI_EP_RDM;
    hints->caps = FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC | FI_SOURCE;
    hints->fabric_attr->prov_name = strdup("uet");
    struct fi_info* no = NULL;
    check(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &no) == -FI_ENODATA,
          "FI_RMA, FI_ATOMIC without FI_MR_PROV_KEY: -FI_ENODATA");
    hints->domain_attr->mr_mode = FI_MR_PROV_KEY;
    int rc = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info);
    check(rc == 0 && info != NULL && info->domain_attr->mr_mode == FI_MR_PROV_KEY,
          "fi_getinfo(FI_EP_RDM, FI_MSG|FI_TAGGED|FI_RMA|FI_ATOMIC)");
    if (rc) return 1;

    hints->ep_attr->type = FI_EP_MSG;
    check(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &no) == -FI_ENODATA,
          "fi_getinfo(FI_EP_MSG) says -FI_ENODATA");
    hints->ep_attr->type = FI_EP_RDM;
    hints->caps = FI_MSG | FI_RMA_EVENT;
    check(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &no) == -FI_ENODATA,
          "fi_getinfo(FI_RMA_EVENT) says -FI_ENODATA");

    struct fid_fabric* fab;
    struct fid_domain* dom;
    struct fid_eq* eq;
    struct fid_av* av;
    struct fi_eq_attr eq_attr = {.wait_obj = FI_WAIT_UNSPEC};
    struct fi_av_attr av_attr = {.type = FI_AV_TABLE};
    check(fi_fabric(info->fabric_attr, &fab, NULL) == 0, "fi_fabric");
    check(fi_eq_open(fab, &eq_attr, &eq, NULL) == 0, "fi_eq_open");
    check(fi_domain(fab, info, &dom, NULL) == 0, "fi_domain");
    check(fi_av_open(dom, &av_attr, &av, NULL) == 0, "fi_av_open(FI_AV_TABLE)");
    struct side a, b;
    check(open_side(dom, info, av, &a) == 0 && open_side(dom, info, av, &b) == 0,
          "two endpoints: bind AV and CQs, fi_enable");

    struct sockaddr_in names[2];
    size_t len = 1;
    check(fi_getname(&a.ep->fid, &names[0], &len) == -FI_ETOOSMALL &&
              len == sizeof(struct sockaddr_in),
          "fi_getname: -FI_ETOOSMALL and the size needed");
    check(fi_getname(&a.ep->fid, &names[0], &len) == 0 &&
              fi_getname(&b.ep->fid, &names[1], &len) == 0 && names[0].sin_family == AF_INET,
          "fi_getname: the names");
    fi_addr_t addrs[2];
    check(fi_av_insert(av, names, 2, addrs, 0, NULL) == 2 && addrs[0] == 0 && addrs[1] == 1,
          "fi_av_insert: table indices 0 and 1");

    struct fi_cq_tagged_entry e;
    char in[64] = {0}, out[] = "hello over uet";
    int ctx_r, ctx_s;
    fi_recv(b.ep, in, sizeof(in), NULL, FI_ADDR_UNSPEC, &ctx_r);
    check(fi_send(a.ep, out, sizeof(out), NULL, addrs[1], &ctx_s) == 0, "fi_send posted");
    check(wait_cq(b.rx, &e) == 1 && e.op_context == &ctx_r && e.len == sizeof(out) &&
              (e.flags & (FI_RECV | FI_MSG)) == (FI_RECV | FI_MSG) && !strcmp(in, out),
          "fi_recv completes with the message");
    check(wait_cq(a.tx, &e) == 1 && e.op_context == &ctx_s && (e.flags & FI_SEND),
          "fi_send completes on the transmit CQ");
    // FI_SOURCE: fi_cq_readfrom names the sender by its index in the AV
    fi_addr_t src = FI_ADDR_UNSPEC;
    fi_recv(a.ep, in, sizeof(in), NULL, FI_ADDR_UNSPEC, &ctx_r);
    fi_send(b.ep, out, sizeof(out), NULL, addrs[0], &ctx_s);
    ssize_t got_from = -FI_EAGAIN;
    for (long i = 0; i < 10000000 && got_from == -FI_EAGAIN; ++i)
        got_from = fi_cq_readfrom(a.rx, &e, 1, &src);
    check(got_from == 1 && src == addrs[1], "FI_SOURCE: fi_cq_readfrom gives the sender");
    check(wait_cq(b.tx, &e) == 1, "... whose send completes");

    // tagged: the receive ignores the low 8 bits
    unsigned long long v = 0x1122334455667788ull, got = 0;
    fi_trecv(a.ep, &got, sizeof(got), NULL, FI_ADDR_UNSPEC, 0x500, 0xff, &ctx_r);
    check(fi_tsend(b.ep, &v, sizeof(v), NULL, addrs[0], 0x5ab, &ctx_s) == 0, "fi_tsend posted");
    check(wait_cq(a.rx, &e) == 1 && e.tag == 0x5ab && (e.flags & FI_TAGGED) && got == v,
          "fi_trecv matches under its ignore mask");
    check(wait_cq(b.tx, &e) == 1 && e.op_context == &ctx_s, "fi_tsend completes");

    // inject: no completion; sendmsg(FI_INJECT) with a completion
    memset(in, 0, sizeof(in));
    fi_recv(b.ep, in, sizeof(in), NULL, FI_ADDR_UNSPEC, &ctx_r);
    check(fi_inject(a.ep, "inj", 4, addrs[1]) == 0, "fi_inject posted");
    check(wait_cq(b.rx, &e) == 1 && !strcmp(in, "inj"), "fi_inject arrives");
    char big[1024] = {0};
    check(fi_inject(a.ep, big, sizeof(big), addrs[1]) == -FI_EMSGSIZE,
          "fi_inject above inject_size: -FI_EMSGSIZE");
    struct iovec iov = {.iov_base = out, .iov_len = 4};
    struct fi_msg msg = {.msg_iov = &iov, .iov_count = 1, .addr = addrs[1], .context = &ctx_s};
    fi_recv(b.ep, in, sizeof(in), NULL, FI_ADDR_UNSPEC, &ctx_r);
    check(fi_sendmsg(a.ep, &msg, FI_INJECT | FI_TRANSMIT_COMPLETE) == 0,
          "fi_sendmsg(FI_INJECT) posted");
    out[0] = 'X';  // the message was copied at the call
    check(wait_cq(a.tx, &e) == 1 && e.op_context == &ctx_s, "fi_sendmsg(FI_INJECT) completes");
    check(wait_cq(b.rx, &e) == 1 && !memcmp(in, "hell", 4), "... with the bytes of the call");

    // errors: truncation is an error entry with fi_cq_readerr / fi_cq_strerror
    char small[4];
    fi_recv(b.ep, small, sizeof(small), NULL, FI_ADDR_UNSPEC, &ctx_r);
    fi_send(a.ep, out, sizeof(out), NULL, addrs[1], &ctx_s);
    check(wait_cq(b.rx, &e) == -FI_EAVAIL, "a truncated receive: -FI_EAVAIL");
    struct fi_cq_err_entry err = {0};
    check(fi_cq_readerr(b.rx, &err, 0) == 1 && err.err == FI_ETRUNC && err.op_context == &ctx_r,
          "fi_cq_readerr: FI_ETRUNC with the context");
    const char* text = fi_cq_strerror(b.rx, err.prov_errno, err.err_data, NULL, 0);
    printf("  strerror: %s\n", text ? text : "(null)");
    check(text != NULL && text[0] != '\0', "fi_cq_strerror says why");
    ssize_t sr = wait_cq(a.tx, &e);
    if (sr == -FI_EAVAIL) sr = fi_cq_readerr(a.tx, &err, 0);
    check(sr == 1, "the sender's completion (success or error entry)");

    check(fi_send(a.ep, out, 4, NULL, 77, &ctx_s) == -FI_EINVAL,
          "fi_send to an address not in the AV: -FI_EINVAL");
    // to an address nobody has: the send with a NULL context ends in an error entry whose
    // context is NULL; the inject before it ends in none (fi_inject has no completion)
    struct sockaddr_in nobody = names[0];
    nobody.sin_addr.s_addr = htonl(0x0a630001);  // 10.99.0.1
    fi_addr_t dead;
    check(fi_av_insert(av, &nobody, 1, &dead, 0, NULL) == 1,
          "fi_av_insert of an address nobody has");
    check(fi_inject(a.ep, "x", 1, dead) == 0 && fi_send(a.ep, out, 4, NULL, dead, NULL) == 0,
          "fi_inject and fi_send (context NULL) to it");
    check(wait_cq(a.tx, &e) == -FI_EAVAIL && fi_cq_readerr(a.tx, &err, 0) == 1 &&
              err.op_context == NULL && (err.flags & FI_SEND) && err.err != 0,
          "the send's error entry, context NULL");
    printf("  error: %s\n", fi_strerror(err.err));
    check(wait_cq(a.tx, &e) == -FI_EAGAIN, "... and no entry for the inject");
    // past the queue depth: an endpoint with four transmit and four receive slots (uet's
    // operations share them) takes sends until -FI_EAGAIN, and again once its CQ is read
    struct fi_info* small_info = fi_dupinfo(info);
    small_info->tx_attr->size = small_info->rx_attr->size = 4;
    struct side q;
    check(open_side(dom, small_info, av, &q) == 0, "an endpoint with 4 + 4 slots");
    int posted = 0;
    ssize_t rc_q = 0;
    while (posted < 100 && (rc_q = fi_send(q.ep, out, 4, NULL, addrs[1], &ctx_s)) == 0)
        ++posted;
    check(rc_q == -FI_EAGAIN && posted >= 4 && posted <= 8,
          "sends past the slots: -FI_EAGAIN (after 4 to 8)");
    char sink[8][16];
    int ended = 0;
    for (int i = 0; i < posted; ++i) {
        fi_recv(b.ep, sink[i], sizeof(sink[i]), NULL, FI_ADDR_UNSPEC, &ctx_r);
        ended += wait_cq(q.tx, &e) == 1 && wait_cq(b.rx, &e) == 1;
    }
    check(ended == posted && fi_send(q.ep, out, 4, NULL, addrs[1], &ctx_s) == 0,
          "... and after the CQ is read, a send goes again");
    fi_recv(b.ep, sink[0], sizeof(sink[0]), NULL, FI_ADDR_UNSPEC, &ctx_r);
    check(wait_cq(q.tx, &e) == 1 && wait_cq(b.rx, &e) == 1 && fi_close(&q.ep->fid) == 0 &&
              fi_close(&q.tx->fid) == 0 && fi_close(&q.rx->fid) == 0,
          "... it completes; fi_close");
    fi_freeinfo(small_info);
    // RMA into a region b registered; addresses are offsets into it, keys the provider's
    unsigned long long region[8] = {0};
    struct fid_mr* mr;
    check(fi_mr_reg(dom, region, sizeof(region), FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 0, 0, &mr,
                    NULL) == 0,
          "fi_mr_reg(FI_REMOTE_READ | FI_REMOTE_WRITE)");
    unsigned long long words[2] = {7, 9}, back[2] = {0};
    check(fi_write(a.ep, words, sizeof(words), NULL, addrs[1], 8, fi_mr_key(mr), &ctx_s) == 0,
          "fi_write posted");
    check(wait_cq(a.tx, &e) == 1 && (e.flags & (FI_RMA | FI_WRITE)) == (FI_RMA | FI_WRITE) &&
              region[1] == 7 && region[2] == 9,
          "fi_write lands at the offset");
    check(fi_read(a.ep, back, sizeof(back), NULL, addrs[1], 8, fi_mr_key(mr), &ctx_s) == 0 &&
              wait_cq(a.tx, &e) == 1 && (e.flags & FI_READ) && back[0] == 7 && back[1] == 9,
          "fi_read reads it back");
    fi_write(a.ep, words, sizeof(words), NULL, addrs[1], 0, fi_mr_key(mr) + 1, &ctx_s);
    check(wait_cq(a.tx, &e) == -FI_EAVAIL && fi_cq_readerr(a.tx, &err, 0) == 1 &&
              err.err == FI_EKEYREJECTED && region[0] == 0,
          "a key b never registered: FI_EKEYREJECTED");
    check(fi_inject_write(a.ep, words, 8, addrs[1], 0, fi_mr_key(mr)) == -FI_ENOSYS,
          "fi_inject_write: -FI_ENOSYS");

    // atomics on the same region: region[1] == 7, region[2] == 9
    unsigned long long add[2] = {5, 6}, old[2] = {0, 0}, cmp = 12, swp = 100, was = 0;
    check(
        fi_atomic(a.ep, add, 2, NULL, addrs[1], 8, fi_mr_key(mr), FI_UINT64, FI_SUM, &ctx_s) == 0 &&
            wait_cq(a.tx, &e) == 1 && (e.flags & FI_ATOMIC) && region[1] == 12 && region[2] == 15,
        "fi_atomic(FI_SUM) of two uint64");
    check(fi_fetch_atomic(a.ep, NULL, 2, NULL, old, NULL, addrs[1], 8, fi_mr_key(mr), FI_UINT64,
                          FI_ATOMIC_READ, &ctx_s) == 0 &&
              wait_cq(a.tx, &e) == 1 && old[0] == 12 && old[1] == 15 && region[1] == 12,
          "fi_fetch_atomic(FI_ATOMIC_READ)");
    check(fi_compare_atomic(a.ep, &swp, 1, NULL, &cmp, NULL, &was, NULL, addrs[1], 8, fi_mr_key(mr),
                            FI_UINT64, FI_CSWAP, &ctx_s) == 0 &&
              wait_cq(a.tx, &e) == 1 && was == 12 && region[1] == 100,
          "fi_compare_atomic(FI_CSWAP)");
    size_t count = 0;
    check(fi_atomicvalid(a.ep, FI_UINT64, FI_SUM, &count) == 0 && count == 32,
          "fi_atomicvalid(FI_UINT64, FI_SUM): 32 (256 bytes)");
    check(fi_atomicvalid(a.ep, FI_DOUBLE, FI_BAND, &count) == -FI_EOPNOTSUPP &&
              fi_compare_atomicvalid(a.ep, FI_INT32, FI_MSWAP, &count) == -FI_EOPNOTSUPP,
          "... bitwise on doubles, FI_MSWAP: -FI_EOPNOTSUPP");
    struct fi_atomic_attr aattr = {0};
    check(fi_query_atomic(dom, FI_INT32, FI_MIN, &aattr, FI_FETCH_ATOMIC) == 0 &&
              aattr.count == 64 && aattr.size == 4 &&
              fi_query_atomic(dom, FI_INT32, FI_PROD, &aattr, 0) == -FI_EOPNOTSUPP,
          "fi_query_atomic");
    check(fi_atomic(a.ep, add, 33, NULL, addrs[1], 0, fi_mr_key(mr), FI_UINT64, FI_SUM, &ctx_s) ==
              -FI_EINVAL,
          "fi_atomic above 256 bytes: -FI_EINVAL");
    check(
        fi_inject_atomic(a.ep, add, 1, addrs[1], 0, fi_mr_key(mr), FI_UINT64, FI_SUM) == -FI_ENOSYS,
        "fi_inject_atomic: -FI_ENOSYS");
    check(fi_close(&mr->fid) == 0, "fi_close(mr)");
    struct fi_msg mmsg = {.msg_iov = &iov, .iov_count = 1, .addr = FI_ADDR_UNSPEC};
    check(fi_recvmsg(a.ep, &mmsg, FI_MULTI_RECV) == -FI_EBADFLAGS,
          "FI_MULTI_RECV without the capability: -FI_EBADFLAGS");
    check(fi_close(&dom->fid) == -FI_EBUSY, "closing the domain first: -FI_EBUSY");

    probe_and_cancel(&a, &b, addrs[1], addrs[0]);
    ordered_tagged(dom, av);
    datagrams(dom, av);
    counters(dom, info, av);
    multi_recv(dom, av);
    bad_use(dom, av);

    int closed = fi_close(&a.ep->fid) == 0 && fi_close(&b.ep->fid) == 0 &&
                 fi_close(&a.tx->fid) == 0 && fi_close(&a.rx->fid) == 0 &&
                 fi_close(&b.tx->fid) == 0 && fi_close(&b.rx->fid) == 0 &&
                 fi_close(&av->fid) == 0 && fi_close(&eq->fid) == 0 && fi_close(&dom->fid) == 0 &&
                 fi_close(&fab->fid) == 0;
    check(closed, "fi_close of everything");
    fi_freeinfo(info);
    fi_freeinfo(hints);
    printf("%s\n", failures ? "FAILED" : "passed");
    return failures ? 1 : 0;
}
