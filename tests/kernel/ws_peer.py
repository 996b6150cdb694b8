#!/usr/bin/python3
# tests/kernel/ws_peer.py — the WebSocket server of tests/kernel/ws_python.sh:
# Debian's python3-websockets (10.x, the legacy asyncio API), run with
# /usr/bin/python3 inside the test's network namespace.
#
# Serves ws://0.0.0.0:PORT/ (wss:// with --tls-cert / --tls-key: an
# ssl.SSLContext with that certificate, TLS --tls-min .. --tls-max, 1.2 or 1.3,
# session tickets on; permessage-deflate with --deflate, websockets' default
# extension, else none). On the first connection it waits for the client's
# subscription message (a text message; recorded, and checked against
# --expect-sub), then sends --count messages of mixed sizes and types:
#   - first, every boundary size (0, 1, 125, 126, 127, 65535, 65536 bytes) as
#     text and as binary, whole and server-fragmented; later a boundary size
#     again every 97th message;
#   - otherwise a seeded size mix: 70 % 1..256 B, 20 % 257..4096 B,
#     8 % 4097..16384 B, 2 % 16385..65536 B; half text (valid UTF-8 with 2-, 3-
#     and 4-byte characters), half binary (random bytes);
#   - every --frag-every-th message fragmented by the server (websockets sends
#     an async iterator as one fragmented message: 2..6 fragments, then the
#     empty final frame websockets always adds), with a ping interleaved between
#     two fragments of every third fragmented message;
#   - a ping (unique payload of 4..125 bytes) every --ping-every messages;
# (--pace-ms: a pause after each message, to make the transfer last, e.g. next
# to a hostile connection in ws_hostile.sh), then closes the connection itself
# (1000, "done") and waits for the client's
# close frame. With --serve N the first N connections get that transfer each
# (the same messages: a client that reconnects after the server's close gets
# it again, e.g. to resume its TLS session). Later connections (the client
# reconnects) are held open, idle, until the client goes (with --linger S the
# server itself stays up to S seconds after the transfer, until such a
# connection is dropped, or until --stop-file exists: the test creates it once
# the client has exited, so that a reconnect its stop overtook is not waited for).
#
# With --until-client-close (tests/kernel/ws_stop.sh) the server never closes:
# it sends --count messages (0: until the client closes), --pace-ms apart,
# then waits for the client's close; it records the client's close code and
# how TCP ended ("tcp_fin": the client's FIN arrived; "tcp_rst": a reset).
# --open-file PATH is created when the subscription arrives.
#
# --result FILE (JSON, written when the first connection is done): the SHA-256
# of all payloads in order (text as UTF-8), the SHA-256 of the (opcode, length)
# sequence (1 byte opcode + 4 bytes length little-endian per message, as
# msg_hash's "sha256_lens"), counts (messages, bytes, text, binary, fragmented,
# fragments, pings, pongs received for them), the sizes at the boundaries sent,
# the subscription received and the client's close code (with --serve N: the
# SHA-256s and counts over all N transfers in order, the last close code);
# "conns", per connection: the request's Host, the extensions offered and
# agreed, and with TLS the version, cipher, SNI (null when the client sent
# none), the ALPN protocol selected (http/1.1 offered; null: none) and
# whether the session was resumed; with TLS, "alerts_rx": the alerts the
# clients sent (e.g. CLOSE_NOTIFY, BAD_CERTIFICATE, UNKNOWN_CA, also from
# handshakes that failed; absent where CPython has no _msg_callback). Exit 0 when the
# transfer completed (the test asserts on the numbers), 1 on an error, 2 when
# nothing connected within --timeout or before a SIGTERM (which ends the
# server at once, result written: "terminated": true; e.g. after a run in
# which every client refused the handshake).
import argparse
import asyncio
import hashlib
import json
import os
import random
import signal
import ssl
import struct
import sys
import time

import websockets

BOUNDARY = [0, 1, 125, 126, 127, 65535, 65536]
TLS_VERSIONS = {"1.2": ssl.TLSVersion.TLSv1_2, "1.3": ssl.TLSVersion.TLSv1_3}


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--frag-every", type=int, default=10)
    ap.add_argument("--ping-every", type=int, default=50)
    ap.add_argument("--expect-sub", default=None)
    ap.add_argument("--result", required=True)
    ap.add_argument("--ready-file", default=None)
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--pace-ms", type=float, default=0.0)
    ap.add_argument("--linger", type=float, default=0.0)
    ap.add_argument("--stop-file", default=None, help="--linger ends once this file exists")
    ap.add_argument("--serve", type=int, default=1, help="connections that get the transfer")
    ap.add_argument("--tls-cert", default=None, help="PEM certificate (chain): serve wss://")
    ap.add_argument("--tls-key", default=None, help="PEM private key of --tls-cert")
    ap.add_argument("--tls-min", choices=sorted(TLS_VERSIONS), default="1.2")
    ap.add_argument("--tls-max", choices=sorted(TLS_VERSIONS), default="1.3")
    ap.add_argument("--deflate", action="store_true", help="offer permessage-deflate (websockets' default)")
    ap.add_argument("--until-client-close", action="store_true")
    ap.add_argument("--open-file", default=None)
    a = ap.parse_args()
    if (a.tls_cert is None) != (a.tls_key is None):
        ap.error("--tls-cert and --tls-key go together")
    return a


def tls_context(a, res):
    """the server's SSLContext: the certificate, TLS --tls-min..--tls-max, the
    client's SNI kept on the connection's SSLObject (sni_callback), the alerts
    received in res["alerts_rx"] (CPython's _msg_callback, where it exists)"""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(a.tls_cert, a.tls_key)
    ctx.minimum_version = TLS_VERSIONS[a.tls_min]
    ctx.maximum_version = TLS_VERSIONS[a.tls_max]
    ctx.set_alpn_protocols(["http/1.1"])  # as HTTP servers do

    def sni(sslobj, name, _ctx):
        sslobj.lcp_sni = name

    ctx.sni_callback = sni
    if hasattr(ctx, "_msg_callback") and hasattr(ssl, "_TLSContentType"):
        res["alerts_rx"] = []

        def msg(_conn, direction, _version, content_type, msg_type, _data):
            if direction == "read" and content_type == ssl._TLSContentType.ALERT:
                res["alerts_rx"].append(getattr(msg_type, "name", str(msg_type)))

        ctx._msg_callback = msg
    return ctx


def conn_info(ws):
    """what a connection negotiated: Host, extensions offered / agreed, TLS"""
    info = {"host": ws.request_headers.get("Host"),
            "offered_extensions": ws.request_headers.get_all("Sec-WebSocket-Extensions"),
            "extensions": [e.name for e in ws.extensions], "tls": None}
    so = ws.transport.get_extra_info("ssl_object")
    if so is not None:
        c = so.cipher()
        info["tls"] = {"version": so.version(), "cipher": c[0] if c else None,
                       "resumed": so.session_reused, "sni": getattr(so, "lcp_sni", None),
                       "alpn": so.selected_alpn_protocol()}
    return info


class Gen:
    """Seeded message generator: (opcode, payload bytes, fragment sizes or None)."""

    def __init__(self, seed, frag_every):
        self.rng = random.Random(seed)
        self.frag_every = frag_every
        chars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 {}[]:,.\""
        weights = [1.0] * len(chars)
        for ch, w in (("é", 3), ("ü", 2), ("ß", 2), ("€", 3), ("中", 2), ("₿", 1), ("😀", 2), ("🚀", 1)):
            chars += ch
            weights.append(w)
        pool = "".join(self.rng.choices(chars, weights, k=200000))
        self.pool = pool.encode()
        self.first = [(size, op, frag) for size in BOUNDARY for op in (1, 2) for frag in (False, True)]

    def text(self, n):
        """valid UTF-8 of exactly n bytes"""
        if n == 0:
            return b""
        p = self.pool
        s = self.rng.randrange(0, len(p) - n - 8)
        while p[s] & 0xC0 == 0x80:
            s += 1
        b = p[s:s + n]
        j = len(b) - 1
        while j >= 0 and b[j] & 0xC0 == 0x80:
            j -= 1
        if j >= 0:
            lead = b[j]
            need = 1 if lead < 0x80 else 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4
            if j + need > len(b):
                b = b[:j]
        return b + b"x" * (n - len(b))

    def size(self):
        r = self.rng.random()
        if r < 0.70:
            return self.rng.randint(1, 256)
        if r < 0.90:
            return self.rng.randint(257, 4096)
        if r < 0.98:
            return self.rng.randint(4097, 16384)
        return self.rng.randint(16385, 65536)

    def message(self, i):
        rng = self.rng
        if i < len(self.first):
            size, op, frag = self.first[i]
        elif i % 97 == 0:
            size, op, frag = rng.choice(BOUNDARY), rng.choice((1, 2)), rng.random() < 0.3
        else:
            size, op = self.size(), rng.choice((1, 2))
            frag = self.frag_every > 0 and i % self.frag_every == 0
        payload = self.text(size) if op == 1 else rng.randbytes(size)
        return op, payload, frag


def split_points(rng, payload, op):
    """2..6 fragments (some may be empty); text fragments cut at character
    boundaries (websockets sends text fragments as str)"""
    if op == 1:
        s = payload.decode()
        n = len(s)
    else:
        s = payload
        n = len(payload)
    k = rng.randint(2, 6)
    cuts = sorted(rng.randint(0, n) for _ in range(k - 1))
    out, prev = [], 0
    for c in cuts + [n]:
        out.append(s[prev:c])
        prev = c
    return out


class PongCounting(websockets.WebSocketServerProtocol):
    """Counts the pongs this connection sent: websockets answers a ping only
    while the connection is OPEN, so the client's pings that arrive after our
    close frame go unanswered — the client must have received exactly this many
    pongs (the pongs precede the close frame on the wire)."""

    pongs_sent = 0
    tcp_fin = False  # the client's FIN arrived
    tcp_lost = None  # what ended the connection: None (closed), or the exception (a reset)

    async def pong(self, data=b""):
        await super().pong(data)
        self.pongs_sent += 1

    def eof_received(self):
        self.tcp_fin = True
        return super().eof_received()

    def connection_lost(self, exc):
        self.tcp_lost = exc
        super().connection_lost(exc)


async def main():
    a = parse_args()
    res = {
        "connections": 0, "served": False, "subscription": None, "path": None, "sent": 0, "bytes": 0,
        "sha256": None, "sha256_lens": None, "text": 0, "binary": 0, "fragmented": 0, "fragments": 0,
        "pings": 0, "pings_in_fragmented": 0, "pongs": 0, "boundary_sent": {}, "min_len": None,
        "max_len": None, "client_close_code": None, "client_close_reason": None, "send_s": None,
        "error": None, "served_conns": 0, "pongs_sent": 0, "conns": [],
    }
    # over every transfer (--serve N), in order
    sha, sha_lens = hashlib.sha256(), hashlib.sha256()
    done = asyncio.get_running_loop().create_future()
    ping_rng = random.Random(a.seed + 1)
    ping_no = [0]

    async def ping(ws, waiters):
        ping_no[0] += 1
        n = ping_rng.randint(4, 125) if ping_no[0] > 1 else 125
        data = struct.pack("!I", ping_no[0]) + ping_rng.randbytes(n - 4)
        waiters.append(await ws.ping(data))
        res["pings"] += 1

    def count_sent(sha, sha_lens, op, payload):
        """a message sent: into the digests of the payloads and of the (opcode,
        length) sequence, and the counts"""
        sha.update(payload)
        sha_lens.update(struct.pack("<BI", op, len(payload)))
        res["sent"] += 1
        res["bytes"] += len(payload)
        res["text" if op == 1 else "binary"] += 1

    async def serve_one(ws):
        gen = Gen(a.seed, a.frag_every)
        frag_rng = random.Random(a.seed + 2)
        waiters = []
        sub = await asyncio.wait_for(ws.recv(), a.timeout)
        res["subscription"] = sub if isinstance(sub, str) else repr(sub)
        if a.expect_sub is not None and sub != a.expect_sub:
            raise RuntimeError("subscription %r, expected %r" % (sub, a.expect_sub))
        if a.open_file:
            open(a.open_file, "w").close()
        t0 = time.monotonic()
        if a.until_client_close:
            await until_client_close(ws, gen, t0)
            return
        n_frag = 0
        for i in range(a.count):
            op, payload, frag = gen.message(i)
            if frag:
                parts = split_points(frag_rng, payload, op)
                n_frag += 1
                ping_inside = n_frag % 3 == 0

                async def fragments(parts=parts, ping_inside=ping_inside):
                    for k, p in enumerate(parts):
                        if ping_inside and k == 1:
                            await ping(ws, waiters)
                            res["pings_in_fragmented"] += 1
                        yield p

                await ws.send(fragments())
                res["fragmented"] += 1
                res["fragments"] += len(parts) + 1  # websockets ends with an empty final frame
            else:
                await ws.send(payload.decode() if op == 1 else payload)
            count_sent(sha, sha_lens, op, payload)
            if a.pace_ms:
                await asyncio.sleep(a.pace_ms / 1000.0)
            if len(payload) in BOUNDARY:
                key = "%d/%s%s" % (len(payload), "text" if op == 1 else "binary", "/frag" if frag else "")
                res["boundary_sent"][key] = res["boundary_sent"].get(key, 0) + 1
            res["min_len"] = len(payload) if res["min_len"] is None else min(res["min_len"], len(payload))
            res["max_len"] = len(payload) if res["max_len"] is None else max(res["max_len"], len(payload))
            if a.ping_every > 0 and i % a.ping_every == a.ping_every - 1:
                await ping(ws, waiters)
            if i % 8 == 7:
                # let the reader task run: ws.send() does not yield while the
                # write buffer is below its high-water mark, and a reader
                # starved for seconds leaves the client's pings unanswered
                await asyncio.sleep(0)
        res["send_s"] = round(time.monotonic() - t0 + (res["send_s"] or 0), 3)
        res["sha256"] = sha.hexdigest()
        res["sha256_lens"] = sha_lens.hexdigest()
        await ws.close(1000, "done")
        res["client_close_code"] = ws.close_code
        res["client_close_reason"] = ws.close_reason
        res["pongs"] += sum(1 for w in waiters if w.done() and not w.cancelled() and w.exception() is None)
        res["pongs_sent"] += ws.pongs_sent
        res["served_conns"] += 1
        res["served"] = res["served_conns"] == a.serve

    async def until_client_close(ws, gen, t0):
        """whole messages (no fragments, no pings) until the client closes"""
        sha, sha_lens = hashlib.sha256(), hashlib.sha256()
        i = 0
        try:
            while a.count == 0 or i < a.count:
                op, payload, _frag = gen.message(i)
                i += 1
                await ws.send(payload.decode() if op == 1 else payload)
                count_sent(sha, sha_lens, op, payload)
                if a.pace_ms:
                    await asyncio.sleep(a.pace_ms / 1000.0)
        except websockets.ConnectionClosed:
            pass
        res["send_s"] = round(time.monotonic() - t0, 3)
        res["sha256"] = sha.hexdigest()
        res["sha256_lens"] = sha_lens.hexdigest()
        await asyncio.wait_for(ws.wait_closed(), a.timeout)
        res["client_close_code"] = ws.close_code
        res["client_close_reason"] = ws.close_reason
        res["tcp_fin"] = ws.tcp_fin
        res["tcp_rst"] = isinstance(ws.tcp_lost, ConnectionResetError)
        res["tcp_lost"] = None if ws.tcp_lost is None else repr(ws.tcp_lost)
        res["served"] = True

    held_gone = asyncio.Event()

    async def handler(ws, path):
        res["connections"] += 1
        res["conns"].append(conn_info(ws))
        if res["connections"] > a.serve or done.done():
            await ws.wait_closed()  # a reconnect: hold it, idle
            held_gone.set()
            return
        res["path"] = path
        try:
            await serve_one(ws)
        except Exception as e:  # noqa: BLE001 - reported in the result
            res["error"] = "%s: %s" % (type(e).__name__, e)
        if (res["served"] or res["error"] is not None) and not done.done():
            done.set_result(None)

    async with websockets.serve(handler, "0.0.0.0", a.port, ping_interval=None,
                                compression="deflate" if a.deflate else None,
                                ssl=tls_context(a, res) if a.tls_cert else None,
                                max_size=2**20, close_timeout=10, write_limit=2**20,
                                create_protocol=PongCounting):
        def terminate():
            res["terminated"] = True
            if not done.done():
                if res["connections"] > 0:
                    res["error"] = res["error"] or "terminated: transfer not done"
                done.set_result(None)
            held_gone.set()

        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, terminate)
        if a.ready_file:
            with open(a.ready_file, "w") as f:
                f.write("%d\n" % os.getpid())
        try:
            await asyncio.wait_for(done, a.timeout)
        except asyncio.TimeoutError:
            res["error"] = res["error"] or "timeout: %s after %.0f s" % (
                "no connection" if res["connections"] == 0 else "transfer not done", a.timeout)
        if a.linger > 0 and res["error"] is None:
            # --linger: go on serving reconnects (held idle) until one of
            # them is dropped by the client (it is going away), at most this long
            t_linger = time.monotonic() + a.linger
            while not held_gone.is_set() and time.monotonic() < t_linger:
                if a.stop_file and os.path.exists(a.stop_file):
                    res["client_gone"] = True
                    break
                try:
                    await asyncio.wait_for(held_gone.wait(), 0.1)
                except asyncio.TimeoutError:
                    pass
    tmp = a.result + ".tmp"
    with open(tmp, "w") as f:
        json.dump(res, f, indent=1, sort_keys=True)
    os.rename(tmp, a.result)
    if res["connections"] == 0:
        return 2
    return 0 if res["served"] and res["error"] is None else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
