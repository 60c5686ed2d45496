#!/usr/bin/python3
"""PyTorch's side of the training bench (scripts/bench-train).

torch_train.py DATA_DIR THREADS  ->  JSON on stdout

DATA_DIR holds what `tracescope-bench-train --export` saved: the guide's
model's initial weights (var-0..5.npy, Keras layout: kernel [in, out],
bias) and 20 Fashion-MNIST batches of 100 (x-K.npy f32 [100, 28, 28],
y-K.npy i64 [100]).  The same model (Flatten, Linear(784, 100), ReLU,
Linear(100, 100), ReLU, Linear(100, 10)) with the same weights, the same
loss (cross-entropy from logits, mean), Adam (lr 0.001, betas 0.9/0.999,
eps 1e-7) and the running accuracy, stepped eagerly and with the model
under torch.jit.trace, timed as bench-train.c times ours: the best of 9
runs of 100 steps after a warm-up of 25, eager and jit runs alternating.
"""
import json
import os
import sys
import time

import numpy as np
import torch

STEPS, REPEATS, WARMUP, N_BATCHES = 100, 9, 25, 20


def model_from(data_dir):
    w = [np.load(os.path.join(data_dir, f"var-{i}.npy")) for i in range(6)]
    layers = []
    for k in range(3):
        lin = torch.nn.Linear(w[2 * k].shape[0], w[2 * k].shape[1])
        with torch.no_grad():
            lin.weight.copy_(torch.from_numpy(w[2 * k].T.copy()))
            lin.bias.copy_(torch.from_numpy(w[2 * k + 1]))
        layers += [lin, torch.nn.ReLU()] if k < 2 else [lin]
    return torch.nn.Sequential(torch.nn.Flatten(), *layers)


def stepper(data_dir, jit):
    """A function running one training step on batch k, from a fresh model."""
    model = model_from(data_dir)
    batches = [(torch.from_numpy(np.load(os.path.join(data_dir, f"x-{k}.npy"))),
                torch.from_numpy(np.load(os.path.join(data_dir, f"y-{k}.npy"))))
               for k in range(N_BATCHES)]
    opt = torch.optim.Adam(model.parameters(), lr=0.001, betas=(0.9, 0.999), eps=1e-7)
    loss_fn = torch.nn.CrossEntropyLoss()
    run = torch.jit.trace(model, batches[0][0]) if jit else model
    acc = {"hits": torch.zeros(()), "count": torch.zeros(())}

    def step(k):
        x, y = batches[k % N_BATCHES]
        opt.zero_grad(set_to_none=True)
        logits = run(x)
        loss = loss_fn(logits, y)
        loss.backward()
        opt.step()
        with torch.no_grad():
            acc["hits"] += (logits.argmax(-1) == y).sum()
            acc["count"] += y.shape[0]
        return loss

    return step


def bench(data_dir):
    """Steps/s eagerly and under torch.jit.trace, runs alternating."""
    steps = [stepper(data_dir, False), stepper(data_dir, True)]
    k = [0, 0]
    best = [float("inf"), float("inf")]
    for mode in (0, 1):
        for _ in range(WARMUP):
            steps[mode](k[mode]); k[mode] += 1
    for _ in range(REPEATS):
        for mode in (0, 1):
            t0 = time.perf_counter()
            for _ in range(STEPS):
                steps[mode](k[mode]); k[mode] += 1
            best[mode] = min(best[mode], time.perf_counter() - t0)
    return STEPS / best[0], STEPS / best[1]


def main():
    data_dir, threads = sys.argv[1], int(sys.argv[2])
    torch.set_num_threads(threads)
    eager, jit = bench(data_dir)
    print(json.dumps({"threads": threads, "torch": torch.__version__,
                      "eager_steps_per_s": eager, "jit_steps_per_s": jit}))


if __name__ == "__main__":
    main()
