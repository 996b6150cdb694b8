"""Run the Python assertions of one check of the kernel suites.

Used by tcp_lib.sh's pycheck (see there) as

    pycheck.py [--with NAME]... [NAME=VALUE]... <<'PY'
    check(...)
    PY

The assertions come on stdin and run in this module's namespace, where they
find:

    A         the NAME=VALUE arguments, a dict of strings
    J(name)   the JSON file named by A[name]; {} and a failed check when it
              cannot be read
    conn0(r)  a tcp_app result's first connection, or NOCONN, whose numbers
              are all -1, so that checks fail without an exception
    check(cond, msg[, detail])
              prints "ok: msg" or "FAIL: msg: detail"; returns cond
    kernel_got_file(p, size, sha)
              the checks of a tcp_peer.py serve-recv --conns 1 result p that
              got a whole file

--with NAME runs the file NAME.py of this folder in the same namespace, after
A is filled and before the assertions: the preamble a group of checks shares
(tls_view.py for tls_lib.sh's).

Exits 1 when a check failed, and with Python's traceback and status when the
assertions raise. This file exists so that the Python is not held in a quoted
shell string, which one apostrophe cuts short (tests/unit/scripts_parse.sh).
"""

import json
import os
import sys

A = {}
BAD = []
NOCONN = {
    "user": -1, "conn": -1, "peer": "", "lport": -1, "bytes_in": -1, "sha256_in": "",
    "bytes_out": -1, "send_done": False, "last_reason": -1,
    "events": dict.fromkeys(["connected", "accepted", "peer_closed", "closed", "reset",
                             "timeout", "error"], -1),
}


def check(cond, msg, detail=None):
    if cond:
        print("ok: " + msg)
    else:
        BAD.append(msg)
        print("FAIL: " + msg + ("" if detail is None else ": " + str(detail)[:2000]))
    return cond


def J(name):
    try:
        with open(A[name]) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        check(False, "read %s" % A[name], e)
        return {}


def conn0(r):
    cs = r.get("connections") or []
    return cs[0] if cs else NOCONN


def kernel_got_file(p, size, sha):
    ks = p.get("conns") or []
    check(len(ks) == 1, "the kernel accepted one connection", p)
    k = ks[0] if ks else {}
    check(k.get("eof") is True, "the kernel read to EOF (our FIN)", k)
    check(k.get("bytes") == size, "the kernel received %d bytes" % size, k.get("bytes"))
    check(k.get("sha256") == sha, "sha256 of what the kernel received == that of the file",
          k.get("sha256"))
    return k


def _run(argv, code):
    here = os.path.dirname(os.path.abspath(__file__))
    ns = globals()
    pre = []
    args = iter(argv)
    for a in args:
        if a == "--with":
            pre.append(os.path.join(here, next(args) + ".py"))
        elif "=" in a:
            k, v = a.split("=", 1)
            A[k] = v
        else:
            sys.exit("pycheck.py: %r is neither --with NAME nor NAME=VALUE" % a)
    for path in pre:
        with open(path) as f:
            exec(compile(f.read(), path, "exec"), ns)
    exec(compile(code, "<the check's assertions>", "exec"), ns)
    return 1 if BAD else 0


if __name__ == "__main__":
    sys.exit(_run(sys.argv[1:], sys.stdin.read()))
