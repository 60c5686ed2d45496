#!/usr/bin/python3
"""PyTorch's side of the GPU benchmark (bench/bench-gpu.c).

torch_gpu_bench.py DATA_DIR  ->  lines on stdout:
  row KEY EAGER_US GRAPH_US MAX_ABS_DIFF     (per workload)
  skipped: WHY                               (no torch, or torch without CUDA)

DATA_DIR holds what tracescope-bench-export saved (the seeds' weights,
inputs and our output).  Each workload is the module torch_bench.py builds,
moved to the GPU, timed eagerly and as a torch.cuda.CUDAGraph replay, each
call followed by torch.cuda.synchronize() as ours waits for the device:
the fastest of 7 batches after warm-up (torch_bench.fastest_per_call).
"""
import os
import sys

KEYS = ("power", "dense64")


def main():
    data_dir = sys.argv[1]
    try:
        import numpy as np
        import torch
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import torch_bench
    except ImportError as e:
        print(f"skipped: PyTorch or NumPy missing ({e})")
        return
    if not torch.cuda.is_available():
        print(f"skipped: torch {torch.__version__} has no CUDA device (torch.cuda.is_available() is False)")
        return
    import json
    dev = torch.device("cuda")
    for key in KEYS:
        d = os.path.join(data_dir, key)
        try:
            with open(os.path.join(d, "workload.json")) as f:
                w = json.load(f)
            args = [np.load(os.path.join(d, a["npy"])) if "npy" in a else a["int"] for a in w["args"]]
            v = {name: np.load(os.path.join(d, file)) for name, file in w["vars"].items()}
            model, inputs, expected = torch_bench.build(w, v, args, np.load(os.path.join(d, w["output"])))
            model = model.eval().to(dev)
            x = [torch.from_numpy(a).to(dev) for a in inputs]
            with torch.no_grad():
                out = model(*x)
                diff = float(np.max(np.abs(out.cpu().numpy().astype(np.float64) - expected)))

                def eager():
                    model(*x)
                    torch.cuda.synchronize()

                # CUDA Graph capture on a side stream after warm-up, as the
                # PyTorch docs show (torch.cuda.graphs)
                s = torch.cuda.Stream()
                s.wait_stream(torch.cuda.current_stream())
                with torch.cuda.stream(s):
                    for _ in range(3):
                        model(*x)
                torch.cuda.current_stream().wait_stream(s)
                g = torch.cuda.CUDAGraph()
                with torch.cuda.graph(g):
                    model(*x)

                def replay():
                    g.replay()
                    torch.cuda.synchronize()

                eager_us = torch_bench.fastest_per_call(eager) * 1e6
                graph_us = torch_bench.fastest_per_call(replay) * 1e6
            print(f"row {key} {eager_us:.2f} {graph_us:.2f} {diff:.3g}", flush=True)
        except Exception as e:  # one workload failing leaves the other's numbers
            print(f"skipped: {key}: {type(e).__name__}: {e}", flush=True)


if __name__ == "__main__":
    main()
