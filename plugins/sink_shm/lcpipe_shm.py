#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""lcpipe_shm — read lcpipe's shared-memory rings (the sink_shm stage) from Python.

Pure Python (mmap + struct), no compiled extension; the same semantics as the C
library liblcpipe-shm (lcpipe/shm.h, doc/shm.md): each Reader has its own read
position, never writes to the ring, and when the producer laps it counts one
overrun and the messages skipped as lost, then goes on from the oldest message
still in the ring. x86-64 only (TSC timestamps, x86 store ordering). One Reader
per thread.

    import lcpipe_shm
    r = lcpipe_shm.Reader("/dev/shm/lcpipe-sink", oldest=True)
    while True:
        m = r.wait(timeout=1.0)          # a Msg, None (timeout) or raises Closed
        print(m.seq, m.conn_id, m.data)

CLI:  python3 lcpipe_shm.py PATH [--oldest] [--count] [--max N] [--timeout S]
                                 [--sleep-us US] [--info]
prints one line per message (seq, conn, flags, lost, length, payload as text), or
with --count only a JSON line of the reader's statistics at the end; it ends when
the producer closes the ring and everything was read, after --max messages, or
after --timeout seconds without a message. Exit status 0, 1 on an error (the
reason on stderr), 2 on bad usage.
"""
import errno
import mmap
import os
import struct
import sys
import time

MAGIC = 0x31474E524D485350  # "PSHMRNG1" little-endian
VERSION = 1
HDR_SIZE = 4096
SLOT_HDR = 48
F_SESSION_START = 0x1
F_LOSS = 0x2

# header line 0: magic version hdr_size slots slot_size slot_stride pid generation tsc_hz created_ns file_size
_HDR0 = struct.Struct("<QIIIIIiQQQQ")
# slot header after seq: conn_id rx_tsc pub_tsc len lost opcode flags dropped
_SLOT = struct.Struct("<QQQIIHHI")
_OFF_STAGE = 64
_OFF_CLOSED = 128
_OFF_CLOSE_NS = 136
_OFF_DROPS = 144
_OFF_WRITE_SEQ = 256


class ShmError(Exception):
    """the file is not a ring this reader can use; errno says why (EBADMSG:
    not a ring, EPROTONOSUPPORT: another layout version, EINVAL: inconsistent)"""

    def __init__(self, err, msg):
        super().__init__(msg)
        self.errno = err


class Closed(Exception):
    """the producer closed the ring and every message was read"""


class Msg:
    __slots__ = ("seq", "conn_id", "rx_tsc", "pub_tsc", "lost", "opcode", "flags", "dropped", "data")

    def __init__(self, seq, conn_id, rx_tsc, pub_tsc, lost, opcode, flags, dropped, data):
        self.seq, self.conn_id, self.rx_tsc, self.pub_tsc = seq, conn_id, rx_tsc, pub_tsc
        self.lost, self.opcode, self.flags, self.dropped, self.data = lost, opcode, flags, dropped, data


class Reader:
    def __init__(self, path, oldest=False):
        self.path = path
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError as e:
            raise ShmError(e.errno, "%s: cannot open: %s" % (path, e.strerror)) from None
        try:
            st = os.fstat(fd)
            if not (st.st_mode & 0o170000) == 0o100000:
                raise ShmError(errno.EBADMSG, "%s: not an lcpipe shm ring (not a regular file)" % path)
            head = os.pread(fd, HDR_SIZE, 0)
            if len(head) < 12 or struct.unpack_from("<Q", head)[0] != MAGIC:
                magic = struct.unpack_from("<Q", head)[0] if len(head) >= 8 else 0
                raise ShmError(errno.EBADMSG, "%s: not an lcpipe shm ring (%d bytes; magic 0x%016x, expected 0x%016x)"
                               % (path, len(head), magic, MAGIC))
            version = struct.unpack_from("<I", head, 8)[0]
            if version != VERSION:
                raise ShmError(errno.EPROTONOSUPPORT,
                               "%s: an lcpipe shm ring of layout version %d; this reader reads version %d"
                               % (path, version, VERSION))
            if len(head) < HDR_SIZE:
                raise ShmError(errno.EINVAL, "%s: inconsistent ring header (file of %d bytes)" % (path, len(head)))
            (_, _, hdr_size, slots, slot_size, stride, pid, gen, hz, created, fsize) = _HDR0.unpack_from(head)
            need = hdr_size + slots * stride
            if (hdr_size != HDR_SIZE or slots < 2 or slots & (slots - 1) or slot_size == 0
                    or stride < SLOT_HDR + slot_size or stride % 64 or fsize < need or st.st_size < fsize):
                raise ShmError(errno.EINVAL, "%s: inconsistent ring header (hdr_size %d, slots %d, slot_size %d, "
                               "stride %d, file_size %d, file %d bytes)"
                               % (path, hdr_size, slots, slot_size, stride, fsize, st.st_size))
            self._mm = mmap.mmap(fd, fsize, mmap.MAP_SHARED, mmap.PROT_READ)
        finally:
            os.close(fd)
        # 8-byte loads (memoryview 'Q' items are read with one aligned load: no torn words)
        self._q = memoryview(self._mm).cast("Q")
        self.slots, self.slot_size, self.stride = slots, slot_size, stride
        self.pid, self.generation, self.tsc_hz, self.created_ns = pid, gen, hz, created
        self.stage = head[_OFF_STAGE:_OFF_STAGE + 32].split(b"\0", 1)[0].decode("utf-8", "replace")
        self._dev, self._ino = st.st_dev, st.st_ino
        self._mask = slots - 1
        w = self.write_seq()
        self.next = (w - slots if w > slots else 0) if oldest else w
        self.received = self.bytes = self.overruns = self.lost = self.torn = 0

    def write_seq(self):
        return self._q[_OFF_WRITE_SEQ // 8]

    def closed(self):
        return struct.unpack_from("<I", self._mm, _OFF_CLOSED)[0] != 0

    def drops(self):
        return self._q[_OFF_DROPS // 8]

    def stats(self):
        return {"received": self.received, "bytes": self.bytes, "overruns": self.overruns,
                "lost": self.lost, "torn": self.torn}

    def _lapped(self, v):
        w = (v - 1) // 2
        head = max(self.write_seq(), w + 1)
        to = head - self._mask
        if to <= self.next:
            to = self.next + 1
        self.lost += to - self.next
        self.next = to

    def next_msg(self):
        """the next message (a Msg), None if there is none yet; raises Closed"""
        lapped = False
        q, mm = self._q, self._mm
        while True:
            off = HDR_SIZE + (self.next & self._mask) * self.stride
            want = 2 * self.next + 2
            v = q[off // 8]
            if v == want:
                conn, rx, pub, ln, lost, op, fl, dr = _SLOT.unpack_from(mm, off + 8)
                if ln > self.slot_size:
                    ln = 0
                data = mm[off + SLOT_HDR:off + SLOT_HDR + ln]
                if q[off // 8] == want:
                    m = Msg(self.next, conn, rx, pub, lost, op, fl, dr, data)
                    self.next += 1
                    self.received += 1
                    self.bytes += ln
                    return m
                self.torn += 1
                v = q[off // 8]
            if v < want:
                if v == want - 1 or not self.closed():
                    return None
                if q[off // 8] < want:
                    raise Closed()
                continue
            if not lapped:
                self.overruns += 1
                lapped = True
            self._lapped(v)

    def wait(self, timeout=None, spin=50e-6, sleep=50e-6):
        """next_msg(), waiting up to timeout seconds (None: for ever): polls for
        spin seconds, then sleeps `sleep` between polls"""
        m = self.next_msg()
        if m is not None:
            return m
        t0 = time.monotonic()
        while True:
            m = self.next_msg()
            if m is not None:
                return m
            t = time.monotonic() - t0
            if timeout is not None and t >= timeout:
                return None
            if t >= spin:
                time.sleep(sleep)

    def status(self):
        """'closed', 'replaced' (the path names another file, or none), 'gone'
        (the producer's pid no longer exists) or 'live'"""
        if self.closed():
            return "closed"
        try:
            st = os.stat(self.path)
            if (st.st_dev, st.st_ino) != (self._dev, self._ino):
                return "replaced"
        except OSError:
            return "replaced"
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return "gone"
        except PermissionError:
            pass
        return "live"

    def info(self):
        return {"path": self.path, "stage": self.stage, "version": VERSION, "slots": self.slots,
                "slot_size": self.slot_size, "slot_stride": self.stride, "pid": self.pid,
                "generation": self.generation, "tsc_hz": self.tsc_hz, "created_ns": self.created_ns,
                "write_seq": self.write_seq(), "drops": self.drops(), "closed": self.closed(),
                "next": self.next}

    def close(self):
        self._q.release()
        self._mm.close()


def _main(argv):
    import json
    usage = "usage: lcpipe_shm.py PATH [--oldest] [--count] [--max N] [--timeout S] [--sleep-us US] [--info]"
    path, oldest, count, mx, timeout, sleep_us, info = None, False, False, None, None, 0, False
    i = 0
    try:
        while i < len(argv):
            a = argv[i]
            if a == "--oldest":
                oldest = True
            elif a == "--count":
                count = True
            elif a == "--info":
                info = True
            elif a in ("--max", "--timeout", "--sleep-us"):
                i += 1
                v = argv[i]
                if a == "--max":
                    mx = int(v)
                elif a == "--timeout":
                    timeout = float(v)
                else:
                    sleep_us = int(v)
            elif a.startswith("-") or path is not None:
                raise ValueError(a)
            else:
                path = a
            i += 1
        if path is None:
            raise ValueError("no PATH")
    except (ValueError, IndexError):
        print(usage, file=sys.stderr)
        return 2
    try:
        r = Reader(path, oldest=oldest)
    except ShmError as e:
        print("lcpipe_shm: %s" % e, file=sys.stderr)
        return 1
    if info:
        print(json.dumps(r.info()))
        return 0
    end = "limit"
    out = sys.stdout
    try:
        while mx is None or r.received < mx:
            m = r.wait(timeout=timeout)
            if m is None:
                end = "timeout"
                break
            if not count:
                out.write("%d conn=%d flags=0x%x lost=%d dropped=%d len=%d %s\n" % (
                    m.seq, m.conn_id, m.flags, m.lost, m.dropped, len(m.data),
                    m.data.decode("utf-8", "backslashreplace")))
            if sleep_us:
                time.sleep(sleep_us / 1e6)
    except Closed:
        end = "closed"
    except (BrokenPipeError, KeyboardInterrupt):
        end = "interrupted"
    if count:
        s = r.stats()
        s["end"] = end
        print(json.dumps(s))
    else:
        print("# %s: received %d, overruns %d, lost %d (%s)" % (path, r.received, r.overruns, r.lost, end),
              file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
