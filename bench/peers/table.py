#!/usr/bin/python3
"""The side-by-side table of scripts/bench-peers, from the JSON files in DIR:

  ours-N.json  tracescope-bench-peers at N threads (one per thread count)
  torch-N.json bench/peers/torch_bench.py at N threads (absent: PyTorch missing)
  ort.json     bench/peers/ort_bench.mjs on torch_bench.py's exports (absent: ONNX Runtime missing)
  ort-ours.json the same on the models tracescope-bench-export wrote with
               ts_concrete_save_onnx (column "ORT ours": ONNX Runtime on our export)
  cpu.txt      the CPU, as lscpu names it
  missing.txt  one line per peer that could not run, saying why

table.py DIR prints, per thread count and workload, µs per call and the
ratios, then the issue's targets each with ok or by how much it was missed.
Standard library only: it runs where numpy and torch are not installed.
"""
import glob
import json
import os
import re
import sys

COLUMNS = ["our eager", "our graph", "torch eager", "jit.trace", "ORT", "ORT ours", "GEMM floor",
           "graph/best", "graph/ORT", "g/ORT ours", "eager/graph"]


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def fmt(v, ratio=False):
    if v is None:
        return "n/a"
    return f"{v:.2f}x" if ratio else (f"{v:.1f}" if v >= 10 else f"{v:.2f}")


def ratio(a, b):
    return a / b if a is not None and b else None


def merge(a, b):
    """Two torch_bench.py reports (one thread count each) as one."""
    if not a or not b:
        return a or b
    for key, w in b["workloads"].items():
        into = a["workloads"].setdefault(key, w)
        if into is not w and "threads" in w:
            into.setdefault("threads", {}).update(w["threads"])
    return a


class Results:
    def __init__(self, d):
        self.ours = {}
        for path in glob.glob(os.path.join(d, "ours-*.json")):
            n = re.search(r"ours-(\d+)\.json$", path)
            data = load(path)
            if n and data:
                self.ours[int(n.group(1))] = data
        self.torch = None
        for path in sorted(glob.glob(os.path.join(d, "torch-*.json"))):
            self.torch = merge(self.torch, load(path))
        self.ort = load(os.path.join(d, "ort.json"))
        self.ort_ours = load(os.path.join(d, "ort-ours.json"))

    def keys(self):
        first = self.ours[min(self.ours)]
        return list(first["workloads"])

    def row(self, key, n):
        """The numbers of one workload at n threads (None where missing)."""
        ours = self.ours[n]["workloads"].get(key, {})
        r = {"label": ours.get("label", key), "eager": ours.get("eager_us"),
             "graph": ours.get("graph_us"), "floor": ours.get("floor_us"),
             "torch": None, "jit": None, "ort": None}
        t = (self.torch or {}).get("workloads", {}).get(key, {}).get("threads", {}).get(str(n), {})
        r["torch"], r["jit"] = t.get("eager_us"), t.get("jit_us")
        o = (self.ort or {}).get("workloads", {}).get(key, {}).get("threads", {}).get(str(n), {})
        r["ort"] = o.get("native_us", o.get("run_us"))
        o = (self.ort_ours or {}).get("workloads", {}).get(key, {}).get("threads", {}).get(str(n), {})
        r["ort_ours"] = o.get("native_us", o.get("run_us"))
        peers = [v for v in (r["torch"], r["jit"], r["ort"]) if v is not None]
        r["best_peer"] = min(peers) if peers else None
        return r


def print_table(res, n):
    print(f"\n{n} thread{'s' if n > 1 else ''} (µs per call, fastest of "
          f"{res.ours[n].get('repeats', 7)} batches; graph/best: our graph ÷ the best peer):")
    w = 28
    print(f"  {'workload':<{w}}" + "".join(f"{c:>12}" for c in COLUMNS))
    for key in res.keys():
        r = res.row(key, n)
        cells = [fmt(r[k]) for k in ("eager", "graph", "torch", "jit", "ort", "ort_ours", "floor")]
        cells += [fmt(ratio(r["graph"], r["best_peer"]), True), fmt(ratio(r["graph"], r["ort"]), True),
                  fmt(ratio(r["graph"], r["ort_ours"]), True), fmt(ratio(r["eager"], r["graph"]), True)]
        print(f"  {r['label']:<{w}}" + "".join(f"{c:>12}" for c in cells))


def print_checks(res):
    """Whether the peers ran the same model: their largest difference from our output."""
    print("\nSame model? max |peer - ours| over the output (our largest |value| beside it):")
    for key in res.keys():
        t = (res.torch or {}).get("workloads", {}).get(key, {})
        o = (res.ort or {}).get("workloads", {}).get(key, {})
        oo = (res.ort_ours or {}).get("workloads", {}).get(key, {})
        parts = []
        if res.torch:
            parts.append(f"torch {t['max_abs_diff_eager']:.2g}, jit {t['max_abs_diff_jit']:.2g}"
                         if "max_abs_diff_eager" in t else f"torch: {t.get('error', 'no result')}")
        if res.ort:
            parts.append(f"ORT {o['max_abs_diff']:.2g}" if "max_abs_diff" in o
                         else f"ORT: {o.get('error', 'no result')}")
        if res.ort_ours:
            parts.append(f"ORT on our export {oo['max_abs_diff']:.2g}" if "max_abs_diff" in oo
                         else f"ORT on our export: {oo.get('error', 'no result')}")
        if "max_abs_ours" in t:
            parts.append(f"(ours up to {t['max_abs_ours']:.3g})")
        label = res.row(key, min(res.ours))["label"]
        print(f"  {label:<28} {'; '.join(parts) if parts else 'no peer ran'}")


class Targets:
    def __init__(self):
        self.lines = []

    def check(self, what, value, op, target):
        if value is None:
            self.lines.append(f"  n/a     {what}: not measured")
            return
        ok = value <= target if op == "<=" else value >= target
        miss = value / target - 1 if op == "<=" else target / value - 1
        verdict = "ok" if ok else f"missed by {miss * 100:.0f}%"
        self.lines.append(f"  {'ok' if ok else 'MISSED':<7} {what}: {value:.2f} (target {op} {target})"
                          + ("" if ok else f": {verdict}"))


def print_targets(res):
    t = Targets()
    for n in sorted(res.ours):
        tag = f"[{n}T]"
        for key in ("dense64", "dense128", "conv"):
            r = res.row(key, n)
            t.check(f"{tag} {r['label']}: graph / ORT", ratio(r["graph"], r["ort"]), "<=", 0.8)
        for key in ("power", "lstm", "mse"):
            r = res.row(key, n)
            t.check(f"{tag} {r['label']}: graph / best peer", ratio(r["graph"], r["best_peer"]), "<=", 0.5)
        for key in ("dense64", "lstm"):
            r = res.row(key, n)
            t.check(f"{tag} {r['label']}: eager / graph", ratio(r["eager"], r["graph"]), ">=", 1.3)
        for key in res.keys():
            r = res.row(key, n)
            t.check(f"{tag} {r['label']}: eager / graph (never slower)", ratio(r["eager"], r["graph"]), ">=", 1.0)
        for key in ("dense64", "dense128", "conv"):
            r = res.row(key, n)
            t.check(f"{tag} {r['label']}: graph / GEMM floor", ratio(r["graph"], r["floor"]), "<=", 1.25)
    if 1 in res.ours and 2 in res.ours:
        for key in ("conv", "dense64"):
            one, two = res.row(key, 1), res.row(key, 2)
            t.check(f"{one['label']}: graph 1 thread / 2 threads", ratio(one["graph"], two["graph"]), ">=", 1.6)
    tp = res.ours[min(res.ours)].get("trace_plan", {})
    t.check("trace + optimize + plan of sequential_model, ms",
            tp["us"] / 1e3 if tp.get("us") is not None else None, "<=", 2.0)
    print("\nTargets (issue 14):")
    print("\n".join(t.lines))


def main():
    d = sys.argv[1]
    res = Results(d)
    if not res.ours:
        sys.exit(f"table.py: no ours-N.json in {d}")
    first = res.ours[min(res.ours)]
    cpu = open(os.path.join(d, "cpu.txt")).read().strip() if os.path.exists(os.path.join(d, "cpu.txt")) else "?"
    print("Side by side: Tracescope against PyTorch and ONNX Runtime on the seed workloads")
    print(f"  CPU: {first.get('cpu', cpu)}, {os.cpu_count()} cores")
    print(f"  BLAS: {first.get('blas', 'OpenBLAS core ' + first.get('openblas_core', '?'))}")
    if first.get("kernels"):
        print("  Kernels the engine chose (at 1 thread, by timing each candidate when a plan meets a shape):")
        for line in first["kernels"]:
            print(f"    {line}")
    print(f"  PyTorch: {res.torch['torch'] if res.torch else 'missing'};"
          f" ONNX Runtime: {(res.ort or res.ort_ours or {}).get('onnxruntime') or 'missing'}"
          " (ORT timed through its binding's synchronous run)")
    missing = os.path.join(d, "missing.txt")
    if os.path.exists(missing):
        for line in open(missing):
            print(f"  missing: {line.strip()}")
    for n in sorted(res.ours):
        print_table(res, n)
    print("\nGEMM floor: the workload's GEMMs alone, each shape on the fastest of OpenBLAS and our tiles, in the same run:")
    for key, w in first["workloads"].items():
        if w.get("gemms"):
            print(f"  {w['label']:<28} {w['gemms']}")
    print_checks(res)
    tp = first.get("trace_plan", {})
    peak = tp.get("peak_plan_bytes")
    print(f"\nsequential_model: trace + optimize + plan {fmt(tp.get('us'))} µs"
          f" ({tp.get('nodes', '?')} traced nodes; median over fresh functions);"
          f" peak plan memory {'n/a' if peak is None else f'{peak / 1024:.1f} KiB'}")
    print_targets(res)


if __name__ == "__main__":
    main()
