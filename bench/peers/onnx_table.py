"""onnx_table.py — the table of scripts/bench-onnx.

    python3 onnx_table.py RESULTS_DIR

Reads RESULTS_DIR/models.tsv and the ours-KEY-N.json / ort-KEY-N.json
files beside it; prints per model and thread count our median ms per call,
ONNX Runtime's, the ratio, whether the outputs agree and the target
(ours ≤ 1.0× ONNX Runtime's time): ok or MISSED.  Then the machine and
what was left out, and why."""
import json
import os
import re
import sys

TARGET = 1.0
THREADS = (1, 2)


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def main():
    results = sys.argv[1]
    rows = []
    with open(os.path.join(results, "models.tsv")) as f:
        for line in f:
            key, label = line.rstrip("\n").split("\t")[:2]
            for n in THREADS:
                stem = re.sub(r"[^A-Za-z0-9_-]", "_", key)
                ours = load(os.path.join(results, f"ours-{stem}-{n}.json"))
                ort = load(os.path.join(results, f"ort-{stem}-{n}.json"))
                ours_ms = ours["median_us"] / 1e3 if ours else None
                ort_ms = ort["median_us"] / 1e3 if ort else None
                ratio = ours_ms / ort_ms if ours_ms and ort_ms else None
                agree = "-" if not ort else ("yes" if ort["agrees"] else f"NO ({ort['max_abs_diff']:.2g})")
                target = "-" if ratio is None else ("ok" if ratio <= TARGET else "MISSED")
                rows.append((label, str(n), f"{ours_ms:.4g}" if ours_ms else "failed",
                             f"{ort_ms:.4g}" if ort_ms else "-",
                             f"{ratio:.2f}x" if ratio else "-", agree, target))
    head = ("model", "threads", "ours ms", "ORT ms", "ours/ORT", "outputs agree", f"≤ {TARGET:.1f}x")
    widths = [max(len(r[i]) for r in rows + [head]) for i in range(len(head))]
    fmt = "  ".join(f"{{:{'<' if i == 0 else '>'}{w}}}" for i, w in enumerate(widths))
    print("ONNX models end to end: Tracescope graph mode against ONNX Runtime (median ms per call)")
    print(fmt.format(*head))
    for r in rows:
        print(fmt.format(*r))
    compared = sum(r[-1] != "-" for r in rows)
    missed = sum(r[-1] == "MISSED" for r in rows)
    disagree = sum(r[5].startswith("NO") for r in rows)
    print(f"target missed on {missed} of {compared} rows compared ({len(rows)} in all); "
          f"outputs disagree on {disagree}")
    for name in ("machine.txt", "missing.txt"):
        path = os.path.join(results, name)
        if os.path.exists(path):
            with open(path) as f:
                for line in f:
                    print(("machine: " if name == "machine.txt" else "left out: ") + line.rstrip())
    ort = next((load(os.path.join(results, p)) for p in sorted(os.listdir(results)) if p.startswith("ort-")), None)
    if ort:
        print(f"ONNX Runtime {ort.get('onnxruntime')} (onnxruntime-node)")


if __name__ == "__main__":
    main()
