#!/usr/bin/python3
# tests/kernel/ws_hostile.py — a hostile WebSocket server for
# tests/kernel/ws_hostile.sh and ws_handshake.sh. No WebSocket library: the
# handshake and every frame are written by hand on a plain socket, so it can
# break the protocol on purpose.
#
# It serves one case per accepted connection, in the order given by --cases
# (the client reconnects after each), then "done", then holds any further
# connection open (handshake, then answering pings) for --linger seconds, or
# until the client has dropped them, or until --stop-file exists (the test
# creates it once the client has exited: a reconnect its stop overtook never
# comes), before it exits.
#
# A case (CASES below) says what the server does and what the client must do:
#   kind "frame"      a valid handshake; wait for the client's subscription (a
#                     text message: proof that it is open); send the text
#                     message "ok:<case>" (which the client must deliver), then
#                     `send` (a violation, whose payloads all contain "BAD": none
#                     of it may be delivered, or valid frames); then read the
#                     client's frames (answering its pings, unless "no_pong")
#                     until its close frame (the code is recorded) and until it
#                     closes or resets TCP. With "dribble", `send` goes out one
#                     byte per write, 1 ms apart (one TCP segment per byte).
#   kind "eof"        like frame, then shutdown(SHUT_WR) (FIN, no close frame)
#   kind "rst"        like frame, then a RST (SO_LINGER 0) after `send`
#   kind "handshake"  a broken upgrade response (`send`), none (slowloris:
#                     one header byte every 100 ms for ever), a FIN ("EOF") or
#                     a RST ("RST", dropped "server-rst"); then wait for the
#                     client to drop the connection (it never opened).
# and the expectations the test checks (ws_hostile_check in ws_lib.sh):
#   close   the close code the client must send (None: no close frame;
#           "empty": a close frame without a code)
#   msgs    the messages the client must deliver, in order (short ones as
#           text, longer ones as "(len N)")
#   ctr     how much each ws counter must move for this case
#   why     what the ws stage logs when it gives the connection up
# --result FILE: JSON {"order", "cases": [{"case", "kind", "close_codes",
# "subscription", "frames_after", "pongs", "dropped" ("fin" / "rst" /
# "timeout" / "server-rst"), "elapsed_s", "error"}...], "idle_connections",
# "after_done": [{"peer", "t", "state"}...], "mask_keys": [the 4-byte mask key of
# every client frame read, hex], "error"}, written after every case
# and at the end (PATH.tmp, renamed).
import argparse
import base64
import hashlib
import json
import os
import select
import socket
import struct
import sys
import threading
import time

GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
TEXT, BIN, CONT, CLOSE, PING, PONG = 1, 2, 0, 8, 9, 10


MASK_KEYS = []  # the mask key of every client frame read, in order (hex)


def frame(op, payload=b"", fin=True, rsv=0, mask=None, length=None, ext=None):
    """a frame by hand: length overrides the announced payload length, ext
    forces the length encoding (7, 16 or 64 bits: non-minimal ones are legal)"""
    n = len(payload) if length is None else length
    b0 = (0x80 if fin else 0) | (rsv << 4) | op
    m = 0x80 if mask else 0
    if ext is None:
        ext = 7 if n < 126 else 16 if n <= 0xFFFF else 64
    if ext == 7:
        h = struct.pack("!BB", b0, n | m)
    elif ext == 16:
        h = struct.pack("!BBH", b0, 126 | m, n)
    else:
        h = struct.pack("!BBQ", b0, 127 | m, n)
    if mask:
        payload = bytes(c ^ mask[i % 4] for i, c in enumerate(payload))
        h += mask
    return h + payload


def close_frame(code, reason=b""):
    return frame(CLOSE, struct.pack("!H", code) + reason)


def case(kind, close, send=None, msgs=None, ctr=None, why="", **kw):
    d = {"kind": kind, "close": close, "send": send, "msgs": msgs, "ctr": ctr or {}, "why": why}
    d.update(kw)
    return d


def violation(code, send, why):
    return case("frame", code, send, ctr={
        {1002: "fail_protocol_1002", 1007: "fail_bad_utf8_1007", 1009: "fail_too_big_1009"}[code]: 1,
        "closes_tx": 1}, why=why)


def bad_handshake(send, why):
    return case("handshake", None, send, ctr={"fail_handshake": 1}, why="handshake failed: " + why)


CLOSED = {"closes_rx": 1, "closes_tx": 1}  # the server closed validly, we echoed
BIG_TEXT = ("é" * 16384 + "x" * 32768).encode()  # 65536 bytes of valid UTF-8

CASES = {
    # framing violations -> 1002
    "masked_frame": violation(1002, frame(TEXT, b"BAD masked server frame", mask=b"\x11\x22\x33\x44"),
                              "masked frame from the server"),
    "rsv1": violation(1002, frame(TEXT, b"BAD rsv1", rsv=4), "RSV1 set without a negotiated extension"),
    "rsv3": violation(1002, frame(BIN, b"BAD rsv3", rsv=1), "RSV2 or RSV3 set"),
    "opcode_3": violation(1002, frame(0x3, b"BAD reserved data opcode 3"), "reserved data opcode"),
    "opcode_0xb": violation(1002, frame(0xB, b"BAD reserved control opcode 0xB"), "reserved control opcode"),
    "control_126": violation(1002, frame(PING, b"BAD" + b"p" * 123), "control frame payload over 125 bytes"),
    "fragmented_ping": violation(1002, frame(PING, b"BAD fragmented ping", fin=False), "fragmented control frame"),
    "cont_without_start": violation(1002, frame(CONT, b"BAD continuation without a start"),
                                    "continuation frame without a message"),
    "text_in_fragmented": violation(1002, frame(TEXT, b"BAD first fragment", fin=False)
                                    + frame(TEXT, b"BAD new text inside"), "new message inside a fragmented one"),
    "binary_in_fragmented": violation(1002, frame(BIN, b"BAD first fragment", fin=False)
                                      + frame(BIN, b"BAD new binary inside"), "new message inside a fragmented one"),
    "len_2_63": violation(1002, bytes([0x82, 0x7F, 0x80, 0, 0, 0, 0, 0, 0, 0]) + b"BAD 2^63",
                          "64-bit length with the most significant bit set"),
    # close frames
    "close_1005": violation(1002, close_frame(1005, b"BAD"), "invalid close code"),
    "close_1004": violation(1002, close_frame(1004, b"BAD"), "invalid close code"),
    "close_999": violation(1002, close_frame(999, b"BAD"), "invalid close code"),
    "close_1_byte": violation(1002, frame(CLOSE, b"\x03"), "close frame with a 1-byte payload"),
    "close_bad_utf8_reason": violation(1007, close_frame(1000, b"BAD \xff reason"), "close reason is not valid UTF-8"),
    # UTF-8 -> 1007
    "bad_utf8": violation(1007, frame(TEXT, b"BAD \xff\xfe"), "not valid UTF-8"),
    "bad_utf8_split": violation(1007, frame(TEXT, b"BAD split \xe2\x82", fin=False) + frame(CONT, b"("),
                                "not valid UTF-8"),
    "utf8_truncated": violation(1007, frame(TEXT, b"BAD truncated ", fin=False) + frame(CONT, b"\xe2\x82"),
                                "not valid UTF-8"),
    "utf8_surrogate": violation(1007, frame(TEXT, b"BAD surrogate \xed\xa0\x80"), "not valid UTF-8"),
    "utf8_overlong": violation(1007, frame(TEXT, b"BAD overlong \xc0\xaf"), "not valid UTF-8"),
    # the bad byte in the 7th TCP segment of one frame (the first ones valid)
    "bad_utf8_late": violation(1007, frame(TEXT, b"BAD" + b"x" * 9000 + b"\xff" + b"y" * 996), "not valid UTF-8"),
    # size (max_msg 65536) -> 1009
    "too_big": violation(1009, frame(BIN, b"BAD" * 100, length=16 << 20), "message over the size limit"),
    "too_big_fragments": violation(1009, frame(BIN, b"BAD" + b"a" * 39997, fin=False)
                                   + frame(CONT, b"BAD" + b"b" * 39997), "message over the size limit"),
    # after close: we echo 1000, the data is not delivered
    "data_after_close": case("frame", 1000, close_frame(1000, b"bye") + frame(TEXT, b"BAD data after close"),
                             ctr=CLOSED, why="server closed with 1000"),
    # valid but awkward: every frame split into 1-byte TCP segments (headers,
    # a 125-byte ping, non-minimal 16- and 64-bit lengths, a fragmented text
    # with a ping inside and an empty final fragment), then close
    "dribble_frames": case("frame", 1000,
                           frame(TEXT, b"ok:dribble-7") + frame(PING, b"P" * 125)
                           + frame(TEXT, b"ok:dribble-16", ext=16) + frame(BIN, b"ok:dribble-64", ext=64)
                           + frame(TEXT, "ok:dribble-frag-€".encode()[:-1], fin=False)
                           + frame(PING, b"Q") + frame(CONT, "€".encode()[-1:], fin=False) + frame(CONT, b"")
                           + close_frame(1000, b"dribbled"),
                           msgs=["ok:dribble_frames", "ok:dribble-7", "ok:dribble-16", "ok:dribble-64",
                                 "ok:dribble-frag-€"],
                           ctr={"closes_rx": 1, "closes_tx": 1, "pings_rx": 2, "pongs_tx": 2}, dribble=True,
                           why="server closed with 1000", pongs=[b"P" * 125, b"Q"]),
    # valid: exactly max_msg, whole (spans TCP segments) and fragmented text
    "exact_max_msg": case("frame", 1000,
                          frame(BIN, b"M" * 65536) + frame(TEXT, BIG_TEXT[:30001], fin=False)
                          + frame(CONT, BIG_TEXT[30001:], fin=True) + close_frame(1000),
                          msgs=["ok:exact_max_msg", "(len 65536)", "(len 65536)"], ctr=CLOSED,
                          why="server closed with 1000"),
    # valid: frames in the same TCP segment as the 101 response
    "frames_with_101": case("frame", 1000, close_frame(1000), with_101=True, ctr=CLOSED,
                            why="server closed with 1000"),
    # valid close frames: no code (we answer with an empty close), an
    # application code with a UTF-8 reason (we echo the code)
    "close_empty": case("frame", "empty", frame(CLOSE, b""), ctr=CLOSED, why="server closed with 1005"),
    "close_4000": case("frame", 4000, close_frame(4000, "fin de séance".encode()), ctr=CLOSED,
                       why="server closed with 4000"),
    # valid control frames: an empty ping, a pong nobody asked for
    "ping_empty": case("frame", 1000, frame(PING, b"") + close_frame(1000), pongs=[b""],
                       ctr={"closes_rx": 1, "closes_tx": 1, "pings_rx": 1, "pongs_tx": 1},
                       why="server closed with 1000"),
    "unsolicited_pong": case("frame", 1000, frame(PONG, b"unasked") + frame(TEXT, b"ok:after-pong") + close_frame(1000),
                             msgs=["ok:unsolicited_pong", "ok:after-pong"], ctr=CLOSED, why="server closed with 1000"),
    # TCP ends without a close frame: FIN (we close too), RST mid-message
    "tcp_fin": case("eof", None, None, why="closed TCP without a close frame"),
    "tcp_rst_mid_message": case("rst", None, frame(BIN, b"BAD" * 6000)[:5000], ctr={"fail_tcp": 1},
                                why="tcp reset"),
    # a server that never answers our pings (ping_interval_ms 500, pong_timeout_ms 2000)
    "no_pong": case("frame", 1001, None, no_pong=True, ctr={"fail_pong_timeout": 1, "closes_tx": 1},
                    why="pong timeout"),
    # handshake
    "slowloris": case("handshake", None, None, ctr={"fail_handshake_timeout": 1}, why="upgrade timed out"),
    "handshake_200": bad_handshake("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", "status is not 101"),
    "handshake_wrong_accept": bad_handshake("WRONG_ACCEPT", "Sec-WebSocket-Accept is missing or wrong"),
    "handshake_no_upgrade": bad_handshake("NO_UPGRADE", "Upgrade is not websocket"),
    "handshake_no_connection": bad_handshake("NO_CONNECTION", "Connection does not contain upgrade"),
    "handshake_extension": bad_handshake("EXTENSION", "the server chose an extension we did not offer"),
    "handshake_protocol": bad_handshake("PROTOCOL", "Sec-WebSocket-Protocol does not match"),
    "handshake_http10": bad_handshake("HTTP10", "response is not HTTP/1.1"),
    "handshake_huge": bad_handshake("HUGE", "handshake head longer than 8 KiB"),
    # the server reads the request and closes (FIN) or resets TCP without answering
    "handshake_eof": case("handshake", None, "EOF", ctr={"fail_handshake": 1},
                          why="handshake failed: the server closed TCP (FIN) before answering the upgrade"),
    "handshake_rst": case("handshake", None, "RST", ctr={"fail_handshake": 1},
                          why="handshake failed: the server reset TCP before answering the upgrade"),
    # the end: a message, then a valid close
    "done": case("frame", 1000, close_frame(1000, b"done"), msgs=["done"], ctr=CLOSED, why="server closed with 1000"),
}
for _n, _c in CASES.items():
    if _c["msgs"] is None:
        _c["msgs"] = ["ok:" + _n] if _c["kind"] != "handshake" else []


def accept_for(key):
    return base64.b64encode(hashlib.sha1(key.encode() + GUID).digest()).decode()


def response(key, variant=None):
    acc = accept_for(key)
    lines = ["HTTP/1.1 101 Switching Protocols", "Upgrade: websocket", "Connection: Upgrade",
             "Sec-WebSocket-Accept: " + acc]
    if variant == "WRONG_ACCEPT":
        lines[3] = "Sec-WebSocket-Accept: " + accept_for(key + "x")
    elif variant == "NO_UPGRADE":
        del lines[1]
    elif variant == "NO_CONNECTION":
        del lines[2]
    elif variant == "EXTENSION":
        # not the permessage-deflate the ws stage offers: one it never does
        lines.append("Sec-WebSocket-Extensions: x-webkit-deflate-frame")
    elif variant == "PROTOCOL":
        lines.append("Sec-WebSocket-Protocol: chat")
    elif variant == "HTTP10":
        lines[0] = "HTTP/1.0 101 Switching Protocols"
    elif variant == "HUGE":
        lines += ["X-Filler-%d: %s" % (i, "f" * 90) for i in range(100)]  # ~10 KiB of headers
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


class Conn:
    def __init__(self, s, timeout):
        self.s = s
        self.buf = b""
        self.timeout = timeout
        self.dropped = None  # "fin" / "rst"

    def fill(self, deadline):
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("timeout")
        r, _, _ = select.select([self.s], [], [], left)
        if not r:
            raise TimeoutError("timeout")
        try:
            d = self.s.recv(65536)
        except ConnectionResetError:
            self.dropped = "rst"
            raise EOFError("rst")
        if not d:
            self.dropped = "fin"
            raise EOFError("fin")
        self.buf += d

    def need(self, n, deadline):
        while len(self.buf) < n:
            self.fill(deadline)
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def request(self):
        deadline = time.monotonic() + self.timeout
        while b"\r\n\r\n" not in self.buf:
            self.fill(deadline)
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        key = None
        for line in head.decode("latin-1").split("\r\n")[1:]:
            k, _, v = line.partition(":")
            if k.strip().lower() == "sec-websocket-key":
                key = v.strip()
        if key is None:
            raise RuntimeError("no Sec-WebSocket-Key in the request")
        return head.decode("latin-1").split("\r\n")[0], key

    def client_frame(self, deadline):
        """one frame from the client: (fin, opcode, payload); client frames must be masked"""
        b0, b1 = self.need(2, deadline)
        n = b1 & 0x7F
        if n == 126:
            n = struct.unpack("!H", self.need(2, deadline))[0]
        elif n == 127:
            n = struct.unpack("!Q", self.need(8, deadline))[0]
        if not b1 & 0x80:
            raise RuntimeError("unmasked frame from the client")
        key = self.need(4, deadline)
        MASK_KEYS.append(key.hex())
        p = self.need(n, deadline)
        return b0 >> 7, b0 & 0x0F, bytes(c ^ key[i % 4] for i, c in enumerate(p))

    def wait_drop(self, deadline):
        """read (and discard) until the client drops TCP; 'fin' / 'rst' / 'timeout'"""
        try:
            while True:
                self.fill(deadline)
                self.buf = b""
        except EOFError:
            return self.dropped
        except TimeoutError:
            return "timeout"


def slowloris(c, t0, timeout, rec):
    """a valid status line, then one header byte every 100 ms, for ever"""
    c.s.sendall(b"HTTP/1.1 101 Switching Protocols\r\n")
    drip = b"X-Slow: " + b"a" * 50 + b"\r\n"
    i = 0
    while time.monotonic() < t0 + timeout:
        try:
            c.s.sendall(drip[i % len(drip):i % len(drip) + 1])
        except (BrokenPipeError, ConnectionResetError):
            c.dropped = c.dropped or "rst"
            break
        i += 1
        r, _, _ = select.select([c.s], [], [], 0.1)
        if r:
            try:
                if not c.s.recv(65536):
                    c.dropped = "fin"
                    break
            except ConnectionResetError:
                c.dropped = "rst"
                break
    rec["dropped"] = c.dropped or "timeout"
    rec["bytes_dripped"] = i


def serve_case(c, name, timeout):
    k = CASES[name]
    kind = k["kind"]
    rec = {"close_codes": [], "subscription": None, "dropped": None, "frames_after": [], "pongs": []}
    t0 = time.monotonic()
    deadline = t0 + timeout
    _line, key = c.request()
    if kind == "handshake":
        if name == "slowloris":
            slowloris(c, t0, timeout, rec)
        else:
            if k["send"] == "EOF":
                c.s.shutdown(socket.SHUT_WR)
            elif k["send"] == "RST":
                c.s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                rec["dropped"] = "server-rst"
                rec["elapsed_s"] = round(time.monotonic() - t0, 3)
                return rec  # the caller's close() sends the RST
            else:
                c.s.sendall(k["send"].encode() if k["send"].startswith("HTTP/") else response(key, k["send"]))
            rec["dropped"] = c.wait_drop(deadline)
        rec["elapsed_s"] = round(time.monotonic() - t0, 3)
        return rec
    marker = frame(TEXT, k["msgs"][0].encode())
    if k.get("with_101"):
        c.s.sendall(response(key) + marker + k["send"])
        _fin, op, p = c.client_frame(deadline)
    else:
        c.s.sendall(response(key))
        _fin, op, p = c.client_frame(deadline)
        if k.get("dribble"):
            c.s.sendall(marker)
            for i in range(len(k["send"])):
                c.s.sendall(k["send"][i:i + 1])
                time.sleep(0.001)
        elif k["send"] is None:
            c.s.sendall(marker)
        elif len(name) % 2 == 0:
            # the marker and the rest in one write (one TCP segment) for
            # even-length names, two writes 20 ms apart otherwise
            c.s.sendall(marker + k["send"])
        else:
            c.s.sendall(marker)
            time.sleep(0.02)
            c.s.sendall(k["send"])
    rec["subscription"] = p.decode("utf-8", "replace") if op == TEXT else "(opcode %d)" % op
    if kind == "rst":
        time.sleep(0.05)
        c.s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        rec["dropped"] = "server-rst"
        rec["elapsed_s"] = round(time.monotonic() - t0, 3)
        return rec  # the caller's close() sends the RST
    if kind == "eof":
        c.s.shutdown(socket.SHUT_WR)
    try:
        while True:
            _fin, op, p = c.client_frame(deadline)
            if op == CLOSE:
                rec["close_codes"].append(struct.unpack("!H", p[:2])[0] if len(p) >= 2 else "empty")
                rec["close_reason"] = p[2:].decode("utf-8", "replace")
                break
            if op == PING:
                rec.setdefault("pings_from_client", 0)
                rec["pings_from_client"] += 1
                if not k.get("no_pong"):
                    c.s.sendall(frame(PONG, p))
            elif op == PONG:
                rec["pongs"].append(p.decode("latin-1"))
            else:
                rec["frames_after"].append(op)
    except (EOFError, TimeoutError) as e:
        rec["dropped"] = c.dropped or str(e)
    if rec["dropped"] is None:
        rec["dropped"] = c.wait_drop(deadline)
    rec["elapsed_s"] = round(time.monotonic() - t0, 3)
    return rec


def idle_conn(s, rec, until):
    """a reconnect after done: upgraded, then held, answering the client's
    pings (so that a run that goes on after done, e.g. for a second connection
    of the ws stage, does not fail it with a pong timeout) until the client
    drops it or `until` (monotonic)"""
    c = Conn(s, 1.5)
    try:
        _line, key = c.request()
        s.sendall(response(key))
        rec["state"] = "upgraded"
    except TimeoutError:
        rec["state"] = "silent"
        return
    except (OSError, RuntimeError, EOFError) as e:
        rec["state"] = "dropped"
        rec["why"] = str(e)
        return
    try:
        while True:
            _fin, op, p = c.client_frame(until)
            if op == PING:
                s.sendall(frame(PONG, p))
                rec["pongs_sent"] = rec.get("pongs_sent", 0) + 1
    except (OSError, RuntimeError, EOFError, TimeoutError):
        pass
    rec["closed"] = True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--cases", required=True, help="comma-separated case names (\"done\" is added at the end)")
    ap.add_argument("--result", required=True)
    ap.add_argument("--ready-file")
    ap.add_argument("--case-timeout", type=float, default=5.0)
    ap.add_argument("--timeout", type=float, default=60.0, help="overall")
    ap.add_argument("--linger", type=float, default=3.0, help="serve idle connections this long after done")
    ap.add_argument("--stop-file", help="stop serving idle connections once this file exists")
    a = ap.parse_args()
    order = [x for x in a.cases.split(",") if x] + ["done"]
    bad = [x for x in order if x not in CASES]
    if bad:
        print("unknown case(s): %s; known: %s" % (bad, ", ".join(CASES)), file=sys.stderr)
        return 64
    res = {"order": order, "cases": [], "idle_connections": 0, "after_done": [], "error": None}

    def write():
        res["mask_keys"] = MASK_KEYS
        tmp = a.result + ".tmp"
        with open(tmp, "w") as f:
            json.dump(res, f, indent=1)
        os.rename(tmp, a.result)

    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("0.0.0.0", a.port))
    ls.listen(16)
    if a.ready_file:
        with open(a.ready_file, "w") as f:
            f.write("%d\n" % os.getpid())
    t_start = time.monotonic()
    t_end = t_start + a.timeout
    idle = []
    t_done = None
    i = 0
    while True:
        now = time.monotonic()
        if now >= t_end or (t_done is not None and now >= t_done + a.linger):
            break
        if a.stop_file and os.path.exists(a.stop_file):
            res["client_gone"] = True
            break
        # after done, once every held connection is gone (the client left)
        if t_done is not None and res["after_done"] and all(r.get("closed") or r["state"] in ("silent", "dropped")
                                                          for r in res["after_done"] if r["state"] is not None) \
                and all(r["state"] is not None for r in res["after_done"]) and now >= t_done + 0.5:
            break
        r, _, _ = select.select([ls], [], [], 0.1)
        if not r:
            continue
        s, peer = ls.accept()
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if i >= len(order):
            # after done: a reconnect, held open idle (handshake only) until we
            # exit, in a thread of its own; recorded in "after_done" as
            # "upgraded" (it sent an upgrade request within 1.5 s), "dropped"
            # (closed or reset before) or "silent" (an orphan: a TCP connection
            # the client never used)
            res["idle_connections"] += 1
            rec = {"peer": "%s:%d" % peer, "t": round(time.monotonic() - t_start, 3), "state": None, "why": None}
            res["after_done"].append(rec)
            idle.append(s)
            threading.Thread(target=idle_conn, args=(s, rec, t_done + a.linger if t_done else t_end),
                             daemon=True).start()
            continue
        name = order[i]
        i += 1
        rec = {"case": name, "kind": CASES[name]["kind"], "expect": CASES[name]["close"], "peer": "%s:%d" % peer}
        try:
            rec.update(serve_case(Conn(s, a.case_timeout), name, a.case_timeout))
            rec["error"] = None
        except (OSError, RuntimeError, EOFError, TimeoutError) as e:
            rec["error"] = "%s: %s" % (type(e).__name__, e)
        s.close()
        res["cases"].append(rec)
        write()
        print("%-24s expect %-5s got %-12s dropped %-10s %.3f s%s" % (
            name, rec["expect"], rec.get("close_codes"), rec.get("dropped"), rec.get("elapsed_s", -1),
            "  ERROR " + rec["error"] if rec["error"] else ""), flush=True)
        if name == "done":
            t_done = time.monotonic()
    for s in idle:
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        s.close()
    if i < len(order):
        res["error"] = "served %d of %d cases before the timeout" % (i, len(order))
    write()
    return 0 if res["error"] is None else 1


if __name__ == "__main__":
    sys.exit(main())
