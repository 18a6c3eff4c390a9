// libfabric_mpi: an MPI program that Debian's Open MPI runs over the uet libfabric provider
// (pml cm, mtl ofi), two ranks. A ping-pong over sizes from 1 B to 2 MiB (eager, deferrable and
// rendezvous sends underneath), synchronous sends, MPI_Allreduce, MPI_Alltoall, MPI_Bcast,
// tagged receives with MPI_ANY_SOURCE / MPI_ANY_TAG, sends to one's own rank, probes (MPI_Probe,
// MPI_Iprobe, MPI_Mprobe + MPI_Mrecv) and MPI_Cancel of a receive; every byte and every status is
// checked.
// Exit 0 with "mpi_check: all passed" from rank 0; the first failure aborts the job.
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

#define CHECK(cond, ...)                                                          \
    do {                                                                          \
        if (!(cond)) {                                                            \
            fprintf(stderr, "rank %d: FAILED %s:%d: ", rank, __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                                         \
            fprintf(stderr, "\n");                                                \
            MPI_Abort(MPI_COMM_WORLD, 1);                                         \
        }                                                                         \
    } while (0)

// The byte at offset i of message `seq` from rank `from`: every message differs.
static unsigned char pattern(int from, int seq, size_t i) {
    return (unsigned char)(from * 131 + seq * 17 + i * 7 + (i >> 8));
}

static void fill(unsigned char* buf, size_t len, int from, int seq) {
    for (size_t i = 0; i < len; ++i)
        buf[i] = pattern(from, seq, i);
}

static void verify(const unsigned char* buf, size_t len, int from, int seq, const char* what) {
    for (size_t i = 0; i < len; ++i)
        CHECK(buf[i] == pattern(from, seq, i),
              "%s: %zu bytes from rank %d (message %d): byte %zu "
              "is %u, not %u",
              what, len, from, seq, i, buf[i], pattern(from, seq, i));
}

static void check_status(const MPI_Status* st, int source, int tag, int count, const char* what) {
    int n = -1;
    MPI_Get_count(st, MPI_BYTE, &n);
    CHECK(st->MPI_SOURCE == source, "%s: source %d, not %d", what, st->MPI_SOURCE, source);
    CHECK(st->MPI_TAG == tag, "%s: tag %d, not %d", what, st->MPI_TAG, tag);
    CHECK(n == count, "%s: %d bytes, not %d", what, n, count);
}

// Ping-pong between ranks 0 and 1: rank 0 sends, rank 1 checks and answers with its own
// pattern, rank 0 checks; `rounds` times per size.
static void pingpong(unsigned char* buf, int rounds) {
    static const size_t sizes[] = {0,     1,     63,     256,     1344,         4096,
                                   65535, 65536, 300000, 1 << 20, (2 << 20) + 5};
    const int peer = 1 - rank;
    int seq = 0;
    for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); ++s) {
        const int len = (int)sizes[s];
        for (int r = 0; r < rounds; ++r, ++seq) {
            MPI_Status st;
            if (rank == 0) {
                fill(buf, len, 0, seq);
                MPI_Send(buf, len, MPI_BYTE, peer, 100 + r, MPI_COMM_WORLD);
                memset(buf, 0, len);
                MPI_Recv(buf, len, MPI_BYTE, peer, 200 + r, MPI_COMM_WORLD, &st);
                check_status(&st, peer, 200 + r, len, "pong");
                verify(buf, len, 1, seq, "pong");
            } else {
                memset(buf, 0, len);
                MPI_Recv(buf, len, MPI_BYTE, peer, 100 + r, MPI_COMM_WORLD, &st);
                check_status(&st, peer, 100 + r, len, "ping");
                verify(buf, len, 0, seq, "ping");
                fill(buf, len, 1, seq);
                MPI_Send(buf, len, MPI_BYTE, peer, 200 + r, MPI_COMM_WORLD);
            }
        }
    }
    if (rank == 0)
        printf("ok      ping-pong, %d sizes from 0 B to 2 MiB, %d rounds each\n",
               (int)(sizeof(sizes) / sizeof(sizes[0])), rounds);
}

// MPI_Ssend completes only once the receive matched (the mtl's acknowledgement).
static void sync_sends(unsigned char* buf) {
    MPI_Status st;
    for (int i = 0; i < 4; ++i) {
        const int len = 1000 * (i + 1);
        if (rank == 1) {
            fill(buf, len, 1, 500 + i);
            MPI_Ssend(buf, len, MPI_BYTE, 0, 42, MPI_COMM_WORLD);
        } else if (rank == 0) {
            memset(buf, 0, len);
            MPI_Recv(buf, len, MPI_BYTE, 1, 42, MPI_COMM_WORLD, &st);
            check_status(&st, 1, 42, len, "ssend");
            verify(buf, len, 1, 500 + i, "ssend");
        }
    }
    if (rank == 0) printf("ok      MPI_Ssend\n");
}

static void collectives(void) {
    enum { n = 10000 };
    static int64_t in[n], out[n];
    static double din[n], dout[n];
    for (int i = 0; i < n; ++i) {
        in[i] = (int64_t)(rank + 1) * 1000003 + i;
        din[i] = (rank + 1) * 0.5 + i;
    }
    MPI_Allreduce(in, out, n, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(din, dout, n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    const int64_t ranks_sum = (int64_t)size * (size + 1) / 2;
    for (int i = 0; i < n; ++i) {
        const int64_t want = ranks_sum * 1000003 + (int64_t)size * i;
        CHECK(out[i] == want, "MPI_Allreduce(SUM) [%d] = %lld, not %lld", i, (long long)out[i],
              (long long)want);
        CHECK(dout[i] == size * 0.5 + i, "MPI_Allreduce(MAX) [%d] = %g, not %g", i, dout[i],
              size * 0.5 + i);
    }
    if (rank == 0) printf("ok      MPI_Allreduce (sum of %d int64, max of %d doubles)\n", n, n);

    // Each rank sends block d (count ints) to rank d; block s of the result came from rank s.
    for (int count = 1; count <= 40000; count *= 200) {
        int* sbuf = malloc(sizeof(int) * count * size);
        int* rbuf = malloc(sizeof(int) * count * size);
        CHECK(sbuf != NULL && rbuf != NULL, "out of memory");
        for (int d = 0; d < size; ++d)
            for (int i = 0; i < count; ++i)
                sbuf[d * count + i] = rank * 1000000 + d * 10000 + (i % 10000);
        memset(rbuf, 0xff, sizeof(int) * count * size);
        MPI_Alltoall(sbuf, count, MPI_INT, rbuf, count, MPI_INT, MPI_COMM_WORLD);
        for (int s = 0; s < size; ++s)
            for (int i = 0; i < count; ++i)
                CHECK(rbuf[s * count + i] == s * 1000000 + rank * 10000 + (i % 10000),
                      "MPI_Alltoall(%d ints): block %d [%d] = %d", count, s, i,
                      rbuf[s * count + i]);
        free(sbuf);
        free(rbuf);
    }
    if (rank == 0) printf("ok      MPI_Alltoall (1, 200 and 40000 ints per rank)\n");

    char text[64] = {0};
    if (rank == 0) snprintf(text, sizeof(text), "broadcast over uet");
    MPI_Bcast(text, sizeof(text), MPI_CHAR, 0, MPI_COMM_WORLD);
    CHECK(strcmp(text, "broadcast over uet") == 0, "MPI_Bcast gave \"%s\"", text);
    if (rank == 0) printf("ok      MPI_Bcast\n");
}

// Rank 1 sends messages of several tags; rank 0 takes them with wildcard receives, which must
// give each message's source, tag and length, keep the order of one sender's messages
// (non-overtaking), and leave a message to a receive that names its tag when that one was
// posted first.
static void wildcards(unsigned char* buf) {
    enum { msgs = 6 };
    static const int tags[msgs] = {7, 3, 7, 11, 5, 3};
    static const int lens[msgs] = {10, 0, 5000, 70000, 33, 1};
    if (rank == 1) {
        for (int m = 0; m < msgs; ++m) {
            fill(buf, lens[m], 1, 900 + m);
            MPI_Send(buf, lens[m], MPI_BYTE, 0, tags[m], MPI_COMM_WORLD);
        }
        // Then the directed-before-wildcard case: tag 9 then tag 5 (rank 0 posted a receive
        // for tag 5 before a wildcard one).
        MPI_Barrier(MPI_COMM_WORLD);
        fill(buf, 100, 1, 990);
        MPI_Send(buf, 100, MPI_BYTE, 0, 9, MPI_COMM_WORLD);
        fill(buf, 200, 1, 991);
        MPI_Send(buf, 200, MPI_BYTE, 0, 5, MPI_COMM_WORLD);
    } else if (rank == 0) {
        MPI_Status st;
        for (int m = 0; m < msgs; ++m) {
            memset(buf, 0, 70000);
            MPI_Recv(buf, 70000, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            check_status(&st, 1, tags[m], lens[m], "MPI_ANY_SOURCE, MPI_ANY_TAG");
            verify(buf, lens[m], 1, 900 + m, "MPI_ANY_SOURCE, MPI_ANY_TAG");
        }
        static unsigned char a[256], b[256];
        MPI_Request req[2];
        MPI_Irecv(a, sizeof(a), MPI_BYTE, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &req[0]);
        MPI_Irecv(b, sizeof(b), MPI_BYTE, 1, MPI_ANY_TAG, MPI_COMM_WORLD, &req[1]);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Status sts[2];
        MPI_Waitall(2, req, sts);
        check_status(&sts[0], 1, 5, 200, "tag 5 receive posted first");
        verify(a, 200, 1, 991, "tag 5 receive posted first");
        check_status(&sts[1], 1, 9, 100, "MPI_ANY_TAG receive posted second");
        verify(b, 100, 1, 990, "MPI_ANY_TAG receive posted second");
    } else {
        MPI_Barrier(MPI_COMM_WORLD);
    }
    if (rank == 0) printf("ok      MPI_ANY_SOURCE / MPI_ANY_TAG receives\n");
}

// Messages to one's own rank go through the provider too (pml cm has no shortcut for them):
// small, deferrable and rendezvous sizes, matched by source, and by MPI_ANY_SOURCE.
static void self_sends(unsigned char* buf) {
    static const int sizes[] = {4, 4096, 100000, (1 << 20) + 3};
    static unsigned char out[(1 << 20) + 3];
    for (int s = 0; s < 4; ++s) {
        const int len = sizes[s];
        fill(out, len, rank, 700 + s);
        memset(buf, 0, len);
        MPI_Request req;
        MPI_Status st;
        MPI_Irecv(buf, len, MPI_BYTE, s % 2 ? MPI_ANY_SOURCE : rank, 77, MPI_COMM_WORLD, &req);
        MPI_Send(out, len, MPI_BYTE, rank, 77, MPI_COMM_WORLD);
        MPI_Wait(&req, &st);
        check_status(&st, rank, 77, len, "to oneself");
        verify(buf, len, rank, 700 + s, "to oneself");
    }
    if (rank == 0) printf("ok      sends to one's own rank (4 B to 1 MiB)\n");
}

// MPI_Iprobe, MPI_Probe, MPI_Mprobe with MPI_Mrecv (the mtl's FI_PEEK and FI_CLAIM) of an eager, a
// deferrable and a rendezvous message, and MPI_Cancel of a receive nothing matched yet.
static void probes(unsigned char* buf) {
    static const int lens[3] = {3000, 300000, (1 << 20) + 7};
    MPI_Status st;
    int flag = -1;
    if (rank == 0) {
        MPI_Iprobe(1, 60, MPI_COMM_WORLD, &flag, &st);
        CHECK(flag == 0, "MPI_Iprobe before any send: flag %d", flag);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) {
        static unsigned char out[3][(1 << 20) + 7];
        MPI_Request req[3];
        for (int m = 0; m < 3; ++m) {
            fill(out[m], lens[m], 1, 800 + m);
            MPI_Isend(out[m], lens[m], MPI_BYTE, 0, 60 + m, MPI_COMM_WORLD, &req[m]);
        }
        MPI_Waitall(3, req, MPI_STATUSES_IGNORE);
    } else if (rank == 0) {
        MPI_Probe(1, 60, MPI_COMM_WORLD, &st);
        check_status(&st, 1, 60, lens[0], "MPI_Probe");
        flag = 0;
        for (long i = 0; i < 100000000 && !flag; ++i)
            MPI_Iprobe(MPI_ANY_SOURCE, 61, MPI_COMM_WORLD, &flag, &st);
        CHECK(flag == 1, "MPI_Iprobe of a deferrable message never found it");
        check_status(&st, 1, 61, lens[1], "MPI_Iprobe");
        MPI_Message msg;
        MPI_Mprobe(1, 62, MPI_COMM_WORLD, &msg, &st);
        check_status(&st, 1, 62, lens[2], "MPI_Mprobe");
        MPI_Iprobe(1, 62, MPI_COMM_WORLD, &flag, &st);
        CHECK(flag == 0, "MPI_Iprobe found the message MPI_Mprobe took");
        memset(buf, 0, lens[2]);
        MPI_Mrecv(buf, lens[2], MPI_BYTE, &msg, &st);
        check_status(&st, 1, 62, lens[2], "MPI_Mrecv");
        verify(buf, lens[2], 1, 802, "MPI_Mrecv");
        for (int m = 0; m < 2; ++m) {
            memset(buf, 0, lens[m]);
            MPI_Recv(buf, lens[m], MPI_BYTE, 1, 60 + m, MPI_COMM_WORLD, &st);
            check_status(&st, 1, 60 + m, lens[m], "receive after a probe");
            verify(buf, lens[m], 1, 800 + m, "receive after a probe");
        }
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
        CHECK(flag == 0, "MPI_Iprobe after every message was received: flag %d", flag);
    }
    if (rank == 0) printf("ok      MPI_Probe, MPI_Iprobe, MPI_Mprobe + MPI_Mrecv\n");

    // The canceled receive takes nothing: the message sent after it goes to the next one.
    if (rank == 0) {
        MPI_Request req;
        MPI_Irecv(buf, 64, MPI_BYTE, 1, 63, MPI_COMM_WORLD, &req);
        MPI_Cancel(&req);
        MPI_Wait(&req, &st);
        MPI_Test_cancelled(&st, &flag);
        CHECK(flag == 1, "MPI_Cancel of an unmatched MPI_Irecv: not cancelled");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) {
        fill(buf, 64, 1, 810);
        MPI_Send(buf, 64, MPI_BYTE, 0, 63, MPI_COMM_WORLD);
    } else if (rank == 0) {
        memset(buf, 0, 64);
        MPI_Recv(buf, 64, MPI_BYTE, 1, 63, MPI_COMM_WORLD, &st);
        check_status(&st, 1, 63, 64, "receive after MPI_Cancel");
        verify(buf, 64, 1, 810, "receive after MPI_Cancel");
        printf("ok      MPI_Cancel of an MPI_Irecv (MPI_Test_cancelled)\n");
    }
}

// "mpi_check lat N": no checks, but the mean half round trip of N ping-pongs of 8 bytes between
// ranks 0 and 1 (after N/10 not timed), for docs/results.md.
static void latency(int n) {
    char b[8] = {0};
    const int warm = n / 10;
    double start = 0;
    for (int i = -warm; i < n; ++i) {
        if (i == 0) start = MPI_Wtime();
        if (rank == 0) {
            MPI_Send(b, 8, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
            MPI_Recv(b, 8, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            MPI_Recv(b, 8, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(b, 8, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
        }
    }
    if (rank == 0)
        printf("latency: 8 B, %d round trips, %.2f us per half round trip\n", n,
               (MPI_Wtime() - start) * 1e6 / (2.0 * n));
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size >= 2, "needs two ranks, has %d", size);
    if (argc > 2 && strcmp(argv[1], "lat") == 0) {
        latency(atoi(argv[2]) > 0 ? atoi(argv[2]) : 1000);
        MPI_Finalize();
        return 0;
    }
    const int rounds = argc > 1 ? atoi(argv[1]) : 3;
    unsigned char* buf = malloc((2 << 20) + 5);
    CHECK(buf != NULL, "out of memory");
    if (rank < 2) pingpong(buf, rounds);
    sync_sends(buf);
    collectives();
    wildcards(buf);
    self_sends(buf);
    probes(buf);
    MPI_Barrier(MPI_COMM_WORLD);
    free(buf);
    if (rank == 0) printf("mpi_check: all passed\n");
    MPI_Finalize();
    return 0;
}
