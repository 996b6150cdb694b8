#!/usr/bin/python3
"""nats_peer.py — the NATS side of tests/run/nats.sh, over plain sockets speaking
the NATS text protocol (INFO / CONNECT / SUB / PUB / PING / PONG / MSG / HMSG),
loopback only. No NATS library: what it checks is the wire.

usage:
  nats_peer.py freeport                         a free TCP port on 127.0.0.1
  nats_peer.py wait PORT SECONDS                until a server there answers PING
  nats_peer.py sub PORT SUBJECT READY STOP OUT [--record FILE]
      subscribe; touch READY once the server has the subscription; when the
      file STOP appears, PING and read up to the PONG (everything the server
      routed before is in), then write OUT (JSON): count, bytes, subjects;
      --record: every message as a JSON line [subject, payload as latin-1]
  nats_peer.py check-demo RECORD VENUE          every recorded message of the demo
      feed is on md.VENUE.<its "s">, its payload a JSON tick; prints a summary
  nats_peer.py check-lines RECORD LINES COUNT CONNS CONN_BASE VENUE
      the messages msg_src sent from LINES (message i = line i % len, conn_id =
      CONN_BASE + i % CONNS) arrived in order on the subjects sink_nats makes with
      subject "md.{venue}.{conn}.{symbol}" and fallback "md.{venue}.{conn}.nosym"
      (or were dropped, without fallback: --no-fallback), payloads byte for byte
  nats_peer.py stream-create PORT NAME SUBJECT  JetStream stream (file storage)
  nats_peer.py stream-count PORT NAME           messages in the stream
  nats_peer.py stream-check PORT NAME VENUE N   messages 1..N and the last: subject
      md.VENUE.<s>, header Nats-Msg-Id VENUE.<s>.<n> from the payload
  nats_peer.py democonf DEMO OUT COUNT RATE SINK_OPTS_JSON
      conf/demo.json with the sink replaced by sink_nats (SINK_OPTS_JSON), the
      exchange sending COUNT messages (at RATE per second, 0: flat out) and
      closing, the ws client ending the run then (stop_on_close)
  nats_peer.py msgconf OUT PLUGDIR PREFIX SRC_OPTS_JSON SINK_OPTS_JSON
      msg_src (test plugin) -> sink_nats, both on lcore 1
Exit 0 if all is well, 1 if a check failed, 2 on a usage or protocol error.
"""
import base64
import json
import os
import re
import socket
import sys
import time


class Nats:
    def __init__(self, port, timeout=10.0):
        self.s = socket.create_connection(("127.0.0.1", int(port)), timeout=timeout)
        self.buf = bytearray()
        self.off = 0
        line = self.readline_blocking()
        if not line.startswith(b"INFO "):
            raise RuntimeError("no INFO from the server: %r" % line[:80])
        self.info = json.loads(line[5:])
        self.send(b'CONNECT {"verbose":false,"pedantic":false,"headers":true,"no_responders":true,'
                  b'"protocol":1,"name":"nats_peer"}\r\n')

    def send(self, b):
        self.s.sendall(b)

    def fill(self):
        d = self.s.recv(1 << 20)
        if not d:
            raise EOFError("the server closed the connection")
        if self.off > (1 << 20):
            del self.buf[:self.off]
            self.off = 0
        self.buf += d

    def readline_blocking(self):
        while True:
            i = self.buf.find(b"\r\n", self.off)
            if i >= 0:
                line = bytes(self.buf[self.off:i])
                self.off = i + 2
                return line
            self.fill()

    def parse(self):
        """one protocol message from the buffer, or None if incomplete:
        ("MSG", subject, reply, headers bytes, payload bytes), ("PING",),
        ("PONG",), ("OK",), ("ERR", text), ("INFO", json)"""
        i = self.buf.find(b"\r\n", self.off)
        if i < 0:
            return None
        line = bytes(self.buf[self.off:i])
        op = line.split(b" ", 1)[0].upper()
        if op in (b"MSG", b"HMSG"):
            f = line.split()
            if op == b"MSG":
                subj, reply, hl, tl = f[1], (f[3] if len(f) == 5 else b""), 0, int(f[-1])
            else:
                subj, reply, hl, tl = f[1], (f[3] if len(f) == 6 else b""), int(f[-2]), int(f[-1])
            start = i + 2
            if len(self.buf) < start + tl + 2:
                return None
            body = bytes(self.buf[start:start + tl])
            self.off = start + tl + 2
            return ("MSG", subj.decode("latin-1"), reply.decode("latin-1"), body[:hl], body[hl:])
        self.off = i + 2
        if op == b"PING":
            self.send(b"PONG\r\n")
            return ("PING",)
        if op == b"PONG":
            return ("PONG",)
        if op == b"+OK":
            return ("OK",)
        if op == b"-ERR":
            return ("ERR", line[5:].decode(errors="replace"))
        if op == b"INFO":
            return ("INFO", line[5:])
        raise RuntimeError("unexpected protocol line: %r" % line[:80])

    def next(self):
        while True:
            m = self.parse()
            if m is not None:
                return m
            self.fill()

    def until_pong(self, on_msg=None):
        while True:
            m = self.next()
            if m[0] == "PONG":
                return
            if m[0] == "ERR":
                raise RuntimeError("server error: " + m[1])
            if m[0] == "MSG" and on_msg is not None:
                on_msg(m)

    def request(self, subject, payload, timeout=10.0):
        inbox = "_INBOX.nats_peer.%d" % os.getpid()
        self.send(("SUB %s 99\r\n" % inbox).encode())
        self.send(("PUB %s %s %d\r\n" % (subject, inbox, len(payload))).encode() + payload + b"\r\n")
        self.s.settimeout(timeout)
        while True:
            m = self.next()
            if m[0] == "ERR":
                raise RuntimeError("server error: " + m[1])
            if m[0] == "MSG" and m[1] == inbox:
                self.send(b"UNSUB 99\r\n")
                if m[3] and b" 503" in m[3].split(b"\r\n", 1)[0]:
                    raise RuntimeError("no responders for %s (is JetStream on?)" % subject)
                return m[4]


def freeport():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    print(s.getsockname()[1])
    s.close()
    return 0


def wait(port, seconds):
    end = time.time() + float(seconds)
    while time.time() < end:
        try:
            c = Nats(port, timeout=1.0)
            c.send(b"PING\r\n")
            c.until_pong()
            return 0
        except (OSError, EOFError, RuntimeError):
            time.sleep(0.05)
    print("nats_peer: no NATS server answering on 127.0.0.1:%s after %s s" % (port, seconds))
    return 1


def sub(port, subject, ready, stop, out, record=None):
    c = Nats(port)
    c.send(("SUB %s 1\r\nPING\r\n" % subject).encode())
    c.until_pong()
    open(ready, "w").close()
    st = {"count": 0, "bytes": 0, "subjects": {}}
    rec = open(record, "w") if record else None

    def on_msg(m):
        st["count"] += 1
        st["bytes"] += len(m[4])
        st["subjects"][m[1]] = st["subjects"].get(m[1], 0) + 1
        if rec is not None:
            rec.write(json.dumps([m[1], m[4].decode("latin-1")]) + "\n")

    c.s.settimeout(0.1)
    while True:
        try:
            m = c.next()
            if m[0] == "MSG":
                on_msg(m)
            elif m[0] == "ERR":
                print("nats_peer sub: server error: " + m[1])
                return 2
        except socket.timeout:
            if os.path.exists(stop):
                break
        except EOFError as e:
            print("nats_peer sub: %s after %d messages" % (e, st["count"]))
            st["eof"] = True
            break
    if not st.get("eof"):
        c.s.settimeout(10.0)
        c.send(b"PING\r\n")
        c.until_pong(on_msg)
    if rec is not None:
        rec.close()
    res = {"count": st["count"], "bytes": st["bytes"], "subjects": len(st["subjects"]),
           "eof": bool(st.get("eof"))}
    with open(out, "w") as f:
        json.dump(res, f)
    print("nats_peer sub: %s" % json.dumps(res))
    return 0


BAD = set(range(0, 0x21)) | {0x7f, ord("."), ord("*"), ord(">")}


def token(raw):
    """what sink_nats makes of a symbol's bytes (as sent, between the quotes)"""
    return bytes(ord("_") if b in BAD else b for b in raw).decode("latin-1")


def check_demo(record, venue):
    n = bad = 0
    shown = 0
    for line in open(record):
        subj, payload = json.loads(line)
        n += 1
        try:
            t = json.loads(payload.encode("latin-1"))
            want = "md.%s.%s" % (venue, token(t["s"].encode()))
            ok = subj == want and isinstance(t.get("n"), int)
        except (ValueError, KeyError, AttributeError):
            ok, want = False, "(payload is not a tick)"
        if not ok:
            bad += 1
            if shown < 5:
                shown += 1
                print("nats_peer check-demo: message %d on %s, expected %s: %r" % (n, subj, want, payload[:120]))
    print("nats_peer check-demo: %d messages, %d on the wrong subject or not a tick" % (n, bad))
    return 0 if bad == 0 and n > 0 else 1


SYM = re.compile(rb'^\{\s*"s"\s*:\s*(?:"((?:[^"\\]|\\.)*)"|(-?[0-9][^,}\s]*))')


def lines_subject(line, conn, venue, fallback):
    """the subject sink_nats gives a crafted line (its "s" is the first key if
    present), or None if it drops it"""
    m = SYM.match(line)
    if m is not None:
        raw = m.group(1) if m.group(1) is not None else m.group(2)
        if 0 < len(raw) <= 128:
            return "md.%s.%d.%s" % (venue, conn, token(raw))
    return ("md.%s.%d.nosym" % (venue, conn)) if fallback else None


def check_lines(record, lines, count, conns, conn_base, venue, fallback=True):
    src = open(lines, "rb").read().split(b"\n")
    if src and src[-1] == b"":
        src.pop()
    want = []
    for i in range(int(count)):
        line = src[i % len(src)]
        subj = lines_subject(line, int(conn_base) + i % int(conns), venue, fallback)
        if subj is not None:
            want.append((subj, line))
    got = [(s, p.encode("latin-1")) for s, p in (json.loads(x) for x in open(record))]
    bad = 0
    for k in range(max(len(want), len(got))):
        w = want[k] if k < len(want) else None
        g = got[k] if k < len(got) else None
        if w != g:
            bad += 1
            if bad <= 5:
                print("nats_peer check-lines: message %d: expected %r, got %r" % (k, w, g))
    print("nats_peer check-lines: expected %d messages, got %d, %d differ" % (len(want), len(got), bad))
    return 0 if bad == 0 else 1


def stream_create(port, name, subject):
    c = Nats(port)
    cfg = {"name": name, "subjects": [subject], "storage": "file", "num_replicas": 1,
           "duplicate_window": 120 * 10**9}
    r = json.loads(c.request("$JS.API.STREAM.CREATE." + name, json.dumps(cfg).encode()))
    if "error" in r:
        print("nats_peer stream-create: %s" % json.dumps(r["error"]))
        return 1
    print("nats_peer stream-create: stream %s on %s" % (name, subject))
    return 0


def stream_count(port, name):
    c = Nats(port)
    r = json.loads(c.request("$JS.API.STREAM.INFO." + name, b""))
    if "error" in r:
        print("nats_peer stream-count: %s" % json.dumps(r["error"]), file=sys.stderr)
        return 1
    print(r["state"]["messages"])
    return 0


def stream_check(port, name, venue, n):
    c = Nats(port)
    info = json.loads(c.request("$JS.API.STREAM.INFO." + name, b""))
    last = info["state"]["last_seq"]
    bad = 0
    seqs = list(range(1, min(int(n), last) + 1)) + ([last] if last > int(n) else [])
    for seq in seqs:
        r = json.loads(c.request("$JS.API.STREAM.MSG.GET." + name, json.dumps({"seq": seq}).encode()))
        if "error" in r:
            print("nats_peer stream-check: seq %d: %s" % (seq, json.dumps(r["error"])))
            bad += 1
            continue
        m = r["message"]
        data = base64.b64decode(m.get("data", ""))
        hdrs = base64.b64decode(m.get("hdrs", "")).decode("latin-1")
        ids = re.findall(r"\r\nNats-Msg-Id:\s*([^\r]*)\r\n", hdrs)
        t = json.loads(data)
        sym = token(t["s"].encode())
        want_subj, want_id = "md.%s.%s" % (venue, sym), "%s.%s.%d" % (venue, sym, t["n"])
        if m["subject"] != want_subj or ids != [want_id]:
            bad += 1
            print("nats_peer stream-check: seq %d: subject %s (expected %s), Nats-Msg-Id %s (expected %s)" %
                  (seq, m["subject"], want_subj, ids, want_id))
    print("nats_peer stream-check: %d stored messages read back, %d wrong" % (len(seqs), bad))
    return 0 if bad == 0 and seqs else 1


def democonf(demo, out, count, rate, sink_opts):
    c = json.load(open(demo))
    c["engine"]["duration"] = 0
    c["engine"]["drain_timeout"] = 2.0
    for s in c["stages"]:
        if s["name"] == "exchange":
            s["options"].update({"count": int(count), "close_when_done": True, "rate": int(rate)})
        if s["name"] == "feed":
            s["options"].update({"stop_on_close": True})
    c["stages"] = [s for s in c["stages"] if s["name"] != "sink"]
    c["stages"].append({"name": "sink", "plugin": "sink_nats", "lcore": 1, "options": json.loads(sink_opts)})
    json.dump(c, open(out, "w"), indent=1)
    return 0


def msgconf(out, plugdir, prefix, src_opts, sink_opts):
    c = {"name": "msg_src -> sink_nats",
         "eal": ["--no-huge", "--no-pci", "--no-shconf", "-m", "256", "-l", "0,1", "--file-prefix=" + prefix],
         "plugin_path": [plugdir],
         "engine": {"drain_timeout": 2.0},
         "stages": [{"name": "src", "plugin": "msg_src", "lcore": 1, "options": json.loads(src_opts)},
                    {"name": "sink", "plugin": "sink_nats", "lcore": 1, "options": json.loads(sink_opts)}],
         "links": ["src.out -> sink.msg"]}
    json.dump(c, open(out, "w"), indent=1)
    return 0


def main(a):
    if len(a) < 2:
        print(__doc__)
        return 2
    cmd, args = a[1], a[2:]
    try:
        if cmd == "freeport":
            return freeport()
        if cmd == "wait":
            return wait(*args)
        if cmd == "sub":
            rec = None
            if "--record" in args:
                k = args.index("--record")
                rec = args[k + 1]
                args = args[:k] + args[k + 2:]
            return sub(*args, record=rec)
        if cmd == "check-demo":
            return check_demo(*args)
        if cmd == "check-lines":
            fb = "--no-fallback" not in args
            return check_lines(*[x for x in args if x != "--no-fallback"], fallback=fb)
        if cmd == "stream-create":
            return stream_create(*args)
        if cmd == "stream-count":
            return stream_count(*args)
        if cmd == "stream-check":
            return stream_check(*args)
        if cmd == "democonf":
            return democonf(*args)
        if cmd == "msgconf":
            return msgconf(*args)
    except (OSError, EOFError, RuntimeError, ValueError, KeyError, TypeError) as e:
        print("nats_peer %s: %s: %s" % (cmd, type(e).__name__, e))
        return 2
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
