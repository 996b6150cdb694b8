"""The preamble of tls_lib.sh's checks (pycheck.py --with tls_view).

Runs in pycheck.py's namespace (A, J, check) and leaves there: rep (the
report A["rep"]), w (the ws stage's counters), log (lcpipe's log A["log"]),
whys (the failure reasons it logged for conn 0), tls_fails (the tls_fail_*
counters); prints the ws counters that are not 0 as an info line.
"""

import re

rep = J("rep")
w = rep.get("stages", {}).get("ws", {}).get("counters", {})
log = open(A["log"], errors="replace").read()
whys = re.findall(r"\[ws:ws\] warning: conn 0 \([^)]*\): (.*); reconnecting in", log)
tls_fails = {k: v for k, v in w.items() if k.startswith("tls_fail_")}
print("info: ws counters: " + ", ".join("%s %s" % (k, v) for k, v in sorted(w.items()) if v))
