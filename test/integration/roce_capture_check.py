#!/usr/bin/env python3
"""roce_tshark's checker: a capture of real RoCEv2 transfers, decoded by tshark's InfiniBand
dissector (an implementation independent of lib/wire), must be clean and consistent.

  roce_capture_check.py PCAP [--expect KIND:SIZE=COUNT]... [--nak] [--cm]

Checks, each a failure with the frame numbers it concerns (the payload heuristics of the
InfiniBand dissector are turned off: RPC-over-RDMA, iSER, Ethernet over IB and the like would read
application bytes as their headers):
  * every UDP 4791 frame dissects as InfiniBand (frame.protocols ends in udp:infiniband...), with
    no malformed packet and no expert info of any severity;
  * the opcodes the stack uses all appear: SEND FIRST/MIDDLE/LAST/ONLY, RDMA WRITE
    FIRST/MIDDLE/LAST/ONLY and with immediate (LAST or ONLY), READ request and responses
    FIRST/MIDDLE/LAST/ONLY, ACK, compare-and-swap, fetch-and-add, ATOMIC ACKNOWLEDGE, and the CM
    MADs REQ, REP, RTU, DREQ, DREP over UD to QP 1; --nak: at least one NAK;
  * PSNs, per requester QP (source, destination, destination QP): every request that is not a
    retransmission carries the next PSN (a READ request takes as many PSNs as its responses), a
    retransmission repeats a PSN already sent with the same opcode and payload length; READ
    responses and ATOMIC ACKNOWLEDGEs answer PSNs the peer asked for, ACKs and NAKs name PSNs it
    sent, and every PSN of every READ request is answered;
  * lengths: FIRST and MIDDLE packets carry exactly the path MTU the CM REQs announce, LAST and
    ONLY at most that; a WRITE's packets add up to its RETH DMA length, a READ's responses to its
    request's; each --expect KIND:SIZE=COUNT (KIND write, read or send; a send's size counts the
    16-byte message header of roce_rc) must be the number of such messages sent first time.
Prints the opcode table and the counts. Exit 0 when every check passed, 1 otherwise.
"""

import argparse
import collections
import subprocess
import sys

FIELDS = ["frame.number", "frame.protocols", "ip.src", "ip.dst", "udp.length",
          "infiniband.bth.opcode", "infiniband.bth.destqp", "infiniband.bth.psn",
          "infiniband.bth.padcnt", "infiniband.reth.dmalen", "infiniband.aeth.syndrome",
          "infiniband.mad.attributeid", "infiniband.cm.req.pppmtu", "_ws.malformed", "_ws.expert"]

# opcode: (name, extension header bytes, kind)
OPS = {
    0x00: ("SEND_FIRST", 0, "send"), 0x01: ("SEND_MIDDLE", 0, "send"),
    0x02: ("SEND_LAST", 0, "send"), 0x03: ("SEND_LAST_WITH_IMMEDIATE", 4, "send"),
    0x04: ("SEND_ONLY", 0, "send"), 0x05: ("SEND_ONLY_WITH_IMMEDIATE", 4, "send"),
    0x06: ("RDMA_WRITE_FIRST", 16, "write"), 0x07: ("RDMA_WRITE_MIDDLE", 0, "write"),
    0x08: ("RDMA_WRITE_LAST", 0, "write"), 0x09: ("RDMA_WRITE_LAST_WITH_IMMEDIATE", 4, "write"),
    0x0a: ("RDMA_WRITE_ONLY", 16, "write"), 0x0b: ("RDMA_WRITE_ONLY_WITH_IMMEDIATE", 20, "write"),
    0x0c: ("RDMA_READ_REQUEST", 16, "read_req"),
    0x0d: ("RDMA_READ_RESPONSE_FIRST", 4, "read_resp"),
    0x0e: ("RDMA_READ_RESPONSE_MIDDLE", 0, "read_resp"),
    0x0f: ("RDMA_READ_RESPONSE_LAST", 4, "read_resp"),
    0x10: ("RDMA_READ_RESPONSE_ONLY", 4, "read_resp"),
    0x11: ("ACKNOWLEDGE", 4, "ack"), 0x12: ("ATOMIC_ACKNOWLEDGE", 12, "atomic_ack"),
    0x13: ("COMPARE_SWAP", 28, "atomic"), 0x14: ("FETCH_ADD", 28, "atomic"),
    0x64: ("UD_SEND_ONLY", 8, "ud"), 0x81: ("CNP", 0, "cnp"),
}
FIRST, MIDDLE, LAST, ONLY = "first", "middle", "last", "only"
POSITION = {0x00: FIRST, 0x01: MIDDLE, 0x02: LAST, 0x03: LAST, 0x04: ONLY, 0x05: ONLY,
            0x06: FIRST, 0x07: MIDDLE, 0x08: LAST, 0x09: LAST, 0x0a: ONLY, 0x0b: ONLY,
            0x0d: FIRST, 0x0e: MIDDLE, 0x0f: LAST, 0x10: ONLY}
REQUIRED = [0x00, 0x01, 0x02, 0x04, 0x06, 0x07, 0x08, 0x0a, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11,
            0x12, 0x13, 0x14, 0x64]
CM = {0x10: "REQ", 0x13: "REP", 0x14: "RTU", 0x15: "DREQ", 0x16: "DREP", 0x12: "REJ"}
CM_REQUIRED = [0x10, 0x13, 0x14, 0x15, 0x16]
MASK = 0xffffff


def num(s):
    return int(s, 0) if s else None


def dist(a, b):
    """b - a on the 24-bit PSN circle, in -2^23 .. 2^23."""
    d = (b - a) & MASK
    return d - (1 << 24) if d >= (1 << 23) else d


def payload_decoders_off():
    """tshark options that stop it reading InfiniBand payloads as other protocols (RPC-over-RDMA,
    iSER, SMC, Ethernet over IB...): ours are application bytes, which those would misread. Each
    protocol with a heuristic on infiniband.payload is disabled, but Ethernet (the ethertype
    table), whose IB heuristic is turned off by its own name."""
    out = subprocess.run(["tshark", "-G", "heuristic-decodes"], capture_output=True, text=True)
    opts = []
    for line in out.stdout.splitlines():
        cols = line.split("\t")
        if len(cols) < 2 or cols[0] != "infiniband.payload":
            continue
        if cols[1] == "ethertype":
            opts += ["--disable-heuristic", "eth_over_ib"]
        else:
            opts += ["--disable-protocol", cols[1]]
    return opts


def read_capture(pcap):
    cmd = ["tshark", "-n", "-r", pcap, "-Y", "udp.dstport == 4791", "-T", "fields",
           "-E", "separator=/t", "-E", "occurrence=a", "-E", "aggregator=;"]
    cmd += payload_decoders_off()
    for f in FIELDS:
        cmd += ["-e", f]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"FAIL: tshark exited {out.returncode}: {out.stderr.strip()}")
    rows = []
    for line in out.stdout.splitlines():
        cols = line.split("\t")
        cols += [""] * (len(FIELDS) - len(cols))
        rows.append(dict(zip(FIELDS, cols)))
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("pcap")
    ap.add_argument("--expect", action="append", default=[])
    ap.add_argument("--nak", action="store_true")
    args = ap.parse_args()

    rows = read_capture(args.pcap)
    bad = []

    def fail(msg):
        if len(bad) < 40:
            print("FAIL: " + msg)
        bad.append(msg)

    seen = collections.Counter()
    cm_seen = collections.Counter()
    naks = 0
    mtus = set()
    pkts = []
    for r in rows:
        n = r["frame.number"]
        if ":udp:infiniband" not in r["frame.protocols"]:
            fail(f"frame {n}: not dissected as InfiniBand: {r['frame.protocols']}")
            continue
        if r["_ws.malformed"] or r["_ws.expert"]:
            fail(f"frame {n}: malformed or expert info: {r['_ws.malformed']} {r['_ws.expert']}")
        op = num(r["infiniband.bth.opcode"])
        if op not in OPS:
            fail(f"frame {n}: opcode {op} is not one the stack sends")
            continue
        seen[op] += 1
        name, ext, kind = OPS[op]
        payload = num(r["udp.length"]) - 8 - 12 - ext - num(r["infiniband.bth.padcnt"]) - 4
        if op == 0x81:
            payload = 0
        if payload < 0:
            fail(f"frame {n}: {name} shorter than its headers")
            continue
        if kind == "ud":
            attr = num(r["infiniband.mad.attributeid"])
            if attr not in CM:
                fail(f"frame {n}: a UD datagram that is no CM message ({attr})")
            else:
                cm_seen[attr] += 1
            if attr == 0x10 and r["infiniband.cm.req.pppmtu"]:
                mtus.add(128 << num(r["infiniband.cm.req.pppmtu"]))
            continue
        syndrome = num(r["infiniband.aeth.syndrome"])
        if kind == "ack" and syndrome is not None and (syndrome >> 5) == 3:
            naks += 1
        pkts.append({"n": n, "op": op, "kind": kind, "src": r["ip.src"], "dst": r["ip.dst"],
                     "qp": num(r["infiniband.bth.destqp"]), "psn": num(r["infiniband.bth.psn"]),
                     "len": payload, "dmalen": num(r["infiniband.reth.dmalen"])})

    print(f"{len(rows)} RoCEv2 frames on UDP 4791; by opcode:")
    for op in sorted(seen):
        print(f"  0x{op:02x} {OPS[op][0]:32s} {seen[op]}")
    print("CM messages: " + ", ".join(f"{CM[a]} {c}" for a, c in sorted(cm_seen.items())))
    print(f"NAKs: {naks}")
    for op in REQUIRED:
        if seen[op] == 0:
            fail(f"no {OPS[op][0]} in the capture")
    if seen[0x09] + seen[0x0b] == 0:
        fail("no RDMA WRITE with immediate in the capture")
    for a in CM_REQUIRED:
        if cm_seen[a] == 0:
            fail(f"no CM {CM[a]} in the capture")
    if args.nak and naks == 0:
        fail("no NAK in the capture")
    if len(mtus) != 1:
        fail(f"the CM REQs announce path MTUs {sorted(mtus)}, want exactly one")
        return report(bad)
    pmtu = mtus.pop()
    print(f"path MTU {pmtu}")

    # The requester's side of each QP: requests it sent (keyed by where they go), and what came
    # back to it (keyed by the reverse direction, to the requester's QP).
    class flow:
        def __init__(self):
            self.next = None              # the PSN of the next new request
            self.sent = {}                # PSN -> (opcode, payload length) of new requests
            self.covered = set()          # PSNs sent, READ ranges included
            self.reads = {}               # first PSN -> (packets, DMA length)
            self.read_psns = {}           # PSN -> first PSN of its READ
            self.atomics = set()
            self.answered = set()
            self.message = None           # [kind, bytes, dmalen, first frame] of an open message
            self.retransmits = 0
    flows = collections.defaultdict(flow)
    messages = collections.Counter()
    retransmits = 0
    for p in pkts:
        k = p["kind"]
        if k in ("send", "write", "read_req", "atomic"):
            f = flows[(p["src"], p["dst"], p["qp"])]
            psn = p["psn"]
            if f.next is not None and dist(f.next, psn) < 0:
                retransmits += 1
                orig = f.sent.get(psn)
                if k != "read_req" and orig is not None and orig != (p["op"], p["len"]):
                    fail(f"frame {p['n']}: PSN {psn} sent again as {OPS[p['op']][0]} with "
                         f"{p['len']} bytes, first as {OPS[orig[0]][0]} with {orig[1]}")
                if k == "read_req" and psn not in f.covered:
                    fail(f"frame {p['n']}: a READ request resent at PSN {psn}, never sent")
                continue
            if f.next is not None and psn != f.next:
                fail(f"frame {p['n']}: PSN {psn} after {(f.next - 1) & MASK}: a gap of "
                     f"{dist(f.next, psn)}")
            f.sent[psn] = (p["op"], p["len"])
            span = 1
            if k == "read_req":
                span = max(1, -(-p["dmalen"] // pmtu))
                f.reads[psn] = (span, p["dmalen"])
                for i in range(span):
                    f.read_psns[(psn + i) & MASK] = psn
            if k == "atomic":
                f.atomics.add(psn)
                messages[("atomic", 8)] += 1
            for i in range(span):
                f.covered.add((psn + i) & MASK)
            f.next = (psn + span) & MASK
            if k in ("send", "write"):
                pos = POSITION[p["op"]]
                if pos in (FIRST, MIDDLE) and p["len"] != pmtu:
                    fail(f"frame {p['n']}: {OPS[p['op']][0]} carries {p['len']} bytes, not {pmtu}")
                if pos in (LAST, ONLY) and p["len"] > pmtu:
                    fail(f"frame {p['n']}: {OPS[p['op']][0]} carries {p['len']} > {pmtu} bytes")
                if pos in (FIRST, ONLY):
                    if f.message is not None:
                        fail(f"frame {p['n']}: a message starts before frame "
                             f"{f.message[3]}'s ended")
                    f.message = [k, 0, p["dmalen"], p["n"]]
                elif f.message is None or f.message[0] != k:
                    fail(f"frame {p['n']}: {OPS[p['op']][0]} outside a {k} message")
                    continue
                f.message[1] += p["len"]
                if pos in (LAST, ONLY):
                    kind, total, dmalen, first = f.message
                    f.message = None
                    if kind == "write" and total != dmalen:
                        fail(f"frame {first}: a WRITE of {total} bytes whose RETH says {dmalen}")
                    messages[(kind, total)] += 1
            elif k == "read_req":
                messages[("read", p["dmalen"])] += 1
        else:
            if k == "cnp":
                continue
            # To the requester: its flow is the reverse direction, and with several QPs
            # between the same two hosts (one per run), the one that sent the PSN.
            candidates = [fk for fk, f in flows.items()
                          if fk[0] == p["dst"] and fk[1] == p["src"] and p["psn"] in f.covered]
            if not candidates:
                fail(f"frame {p['n']}: {OPS[p['op']][0]} PSN {p['psn']} answers nothing sent")
                continue
            f = flows[candidates[-1]]
            if k == "read_resp":
                first = f.read_psns.get(p["psn"])
                if first is None:
                    fail(f"frame {p['n']}: a READ response at PSN {p['psn']}, no READ asked it")
                    continue
                span, dmalen = f.reads[first]
                pos = POSITION[p["op"]]
                want = ONLY if span == 1 else FIRST if p["psn"] == first else \
                    LAST if p["psn"] == (first + span - 1) & MASK else MIDDLE
                if pos != want:
                    fail(f"frame {p['n']}: {OPS[p['op']][0]} at packet "
                         f"{dist(first, p['psn'])} of a {span}-packet READ")
                size = pmtu if pos in (FIRST, MIDDLE) else dmalen - (span - 1) * pmtu
                if p["len"] != size:
                    fail(f"frame {p['n']}: {OPS[p['op']][0]} carries {p['len']} bytes, not {size}")
                f.answered.add(p["psn"])
            elif k == "atomic_ack" and p["psn"] not in f.atomics:
                fail(f"frame {p['n']}: an ATOMIC ACKNOWLEDGE for PSN {p['psn']}, no atomic there")
    for key, f in flows.items():
        missing = [psn for psn in f.read_psns if psn not in f.answered]
        if missing:
            fail(f"QP {key}: {len(missing)} READ response PSNs never answered, first {missing[0]}")
        if f.message is not None:
            fail(f"QP {key}: the message from frame {f.message[3]} never ended")
    print(f"requester QPs: {len(flows)}; retransmitted requests: {retransmits}")
    print("messages sent (first transmissions): " +
          ", ".join(f"{k}:{s}={c}" for (k, s), c in sorted(messages.items())))
    for e in args.expect:
        what, count = e.split("=")
        kind, size = what.split(":")
        got = messages[(kind, int(size))]
        if got != int(count):
            fail(f"{kind} messages of {size} bytes: {got} in the capture, {count} sent")
    return report(bad)


def report(bad):
    print(f"roce_capture_check: {'ok' if not bad else f'{len(bad)} failure(s)'}")
    return 0 if not bad else 1


if __name__ == "__main__":
    sys.exit(main())
