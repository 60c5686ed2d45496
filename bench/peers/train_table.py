#!/usr/bin/python3
"""The table of scripts/bench-train, from the JSON files in DIR:

  ours-N.json   tracescope-bench-train at N threads
  torch-N.json  bench/peers/torch_train.py at N threads (absent: PyTorch missing)
  memory.json   tracescope-bench-train --memory
  cpu.txt, missing.txt

train_table.py DIR prints steps/s per thread count, the ratios, and the
issue's targets (graph >= 2x PyTorch eager and >= 1.3x our eager at each
thread count; memory flat over 10,000 steps), each ok or missed.
Standard library only.
"""
import json
import os
import sys

FLAT_KB = 2048  # RSS growth over 10,000 steps still called flat


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def fmt(v, suffix=""):
    return "n/a" if v is None else f"{v:.1f}{suffix}" if suffix == "" else f"{v:.2f}{suffix}"


def main():
    d = sys.argv[1]
    cpu = open(os.path.join(d, "cpu.txt")).read().strip() if os.path.exists(os.path.join(d, "cpu.txt")) else "?"
    print(f"Training step of the guide's model (batch 100, Adam), steps/s, higher is better — {cpu}")
    head = ["threads", "our eager", "our graph", "torch eager", "jit.trace",
            "graph/torch eager", "graph/our eager"]
    print("  " + "".join(f"{h:>18}" for h in head))
    targets = []
    for n in (1, 2):
        ours = load(os.path.join(d, f"ours-{n}.json")) or {}
        torch = load(os.path.join(d, f"torch-{n}.json")) or {}
        e, g = ours.get("eager_steps_per_s"), ours.get("graph_steps_per_s")
        te, tj = torch.get("eager_steps_per_s"), torch.get("jit_steps_per_s")
        r_torch = g / te if g and te else None
        r_ours = g / e if g and e else None
        row = [str(n), fmt(e), fmt(g), fmt(te), fmt(tj), fmt(r_torch, "x"), fmt(r_ours, "x")]
        print("  " + "".join(f"{c:>18}" for c in row))
        targets.append((f"{n} thread(s): graph >= 2x PyTorch eager", r_torch, 2.0))
        targets.append((f"{n} thread(s): graph >= 1.3x our eager", r_ours, 1.3))
    mem = load(os.path.join(d, "memory.json"))
    if mem:
        growth = mem["rss_kb_end"] - mem["rss_kb_100"]
        live = mem["live_bytes_end"] - mem["live_bytes_100"]
        print(f"Memory over {mem['steps']} graph steps: RSS {mem['rss_kb_100'] / 1024:.1f} MB after 100, "
              f"{mem['rss_kb_end'] / 1024:.1f} MB at the end ({growth:+d} KB); "
              f"engine's live CPU bytes {mem['live_bytes_100']} -> {mem['live_bytes_end']} ({live:+d})")
    print("Targets:")
    for name, value, want in targets:
        if value is None:
            print(f"  {name}: n/a")
        else:
            print(f"  {name}: {value:.2f}x — {'ok' if value >= want else f'MISSED (by {want / value:.2f}x)'}")
    if mem:
        flat = growth <= FLAT_KB and live <= 0
        print(f"  memory flat over {mem['steps']} steps (RSS growth <= {FLAT_KB} KB, live bytes not growing): "
              f"{'ok' if flat else 'MISSED'}")
    if os.path.exists(os.path.join(d, "missing.txt")):
        for line in open(os.path.join(d, "missing.txt")):
            print(f"  not measured: {line.strip()}")


if __name__ == "__main__":
    main()
