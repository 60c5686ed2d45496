#!/usr/bin/python3
"""PyTorch's side of the side-by-side benchmark (scripts/bench-peers).

torch_bench.py DATA_DIR ONNX_DIR THREADS,...  ->  JSON on stdout

DATA_DIR holds what tracescope-bench-export saved per workload (the seeds'
weights and inputs as .npy, and our output).  Each workload is built as a
torch module from those weights, checked against our output, and timed
eagerly and as torch.jit.trace at each thread count (torch.set_num_threads),
the same way as bench/bench-peers.c times ours: the fastest of 7 batches
after warm-up, each batch long enough to time.  Each module is exported to
ONNX_DIR/KEY.onnx with its inputs and our output in the layout the ONNX
model takes (ONNX_DIR/manifest.json), for bench/peers/ort_bench.mjs.
"""
import json
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

REPEATS, WARMUP, BATCH_S = 7, 2, 0.02


def fastest_per_call(fn):
    """Seconds per call: the fastest of REPEATS batches (as bench-peers.c)."""
    iters = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
        if time.perf_counter() - t0 >= BATCH_S / 4 or iters >= 1 << 20:
            break
        iters *= 2
    for _ in range(WARMUP):
        for _ in range(iters):
            fn()
    iters *= 4
    best = float("inf")
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
        best = min(best, time.perf_counter() - t0)
    return best / iters


class Power(torch.nn.Module):
    """power(x, n): n chained matmuls from the identity."""

    def __init__(self, n):
        super().__init__()
        self.n = n

    def forward(self, x):
        result = torch.eye(10, dtype=x.dtype, device=x.device)
        for _ in range(self.n):
            result = torch.matmul(x, result)
        return result


class Dense(torch.nn.Module):
    """Flatten, Dense layers (Keras kernels [in, out] as Linear weights
    [out, in]) and, before the last one, Dropout (inactive: eval mode)."""

    def __init__(self, kernels, biases):
        super().__init__()
        self.weights = torch.nn.ParameterList(
            [torch.nn.Parameter(torch.from_numpy(k.T.copy()), requires_grad=False) for k in kernels])
        self.biases = torch.nn.ParameterList(
            [torch.nn.Parameter(torch.from_numpy(b), requires_grad=False) for b in biases])
        self.dropout = torch.nn.Dropout(0.2)

    def forward(self, x):
        x = torch.flatten(x, 1)
        last = len(self.weights) - 1
        for i, (w, b) in enumerate(zip(self.weights, self.biases)):
            if i == last:
                x = self.dropout(x)
            x = F.linear(x, w, b)
            if i < last:
                x = F.relu(x)
        return x


class LSTMCell(torch.nn.Module):
    """Keras' LSTMCell with its weights: returns h'."""

    def __init__(self, kernel, recurrent, bias):
        super().__init__()
        self.kernel = torch.nn.Parameter(torch.from_numpy(kernel), requires_grad=False)
        self.recurrent = torch.nn.Parameter(torch.from_numpy(recurrent), requires_grad=False)
        self.bias = torch.nn.Parameter(torch.from_numpy(bias), requires_grad=False)

    def forward(self, x, h, c):
        z = torch.matmul(x, self.kernel) + torch.matmul(h, self.recurrent) + self.bias
        i, f, g, o = torch.chunk(z, 4, dim=1)
        c_next = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c_next)


class MSE(torch.nn.Module):
    """get_MSE on int32: the mean truncates, as tf.reduce_mean on integers."""

    def forward(self, y_true, y_pred):
        sq_diff = torch.pow(y_true - y_pred, 2)
        return torch.div(torch.sum(sq_diff), sq_diff.numel(), rounding_mode="trunc").to(torch.int32)


class Conv(torch.nn.Module):
    """Conv2D(100, 3), valid: NCHW, PyTorch's own layout (the kernel HWIO
    turned OIHW), so no transposes are timed."""

    def __init__(self, kernel, bias):
        super().__init__()
        self.weight = torch.nn.Parameter(
            torch.from_numpy(np.ascontiguousarray(kernel.transpose(3, 2, 0, 1))), requires_grad=False)
        self.bias = torch.nn.Parameter(torch.from_numpy(bias), requires_grad=False)

    def forward(self, x):
        return F.conv2d(x, self.weight, self.bias)


def nhwc_to_nchw(a):
    return np.ascontiguousarray(a.transpose(0, 3, 1, 2))


def dense_layers(v, names):
    return [v[f"{n}/kernel"] for n in names], [v[f"{n}/bias"] for n in names]


def build(w, v, args, expected):
    """The torch module for workload w, its inputs and the expected output,
    both in the module's layout."""
    key = w["key"]
    if key == "power":
        return Power(args[1]), [args[0]], expected
    if key == "dense64":
        return Dense(*dense_layers(v, [f"dense_{i}" for i in range(1, 102)])), args, expected
    if key == "dense128":
        return Dense(*dense_layers(v, ["dense_1", "dense_2"])), args, expected
    if key == "lstm":
        return LSTMCell(v["lstm_cell/kernel"], v["lstm_cell/recurrent_kernel"], v["lstm_cell/bias"]), args, expected
    if key == "mse":
        return MSE(), args, expected
    if key == "conv":
        return Conv(v["conv2d/kernel"], v["conv2d/bias"]), [nhwc_to_nchw(args[0])], nhwc_to_nchw(expected)
    raise ValueError(f"no torch model for workload '{key}'")


def max_abs_diff(out, expected):
    a = out.detach().numpy().astype(np.float64)
    return float(np.max(np.abs(a - expected.astype(np.float64)))) if a.size else 0.0


def bench_workload(data_dir, onnx_dir, key, threads):
    d = os.path.join(data_dir, key)
    with open(os.path.join(d, "workload.json")) as f:
        w = json.load(f)
    args = [np.load(os.path.join(d, a["npy"])) if "npy" in a else a["int"] for a in w["args"]]
    v = {name: np.load(os.path.join(d, file)) for name, file in w["vars"].items()}
    model, inputs, expected = build(w, v, args, np.load(os.path.join(d, w["output"])))
    model.eval()
    x = [torch.from_numpy(a) for a in inputs]
    result = {"label": w["label"], "threads": {}, "max_abs_ours": float(np.max(np.abs(expected)))}
    with torch.no_grad():
        result["max_abs_diff_eager"] = max_abs_diff(model(*x), expected)
        traced = torch.jit.trace(model, tuple(x))
        result["max_abs_diff_jit"] = max_abs_diff(traced(*x), expected)
        for n in threads:
            torch.set_num_threads(n)
            result["threads"][str(n)] = {
                "eager_us": fastest_per_call(lambda: model(*x)) * 1e6,
                "jit_us": fastest_per_call(lambda: traced(*x)) * 1e6,
            }
        names = [f"in{i}" for i in range(len(x))]
        path = os.path.join(onnx_dir, f"{key}.onnx")
        torch.onnx.export(model, tuple(x), path, input_names=names, output_names=["out"],
                          opset_version=13, do_constant_folding=True)
    files = []
    for name, a in zip(names, inputs):
        files.append({"name": name, "file": f"{key}.{name}.npy"})
        np.save(os.path.join(onnx_dir, files[-1]["file"]), a)
    np.save(os.path.join(onnx_dir, f"{key}.expected.npy"), expected)
    return result, {"label": w["label"], "model": f"{key}.onnx", "inputs": files,
                    "expected": f"{key}.expected.npy"}


def main():
    data_dir, onnx_dir, threads = sys.argv[1], sys.argv[2], [int(t) for t in sys.argv[3].split(",")]
    os.makedirs(onnx_dir, exist_ok=True)
    torch.set_num_interop_threads(1)
    report = {"torch": torch.__version__, "workloads": {}}
    manifest = {}
    for key in sorted(os.listdir(data_dir)):
        if not os.path.isfile(os.path.join(data_dir, key, "workload.json")):
            continue
        try:
            report["workloads"][key], manifest[key] = bench_workload(data_dir, onnx_dir, key, threads)
        except Exception as e:  # one workload failing leaves the others' numbers
            report["workloads"][key] = {"error": f"{type(e).__name__}: {e}"}
        print(f"torch_bench: {key} done", file=sys.stderr)
    with open(os.path.join(onnx_dir, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    json.dump(report, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
