#!/usr/bin/python3
"""tcp_peer.py - the kernel side of the L2 TCP tests (tests/kernel/tcp_*.sh).

Run with Debian's /usr/bin/python3, inside the test's network namespace. Every
subcommand prints one JSON line on stdout when it ends and exits 0 on success,
1 on failure (the JSON then has "ok": false and "error"). Servers listen on
--bind (default 0.0.0.0), write --ready-file once they listen (so a script starts
lcpipe only after that), and give up after --timeout seconds in all (an alarm),
so that a test never hangs on them.

  serve-send --port P --file F [--rst-after BYTES]
      accept one connection, send the whole file and close; with --rst-after,
      send that many bytes, wait (at most 2 s) until the peer acked them all, then
      close with SO_LINGER {1, 0} so the kernel sends RST (and drops whatever is
      still unacked). {"ok", "sent", "sha256" (of the bytes handed to the
      kernel), "peer", "rst", "unacked_at_rst" (bytes still unacked at the RST),
      "snd_mss" and "rcv_mss" (TCP_INFO, read at the end; not after an RST)}
  serve-recv --port P [--conns N]
      accept N connections (concurrently, one thread each), read each to EOF.
      {"ok", "conns": [{"peer", "bytes", "sha256", "snd_mss", "rcv_mss"}, ...]}
      in accept order
  serve-many --port P --conns N --bytes B
      accept N connections concurrently; on the i-th accepted one (i = 0..N-1)
      send B bytes of pattern(i) and close. pattern(i) is deterministic, no
      randomness: SHA-256 in counter mode, block j = sha256(b"lcpt:%d:%d" % (i, j)),
      so every connection gets different bytes and a test can recompute them.
      {"ok", "accepted", "conns": [{"index", "peer", "peer_port", "bytes",
      "sha256"}, ...]}
  client-echo --host H --port P --bytes B [--conns N]
      N connections (concurrently); on each, connect (retrying for up to
      --connect-wait s, 10 by default, while nothing listens yet), send B random
      bytes while reading back, then shut down the write side and read until
      EOF; ok when every connection got back exactly what it sent.
      With --until-file F, a long-lived stream instead: random chunks of
      --chunk bytes (16 KiB) at --rate bytes/s (1 MB/s) until F exists (or
      --timeout), then the same ending; "sha256" (sent) and "sha256_back"
      (received) are compared as streams, nothing is kept in memory.
      {"ok", "conns": [{"sent", "received", "sha256", "match"}, ...]}
  client-send --host H --port P --file F
      connect (retrying for up to --connect-wait s), send the file, shut down
      the write side, read until the peer's EOF. {"ok", "sent", "sha256",
      "seconds" (connect to the peer's FIN)}
  client-recv --host H --port P
      connect, read until EOF. {"ok", "bytes", "sha256", "eof", "seconds"}
  (serve-send and serve-recv also give "seconds": accept to the peer's FIN /
  to EOF, the transfer time the benchmarks use.)
  serve-send and client-send take --cc NAME: the congestion control of the
  sending socket (TCP_CONGESTION; as root any algorithm the kernel has, see
  net.ipv4.tcp_available_congestion_control), and report the one used as "cc",
  whether set or the namespace's default.
  ready --port P [--wait S]
      wait until a TCP socket listens on port P in this namespace (/proc/net/tcp).
  ping --host H [--count 5] [--interval 0.2] [--wait 2]
      ICMP echo over a raw socket (for machines without iputils ping).
      {"ok", "sent", "received", "loss_pct", "rtt_ms": [...]}
"""
import argparse
import fcntl
import hashlib
import json
import os
import signal
import socket
import struct
import sys
import termios
import threading
import time


def out(obj, ok=True):
    obj = dict(obj)
    obj.setdefault("ok", ok)
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()
    sys.exit(0 if obj["ok"] else 1)


def alarm(seconds, what):
    def on_alarm(signum, frame):
        sys.stdout.write(json.dumps({"ok": False, "error": "%s: timeout after %s s" % (what, seconds)}) + "\n")
        sys.stdout.flush()
        os._exit(1)
    signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(int(seconds))


def listener(args, backlog=128):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((args.bind, args.port))
    s.listen(backlog)
    s.settimeout(args.timeout)
    if args.ready_file:
        tmp = args.ready_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d\n" % os.getpid())
        os.rename(tmp, args.ready_file)
    return s


def peer_str(addr):
    return "%s:%d" % (addr[0], addr[1])


def tcp_mss(c):
    """the kernel's MSS on connection c, from TCP_INFO: {"snd_mss": what it
    sends in, "rcv_mss": its estimate of what it receives in}"""
    try:
        i = struct.unpack("8B4I", c.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 24))
        return {"snd_mss": i[10], "rcv_mss": i[11]}
    except OSError:
        return {}


def set_cc(c, name):
    """the congestion control of connection c: name when set, the default
    otherwise; returns {"cc": the algorithm c uses}"""
    if name:
        c.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, name.encode())
    return {"cc": c.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16).split(b"\0", 1)[0].decode()}


def send_file(c, path, limit=None):
    """sendall the file at path on c, its first limit bytes if limit is set;
    returns (the SHA-256 of what was sent, how many bytes)"""
    h = hashlib.sha256()
    sent = 0
    with open(path, "rb") as f:
        while limit is None or sent < limit:
            chunk = f.read(1 << 20 if limit is None else min(1 << 20, limit - sent))
            if not chunk:
                break
            c.sendall(chunk)
            h.update(chunk)
            sent += len(chunk)
    return h, sent


def cmd_serve_send(args):
    alarm(args.timeout, "serve-send")
    size = os.path.getsize(args.file)
    limit = size if args.rst_after is None else min(size, args.rst_after)
    ls = listener(args, 1)
    c, addr = ls.accept()
    t0 = time.monotonic()
    c.settimeout(args.timeout)
    cc = set_cc(c, args.cc)
    h, sent = send_file(c, args.file, limit)
    unacked = None
    mss = {}
    if args.rst_after is not None:
        # let the peer ack what was sent (at most 2 s), so that the RST follows
        # exactly rst_after bytes: SIOCOUTQ (== TIOCOUTQ) = bytes not yet acked
        end = time.monotonic() + 2
        while True:
            unacked = struct.unpack("i", fcntl.ioctl(c.fileno(), termios.TIOCOUTQ, b"\0" * 4))[0]
            if unacked == 0 or time.monotonic() >= end:
                break
            time.sleep(0.01)
        c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        c.close()
    else:
        c.shutdown(socket.SHUT_WR)
        # wait for the peer's FIN (its CLOSE) so the close is orderly on both sides
        c.settimeout(args.timeout)
        extra = 0
        while True:
            d = c.recv(65536)
            if not d:
                break
            extra += len(d)
        mss = tcp_mss(c)
        c.close()
        if extra:
            out({"sent": sent, "sha256": h.hexdigest(), "peer": peer_str(addr),
                 "error": "peer sent %d unexpected bytes" % extra}, ok=False)
    ls.close()
    out({"sent": sent, "sha256": h.hexdigest(), "peer": peer_str(addr), "rst": args.rst_after is not None,
         "unacked_at_rst": unacked, "seconds": round(time.monotonic() - t0, 4), **mss, **cc})


def recv_all(c, res, timeout):
    c.settimeout(timeout)
    h = hashlib.sha256()
    n = 0
    t0 = time.monotonic()
    try:
        while True:
            d = c.recv(1 << 20)
            if not d:
                break
            h.update(d)
            n += len(d)
        res.update({"bytes": n, "sha256": h.hexdigest(), "eof": True, "seconds": round(time.monotonic() - t0, 4),
                    **tcp_mss(c)})
    except OSError as e:
        res.update({"bytes": n, "sha256": h.hexdigest(), "eof": False, "error": str(e)})
    finally:
        c.close()


def cmd_serve_recv(args):
    alarm(args.timeout, "serve-recv")
    ls = listener(args)
    conns, threads = [], []
    for _ in range(args.conns):
        c, addr = ls.accept()
        res = {"peer": peer_str(addr)}
        conns.append(res)
        t = threading.Thread(target=recv_all, args=(c, res, args.timeout), daemon=True)
        t.start()
        threads.append(t)
    for t in threads:
        t.join()
    ls.close()
    out({"conns": conns}, ok=all(r.get("eof") for r in conns))


def pattern(i, nbytes):
    """Deterministic bytes for connection i: SHA-256 in counter mode."""
    blocks = []
    have = 0
    j = 0
    while have < nbytes:
        b = hashlib.sha256(b"lcpt:%d:%d" % (i, j)).digest()
        blocks.append(b)
        have += len(b)
        j += 1
    return b"".join(blocks)[:nbytes]


def send_close(c, data, res, timeout):
    c.settimeout(timeout)
    try:
        c.sendall(data)
        c.shutdown(socket.SHUT_WR)
        while c.recv(65536):  # until the peer's FIN
            pass
        res["done"] = True
    except OSError as e:
        res["done"] = False
        res["error"] = str(e)
    finally:
        c.close()


def cmd_serve_many(args):
    alarm(args.timeout, "serve-many")
    ls = listener(args, max(128, args.conns))
    conns, threads = [], []
    for i in range(args.conns):
        c, addr = ls.accept()
        data = pattern(i, args.bytes)
        res = {"index": i, "peer": peer_str(addr), "peer_port": addr[1], "bytes": len(data),
               "sha256": hashlib.sha256(data).hexdigest()}
        conns.append(res)
        t = threading.Thread(target=send_close, args=(c, data, res, args.timeout), daemon=True)
        t.start()
        threads.append(t)
    for t in threads:
        t.join()
    ls.close()
    out({"accepted": len(conns), "conns": conns}, ok=all(r.get("done") for r in conns))


def echo_one(args, res):
    deadline = time.monotonic() + args.connect_wait
    s = None
    while True:
        try:
            s = socket.create_connection((args.host, args.port), timeout=2)
            break
        except OSError as e:
            if time.monotonic() >= deadline:
                res.update({"match": False, "error": "connect: %s" % e})
                return
            time.sleep(0.1)
    s.settimeout(args.timeout)
    if args.until_file:
        return echo_stream(args, s, res)
    data = os.urandom(args.bytes)
    res["sent"] = len(data)
    res["sha256"] = hashlib.sha256(data).hexdigest()
    got = bytearray()
    t = start_reader(s, res, got.extend)
    try:
        # send, then wait until everything came back before our FIN
        s.sendall(data)
        end = time.monotonic() + args.timeout
        while len(got) < len(data) and t.is_alive() and time.monotonic() < end:
            time.sleep(0.01)
        s.shutdown(socket.SHUT_WR)
    except OSError as e:
        res["write_error"] = str(e)
    t.join(args.timeout)
    s.close()
    res["received"] = len(got)
    res["match"] = bytes(got) == data


def start_reader(s, res, take):
    """A daemon thread that reads s to EOF and hands each chunk to take(); a
    read error goes into res["read_error"]."""
    def reader():
        try:
            while True:
                d = s.recv(1 << 20)
                if not d:
                    break
                take(d)
        except OSError as e:
            res["read_error"] = str(e)
    t = threading.Thread(target=reader, daemon=True)
    t.start()
    return t


def echo_stream(args, s, res):
    """--until-file: paced random chunks until the file exists, then read the
    echo back to the last byte; compared by SHA-256 and length."""
    hs, hr = hashlib.sha256(), hashlib.sha256()
    back = [0]
    sent = 0

    def take(d):
        hr.update(d)
        back[0] += len(d)
    t = start_reader(s, res, take)
    t0 = time.monotonic()
    end = t0 + args.timeout
    try:
        while not os.path.exists(args.until_file) and time.monotonic() < end and t.is_alive():
            chunk = os.urandom(args.chunk)
            s.sendall(chunk)
            hs.update(chunk)
            sent += len(chunk)
            ahead = sent / args.rate - (time.monotonic() - t0)
            if ahead > 0:
                time.sleep(ahead)
        res["stopped_by_file"] = os.path.exists(args.until_file)
        while back[0] < sent and t.is_alive() and time.monotonic() < end:
            time.sleep(0.01)
        s.shutdown(socket.SHUT_WR)
    except OSError as e:
        res["write_error"] = str(e)
    t.join(10)
    s.close()
    res.update({"sent": sent, "received": back[0], "sha256": hs.hexdigest(),
                "sha256_back": hr.hexdigest(), "seconds": round(time.monotonic() - t0, 3)})
    res["match"] = back[0] == sent and hr.hexdigest() == hs.hexdigest() and sent > 0


def cmd_client_echo(args):
    alarm(args.timeout + args.connect_wait + 5, "client-echo")
    conns = [dict() for _ in range(args.conns)]
    threads = [threading.Thread(target=echo_one, args=(args, r), daemon=True) for r in conns]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    out({"conns": conns}, ok=all(r.get("match") for r in conns))


def connect(args):
    end = time.monotonic() + args.connect_wait
    while True:
        try:
            return socket.create_connection((args.host, args.port), timeout=args.timeout)
        except OSError:
            if time.monotonic() >= end:
                raise
            time.sleep(0.05)


def cmd_client_send(args):
    alarm(args.timeout + args.connect_wait + 5, "client-send")
    c = connect(args)
    t0 = time.monotonic()
    cc = set_cc(c, args.cc)
    h, sent = send_file(c, args.file)
    c.shutdown(socket.SHUT_WR)
    while c.recv(65536):  # until the peer's FIN: it has everything
        pass
    c.close()
    out({"sent": sent, "sha256": h.hexdigest(), "seconds": round(time.monotonic() - t0, 4), **cc})


def cmd_client_recv(args):
    alarm(args.timeout + args.connect_wait + 5, "client-recv")
    res = {}
    recv_all(connect(args), res, args.timeout)
    out(res, ok=res.get("eof", False))


def listening(port):
    for path in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(path) as f:
                next(f)
                for line in f:
                    p = line.split()
                    if p[3] == "0A" and int(p[1].split(":")[1], 16) == port:
                        return True
        except OSError:
            pass
    return False


def cmd_ready(args):
    end = time.monotonic() + args.wait
    while time.monotonic() < end:
        if listening(args.port):
            out({"port": args.port, "listening": True})
        time.sleep(0.05)
    out({"port": args.port, "listening": False}, ok=False)


def icmp_cksum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    s = (s >> 16) + (s & 0xffff)
    s += s >> 16
    return ~s & 0xffff


def cmd_ping(args):
    alarm(args.count * (args.interval + args.wait) + 10, "ping")
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    ident = os.getpid() & 0xffff
    rtts, received = [], 0
    for seq in range(1, args.count + 1):
        payload = struct.pack("!d", time.monotonic()) + bytes(range(48))
        hdr = struct.pack("!BBHHH", 8, 0, 0, ident, seq)
        pkt = struct.pack("!BBHHH", 8, 0, icmp_cksum(hdr + payload), ident, seq) + payload
        t0 = time.monotonic()
        s.sendto(pkt, (args.host, 0))
        end = t0 + args.wait
        while True:
            left = end - time.monotonic()
            if left <= 0:
                break
            s.settimeout(left)
            try:
                d, addr = s.recvfrom(2048)
            except socket.timeout:
                break
            ihl = (d[0] & 0x0f) * 4
            icmp = d[ihl:]
            if addr[0] != args.host or len(icmp) < 8:
                continue
            typ, code, _, rid, rseq = struct.unpack("!BBHHH", icmp[:8])
            if typ == 0 and rid == ident and rseq == seq:
                if icmp_cksum(icmp) != 0 or icmp[8:] != payload:
                    continue  # a bad reply does not count
                received += 1
                rtts.append(round((time.monotonic() - t0) * 1000, 3))
                break
        if seq < args.count:
            time.sleep(max(0, args.interval - (time.monotonic() - t0)))
    loss = 100.0 * (args.count - received) / args.count
    out({"sent": args.count, "received": received, "loss_pct": loss, "rtt_ms": rtts},
        ok=received == args.count)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)

    def server(name):
        p = sub.add_parser(name)
        p.add_argument("--port", type=int, required=True)
        p.add_argument("--bind", default="0.0.0.0")
        p.add_argument("--timeout", type=float, default=60)
        p.add_argument("--ready-file")
        return p

    p = server("serve-send")
    p.add_argument("--file", required=True)
    p.add_argument("--rst-after", type=int)
    p.add_argument("--cc")
    p.set_defaults(fn=cmd_serve_send)
    p = server("serve-recv")
    p.add_argument("--conns", type=int, default=1)
    p.set_defaults(fn=cmd_serve_recv)
    p = server("serve-many")
    p.add_argument("--conns", type=int, required=True)
    p.add_argument("--bytes", type=int, required=True)
    p.set_defaults(fn=cmd_serve_many)
    p = sub.add_parser("client-echo")
    p.add_argument("--host", required=True)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--bytes", type=int, required=True)
    p.add_argument("--conns", type=int, default=1)
    p.add_argument("--timeout", type=float, default=60)
    p.add_argument("--connect-wait", type=float, default=10)
    p.add_argument("--until-file")
    p.add_argument("--rate", type=float, default=1e6)
    p.add_argument("--chunk", type=int, default=16384)
    p.set_defaults(fn=cmd_client_echo)
    for name, fn in (("client-send", cmd_client_send), ("client-recv", cmd_client_recv)):
        p = sub.add_parser(name)
        p.add_argument("--host", required=True)
        p.add_argument("--port", type=int, required=True)
        p.add_argument("--timeout", type=float, default=60)
        p.add_argument("--connect-wait", type=float, default=10)
        if name == "client-send":
            p.add_argument("--file", required=True)
            p.add_argument("--cc")
        p.set_defaults(fn=fn)
    p = sub.add_parser("ready")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--wait", type=float, default=10)
    p.set_defaults(fn=cmd_ready)
    p = sub.add_parser("ping")
    p.add_argument("--host", required=True)
    p.add_argument("--count", type=int, default=5)
    p.add_argument("--interval", type=float, default=0.2)
    p.add_argument("--wait", type=float, default=2)
    p.set_defaults(fn=cmd_ping)
    args = ap.parse_args()
    try:
        args.fn(args)
    except Exception as e:  # one JSON line, also on failure
        out({"error": "%s: %s" % (type(e).__name__, e)}, ok=False)


if __name__ == "__main__":
    main()
