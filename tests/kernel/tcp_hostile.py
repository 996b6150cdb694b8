#!/usr/bin/python3
"""tcp_hostile.py - a hostile TCP peer for tests/kernel/tcp_hostile.sh.

Run with Debian's /usr/bin/python3 inside the test's namespace. It crafts
Ethernet frames itself and writes them to the tap (an AF_PACKET socket bound to
--iface), and reads lcpipe's answers from the same socket, so the kernel's TCP
takes no part: the test gives the tap the extra address --src (so that lcpipe's
ARP for it is answered) and drops, with nftables, whatever the kernel's TCP would
send from --src (RSTs to segments it knows nothing about).

Against lcpipe's tcp stage at --dst:--port (tcp_app in echo mode), one phase
after another (--phases, comma-separated; by default rst, zero, ooo, opts, syn:
the SYN flood last, so that the other connections are not made through SYN
cookies while its half-open connections fill the backlog):

  rst    a connection (handshake, 4 KiB echoed), then --rst-oow RSTs out of the
         window (below RCV.NXT, beyond the window, 2^31 away), then --rst-inwin
         RSTs inside the window but not at RCV.NXT (RFC 5961: each may get a
         challenge ACK, at most challenge_ack_limit per second), 1 KiB more
         (still echoed: the connection survived), then one RST at RCV.NXT
         exactly; a segment after it gets lcpipe's RST (no connection).
  syn    --syn-count SYNs at the listening port that never complete, from
         --src on many ports and from 64 forged on-link addresses that nobody
         answers ARP for; a real kernel connect (connect, 1000 bytes echoed,
         close) in the middle of the flood and another after it.
  zero   a connection that offers a window of 8 KiB, takes the echo of its
         first 8 KiB and then advertises 0 for ever, answering every window
         probe with window 0, while sending --zw-bytes more (their echo piles
         up in lcpipe's send buffer); ends when lcpipe gives up (RST) or after
         --zw-wait seconds.
  ooo    a connection; a hole at the first 1000 bytes, then --ooo-count
         segments of random length (1..1400) and offset beyond it (overlapping
         each other), 300 far outside the window and 300 just beyond it; then
         the hole, then the whole stream again in order (what lcpipe dropped at
         its limits comes again); the echo must be the stream exactly; FIN.
  opts   a connection; 100 bytes; then segments whose options are malformed
         (running past the data offset, length 0 / 1, truncated MSS / WS /
         SACK / TS, a kind without its length byte) or whose data offset is
         wrong (< 5, beyond the segment), each carrying "EVIL" payload at
         RCV.NXT; SYNs with malformed options; then 100 more bytes; the echo
         must be the 200 good bytes exactly; FIN.

Prints one JSON object: {"ok", "phases": {name: {...figures...}}}; exits 0
when every phase saw what it expected, 1 otherwise (details in "error"s).
"""
import argparse
import hashlib
import json
import os
import random
import select
import signal
import socket
import struct
import sys
import threading
import time

ETH_P_IP = 0x0800
ETH_P_ARP = 0x0806
PACKET_OUTGOING = 4
FIN, SYN, RST, PSH, ACK = 0x01, 0x02, 0x04, 0x08, 0x10


def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return (~s) & 0xffff


def ip2b(a):
    return socket.inet_aton(a)


class Wire:
    """The tap: raw frames out, lcpipe's TCP segments (and ARP replies) in."""

    def __init__(self, iface, dst):
        self.iface = iface
        self.dst = dst
        self.s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
        self.s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
        self.s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 8 << 20)
        self.s.bind((iface, 0))
        with open("/sys/class/net/%s/address" % iface) as f:
            self.mac = bytes.fromhex(f.read().strip().replace(":", ""))
        self.dmac = None
        self.n_sent = 0
        self.conns = {}  # (src ip, our port) -> Conn
        self.unclaimed = 0
        self.ip_id = 1

    def tap_dropped(self):
        """frames the tap dropped on their way to lcpipe (its reader was
        behind): the kernel counts them as the tap's tx_dropped"""
        try:
            with open("/sys/class/net/%s/statistics/tx_dropped" % self.iface) as fh:
                return int(fh.read())
        except OSError:
            return 0

    def paced(self, frame, pace):
        """send, pausing 1 ms after every `pace` frames, so that a storm
        tests lcpipe rather than the tap's queue (its drops are counted)"""
        self.send(frame)
        self.n_sent += 1
        if pace and self.n_sent % pace == 0:
            time.sleep(0.001)
            self.pump(0)

    def send(self, frame):
        while True:
            try:
                self.s.send(frame)
                return
            except BlockingIOError:
                time.sleep(0.0005)
            except OSError as e:
                if e.errno in (105, 11):  # ENOBUFS, EAGAIN: the tap's queue is full
                    time.sleep(0.001)
                    continue
                raise

    def resolve(self, src, timeout=5.0):
        """ARP for lcpipe's MAC from src (the kernel owns src, so lcpipe's own
        ARP for it is answered by the kernel)."""
        req = (b"\xff" * 6 + self.mac + struct.pack("!H", ETH_P_ARP) +
               struct.pack("!HHBBH", 1, ETH_P_IP, 6, 4, 1) + self.mac + ip2b(src) + b"\0" * 6 + ip2b(self.dst))
        end = time.monotonic() + timeout
        nxt = 0
        while time.monotonic() < end:
            if time.monotonic() >= nxt:
                self.send(req)
                nxt = time.monotonic() + 0.5
            r, _, _ = select.select([self.s], [], [], 0.1)
            if not r:
                continue
            d, a = self.s.recvfrom(65535)
            if a[2] == PACKET_OUTGOING or len(d) < 42:
                continue
            if struct.unpack("!H", d[12:14])[0] == ETH_P_ARP and struct.unpack("!H", d[20:22])[0] == 2 \
                    and d[28:32] == ip2b(self.dst):
                self.dmac = d[22:28]
                return True
        return False

    def frame(self, src, sport, dport, seq, ack, flags, win, opts=b"", payload=b"", doff=None, tcp_len=None):
        """An Ethernet/IPv4/TCP frame to lcpipe; doff (32-bit words) may lie
        about the options, tcp_len may cut the segment (IP length consistent,
        checksum right for the bytes sent)."""
        hl = 20 + len(opts)
        off = (hl // 4) if doff is None else doff
        th = struct.pack("!HHIIBBHHH", sport, dport, seq & 0xffffffff, ack & 0xffffffff, (off & 0xf) << 4,
                         flags, win & 0xffff, 0, 0) + opts + payload
        if tcp_len is not None:
            th = th[:tcp_len]
        ph = ip2b(src) + ip2b(self.dst) + struct.pack("!BBH", 0, 6, len(th))
        c = csum(ph + th)
        th = th[:16] + struct.pack("!H", c) + th[18:]
        self.ip_id = (self.ip_id + 1) & 0xffff
        ih = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(th), self.ip_id, 0x4000, 64, 6, 0, ip2b(src),
                         ip2b(self.dst))
        ih = ih[:10] + struct.pack("!H", csum(ih)) + ih[12:]
        return self.dmac + self.mac + struct.pack("!H", ETH_P_IP) + ih + th

    def pump(self, timeout=0.0, until=None):
        """Read and dispatch segments for timeout seconds, or until until()
        is true (checked after every frame and at least every 10 ms)."""
        end = time.monotonic() + timeout
        while True:
            if until is not None and until():
                return True
            left = end - time.monotonic()
            r, _, _ = select.select([self.s], [], [], max(0.0, min(left, 0.01)))
            while r:
                try:
                    d, a = self.s.recvfrom(65535, socket.MSG_DONTWAIT)
                except BlockingIOError:
                    break
                if a[2] != PACKET_OUTGOING:
                    self.dispatch(d)
                if until is not None and until():
                    return True
            if left <= 0:
                return until() if until is not None else True

    def drain(self):
        self.pump(0.05)

    def dispatch(self, d):
        if len(d) < 34 or struct.unpack("!H", d[12:14])[0] != ETH_P_IP:
            return
        ihl = (d[14] & 0xf) * 4
        if d[23] != 6:
            return
        tot = struct.unpack("!H", d[16:18])[0]
        ip = d[14:14 + tot]
        src, dst = socket.inet_ntoa(ip[12:16]), socket.inet_ntoa(ip[16:20])
        if src != self.dst:
            return
        t = ip[ihl:]
        if len(t) < 20:
            return
        sport, dport, seq, ack, offb, flags, win = struct.unpack("!HHIIBBH", t[:16])
        hl = (offb >> 4) * 4
        seg = {"seq": seq, "ack": ack, "flags": flags, "win": win, "payload": bytes(t[hl:]),
               "opts": bytes(t[20:hl]), "t": time.monotonic()}
        c = self.conns.get((dst, dport))
        if c is None:
            self.unclaimed += 1
            return
        c.on_segment(seg)


def parse_opts(b):
    o = {}
    i = 0
    while i < len(b):
        k = b[i]
        if k == 0:
            break
        if k == 1:
            i += 1
            continue
        if i + 1 >= len(b):
            break
        ln = b[i + 1]
        if ln < 2:
            break
        if k == 2 and ln == 4:
            o["mss"] = struct.unpack("!H", b[i + 2:i + 4])[0]
        elif k == 3 and ln == 3:
            o["ws"] = b[i + 2]
        i += ln
    return o


class Conn:
    """One crafted connection from (src, sport) to lcpipe's port: it keeps
    RCV.NXT of lcpipe's stream (the echo), collects it, and ACKs in-order data
    with its current window when auto_ack is on."""

    def __init__(self, wire, src, sport, dport, win=65535):
        self.w, self.src, self.sport, self.dport = wire, src, sport, dport
        self.win = win
        self.iss = random.getrandbits(32)
        self.snd_nxt = self.iss
        self.irs = None
        self.rcv_nxt = None
        self.peer_win = 0
        self.peer_ws = 0
        self.rx = bytearray()
        self.segs = []  # every segment lcpipe sent us (minus payload)
        self.rst = 0
        self.fin = False
        self.auto_ack = True
        self.on_seg = None
        wire.conns[(src, sport)] = self

    def close_slot(self):
        self.w.conns.pop((self.src, self.sport), None)

    def out(self, flags, seq=None, ack=None, payload=b"", opts=b"", win=None, doff=None, tcp_len=None, pace=0):
        if ack is None:
            ack = self.rcv_nxt or 0
            if self.rcv_nxt is None:
                flags &= ~ACK
        self.w.paced(self.w.frame(self.src, self.sport, self.dport, self.snd_nxt if seq is None else seq, ack, flags,
                                 self.win if win is None else win, opts, payload, doff, tcp_len), pace)

    def on_segment(self, s):
        self.segs.append({k: v for k, v in s.items() if k != "payload"} | {"len": len(s["payload"])})
        if s["flags"] & RST:
            self.rst += 1
            return
        if s["flags"] & SYN:
            if self.irs is None and s["flags"] & ACK and s["ack"] == (self.iss + 1) & 0xffffffff:
                self.irs = s["seq"]
                self.rcv_nxt = (s["seq"] + 1) & 0xffffffff
                self.peer_ws = parse_opts(s["opts"]).get("ws", 0)
                self.snd_nxt = (self.iss + 1) & 0xffffffff
            self.peer_win = s["win"]
            return
        self.peer_win = s["win"] << self.peer_ws
        p = s["payload"]
        adv = False
        if self.rcv_nxt is not None and p:
            d = (self.rcv_nxt - s["seq"]) & 0xffffffff
            if d < len(p):  # new bytes from rcv_nxt on (old ones skipped)
                take = p[d:]
                room = self.win if self.win else 0
                if room == 0:
                    take = b""  # nothing fits in a zero window
                self.rx += take
                self.rcv_nxt = (self.rcv_nxt + len(take)) & 0xffffffff
                adv = True
            else:
                adv = True  # old: ACK again
        elif self.rcv_nxt is not None and s["seq"] == (self.rcv_nxt - 1) & 0xffffffff:
            adv = True  # a window probe or keepalive: answer with our window
        if s["flags"] & FIN and self.rcv_nxt is not None and \
                ((s["seq"] + len(p)) & 0xffffffff) == self.rcv_nxt:
            self.rcv_nxt = (self.rcv_nxt + 1) & 0xffffffff
            self.fin = True
            adv = True
        if self.on_seg is not None:
            self.on_seg(s)
        if adv and self.auto_ack:
            self.out(ACK)

    def handshake(self, mss=1460, ws=0, timeout=5.0):
        opts = struct.pack("!BBH", 2, 4, mss)
        if ws is not None:
            opts += struct.pack("!BBBB", 1, 3, 3, ws)
        end = time.monotonic() + timeout
        while time.monotonic() < end and self.irs is None:
            self.out(SYN, seq=self.iss, ack=0, opts=opts)
            self.w.pump(1.0, lambda: self.irs is not None or self.rst > 0)
            if self.rst:
                return False
        if self.irs is None:
            return False
        self.out(ACK)
        return True

    def send_data(self, data, seg=1000, timeout=10.0):
        """Send data in order within lcpipe's window; returns bytes sent."""
        i = 0
        end = time.monotonic() + timeout
        while i < len(data) and time.monotonic() < end:
            acked = self.acked()
            ahead = (acked - self.snd_nxt) & 0xffffffff
            if 0 < ahead < (1 << 31):  # lcpipe has these already: skip them
                skip = min(ahead, len(data) - i)
                i += skip
                self.snd_nxt = (self.snd_nxt + skip) & 0xffffffff
                continue
            inflight = (self.snd_nxt - acked) & 0xffffffff
            if inflight >= (1 << 31):
                inflight = 0
            room = max(0, self.peer_win - inflight)
            if room == 0:
                self.w.pump(0.005)
                continue
            n = min(seg, len(data) - i, room)
            self.out(ACK | PSH, payload=data[i:i + n])
            self.snd_nxt = (self.snd_nxt + n) & 0xffffffff
            i += n
            if i % (seg * 16) == 0:
                self.w.pump(0)
        return i

    def acked(self):
        for s in reversed(self.segs):
            if s["flags"] & ACK:
                return s["ack"]
        return self.snd_nxt

    def wait_rx(self, n, timeout=10.0):
        return self.w.pump(timeout, lambda: len(self.rx) >= n)

    def close(self, timeout=5.0):
        """FIN, then wait for lcpipe's FIN (tcp_app closes on PEER_CLOSED)."""
        self.out(FIN | ACK)
        self.snd_nxt = (self.snd_nxt + 1) & 0xffffffff
        ok = self.w.pump(timeout, lambda: self.fin or self.rst > 0)
        self.w.pump(0.1)
        return ok and self.fin


def pattern(tag, n):
    out = bytearray()
    j = 0
    while len(out) < n:
        out += hashlib.sha256(b"%s:%d" % (tag, j)).digest()
        j += 1
    return bytes(out[:n])


class Result:
    def __init__(self):
        self.errors = []

    def need(self, cond, msg):
        if not cond:
            self.errors.append(msg)
        return cond


# ---------------------------------------------------------------- phases

def conn_phase(name, sport, win=65535):
    """A phase on a connection of its own: the decorated fn(w, a, R, f, c) runs
    once c (from sport) has done its handshake (a failed one is an error in R)
    and puts its figures in f; c's slot is freed after"""
    def wrap(fn):
        def phase(w, a, R):
            f = {}
            c = Conn(w, a.src, sport, a.port, win=win)
            if R.need(c.handshake(), "%s: handshake failed" % name):
                fn(w, a, R, f, c)
                c.close_slot()
            return f
        return phase
    return wrap


@conn_phase("rst", 41001)
def phase_rst(w, a, R, f, c):
    f["sport"] = c.sport
    data = pattern(b"rst", 4096)
    c.send_data(data)
    R.need(c.wait_rx(len(data)), "rst: the first 4 KiB did not come back (%d)" % len(c.rx))
    w.drain()
    n0 = len(c.segs)
    nxt = c.snd_nxt
    # out of the window: below RCV.NXT, beyond RCV.NXT + window, far away
    t0 = time.monotonic()
    d0 = w.tap_dropped()
    for i in range(a.rst_oow):
        k = i % 3
        if k == 0:
            seq = nxt - 1 - random.randrange(1 << 20)
        elif k == 1:
            seq = nxt + a.rcvbuf + random.randrange(1 << 20)
        else:
            seq = nxt + (1 << 31) + random.randrange(1 << 24)
        c.out(RST if i % 2 else RST | ACK, seq=seq, pace=a.pace)
    w.pump(0.3)
    f["oow_sent"] = a.rst_oow
    f["oow_tap_dropped"] = w.tap_dropped() - d0
    f["oow_answers"] = len(c.segs) - n0
    R.need(f["oow_answers"] == 0, "rst: %d segments answered out-of-window RSTs" % f["oow_answers"])
    # in the window, not exact: challenge ACKs, rate-limited
    n1 = len(c.segs)
    t1 = time.monotonic()
    d1 = w.tap_dropped()
    for i in range(a.rst_inwin):
        seq = nxt + 1 + random.randrange(a.rcvbuf - 2)
        c.out(RST if i % 2 else RST | ACK, seq=seq, pace=a.pace)
    f["inwin_seconds"] = round(time.monotonic() - t1, 3)
    w.pump(0.3)
    f["inwin_tap_dropped"] = w.tap_dropped() - d1
    acks = [s for s in c.segs[n1:] if s["flags"] == ACK and s["len"] == 0]
    f["inwin_sent"] = a.rst_inwin
    f["challenge_acks_seen"] = len(acks)
    f["storm_seconds"] = round(time.monotonic() - t0, 3)
    R.need(len(acks) >= 1, "rst: no challenge ACK for %d in-window RSTs" % a.rst_inwin)
    bound = a.challenge_limit * (int(f["inwin_seconds"] + 0.3) + 2)
    R.need(len(acks) <= bound, "rst: %d challenge ACKs in %.1f s, limit %d/s" %
           (len(acks), f["inwin_seconds"], a.challenge_limit))
    R.need(all(s["ack"] == nxt for s in acks), "rst: a challenge ACK did not carry RCV.NXT")
    R.need(c.rst == 0, "rst: lcpipe sent RST during the storm")
    # still alive
    more = pattern(b"rst2", 1024)
    c.send_data(more)
    f["alive_after_storm"] = c.wait_rx(len(data) + len(more), 5)
    R.need(f["alive_after_storm"] and bytes(c.rx) == data + more, "rst: the echo after the storm is wrong (%d bytes)" % len(c.rx))
    # the exact one
    c.out(RST, seq=c.snd_nxt)
    w.pump(0.2)
    n2 = len(c.segs)
    c.auto_ack = False
    c.out(ACK | PSH, payload=b"after the reset")
    w.pump(1.0, lambda: c.rst > 0)
    f["rst_after_exact"] = c.rst
    R.need(c.rst >= 1, "rst: a segment after the exact RST was not answered with RST (conn still there?)")
    R.need(all(s["flags"] & RST for s in c.segs[n2:]), "rst: a non-RST answer after the exact RST")
    f["echo_sha256"] = hashlib.sha256(bytes(c.rx)).hexdigest()
    f["sent_sha256"] = hashlib.sha256(data + more).hexdigest()


def legit_connect(host, port, res, key):
    t0 = time.monotonic()
    try:
        s = socket.create_connection((host, port), timeout=5)
        s.settimeout(5)
        msg = os.urandom(1000)
        s.sendall(msg)
        got = b""
        while len(got) < len(msg):
            d = s.recv(65536)
            if not d:
                break
            got += d
        s.shutdown(socket.SHUT_WR)
        while s.recv(65536):
            pass
        s.close()
        res[key] = {"ok": got == msg, "seconds": round(time.monotonic() - t0, 3)}
    except OSError as e:
        res[key] = {"ok": False, "error": str(e), "seconds": round(time.monotonic() - t0, 3)}


def phase_syn(w, a, R):
    f = {}
    base = a.src.rsplit(".", 1)[0]
    forged = ["%s.%d" % (base, 64 + i) for i in range(64)]
    n = a.syn_count
    legit = {}
    th = None
    def tap_stat(k):
        try:
            with open("/sys/class/net/%s/statistics/%s" % (a.iface, k)) as fh:
                return int(fh.read())
        except OSError:
            return -1
    tx0, drop0 = tap_stat("tx_packets"), tap_stat("tx_dropped")
    t0 = time.monotonic()
    opts = struct.pack("!BBH", 2, 4, 1460)
    for i in range(n):
        if i % 2 == 0:
            src, sport = a.src, 20000 + (i // 2) % 20000
        else:
            src, sport = forged[(i // 2) % 64], 1024 + random.randrange(60000)
        w.send(w.frame(src, sport, a.port, random.getrandbits(32), 0, SYN, 65535, opts))
        if i == n // 2:
            legit["during_started_s"] = round(time.monotonic() - t0, 3)
            th = threading.Thread(target=legit_connect, args=(a.dst, a.port, legit, "during"), daemon=True)
            th.start()
        if i % 64 == 63:
            time.sleep(a.syn_pause)  # a burst per 64 SYNs (the tap queue holds 1000)
            w.pump(0)
    f["syn_sent"] = n
    f["flood_seconds"] = round(time.monotonic() - t0, 3)
    f["syn_rate"] = int(n / max(f["flood_seconds"], 1e-3))
    f["tap_tx_packets"] = tap_stat("tx_packets") - tx0
    f["tap_tx_dropped"] = tap_stat("tx_dropped") - drop0
    if th is not None:
        th.join(10)
    legit_connect(a.dst, a.port, legit, "after")
    f["legit"] = legit
    f["synacks_seen_by_src"] = w.unclaimed
    R.need(legit.get("during", {}).get("ok") is True, "syn: the connect during the flood failed: %s" % legit.get("during"))
    R.need(legit.get("after", {}).get("ok") is True, "syn: the connect after the flood failed: %s" % legit.get("after"))
    return f


@conn_phase("zero", 41002, win=8192)
def phase_zero(w, a, R, f, c):
    probes = []
    zero_at = [None]

    def on_seg(s):
        if zero_at[0] is not None and not s["payload"] and not (s["flags"] & (SYN | FIN | RST)) and \
                s["seq"] == (c.rcv_nxt - 1) & 0xffffffff:
            probes.append(round(s["t"] - zero_at[0], 3))
    c.on_seg = on_seg
    first = pattern(b"zw", 8192)
    c.send_data(first)
    R.need(c.wait_rx(8192, 5), "zero: the first 8 KiB did not come back (%d)" % len(c.rx))
    # from now on: window 0, for ever
    c.win = 0
    zero_at[0] = time.monotonic()
    c.out(ACK)
    more = pattern(b"zw2", a.zw_bytes)
    f["sent_after_zero"] = c.send_data(more, timeout=10)
    # the echo of those bytes waits in lcpipe's send buffer; nothing may come
    got_before = len(c.rx)
    w.pump(a.zw_wait, lambda: c.rst > 0)
    f["rst_after_s"] = round(time.monotonic() - zero_at[0], 3) if c.rst else None
    data_into_zero = [s for s in c.segs if s["t"] >= zero_at[0] + 0.05 and s["len"] > 1]
    f["segments_into_zero_window"] = len(data_into_zero)
    f["probes_seen"] = len(probes)
    f["probe_times_s"] = probes[:32]
    f["echoed_before_zero"] = got_before
    R.need(not data_into_zero, "zero: %d data segments sent into a zero window" % len(data_into_zero))
    R.need(len(probes) >= 2, "zero: %d window probes seen" % len(probes))
    if len(probes) >= 3:
        gaps = [b - a_ for a_, b in zip(probes, probes[1:])]
        f["probe_gaps_s"] = [round(g, 3) for g in gaps[:16]]
        R.need(gaps[-1] >= gaps[0] * 1.5, "zero: no backoff between probes: %s" % gaps)
    R.need(c.rst >= 1, "zero: lcpipe did not give up within %s s" % a.zw_wait)


@conn_phase("ooo", 41003)
def phase_ooo(w, a, R, f, c):
    total = a.ooo_stream
    data = pattern(b"ooo", total)
    base = c.snd_nxt
    hole = 1000
    rnd = random.Random(7)
    sent = 0
    d0 = w.tap_dropped()
    for i in range(a.ooo_count):
        off = rnd.randrange(hole, total - 1)
        ln = min(rnd.randrange(1, 1401), total - off)
        c.out(ACK, seq=base + off, payload=data[off:off + ln], pace=a.pace)
        sent += 1
    far = 0
    for i in range(300):  # far outside the window
        c.out(ACK, seq=base + (1 << 30) + rnd.randrange(1 << 20), payload=b"X" * 500, pace=a.pace)
        far += 1
    beyond = 0
    for i in range(300):  # just beyond the window's right edge
        c.out(ACK, seq=base + a.rcvbuf + 1000 + rnd.randrange(1 << 16), payload=b"Y" * 500, pace=a.pace)
        beyond += 1
    w.pump(0.3)
    f["tap_dropped"] = w.tap_dropped() - d0
    R.need(len(c.rx) == 0, "ooo: %d bytes came back before the hole was filled" % len(c.rx))
    f["ooo_sent"] = sent
    f["far_sent"] = far
    f["beyond_sent"] = beyond
    f["acks_during_flood"] = len(c.segs) - 1
    # the hole, then everything again in order
    c.out(ACK | PSH, seq=base, payload=data[:hole])
    w.pump(0.1)
    f["echo_after_hole"] = len(c.rx)
    c.snd_nxt = base
    c.send_data(data, timeout=20)
    R.need(c.wait_rx(total, 20), "ooo: %d of %d bytes came back" % (len(c.rx), total))
    R.need(bytes(c.rx) == data, "ooo: the echo differs from the stream")
    f["stream_bytes"] = total
    f["sha256"] = hashlib.sha256(data).hexdigest()
    f["echo_sha256"] = hashlib.sha256(bytes(c.rx)).hexdigest()
    f["closed"] = c.close()
    R.need(f["closed"], "ooo: no FIN back after ours")


@conn_phase("opts", 41004)
def phase_opts(w, a, R, f, c):
    good1 = pattern(b"opts1", 100)
    c.send_data(good1)
    R.need(c.wait_rx(100, 5), "opts: the first 100 bytes did not come back")
    w.drain()
    evil = b"EVIL" * 4
    bad_opt = [
        bytes([8, 10, 0, 0]),                 # TS runs past the data offset
        bytes([254, 0, 1, 1]),                # length 0
        bytes([254, 1, 1, 1]),                # length 1
        bytes([2, 3, 5, 0]),                  # MSS of length 3
        bytes([2, 6, 5, 180, 0, 0]) + b"\0\0",  # MSS of length 6
        bytes([3, 2, 1, 1]),                  # WS of length 2
        bytes([3, 4, 7, 0]),                  # WS of length 4
        bytes([5, 1, 0, 0]),                  # SACK of length 1
        bytes([8, 10, 0, 0, 0, 0, 0, 0]),     # TS of length 10 in 8 bytes
        bytes([8, 6, 0, 0, 0, 0, 1, 1]),      # TS of length 6
        bytes([1, 1, 1, 2]),                  # MSS kind without its length byte
        bytes([1, 1, 1, 30]),                 # unknown kind without its length byte
        bytes([4, 40, 0, 0]),                 # SACK-permitted running far past the header
        bytes([30, 200, 0, 0]) + b"\0" * 36,  # unknown kind of length 200 in 40 bytes
    ]
    for o in bad_opt:
        c.out(ACK | PSH, payload=evil, opts=o)
    bad_off = 0
    # data offset 4 (< 5), 2 and 0
    for d in (4, 2, 0):
        c.out(ACK | PSH, payload=evil, doff=d)
        bad_off += 1
    # data offset 15 (60 bytes) in a 20 + 16 byte segment; 8 in a 20-byte one
    c.out(ACK | PSH, payload=evil, doff=15)
    c.out(ACK, payload=b"", doff=8)
    bad_off += 2
    # SYNs with malformed options at the listener
    bad_syn = 0
    for i, o in enumerate((bytes([2, 5, 5, 0]), bytes([3, 0, 0, 0]), bytes([8, 12, 0, 0]))):
        w.send(w.frame(a.src, 42000 + i, a.port, random.getrandbits(32), 0, SYN, 65535, o))
        bad_syn += 1
    w.pump(0.3)
    f["bad_opt_sent"] = len(bad_opt) + bad_syn
    f["bad_off_sent"] = bad_off
    R.need(len(c.rx) == 100, "opts: bytes came back after malformed segments (%d)" % len(c.rx))
    good2 = pattern(b"opts2", 100)
    c.send_data(good2)
    R.need(c.wait_rx(200, 5), "opts: the second 100 bytes did not come back (%d)" % len(c.rx))
    R.need(bytes(c.rx) == good1 + good2, "opts: the echo is not exactly the 200 good bytes")
    f["echo_bytes"] = len(c.rx)
    f["sha256"] = hashlib.sha256(good1 + good2).hexdigest()
    f["closed"] = c.close()
    R.need(f["closed"], "opts: no FIN back after ours")


PHASES = {"rst": phase_rst, "syn": phase_syn, "zero": phase_zero, "ooo": phase_ooo, "opts": phase_opts}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--iface", required=True)
    p.add_argument("--src", required=True, help="our address (the kernel has it on --iface)")
    p.add_argument("--dst", required=True, help="lcpipe's tcp stage")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--phases", default="rst,zero,ooo,opts,syn")
    p.add_argument("--rcvbuf", type=int, required=True, help="the tcp stage's rcvbuf")
    p.add_argument("--challenge-limit", type=int, required=True)
    p.add_argument("--rst-oow", type=int, default=3000)
    p.add_argument("--rst-inwin", type=int, default=3000)
    p.add_argument("--syn-count", type=int, default=4000)
    p.add_argument("--syn-pause", type=float, default=0.002)
    p.add_argument("--pace", type=int, default=32, help="storms: 1 ms pause after this many frames")
    p.add_argument("--zw-bytes", type=int, default=131072)
    p.add_argument("--zw-wait", type=float, default=15)
    p.add_argument("--ooo-count", type=int, default=3000)
    p.add_argument("--ooo-stream", type=int, default=200000)
    p.add_argument("--timeout", type=float, default=80)
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    random.seed(a.seed)

    def on_alarm(signum, frame):
        sys.stdout.write(json.dumps({"ok": False, "error": "timeout after %s s" % a.timeout}) + "\n")
        sys.stdout.flush()
        os._exit(1)
    signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(int(a.timeout))
    w = Wire(a.iface, a.dst)
    R = Result()
    out = {"phases": {}}
    if not w.resolve(a.src):
        out.update({"ok": False, "error": "no ARP reply from %s" % a.dst})
        print(json.dumps(out))
        return 1
    for name in a.phases.split(","):
        t0 = time.monotonic()
        n_err = len(R.errors)
        sys.stderr.write("phase %s\n" % name)
        f = PHASES[name](w, a, R)
        f["seconds"] = round(time.monotonic() - t0, 3)
        f["errors"] = R.errors[n_err:]
        out["phases"][name] = f
        w.drain()
    out["ok"] = not R.errors
    out["errors"] = R.errors
    print(json.dumps(out))
    return 0 if out["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
