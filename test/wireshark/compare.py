#!/usr/bin/env python3
"""wireshark_dissector: tools/wireshark/uet.lua under tshark and `uet-dump --json` must agree.

For every packet of the pcaps written by wireshark_write_pcaps (every header form, built by the
golden tests' frame builders, and malformed samples) and of the pcaps that `uet-perf --pcap`
records of real transfers over the pipe provider (TRANSFERS: RUD, ROD and RUDI; writes, reads,
sends of one and many packets, atomics; NSCC and credit-based CC), the UET headers each decoder shows
are compared in order, header by header (uet-dump's header name against the Lua dissector's
uet.header) and field by field: uet-dump's field NAME of header H is the tshark field
uet.<group>.NAME, where the group is entropy, tss, pds, ses, or ses.sync / ses.atomic / ses.cas /
ses.rndv for the SES extension headers. Both must show the same set of fields with the same
values. A packet uet-dump refuses in the UET layer must carry tshark's uet.malformed expert info,
and the headers uet-dump printed before the fault must be the first ones tshark shows; a
payload_length beyond the packet must be flagged by both. Any disagreement fails the test.

Exit status: 0 agreement, 1 disagreement, 77 (meson's "skipped") when tshark is not installed.
"""

import argparse
import json
import shutil
import subprocess
import sys

EXTENSION_GROUPS = {"ses_sync": "ses.sync", "ses_atomic": "ses.atomic", "ses_cas": "ses.cas",
                    "ses_rndv": "ses.rndv"}


# uet-perf runs whose captures are compared too: (name, arguments). Short, so the test stays quick.
TRANSFERS = [
    ("write_bw", "write_bw -s 65536 -n 8"),
    ("read_bw", "read_bw -s 16384 -n 8"),
    ("send_bw_small", "send_bw -s 8 -n 40"),
    ("send_bw_large", "send_bw -s 100000 -n 3"),
    ("atomic_bw", "atomic_bw -n 20"),
    ("atomic_lat", "atomic_lat -n 5"),
    ("send_lat_rod", "send_lat -s 8 -n 10 --mode rod"),
    ("send_bw_rudi", "send_bw -s 8 -n 20 --mode rudi"),
    ("write_bw_rccc", "write_bw -s 16384 -n 8 --cc rccc"),
]


def capture_transfers(uet_perf, directory):
    """Runs TRANSFERS over the pipe provider with --pcap; returns the pcaps they wrote."""
    pcaps = []
    for name, args in TRANSFERS:
        pcap = f"{directory}/transfer_{name}.pcap"
        out = subprocess.run([uet_perf, *args.split(), "--provider", "pipe", "--pcap", pcap],
                             capture_output=True, text=True)
        if out.returncode != 0 or "Capture:" not in out.stdout:
            sys.exit(f"uet-perf {args} --pcap failed: {out.stdout}{out.stderr}")
        pcaps.append(pcap)
    return pcaps


def group_of(header):
    """The tshark field prefix of a uet-dump header name, or None for a non-UET header."""
    if header in ("entropy", "tss"):
        return "uet." + header
    if header.startswith("pds_"):
        return "uet.pds"
    if header in EXTENSION_GROUPS:
        return "uet." + EXTENSION_GROUPS[header]
    if header.startswith("ses_"):
        return "uet.ses"
    return None


def normalize(value):
    """Numbers as int (tshark writes hex fields as "0x.."), bytes as plain lower-case hex."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    text = str(value)
    if ":" in text or (len(text) > 2 and all(c in "0123456789abcdef" for c in text.lower())
                       and not text.isdigit()):
        return text.replace(":", "").lower()
    try:
        return int(text, 0)
    except ValueError:
        return text


def uet_dump_packets(uet_dump, pcap):
    out = subprocess.run([uet_dump, "--json", pcap], capture_output=True, text=True)
    if out.returncode not in (0, 1):
        sys.exit(f"uet-dump failed on {pcap}: {out.stderr}")
    packets = []
    for line in out.stdout.splitlines():
        j = json.loads(line)
        headers = []
        for h in j["headers"]:
            group = group_of(h["name"])
            if group is None:
                continue
            fields = {f"{group}.{k}": normalize(v) for k, v in h.items()
                      if k != "name" and not k.endswith("_name")}
            headers.append((h["name"], fields))
        packets.append({"number": j["number"], "status": j["status"],
                        "uet": j["protocol"] in ("uet", "uet_ip"),
                        "reject": j.get("reject"), "layer": j.get("reject_layer"),
                        "truncated_payload": "truncated_payload" in j, "headers": headers})
    return packets


def as_list(x):
    if x is None:
        return []
    return x if isinstance(x, list) else [x]


def expert_messages(node):
    """Every expert info message anywhere below node."""
    found = []
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "_ws.expert.message":
                found.extend(as_list(v))
            elif k == "_ws.expert" or isinstance(v, (dict, list)):
                found.extend(expert_messages(v))
    elif isinstance(node, list):
        for v in node:
            found.extend(expert_messages(v))
    return found


def expert_groups(node):
    found = []
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "_ws.expert":
                for e in as_list(v):
                    found.extend(k2 for k2 in e if k2.startswith("uet."))
            if isinstance(v, (dict, list)):
                found.extend(expert_groups(v))
    elif isinstance(node, list):
        for v in node:
            found.extend(expert_groups(v))
    return found


def tshark_packets(tshark, lua, pcap):
    out = subprocess.run([tshark, "-X", f"lua_script:{lua}", "-r", pcap, "-T", "json",
                          "--no-duplicate-keys"], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"tshark failed on {pcap}: {out.stderr}")
    if "Lua: Error" in out.stderr or "lua_script" in out.stderr and "rror" in out.stderr:
        sys.exit(f"tshark could not load {lua}: {out.stderr}")
    packets = []
    for p in json.loads(out.stdout):
        layers = p["_source"]["layers"]
        root = layers.get("uet")
        headers = []
        experts = []
        if root is not None:
            for h in as_list(root.get("uet") if isinstance(root, dict) else None):
                fields = {k: normalize(v) for k, v in h.items()
                          if k.startswith("uet.") and k != "uet.header"
                          and not isinstance(v, (dict, list))}
                headers.append((h.get("uet.header"), fields))
            experts = expert_groups(root)
        packets.append({"uet": root is not None, "headers": headers, "experts": experts,
                        "malformed_layer": "_ws.malformed" in layers})
    return packets


def compare_headers(mine, theirs, where, errors):
    for i, ((name, fields), (tname, tfields)) in enumerate(zip(mine, theirs)):
        if name != tname:
            errors.append(f"{where}: header {i} is {name} in uet-dump, {tname} in tshark")
            continue
        for k in sorted(set(fields) | set(tfields)):
            if k not in tfields:
                errors.append(f"{where} {name}: {k} = {fields[k]} in uet-dump, absent in tshark")
            elif k not in fields:
                errors.append(f"{where} {name}: {k} = {tfields[k]} in tshark, absent in uet-dump")
            elif fields[k] != tfields[k]:
                errors.append(f"{where} {name}: {k} = {fields[k]} in uet-dump, "
                              f"{tfields[k]} in tshark")


def compare(pcap, dumped, sharked, errors):
    if len(dumped) != len(sharked):
        errors.append(f"{pcap}: {len(dumped)} packets in uet-dump, {len(sharked)} in tshark")
        return 0
    compared = 0
    for d, t in zip(dumped, sharked):
        where = f"{pcap} #{d['number']}"
        if not d["uet"]:
            if t["uet"]:
                errors.append(f"{where}: UET for tshark, not for uet-dump")
            continue  # ARP
        if d["status"] == "malformed" and d["layer"] != "uet":
            continue  # refused below UET (a checksum tshark does not verify): nothing to compare
        if not t["uet"]:
            errors.append(f"{where}: UET for uet-dump, not for tshark")
            continue
        compared += 1
        malformed = "uet.malformed" in t["experts"]
        if d["status"] == "ok":
            if malformed:
                errors.append(f"{where}: uet-dump decodes it, tshark flags it malformed")
            if len(d["headers"]) != len(t["headers"]):
                errors.append(f"{where}: {[h[0] for h in d['headers']]} in uet-dump, "
                              f"{[h[0] for h in t['headers']]} in tshark")
            flagged = "uet.truncated_payload" in t["experts"]
            if d["truncated_payload"] != flagged:
                errors.append(f"{where}: truncated payload flagged by one decoder only")
        else:
            if not malformed:
                errors.append(f"{where}: uet-dump refuses it ({d['reject']}), tshark does not")
            if len(t["headers"]) < len(d["headers"]):
                errors.append(f"{where}: tshark shows fewer headers before the fault")
        compare_headers(d["headers"], t["headers"], where, errors)
    return compared


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tshark-lua", required=True)
    ap.add_argument("--uet-dump", required=True)
    ap.add_argument("--write-pcaps", required=True)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--uet-perf", help="also compare the captures of TRANSFERS (uet-perf --pcap)")
    ap.add_argument("--tshark", default="tshark")
    ap.add_argument("pcaps", nargs="*", help="compare these pcaps instead of the generated ones")
    a = ap.parse_args()
    tshark = shutil.which(a.tshark)
    if not tshark:
        print("SKIP: tshark not found; install it (apt-get install tshark) to run this test")
        return 77
    pcaps = a.pcaps
    if not pcaps:
        subprocess.run([a.write_pcaps, a.dir], check=True)
        pcaps = [f"{a.dir}/uet_golden.pcap", f"{a.dir}/uet_malformed.pcap"]
        if a.uet_perf:
            pcaps += capture_transfers(a.uet_perf, a.dir)
    errors = []
    total = 0
    for pcap in pcaps:
        n = compare(pcap, uet_dump_packets(a.uet_dump, pcap),
                    tshark_packets(tshark, a.tshark_lua, pcap), errors)
        print(f"{pcap}: {n} UET packets compared")
        total += n
    for e in errors:
        print("DISAGREE", e)
    if errors:
        return 1
    if total == 0:
        print("no UET packet compared")
        return 1
    print(f"uet-dump and uet.lua agree on every field of {total} UET packets")
    return 0


if __name__ == "__main__":
    sys.exit(main())
