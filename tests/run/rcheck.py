#!/usr/bin/python3
"""rcheck.py — assertions on an lcpipe --report JSON file, for tests/run/*.sh.

usage: rcheck.py REPORT [-D NAME=VALUE]... [--dump] EXPR...

Each EXPR is a Python expression evaluated against the report; it must be true.
For a comparison (a == b, a > b, a <= b < c, ...) every operand's value is printed,
so a failure says what was expected and what was seen. Names available:

  r                 the report (dict)
  st(S, K)          r["stages"][S][K]               e.g. st("sink", "in")
  ctr(S, C)         r["stages"][S]["counters"][C]   e.g. ctr("gen", "out.drop_ring_full")
  drops(S)          r["stages"][S]["drops"]
  total_drops()     sum of every stage's drops
  rings             r["rings"] (list)
  ring(TEXT)        the ring whose "link" contains TEXT (error if not exactly one)
  in_use            sum of mempools[].in_use
  mempools          r["mempools"]
  stages            r["stages"].keys() as a sorted list
  -D NAME=VALUE     NAME bound to VALUE (int if it parses as one, else string)

Exit 0 if every EXPR holds, 1 if one does not, 2 on a usage or report error.
--dump prints a short table of the report first (stages, rings, mempools).
"""
import ast
import json
import sys


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        print("rcheck: cannot read report %s: %s" % (path, e))
        sys.exit(2)


def dump(r):
    print("report: stop_reason=%s drained=%s leaked_objects=%s" %
          (r.get("stop_reason"), r.get("drained"), r.get("leaked_objects")))
    for name, s in sorted(r.get("stages", {}).items()):
        nz = {k: v for k, v in s.get("counters", {}).items() if v}
        print("  stage %-10s %-12s lcore %s in %s out %s drops %s  %s" %
              (name, s.get("plugin"), s.get("lcore"), s.get("in"), s.get("out"),
               s.get("drops"), json.dumps(nz, sort_keys=True)))
    for g in r.get("rings", []):
        print("  ring  %s size %s high_water %s count %s" %
              (g.get("link"), g.get("size"), g.get("high_water"), g.get("count")))
    for m in r.get("mempools", []):
        print("  mempool %s size %s in_use %s" % (m.get("name"), m.get("size"), m.get("in_use")))


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    r = load(argv[1])
    names = {}
    exprs = []
    want_dump = False
    args = argv[2:]
    i = 0
    while i < len(args):
        a = args[i]
        if a == "-D":
            k, _, v = args[i + 1].partition("=")
            try:
                names[k] = int(v)
            except ValueError:
                names[k] = v
            i += 2
            continue
        if a == "--dump":
            want_dump = True
        else:
            exprs.append(a)
        i += 1

    stages_ = r.get("stages", {})

    def st(s, k):
        if s not in stages_:
            raise KeyError("no stage %r in the report (stages: %s)" % (s, ", ".join(sorted(stages_))))
        return stages_[s][k]

    def ctr(s, c):
        cs = st(s, "counters")
        if c not in cs:
            raise KeyError("stage %r has no counter %r (counters: %s)" % (s, c, ", ".join(sorted(cs))))
        return cs[c]

    def hist(s, h):
        hs = st(s, "histograms") if "histograms" in stages_.get(s, {}) else {}
        if h not in hs:
            raise KeyError("stage %r has no histogram %r (histograms: %s)" % (s, h, ", ".join(sorted(hs))))
        return hs[h]

    def ring(text):
        m = [g for g in r.get("rings", []) if text in g.get("link", "")]
        if len(m) != 1:
            raise KeyError("%d rings match %r (rings: %s)" %
                           (len(m), text, [g.get("link") for g in r.get("rings", [])]))
        return m[0]

    env = {
        "r": r, "st": st, "ctr": ctr, "hist": hist, "ring": ring,
        "drops": lambda s: st(s, "drops"),
        "total_drops": lambda: sum(s["drops"] for s in stages_.values()),
        "rings": r.get("rings", []),
        "mempools": r.get("mempools", []),
        "in_use": sum(m.get("in_use", 0) for m in r.get("mempools", [])),
        "stages": sorted(stages_),
    }
    env.update(names)
    if want_dump:
        dump(r)
    failed = 0
    for e in exprs:
        try:
            tree = ast.parse(e, mode="eval")
            ok = eval(compile(tree, "<expr>", "eval"), env)
            detail = ""
            if isinstance(tree.body, ast.Compare):
                parts = [tree.body.left] + list(tree.body.comparators)
                vals = []
                for p in parts:
                    src = ast.get_source_segment(e, p)
                    v = eval(compile(ast.Expression(p), "<expr>", "eval"), env)
                    if src != repr(v):
                        vals.append("%s = %r" % (src, v))
                detail = "   [" + "; ".join(vals) + "]" if vals else ""
        except Exception as ex:  # a missing key is a failure with its reason
            ok, detail = False, "   [error: %s]" % ex
        print("%s %s%s" % ("ok:  " if ok else "FAIL:", e, detail))
        if not ok:
            failed += 1
    if failed and not want_dump:
        dump(r)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
