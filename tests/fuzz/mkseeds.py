#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""mkseeds.py — write the hand-made seed inputs of the fuzz targets.

    tests/fuzz/mkseeds.py [TOP_SRCDIR [TARGET...]]

Writes tests/fuzz/<target>/seed-* (only the TARGETs named, if any): RFC 6455
examples and the unit tests' vectors (ws_frame, ws_handshake), frame sequences
like the ones the stack harness sends (tcp_input, one per TCP state), streams a
peer sends to a session, plain and permessage-deflate (ws_session, compressed
with zlib), and conf/*.json, tests/conf-good/*.json, tests/conf-bad/*.json
(config). The input formats are in each fuzz_*.c header.
After a campaign, `make fuzz-merge` replaces them by a minimised corpus; run this
again only to start over from the seeds.
"""
import glob
import os
import struct
import sys
import zlib

top = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
out = os.path.join(top, "tests", "fuzz")
only = set(sys.argv[2:])


def write(target, name, data):
    if only and target not in only:
        return
    d = os.path.join(out, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "seed-" + name), "wb") as f:
        f.write(data)


# ------------------------------------------------------------------ ws_frame
KEY = bytes([0x37, 0xFA, 0x21, 0x3D])


def mask(p, key=KEY):
    return bytes(b ^ key[i % 4] for i, b in enumerate(p))


def frame(op, payload, fin=True, masked=False, rsv=0, lenform=None):
    b0 = (0x80 if fin else 0) | (rsv << 4) | op
    n = len(payload)
    mbit = 0x80 if masked else 0
    form = lenform or (7 if n < 126 else 16 if n < 65536 else 64)
    if form == 7:
        h = bytes([b0, mbit | n])
    elif form == 16:
        h = bytes([b0, mbit | 126]) + struct.pack(">H", n)
    else:
        h = bytes([b0, mbit | 127]) + struct.pack(">Q", n)
    if masked:
        return h + KEY + mask(payload)
    return h + payload


def stream(frames, server):
    return b"".join(frame(*f[:2], **dict(f[2] if len(f) > 2 else {}, masked=server)) for f in frames)


ws_cases = {
    # RFC 6455 5.7
    "rfc-hello": [(1, b"Hello")],
    "rfc-fragmented": [(1, b"Hel", {"fin": False}), (0, b"lo")],
    "rfc-ping": [(9, b"Hello")],
    "rfc-pong": [(10, b"Hello")],
    "rfc-256-binary": [(2, bytes(range(256)))],
    "len16-300": [(2, b"x" * 300)],
    "len64-nonminimal": [(2, b"abc", {"lenform": 64})],
    "len16-nonminimal": [(1, b"abc", {"lenform": 16})],
    "close-1000-reason": [(8, struct.pack(">H", 1000) + b"bye")],
    "close-empty": [(8, b"")],
    "close-1byte": [(8, b"\x03")],
    "close-bad-code": [(8, struct.pack(">H", 1004))],
    "close-bad-utf8": [(8, struct.pack(">H", 1000) + b"\xc3\x28")],
    "ping-in-fragments": [(1, b"frag", {"fin": False}), (9, b"p"), (0, b"ment", {"fin": False}), (0, b"!")],
    "utf8-split": [(1, "κόσ".encode()[:3], {"fin": False}), (0, "κόσμε".encode()[3:])],
    "utf8-bad": [(1, b"ok\xff")],
    "utf8-truncated": [(1, b"\xe2\x82")],
    "utf8-overlong": [(1, b"\xc0\xaf")],
    "utf8-surrogate": [(1, b"\xed\xa0\x80")],
    "rsv-bits": [(1, b"x", {"rsv": 4})],
    "reserved-opcode": [(3, b"x")],
    "reserved-control": [(11, b"")],
    "control-fragmented": [(9, b"x", {"fin": False})],
    "control-too-long": [(9, b"x" * 126)],
    "cont-without-start": [(0, b"x")],
    "new-inside-fragmented": [(1, b"a", {"fin": False}), (2, b"b")],
    "empty-fragments": [(2, b"", {"fin": False}), (0, b"", {"fin": False}), (0, b"")],
    "many-small": [(1, b"tick %d" % i) for i in range(20)],
    "over-max": [(2, b"y" * 250)],
}
for name, frames in ws_cases.items():
    for server in (False, True):
        s = stream(frames, server)
        for plan_name, plan in (("whole", b"\xff\xff\xff\xff"), ("bytes", b"\x00\x00\x00\x00"),
                                ("mixed", bytes([2, 6, 1, 4]))):
            # utf8 on, max_msg 200 on "over-max" only (else none)
            hdr = (1 if server else 0) | 2 | ((2 << 2) if name == "over-max" else 0)
            write("ws_frame", "%s-%s-%s" % (name, "server" if server else "client", plan_name),
                  bytes([hdr]) + plan + s)
# the wrong side: masked to a client, unmasked to a server
write("ws_frame", "masked-to-client", bytes([2]) + b"\xff" * 4 + stream([(1, b"Hello")], True))
write("ws_frame", "unmasked-to-server", bytes([3]) + b"\xff" * 4 + stream([(1, b"Hello")], False))
write("ws_frame", "len64-msb", bytes([2]) + b"\xff" * 4 + b"\x82\x7f\x80" + b"\x00" * 7)

# ------------------------------------------------------------------ ws_handshake
RESP = (b"HTTP/1.1 101 Switching Protocols\r\n"
        b"Upgrade: websocket\r\n"
        b"Connection: Upgrade\r\n"
        b"Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n")
REQ = (b"GET /chat HTTP/1.1\r\n"
       b"Host: server.example.com\r\n"
       b"Upgrade: websocket\r\n"
       b"Connection: Upgrade\r\n"
       b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
       b"Origin: http://example.com\r\n"
       b"Sec-WebSocket-Protocol: chat, superchat\r\n"
       b"Sec-WebSocket-Version: 13\r\n")
hs_cases = {
    "client-rfc": (0, RESP + b"\r\n"),
    "client-rfc-frames-behind": (0, RESP + b"\r\n\x81\x05Hello"),
    "client-proto-chat": (2, RESP + b"Sec-WebSocket-Protocol: chat\r\n\r\n"),
    "client-proto-missing": (2, RESP + b"\r\n"),
    "client-proto-unasked": (0, RESP + b"Sec-WebSocket-Protocol: chat\r\n\r\n"),
    "client-extension": (0, RESP + b"Sec-WebSocket-Extensions: permessage-deflate\r\n\r\n"),
    "client-wrong-accept": (0, RESP.replace(b"xOo=", b"xOx=") + b"\r\n"),
    "client-400": (0, b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"),
    "client-http10": (0, RESP.replace(b"HTTP/1.1", b"HTTP/1.0") + b"\r\n"),
    "client-conn-list": (0, RESP.replace(b"Connection: Upgrade", b"Connection: keep-alive, Upgrade") + b"\r\n"),
    "client-case": (0, RESP.replace(b"Upgrade: websocket", b"uPGRADE:   WebSocket  ") + b"\r\n"),
    "client-bad-line": (0, RESP + b"no colon here\r\n\r\n"),
    "client-no-blank": (0, RESP),
    "server-rfc": (1, REQ + b"\r\n"),
    "server-rfc-frames-behind": (1, REQ + b"\r\n\x81\x85\x37\xfa\x21\x3d\x7f\x9f\x4d\x51\x58"),
    "server-no-host": (1, REQ.replace(b"Host: server.example.com\r\n", b"") + b"\r\n"),
    "server-version-8": (1, REQ.replace(b"Version: 13", b"Version: 8") + b"\r\n"),
    "server-short-key": (1, REQ.replace(b"dGhlIHNhbXBsZSBub25jZQ==", b"dGhlIHNhbXBsZQ==") + b"\r\n"),
    "server-post": (1, REQ.replace(b"GET ", b"POST ") + b"\r\n"),
    "server-upgrade-list": (1, REQ.replace(b"Upgrade: websocket", b"Upgrade: h2c, websocket") + b"\r\n"),
    "server-long-path": (1, REQ.replace(b"/chat", b"/" + b"p" * 300) + b"\r\n"),
    "server-no-proto": (1, REQ.replace(b"Sec-WebSocket-Protocol: chat, superchat\r\n", b"") + b"\r\n"),
}
for name, (hdr, text) in hs_cases.items():
    for plan_name, plan in (("whole", b"\xff\xff\xff\xff"), ("bytes", b"\x00\x00\x00\x00"),
                            ("mixed", bytes([12, 1, 40, 3]))):
        write("ws_handshake", "%s-%s" % (name, plan_name), bytes([hdr]) + plan + text)
write("ws_handshake", "client-too-long", bytes([0]) + b"\xff" * 4 + b"HTTP/1.1 101 OK\r\nX: " + b"a" * 8300)

# ------------------------------------------------------------------ ws_session
def deflate_msgs(msgs, nct=False, wbits=15):
    """RFC 7692 7.2.1 payloads of msgs, one compressor (context takeover) or one each"""
    out, c = [], None
    for m in msgs:
        if c is None or nct:
            c = zlib.compressobj(6, zlib.DEFLATED, -wbits)
        z = c.compress(m) + c.flush(zlib.Z_SYNC_FLUSH)
        assert z.endswith(b"\x00\x00\xff\xff")
        out.append(z[:-4])
    return out


def sess_hdr(server, pmd=False, nct=False, utf8=True, compress=False, echo=False, fail=None, fini=False,
             max_msg=0, plan=b"\xff\xff\xff\xff", refuse=0, ping=False, close=False):
    b0 = (server and 1) | (pmd and 2) | (nct and 4) | (utf8 and 8) | (compress and 16) | (echo and 32) | \
        ((fail is not None) and 64) | (fini and 128)
    b11 = 7 | (7 << 3) | (ping and 64) | (close and 128)
    return bytes([b0, max_msg // 8]) + plan + struct.pack("<I", refuse) + bytes([fail or 0, b11])


def zframes(msgs, server, nct=False, frag=None):
    """compressed messages as frames (RSV1 on the first), frag: cut into pieces of that size"""
    s = b""
    for op, z in zip([m[0] for m in msgs], deflate_msgs([m[1] for m in msgs], nct)):
        if frag is None or len(z) <= frag:
            s += frame(op, z, rsv=4, masked=server)
            continue
        pieces = [z[i:i + frag] for i in range(0, len(z), frag)]
        for i, piece in enumerate(pieces):
            s += frame(op if i == 0 else 0, piece, fin=i == len(pieces) - 1, rsv=4 if i == 0 else 0, masked=server)
            if i == 0:
                s += frame(9, b"in-z", masked=server)
    return s


tick = b'{"s":"BTCUSD","p":"101.25","q":300}'
sess_plain = [(1, b"Hello"), (2, bytes(range(256))), (1, tick * 4), (2, b""), (1, "κόσμε".encode())]
sess_cases = {
    "plain": [(1, b"Hello"), (2, bytes(range(256))), (1, tick * 4), (2, b""), (1, "κόσμε".encode())],
    "fragmented": [(1, b"Hel", {"fin": False}), (9, b"ping"), (0, b"lo", {"fin": False}), (0, b" world")],
    "ping-pong": [(9, b"hb-1"), (10, b"hb-0"), (9, b""), (9, b"p" * 125), (1, b"after")],
    "close-1000": [(1, b"bye soon"), (8, struct.pack(">H", 1000) + b"bye"), (1, b"zombie")],
    "close-empty": [(8, b""), (1, b"zombie")],
    "long": [(2, bytes(i & 0xFF for i in range(3000))), (1, tick * 60)],
    "bad-utf8": [(1, b"ok"), (1, b"\xc3\x28"), (1, b"never")],
    "bad-opcode": [(1, b"ok"), (3, b"x")],
}
for name, frames in sess_cases.items():
    for server in (False, True):
        s = stream(frames, server)
        role = "server" if server else "client"
        for plan_name, plan in (("whole", b"\xff\xff\xff\xff"), ("bytes", b"\x00\x00\x00\x00"),
                                ("mixed", bytes([2, 6, 1, 40]))):
            write("ws_session", "%s-%s-%s" % (name, role, plan_name), sess_hdr(server, plan=plan) + s)
        write("ws_session", "%s-%s-echo" % (name, role),
              sess_hdr(server, echo=True, plan=bytes([5, 63, 2, 9]), ping=True, close=name == "long") + s)
        write("ws_session", "%s-%s-refuse" % (name, role),
              sess_hdr(server, plan=bytes([7, 3, 30, 1]), refuse=0x5, max_msg=2040) + s)
        write("ws_session", "%s-%s-txfail" % (name, role),
              sess_hdr(server, echo=True, fail=1, fini=server, plan=bytes([9, 1, 12, 3])) + s)
# the wrong masking, a message over max_msg
write("ws_session", "unmasked-to-server", sess_hdr(True) + stream([(1, b"Hello")], False))
write("ws_session", "masked-to-client", sess_hdr(False) + stream([(1, b"Hello")], True))
write("ws_session", "over-max", sess_hdr(False, max_msg=200, plan=bytes([10, 20, 30, 40])) +
      stream([(2, b"y" * 200), (2, b"z" * 201)], False))
# permessage-deflate: context takeover or not, fragmented, our own compression, a bomb
zmsgs = [(1, b"Hello"), (1, b"Hello"), (2, bytes(i % 7 for i in range(2000))), (1, tick * 30), (1, b"")]
for server in (False, True):
    role = "server" if server else "client"
    for nct in (False, True):
        tag = "nct" if nct else "ctx"
        s = zframes(zmsgs, server, nct)
        for plan_name, plan in (("whole", b"\xff\xff\xff\xff"), ("mixed", bytes([2, 6, 1, 40]))):
            write("ws_session", "pmd-%s-%s-%s" % (tag, role, plan_name), sess_hdr(server, True, nct, plan=plan) + s)
        write("ws_session", "pmd-%s-%s-echo" % (tag, role),
              sess_hdr(server, True, nct, compress=True, echo=True, plan=bytes([3, 17, 1, 60])) + s)
        write("ws_session", "pmd-%s-%s-refuse" % (tag, role),
              sess_hdr(server, True, nct, plan=bytes([3, 17, 1, 60]), refuse=0x9, max_msg=2040) + s)
        write("ws_session", "pmd-%s-%s-frag" % (tag, role),
              sess_hdr(server, True, nct, echo=True, plan=bytes([4, 4, 33, 8])) + zframes(zmsgs, server, nct, 7))
    write("ws_session", "pmd-bomb-%s" % role,
          sess_hdr(server, True, max_msg=1024, plan=bytes([31, 31, 31, 31])) +
          zframes([(1, b"a" * 1024), (2, bytes(100000)), (1, b"never")], server))
    write("ws_session", "pmd-plain-%s" % role, sess_hdr(server, True) + stream(sess_plain, server))
    write("ws_session", "pmd-rsv1-off-%s" % role, sess_hdr(server, False) + zframes(zmsgs[:1], server))

# ------------------------------------------------------------------ tcp_input
FIN, SYN, RST, PSH, ACK = 0x01, 0x02, 0x04, 0x08, 0x10
FIX = 0x01 | 0x02 | 0x04 | 0x08  # addresses, lengths, checksums, relative seq/ack


def tcp_frame(flags, seq=0, ack=0, payload=b"", opts=b"", win=65535):
    while len(opts) % 4:
        opts += b"\x01"
    tcp = struct.pack(">HHIIBBHHH", 0, 0, seq & 0xFFFFFFFF, ack & 0xFFFFFFFF, (20 + len(opts)) // 4 << 4,
                      flags, win, 0, 0) + opts + payload
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), 1, 0x4000, 64, 6, 0, bytes(4), bytes(4))
    return bytes(12) + b"\x08\x00" + ip + tcp


def rec(frame, ctl=FIX):
    return bytes([ctl]) + struct.pack(">H", len(frame)) + frame


def action(a, adv=0):
    return bytes([(adv << 5) | a, 0, 0])


TS = b"\x01\x01\x08\x0a" + bytes(8)  # with ctl bit 4 the target fills it in
SACK = b"\x01\x01\x05\x0a" + struct.pack(">II", 1000, 2000)
payload = bytes((i * 7) & 0xFF for i in range(700))
seqs = {
    "data-in-order": [rec(tcp_frame(ACK | PSH, 0, 0, b"hello")), rec(tcp_frame(ACK | PSH, 5, 0, b"world"))],
    "data-ooo": [rec(tcp_frame(ACK, 100, 0, payload[:100])), rec(tcp_frame(ACK, 0, 0, payload[:100])),
                 rec(tcp_frame(ACK, 300, 0, payload[:50]))],
    "data-ts": [rec(tcp_frame(ACK | PSH, 0, 0, b"timestamped", TS), FIX | 0x10)],
    "fin": [rec(tcp_frame(FIN | ACK, 0, 0))],
    "rst": [rec(tcp_frame(RST, 0, 0))],
    "rst-in-window": [rec(tcp_frame(RST | ACK, 10, 0))],
    "syn": [rec(tcp_frame(SYN, 0, 0, b"", b"\x02\x04\x05\xb4"))],
    "sack-dupacks": [action(2)] + [rec(tcp_frame(ACK, 0, 0, b"", SACK)) for _ in range(4)],
    "zero-window": [action(2), rec(tcp_frame(ACK, 0, 0, win=0)), action(0, 3), action(0, 3)],
    "timers": [action(1), action(0, 2), action(0, 3), action(0, 3), action(3)],
    "burst": [rec(tcp_frame(ACK, 0, 0, payload[:200]), FIX | 0x80), rec(tcp_frame(ACK, 200, 0, payload[:200]))],
    "app-close-abort": [action(1), rec(tcp_frame(ACK, 0, 0)), action(3), action(4)],
    "bad-csum": [rec(tcp_frame(ACK, 0, 0, b"x"), FIX & ~0x04)],
    "bad-offset": [rec(tcp_frame(ACK, 0, 0)[:46] + b"\xf0" + tcp_frame(ACK, 0, 0)[47:])],
}
for state in range(11):
    for name, records in seqs.items():
        for opts in (0x07, 0x20 | 0x10 | 0x07):
            write("tcp_input", "s%02d-%s-%02x" % (state, name, opts), bytes([state, opts]) + b"".join(records))
# in-order coalescing (cfg.rx_coalesce): runs of one header in one burst, with a
# duplicate, a hole and its fill, a SYN; raw timestamps (ctl bit 4 off), so that
# the option bytes repeat; established (4), also with stretch ACKs (0x88)
HOLD = FIX | 0x80
TSRAW = b"\x01\x01\x08\x0a" + struct.pack(">II", 0x10000000, 0)
TSRAW2 = b"\x01\x01\x08\x0a" + struct.pack(">II", 0x10000001, 0)
run = [rec(tcp_frame(ACK, i * 100, 0, payload[:100]), HOLD) for i in range(9)] + \
    [rec(tcp_frame(ACK, 900, 0, payload[:100]))]
mix = [rec(tcp_frame(f, q, 0, payload[:n]), HOLD) for f, q, n in
       ((ACK, 0, 100), (ACK | PSH, 100, 100), (ACK, 100, 100), (ACK, 200, 100), (ACK, 400, 100),
        (ACK, 300, 100), (ACK, 500, 100), (SYN | ACK, 600, 50))] + [rec(tcp_frame(ACK, 650, 0, payload[:100]))]
tsrun = [rec(tcp_frame(ACK, i * 100, 0, payload[:100], TSRAW if i < 8 else TSRAW2), HOLD if i < 9 else FIX)
         for i in range(10)]
for state in (4, 0x88):
    write("tcp_input", "coalesce-run-%02x" % state, bytes([state, 0]) + b"".join(run))
    write("tcp_input", "coalesce-ts-%02x" % state, bytes([state, 0x03]) + b"".join(tsrun))
write("tcp_input", "coalesce-mix", bytes([4, 0]) + b"".join(mix))
# not TCP: ICMP echo, ARP, short and foreign frames
icmp = struct.pack(">BBHHH", 8, 0, 0, 1, 1) + b"ping"
ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(icmp), 1, 0, 64, 1, 0, bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2]))
arp = (b"\xff" * 6 + b"\x02\x00\x00\x00\x00\x01\x08\x06" + struct.pack(">HHBBH", 1, 0x0800, 6, 4, 1) +
       b"\x02\x00\x00\x00\x00\x01" + bytes([10, 0, 0, 1]) + bytes(6) + bytes([10, 0, 0, 2]))
write("tcp_input", "icmp-echo", bytes([4, 0]) + rec(b"\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01\x08\x00" + ip + icmp, 0))
write("tcp_input", "arp-request", bytes([4, 0]) + rec(arp, 0))
write("tcp_input", "short-frames", bytes([4, 0]) + rec(b"\x00" * 10, 0) + rec(b"\x00" * 20, 1) + rec(tcp_frame(ACK)[:40], FIX))

# ------------------------------------------------------------------ config
for pattern in ("conf/*.json", "tests/conf-good/*.json", "tests/conf-bad/*.json"):
    for p in sorted(glob.glob(os.path.join(top, pattern))):
        with open(p, "rb") as f:
            write("config", pattern.split("/")[-2] + "-" + os.path.basename(p), f.read())
