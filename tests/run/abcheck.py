#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# tests/run/abcheck.py — checks on what `lcpipe ab` wrote (tests/run/ab.sh):
#
#   abcheck.py JSON SVG --a A.json --b B.json --runs N --retries R --tol T
#              [--metric ID]... [--metric-prefix P]... [--noisy-all]
#
# The JSON: both configs, N runs each, every run exited 0 with at most R + 1
# attempts, its noisy flag agreeing with its own gate record (drift beyond T on
# the last attempt) and with the counts; every --metric present in every run
# and in the summary (--metric-prefix: every metric whose id starts with P, at
# least one), whose medians and median/min/max of the per-pair ratios
# are recomputed here from the per-run values and must agree. --noisy-all: every
# run must have used all R + 1 attempts and be flagged noisy (a gate of 0 %).
# The SVG: well-formed XML (xml.etree), an <svg> root, every metric's label in
# its text, one dot (<circle>) per run value.
# Prints what it checked; exits 1 on the first failure.
import argparse
import json
import math
import statistics
import sys
import xml.etree.ElementTree as ET

SVG_NS = "{http://www.w3.org/2000/svg}"


def fail(msg):
    print("abcheck: FAIL: " + msg)
    sys.exit(1)


def close(x, y):
    return math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-12)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("json")
    ap.add_argument("svg")
    ap.add_argument("--a", required=True)
    ap.add_argument("--b", required=True)
    ap.add_argument("--runs", type=int, required=True)
    ap.add_argument("--retries", type=int, required=True)
    ap.add_argument("--tol", type=float, required=True)
    ap.add_argument("--metric", action="append", default=[])
    ap.add_argument("--metric-prefix", action="append", default=[])
    ap.add_argument("--noisy-all", action="store_true")
    o = ap.parse_args()

    try:
        with open(o.json) as f:
            d = json.load(f)
    except (OSError, ValueError) as e:
        fail("%s: %s" % (o.json, e))
    if d.get("tool") != "lcpipe ab":
        fail("tool is %r" % d.get("tool"))
    if d.get("runs_per_config") != o.runs:
        fail("runs_per_config %r, expected %d" % (d.get("runs_per_config"), o.runs))
    gate = d.get("noise_gate", {})
    if not close(gate.get("tolerance", -1), o.tol) or gate.get("max_retries") != o.retries:
        fail("noise_gate %r: expected tolerance %g, max_retries %d" % (gate, o.tol, o.retries))
    if not gate.get("calibration_ns", 0) > 0 or len(gate.get("calibration_samples_ns", [])) != 5:
        fail("noise_gate calibration missing: %r" % gate)
    if not math.isclose(gate["calibration_ns"], statistics.median(gate["calibration_samples_ns"])):
        fail("calibration_ns is not the median of its 5 samples")

    ids = [m.get("id") for m in d.get("metrics", [])]
    maybe_zero = set()  # --metric-prefix metrics: present and >= 0 (a pool's peak may be 0)
    for p in o.metric_prefix:
        got = [i for i in ids if i and i.startswith(p)]
        if not got:
            fail("no metric id starting with %s (have: %s)" % (p, ", ".join(ids)))
        o.metric += [i for i in got if i not in o.metric]
        maybe_zero.update(got)

    noisy_total = 0
    for side, conf in (("a", o.a), ("b", o.b)):
        s = d.get(side)
        if not isinstance(s, dict) or s.get("config") != conf:
            fail("%s.config is %r, expected %s" % (side, s and s.get("config"), conf))
        runs = s.get("runs", [])
        if len(runs) != o.runs:
            fail("%s: %d runs, expected %d" % (side, len(runs), o.runs))
        noisy = repeated = 0
        for i, r in enumerate(runs):
            where = "%s.runs[%d]" % (side, i)
            if r.get("index") != i + 1 or r.get("exit_status") != 0:
                fail("%s: index %r exit_status %r" % (where, r.get("index"), r.get("exit_status")))
            att = r.get("attempts", 0)
            if not 1 <= att <= o.retries + 1 or len(r.get("gate", [])) != att:
                fail("%s: %r attempts, %d gate records (retries %d)" % (where, att, len(r.get("gate", [])), o.retries))
            last = r["gate"][-1]
            for k in ("before", "after"):
                if not close(last[k + "_drift"], last[k + "_ns"] / gate["calibration_ns"] - 1):
                    fail("%s: %s_drift is not %s_ns / calibration - 1" % (where, k, k))
            drifted = abs(last["before_drift"]) > o.tol or abs(last["after_drift"]) > o.tol
            if r.get("noisy") != drifted:
                fail("%s: noisy %r but its last gate drifted %+.3f / %+.3f (limit %g)"
                     % (where, r.get("noisy"), last["before_drift"], last["after_drift"], o.tol))
            if drifted and att != o.retries + 1:
                fail("%s: kept noisy after %d attempts, retries %d" % (where, att, o.retries))
            for g in r["gate"][:-1]:
                if abs(g["before_drift"]) <= o.tol and abs(g["after_drift"]) <= o.tol:
                    fail("%s: an attempt with a quiet gate was repeated" % where)
            if o.noisy_all and (not r.get("noisy") or att != o.retries + 1):
                fail("%s: gate 0 %%: expected noisy after %d attempts, got noisy %r after %d"
                     % (where, o.retries + 1, r.get("noisy"), att))
            noisy += bool(r.get("noisy"))
            repeated += att > 1
            if not r.get("report_duration_s", 0) > 0:
                fail("%s: report_duration_s %r" % (where, r.get("report_duration_s")))
            for m in o.metric:
                v = r.get("metrics", {}).get(m)
                if not isinstance(v, (int, float)) or not (v >= 0 if m in maybe_zero else v > 0):
                    fail("%s: metric %s = %r, expected %s" % (where, m, v, ">= 0" if m in maybe_zero else "> 0"))
            ms = r.get("metrics", {})
            lat = [ms.get("lat_%s_ns.stats" % q) for q in ("p50", "p99", "p999")]
            if all(x is not None for x in lat) and not lat[0] <= lat[1] <= lat[2]:
                fail("%s: latency p50 %r p99 %r p99.9 %r out of order" % (where, *lat))
        if s.get("noisy_runs") != noisy or s.get("repeated_runs") != repeated:
            fail("%s: noisy_runs %r repeated_runs %r, the runs say %d and %d"
                 % (side, s.get("noisy_runs"), s.get("repeated_runs"), noisy, repeated))
        noisy_total += noisy
        print("ok:   %s: %s, %d runs, %d noisy, %d repeated" % (side, conf, len(runs), noisy, repeated))
    if d.get("noisy_runs") != noisy_total:
        fail("noisy_runs %r, the runs say %d" % (d.get("noisy_runs"), noisy_total))

    by_id = {m.get("id"): m for m in d.get("metrics", [])}
    for mid in o.metric:
        m = by_id.get(mid)
        if m is None:
            fail("metric %s not in the summary (have: %s)" % (mid, ", ".join(sorted(by_id))))
        va = [r["metrics"][mid] for r in d["a"]["runs"]]
        vb = [r["metrics"][mid] for r in d["b"]["runs"]]
        if m["a"]["values"] != va or m["b"]["values"] != vb:
            fail("%s: values differ from the runs'" % mid)
        if not close(m["a"]["median"], statistics.median(va)) or not close(m["b"]["median"], statistics.median(vb)):
            fail("%s: medians %r / %r, recomputed %r / %r"
                 % (mid, m["a"]["median"], m["b"]["median"], statistics.median(va), statistics.median(vb)))
        # B/A per pair; 0 and 0 count as 1, A = 0 with B > 0 has no ratio
        ratios = sorted(b / a if a else 1.0 for a, b in zip(va, vb) if a or not b)
        r = m["ratio_b_over_a"]
        if r["pairs"] != len(ratios):
            fail("%s: %r pairs, recomputed %d" % (mid, r["pairs"], len(ratios)))
        if ratios and (not close(r["median"], statistics.median(ratios))
                       or not close(r["min"], ratios[0]) or not close(r["max"], ratios[-1])):
            fail("%s: ratio %r, recomputed median %r of %r" % (mid, r, statistics.median(ratios), ratios))
        if mid.startswith("pool_peak_in_use.") and (m.get("sampled") is not True or m.get("verdict") != "not judged"
                                                    or "sampled" not in m.get("why", "")):
            fail("%s: a sampled peak must not be judged: %r" % (mid, m))
        if m["a"]["median"] == 0 and m["b"]["median"] == 0 and not m.get("sampled") and (m.get("verdict") != "not judged" or "0 in both" not in m.get("why", "")):
            fail("%s: 0 in both must not be judged: %r" % (mid, m))
        left = sum(1 for a, b in zip(va, vb) if a == 0 and b != 0)
        if r.get("pairs_left_out") != left:
            fail("%s: pairs_left_out %r, recomputed %d" % (mid, r.get("pairs_left_out"), left))
        if m.get("better") not in ("higher", "lower") or not m.get("label") or not m.get("unit"):
            fail("%s: label/unit/better missing: %r" % (mid, m))
        print("ok:   %s (%s): A %.6g, B %.6g, B/A %s" % (mid, m["label"], m["a"]["median"], m["b"]["median"],
              "%.4f [%.4f-%.4f]" % (r["median"], r["min"], r["max"]) if ratios else "none"))

    try:
        root = ET.parse(o.svg).getroot()
    except (OSError, ET.ParseError) as e:
        fail("%s: not well-formed XML: %s" % (o.svg, e))
    if root.tag != SVG_NS + "svg":
        fail("%s: root element is %s, not svg" % (o.svg, root.tag))
    text = " ".join("".join(t.itertext()) for t in root.iter(SVG_NS + "text"))
    for m in d["metrics"]:
        if m["label"] not in text:
            fail("%s: metric label %r not in the chart's text" % (o.svg, m["label"]))
    dots = sum(1 for _ in root.iter(SVG_NS + "circle"))
    want = sum(1 for m in d["metrics"] for s in ("a", "b") for v in m[s]["values"] if v is not None)
    if dots != want:
        fail("%s: %d dots, expected one per run value: %d" % (o.svg, dots, want))
    print("ok:   %s: well-formed SVG, %d metric rows named, %d dots" % (o.svg, len(d["metrics"]), dots))


main()
