#!/usr/bin/python3
"""msgcheck.py — check a sink_file output file against msg_src manifests.

usage: msgcheck.py jsonl|raw|payload FILE MANIFEST... [--no-embed] [--log LOG] [--no-tsc]
                   [--subsequence] [--count K] [--every K]

The manifests (msg_src option "manifest": one line per message,
"conn opcode rx_tsc hex(payload)") are concatenated in order: FILE must hold
exactly those messages, in that order.

jsonl: every line is one JSON object (json.loads, strict: no raw control
characters in strings), nothing but the final LF outside the strings; keys in the
order rx_tsc, rx_ns, conn, op, len, data|data_b64; rx_tsc, conn, op, len as sent;
the payload round-trips exactly: text that looks like a JSON object/array (and
--no-embed not given) is embedded as a JSON value equal to the payload's, with the
payload's bytes (CR and LF turned into spaces); other valid UTF-8 text is a JSON
string equal to the payload; everything else is data_b64, the payload in base64.
With --log (the lcpipe output holding sink_file's "rx_ns: TSC N at start, H Hz"
line) and one manifest, rx_ns is checked against (rx_tsc - N) * 10^9 / H.

payload: the file is every payload followed by a newline, back to back, nothing
else (byte for byte; with --subsequence, --count: not supported).

raw: records "<u32 len><u8 opcode><u64 rx_tsc><payload>" little-endian, back to
back, each equal to the manifest's, and the SHA-256 of all payloads equal.

--no-tsc: do not compare rx_tsc (a manifest from another run of the same
msg_src options). --subsequence: FILE holds some of the messages, in order (after
write errors); every record must still be whole. --count K: FILE holds K records.
--every K: only every Kth message of the manifests, from the first (sink_echo's
sample).

Exit 0 if all holds, 1 otherwise.
"""
import base64
import hashlib
import json
import re
import struct
import sys

bad = 0


def check(ok, what):
    global bad
    print("%s %s" % ("ok:  " if ok else "FAIL:", what))
    bad += not ok
    return ok


def load_manifest(path):
    out = []
    with open(path, "rb") as f:
        for ln, line in enumerate(f, 1):
            parts = line.rstrip(b"\n").split(b" ")
            if len(parts) != 4:
                print("FAIL: %s:%d: malformed manifest line" % (path, ln))
                sys.exit(1)
            out.append((int(parts[0]), int(parts[1]), int(parts[2]), bytes.fromhex(parts[3].decode())))
    return out


def looks_json(p):
    if len(p) < 2 or p[0:1] not in (b"{", b"["):
        return False
    want = b"}" if p[0:1] == b"{" else b"]"
    q = p.rstrip(b" \n\r\t")
    return len(q) >= 1 and q[-1:] == want


def utf8_ok(p):
    try:
        p.decode("utf-8", errors="strict")
        return True
    except UnicodeDecodeError:
        return False


def jsonl_problems(line, msg, embed, clock, use_tsc):
    """what is wrong with one jsonl line for message msg: (problems, mode)"""
    conn, op, tsc, payload = msg
    if any(b < 0x20 for b in line):
        return ["raw control character in the line"], None
    try:
        rec = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        return ["not JSON (%s)" % e], None
    if not isinstance(rec, dict):
        return ["not an object"], None
    errs = []
    want_keys = ["rx_tsc", "rx_ns", "conn", "op", "len"]
    if op == 1 and embed and looks_json(payload):
        mode = "embedded"
        want_keys.append("data")
    elif op == 1 and utf8_ok(payload):
        mode = "string"
        want_keys.append("data")
    else:
        mode = "base64"
        want_keys.append("data_b64")
    if list(rec.keys()) != want_keys:
        return ["keys %s, expected %s" % (list(rec.keys()), want_keys)], mode
    if use_tsc and rec["rx_tsc"] != tsc:
        errs.append("rx_tsc %s, expected %d" % (rec["rx_tsc"], tsc))
    if rec["conn"] != conn:
        errs.append("conn %s, expected %d" % (rec["conn"], conn))
    want_op = {1: "text", 2: "binary"}.get(op, op)
    if rec["op"] != want_op:
        errs.append("op %r, expected %r" % (rec["op"], want_op))
    if rec["len"] != len(payload):
        errs.append("len %s, expected %d" % (rec["len"], len(payload)))
    if clock is not None:
        tsc0, hz = clock
        want_ns = (tsc - tsc0) * 10**9 // hz if tsc >= tsc0 else -((tsc0 - tsc) * 10**9 // hz)
        if not isinstance(rec["rx_ns"], int) or abs(rec["rx_ns"] - want_ns) > 1:
            errs.append("rx_ns %s, expected %d (+-1)" % (rec["rx_ns"], want_ns))
    elif not isinstance(rec["rx_ns"], int):
        errs.append("rx_ns %r is not an integer" % (rec["rx_ns"],))
    if mode == "embedded":
        if rec["data"] != json.loads(payload.decode("utf-8")):
            errs.append("embedded data differs from the payload's JSON value")
        raw = payload.replace(b"\n", b" ").replace(b"\r", b" ")
        if not line.endswith(b',"data":' + raw + b"}"):
            errs.append("embedded data is not the payload's bytes (CR/LF as spaces)")
    elif mode == "string":
        if rec["data"] != payload.decode("utf-8"):
            errs.append("data string differs from the payload")
    else:
        try:
            dec = base64.b64decode(rec["data_b64"], validate=True)
        except ValueError as e:
            return errs + ["data_b64 is not base64 (%s)" % e], mode
        if dec != payload:
            errs.append("data_b64 decodes to %d bytes that differ from the payload" % len(dec))
    return errs, mode


def check_jsonl(path, msgs, embed, clock, use_tsc, subseq):
    data = open(path, "rb").read()
    check(data == b"" or data.endswith(b"\n"), "the file ends with a newline")
    lines = data.split(b"\n")[:-1] if data else []
    if subseq:
        check(len(lines) <= len(msgs), "%d lines, at most %d" % (len(lines), len(msgs)))
    else:
        check(len(lines) == len(msgs), "%d lines, expected %d" % (len(lines), len(msgs)))
    errors = []
    kinds = {}
    k = 0
    for i, line in enumerate(lines):
        if subseq:  # the first message at or after k that this line matches
            while k < len(msgs) and jsonl_problems(line, msgs[k], embed, None, use_tsc)[0]:
                k += 1
            if k == len(msgs):
                errors.append("line %d matches no message left: %r" % (i + 1, line[:160]))
                break
        elif k >= len(msgs):
            break
        errs, mode = jsonl_problems(line, msgs[k], embed, clock, use_tsc)
        k += 1
        if mode:
            kinds[mode] = kinds.get(mode, 0) + 1
        for e in errs:
            errors.append("line %d: %s: %r" % (i + 1, e, line[:160]))
    for e in errors[:10]:
        print("  " + e)
    check(not errors, "every line parses and matches %s (%d problems; %s)" %
          ("a message, in order" if subseq else "its message", len(errors),
           ", ".join("%d %s" % (v, k) for k, v in sorted(kinds.items()))))
    return len(lines)


def check_raw(path, msgs, use_tsc, subseq):
    data = open(path, "rb").read()
    off = 0
    recs = []
    while off + 13 <= len(data):
        n, op, tsc = struct.unpack_from("<IBQ", data, off)
        if off + 13 + n > len(data):
            break
        recs.append((op, tsc, data[off + 13:off + 13 + n]))
        off += 13 + n
    check(off == len(data), "records cover the file exactly (%d of %d bytes)" % (off, len(data)))
    errors = []

    def same(rec, m):
        return rec[0] == m[1] & 0xff and (not use_tsc or rec[1] == m[2]) and rec[2] == m[3]
    if subseq:
        check(len(recs) <= len(msgs), "%d records, at most %d" % (len(recs), len(msgs)))
        k = 0
        for i, rec in enumerate(recs):
            while k < len(msgs) and not same(rec, msgs[k]):
                k += 1
            if k == len(msgs):
                errors.append("record %d (opcode %d, len %d) matches no message left" % (i, rec[0], len(rec[2])))
                break
            k += 1
        for e in errors[:10]:
            print("  " + e)
        check(not errors, "every record matches a message, in order (%d problems)" % len(errors))
        return len(recs)
    check(len(recs) == len(msgs), "%d records, expected %d" % (len(recs), len(msgs)))
    for i, (rec, m) in enumerate(zip(recs, msgs)):
        if not same(rec, m):
            errors.append("record %d: opcode %d tsc %d len %d, expected opcode %d tsc %d len %d%s" %
                          (i, rec[0], rec[1], len(rec[2]), m[1] & 0xff, m[2], len(m[3]),
                           "" if rec[2] == m[3] else " (payload differs)"))
    for e in errors[:10]:
        print("  " + e)
    check(not errors, "every record matches its message (%d problems)" % len(errors))
    h_file = hashlib.sha256(b"".join(r[2] for r in recs)).hexdigest()
    h_src = hashlib.sha256(b"".join(m[3] for m in msgs)).hexdigest()
    check(h_file == h_src, "payload SHA-256 %s (source %s)" % (h_file[:16], h_src[:16]))
    return len(recs)


def check_payload(path, msgs):
    data = open(path, "rb").read()
    want = b"".join(m[3] + b"\n" for m in msgs)
    check(len(data) == len(want), "%d bytes, expected %d (payloads and newlines)" % (len(data), len(want)))
    if data != want:
        k = next((i for i in range(min(len(data), len(want))) if data[i] != want[i]), min(len(data), len(want)))
        print("  first difference at byte %d" % k)
    check(data == want, "every payload and its newline, in order")
    return len(msgs)


def main(argv):
    if len(argv) < 4 or argv[1] not in ("jsonl", "raw", "payload"):
        print(__doc__)
        return 2
    fmt, path = argv[1], argv[2]
    embed, log, manifests, use_tsc, subseq, count, every = True, None, [], True, False, None, 1
    args = argv[3:]
    i = 0
    while i < len(args):
        if args[i] == "--no-embed":
            embed = False
        elif args[i] == "--no-tsc":
            use_tsc = False
        elif args[i] == "--subsequence":
            subseq = True
        elif args[i] == "--every":
            every = int(args[i + 1])
            i += 1
        elif args[i] == "--count":
            count = int(args[i + 1])
            i += 1
        elif args[i] == "--log":
            log = args[i + 1]
            i += 1
        else:
            manifests.append(args[i])
        i += 1
    msgs = []
    for m in manifests:
        msgs += load_manifest(m)
    msgs = msgs[::every]
    clock = None
    if log is not None and len(manifests) == 1 and use_tsc:
        m = re.search(r"rx_ns: TSC (\d+) at start, (\d+) Hz", open(log, errors="replace").read())
        if check(m is not None, "sink_file's clock line in %s" % log):
            clock = (int(m.group(1)), int(m.group(2)))
    if fmt == "jsonl":
        n = check_jsonl(path, msgs, embed, clock, use_tsc, subseq)
    elif fmt == "payload":
        n = check_payload(path, msgs)
    else:
        n = check_raw(path, msgs, use_tsc, subseq)
    if count is not None:
        check(n == count, "%d records in the file, the stage counted %d" % (n, count))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
