#!/usr/bin/python3
# tests/kernel/wss_client.py — a kernel-side TLS / WebSocket client for
# tests/kernel/tls_peers.sh, which proves each TLS peer of the wss_*.sh tests
# (ws_peer.py, ws_peer_node.js, nginx, openssl s_server) with Debian's Python
# before lcpipe meets it. Run with /usr/bin/python3 inside the namespace.
#
#   wss_client.py transfer URL [--ca FILE] [--server-name NAME] [--deflate]
#                          [--tls-min V] [--tls-max V] [--sub TEXT]
#     python3-websockets' client: sends the subscription, receives every
#     message until the server closes, answers pings (websockets does).
#   wss_client.py probe HOST PORT [--ca FILE] [--server-name NAME]
#                       [--tls-min V] [--tls-max V] [--insecure] [--upgrade PATH]
#                       [--resume] [--ticket-wait S] [--timeout S]
#     the TLS handshake alone (ssl module on a socket); with --upgrade, then a
#     WebSocket upgrade request for PATH and the response's status line; with
#     --resume, a second connection offering the first one's session: TLS 1.3
#     tickets come after the handshake, so the first connection reads the
#     upgrade response first, or without --upgrade waits --ticket-wait seconds
#     (default 2) for anything to read (a server that answers nothing before
#     the HTTP request, like ws_peer.py, which ends on a connection that sent
#     an upgrade but no subscription).
#
# Prints one JSON object on stdout:
#   transfer: msgs, bytes, sha256, sha256_lens (as msg_hash computes them),
#     text, binary, close_code, extensions (the response's
#     Sec-WebSocket-Extensions), tls {version, cipher}, error
#   probe: conns: [{ok, version, cipher, resumed, status (the upgrade
#     response's status line), error: {kind, reason, verify}}], where kind is
#     "verify" (certificate verification failed; verify = OpenSSL's message),
#     "alert" (the server sent an alert; reason e.g. TLSV1_ALERT_PROTOCOL_VERSION),
#     "protocol" (another SSL error, e.g. WRONG_VERSION_NUMBER: not TLS),
#     "timeout", "eof" or "os".
# Exit 0 when it ran (the test asserts on the JSON), 64 on bad usage.
import argparse
import asyncio
import hashlib
import json
import socket
import ssl
import struct
import sys

VERSIONS = {"1.2": ssl.TLSVersion.TLSv1_2, "1.3": ssl.TLSVersion.TLSv1_3}


def context(a):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    if a.insecure:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    elif a.ca:
        ctx.load_verify_locations(cafile=a.ca)
    else:
        ctx.load_default_certs()
    ctx.minimum_version = VERSIONS[a.tls_min]
    ctx.maximum_version = VERSIONS[a.tls_max]
    ctx.set_alpn_protocols(["http/1.1"])  # as lcpipe's ws stage does
    return ctx


def error_of(e):
    if isinstance(e, ssl.SSLCertVerificationError):
        return {"kind": "verify", "reason": e.reason, "verify": e.verify_message}
    if isinstance(e, ssl.SSLError):
        r = e.reason or ""
        return {"kind": "alert" if "ALERT" in r else "protocol", "reason": r, "verify": None}
    if isinstance(e, (socket.timeout, TimeoutError, asyncio.TimeoutError)):
        return {"kind": "timeout", "reason": str(e), "verify": None}
    if isinstance(e, (EOFError, ConnectionResetError, BrokenPipeError)):
        return {"kind": "eof", "reason": "%s: %s" % (type(e).__name__, e), "verify": None}
    return {"kind": "os", "reason": "%s: %s" % (type(e).__name__, e), "verify": None}


async def transfer(a):
    import websockets

    out = {"msgs": 0, "bytes": 0, "text": 0, "binary": 0, "sha256": None, "sha256_lens": None,
           "close_code": None, "extensions": None, "tls": None, "error": None}
    sha, sha_lens = hashlib.sha256(), hashlib.sha256()
    kw = {"compression": "deflate" if a.deflate else None, "max_size": 2**20, "ping_interval": None,
          "open_timeout": a.timeout}
    if a.url.startswith("wss:"):
        kw["ssl"] = context(a)
        if a.server_name:
            kw["server_hostname"] = a.server_name
    try:
        async with websockets.connect(a.url, **kw) as ws:
            out["extensions"] = ws.response_headers.get("Sec-WebSocket-Extensions")
            so = ws.transport.get_extra_info("ssl_object")
            if so is not None:
                out["tls"] = {"version": so.version(), "cipher": so.cipher()[0]}
            await ws.send(a.sub)
            try:
                while True:
                    m = await asyncio.wait_for(ws.recv(), a.timeout)
                    b = m.encode() if isinstance(m, str) else m
                    op = 1 if isinstance(m, str) else 2
                    sha.update(b)
                    sha_lens.update(struct.pack("<BI", op, len(b)))
                    out["msgs"] += 1
                    out["bytes"] += len(b)
                    out["text" if op == 1 else "binary"] += 1
            except websockets.ConnectionClosed:
                pass
            out["close_code"] = ws.close_code
    except Exception as e:  # noqa: BLE001 - reported
        out["error"] = error_of(e)
    out["sha256"], out["sha256_lens"] = sha.hexdigest(), sha_lens.hexdigest()
    return out


def probe_one(a, ctx, session):
    c = {"ok": False, "version": None, "cipher": None, "resumed": None, "status": None, "error": None}
    try:
        raw = socket.create_connection((a.host, a.port), timeout=a.timeout)
    except Exception as e:  # noqa: BLE001 - reported
        c["error"] = error_of(e)
        return c, None
    try:
        s = ctx.wrap_socket(raw, server_hostname=a.server_name or a.host, session=session)
    except Exception as e:  # noqa: BLE001 - reported
        raw.close()
        c["error"] = error_of(e)
        return c, None
    try:
        c.update(ok=True, version=s.version(), cipher=s.cipher()[0], resumed=s.session_reused)
        if a.resume and not a.upgrade and session is None:
            s.settimeout(a.ticket_wait)
            try:
                s.recv(1)
            except (socket.timeout, TimeoutError):
                pass
        if a.upgrade:
            host = a.server_name or a.host
            s.sendall(("GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                       "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
                       % (a.upgrade, host)).encode())
            head = b""
            while b"\r\n" not in head:
                d = s.recv(4096)
                if not d:
                    break
                head += d
            c["status"] = head.split(b"\r\n", 1)[0].decode("latin-1") if head else None
        return c, s.session
    except Exception as e:  # noqa: BLE001 - reported
        c["error"] = error_of(e)
        return c, None
    finally:
        s.close()


def probe(a):
    ctx = context(a)
    out = {"conns": []}
    c, sess = probe_one(a, ctx, None)
    out["conns"].append(c)
    if a.resume and sess is not None:
        c2, _ = probe_one(a, ctx, sess)
        out["conns"].append(c2)
    return out


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("transfer", "probe"):
        p = sub.add_parser(name)
        if name == "transfer":
            p.add_argument("url")
            p.add_argument("--deflate", action="store_true")
            p.add_argument("--sub", default="sub")
        else:
            p.add_argument("host")
            p.add_argument("port", type=int)
            p.add_argument("--upgrade", default=None)
            p.add_argument("--resume", action="store_true")
            p.add_argument("--ticket-wait", type=float, default=2.0)
        p.add_argument("--ca", default=None)
        p.add_argument("--server-name", default=None)
        p.add_argument("--insecure", action="store_true")
        p.add_argument("--tls-min", choices=sorted(VERSIONS), default="1.2")
        p.add_argument("--tls-max", choices=sorted(VERSIONS), default="1.3")
        p.add_argument("--timeout", type=float, default=10.0)
    a = ap.parse_args()
    out = asyncio.run(transfer(a)) if a.cmd == "transfer" else probe(a)
    json.dump(out, sys.stdout, sort_keys=True)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
