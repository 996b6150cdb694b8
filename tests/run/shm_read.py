#!/usr/bin/python3
"""shm_read.py — tests/run/shm.sh's Python consumer: lcpipe_shm.Reader (the
installed pure-Python reader, from plugins/sink_shm) reading feedsim ticks from a
sink_shm ring, with the same checks and the same JSON line as shm_consume.c.

usage: shm_read.py MODULE_DIR PATH [--wait-file S] [--oldest] [--sleep-us N] [--timeout S]
Exit 0 read to the end; 1 error; 3 not a ring; 4 another layout version; 5 inconsistent.
"""
import errno
import json
import os
import sys
import time

sys.path.insert(0, sys.argv[1])
import lcpipe_shm  # noqa: E402


def main(args):
    path, wait_file, oldest, sleep_us, timeout = args[0], 0.0, False, 0, 30.0
    i = 1
    while i < len(args):
        a = args[i]
        if a == "--oldest":
            oldest = True
        elif a == "--wait-file":
            i += 1
            wait_file = float(args[i])
        elif a == "--sleep-us":
            i += 1
            sleep_us = int(args[i])
        elif a == "--timeout":
            i += 1
            timeout = float(args[i])
        else:
            print("usage: shm_read.py MODULE_DIR PATH [--wait-file S] [--oldest] [--sleep-us N] [--timeout S]",
                  file=sys.stderr)
            return 2
        i += 1
    t0 = time.monotonic()
    while True:
        try:
            r = lcpipe_shm.Reader(path, oldest=oldest)
            break
        except lcpipe_shm.ShmError as e:
            if e.errno == errno.ENOENT and time.monotonic() - t0 < wait_file:
                time.sleep(0.001)
                continue
            print("shm_read: %s" % e, file=sys.stderr)
            return {errno.EBADMSG: 3, errno.EPROTONOSUPPORT: 4, errno.EINVAL: 5}.get(e.errno, 1)
    first = r.next
    last = {}
    c = dict(ticks=0, bad=0, symbols=0, in_order=0, gaps=0, gap_msgs=0, seq_errors=0, first_not_one=0,
             dropped_sum=0, loss_flags=0)
    end = "closed"
    try:
        while True:
            m = r.wait(timeout=timeout)
            if m is None:
                end = "timeout"
                break
            c["dropped_sum"] += m.dropped
            c["loss_flags"] += (m.flags & lcpipe_shm.F_LOSS) != 0
            try:
                t = json.loads(m.data)
                key, n = (m.conn_id, t["s"]), t["n"]
                if not isinstance(n, int):
                    raise ValueError
            except (ValueError, KeyError, TypeError):
                c["bad"] += 1
                continue
            c["ticks"] += 1
            prev = last.get(key)
            if prev is None:
                c["symbols"] += 1
                c["first_not_one"] += n != 1
            elif n == prev + 1:
                c["in_order"] += 1
            elif n > prev + 1:
                c["gaps"] += 1
                c["gap_msgs"] += n - prev - 1
            else:
                c["seq_errors"] += 1
            last[key] = n
            if sleep_us:
                time.sleep(sleep_us / 1e6)
    except lcpipe_shm.Closed:
        pass
    out = dict(first=first, end=end, status=r.status(), write_seq=r.write_seq(), drops=r.drops())
    out.update(r.stats())
    out.update(c)
    print(json.dumps(out))
    r.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[2:]))
