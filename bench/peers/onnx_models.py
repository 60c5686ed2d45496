"""onnx_models.py — the models of scripts/bench-onnx, made by torch.onnx.export.

    python3 onnx_models.py OUT_DIR   ->  OUT_DIR/KEY/{model.onnx,input_I.npy}, OUT_DIR/models.tsv

Each model in eval mode with fixed seeded weights and inputs, exported at
opset 17 with constant folding (as a user would export it).  models.tsv
has a line per model: key, label, the model's path and its input files
in the model's input order, tab-separated."""
import os
import sys

import numpy as np
import torch
from torch import nn


class Mlp(nn.Module):
    """The guide's classifier: Dense(128, relu) -> Dense(10) on 784 features."""

    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Flatten(), nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10))

    def forward(self, x):
        return self.net(x)


class SmallCnn(nn.Module):
    """Two conv/batchnorm/relu/maxpool blocks and a linear head on 32x32 RGB."""

    def __init__(self):
        super().__init__()

        def block(cin, cout):
            return [nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU(), nn.MaxPool2d(2)]

        self.net = nn.Sequential(*block(3, 16), *block(16, 32), nn.Flatten(), nn.Linear(32 * 8 * 8, 10))

    def forward(self, x):
        return self.net(x)


class Lstm(nn.Module):
    """One LSTM layer over a sequence, then a linear head on every step."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(32, 64, batch_first=True)
        self.head = nn.Linear(64, 8)

    def forward(self, x):
        y, _ = self.lstm(x)
        return self.head(y)


class LstmState(nn.Module):
    """Lstm with its initial state given: no Shape/Expand to make zeros."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(32, 64, batch_first=True)
        self.head = nn.Linear(64, 8)

    def forward(self, x, h0, c0):
        y, _ = self.lstm(x, (h0, c0))
        return self.head(y)


class Encoder(nn.Module):
    """One transformer encoder layer (4 heads, d_model 64, post-norm)."""

    def __init__(self):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(64, 4, dim_feedforward=256, dropout=0.0, batch_first=True)

    def forward(self, x):
        return self.layer(x)


class FixedEncoder(nn.Module):
    """Encoder's computation written out with fixed shapes (reshapes by
    constants, not by Shape ops): post-norm self-attention, 4 heads, and a
    relu feed-forward."""

    def __init__(self, b=4, t=32, d=64, h=4, ff=256):
        super().__init__()
        self.b, self.t, self.d, self.h = b, t, d, h
        self.qkv = nn.Linear(d, 3 * d)
        self.out = nn.Linear(d, d)
        self.norm1, self.norm2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.ff = nn.Sequential(nn.Linear(d, ff), nn.ReLU(), nn.Linear(ff, d))

    def forward(self, x):
        b, t, d, h = self.b, self.t, self.d, self.h
        q, k, v = self.qkv(x).reshape(b, t, 3, h, d // h).permute(2, 0, 3, 1, 4).unbind(0)
        a = torch.softmax(q @ k.transpose(-1, -2) * (d // h) ** -0.5, dim=-1) @ v
        x = self.norm1(x + self.out(a.transpose(1, 2).reshape(b, t, d)))
        return self.norm2(x + self.ff(x))


# key: (label, model class, input shapes)
MODELS = {
    "mlp": ("MLP 784-128-10 b=60", Mlp, [(60, 28, 28)]),
    "cnn": ("CNN 2x(conv3x3+bn+relu+pool) b=8 32x32", SmallCnn, [(8, 3, 32, 32)]),
    "lstm": ("nn.LSTM(32->64)+Linear b=8 t=16", Lstm, [(8, 16, 32)]),
    "lstm_state": ("nn.LSTM(32->64)+Linear, h0/c0 given", LstmState, [(8, 16, 32), (1, 8, 64), (1, 8, 64)]),
    "encoder": ("nn.TransformerEncoderLayer d=64 h=4 b=4 t=32", Encoder, [(4, 32, 64)]),
    "encoder_fixed": ("encoder layer, fixed reshapes d=64 h=4 b=4 t=32", FixedEncoder, [(4, 32, 64)]),
}


def export(out, key, label, cls, shapes):
    torch.manual_seed(0)
    model = cls().eval()
    for m in model.modules():  # batchnorm statistics that are not the identity
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 1.5)
    rng = np.random.default_rng(0)
    xs = [torch.from_numpy(rng.standard_normal(s).astype(np.float32)) for s in shapes]
    folder = os.path.join(out, key)
    os.makedirs(folder, exist_ok=True)
    # with autograd on: in eval mode under no_grad, TransformerEncoderLayer
    # takes a fused fast path that torch.onnx cannot export
    torch.onnx.export(model, tuple(xs), os.path.join(folder, "model.onnx"), opset_version=17,
                      do_constant_folding=True, input_names=[f"x{i}" for i in range(len(xs))],
                      output_names=["y"])
    inputs = [os.path.join(folder, f"input_{i}.npy") for i in range(len(xs))]
    for path, x in zip(inputs, xs):
        np.save(path, x.numpy())
    return [key, label, os.path.join(folder, "model.onnx"), " ".join(inputs)]


def main():
    out = sys.argv[1]
    with open(os.path.join(out, "models.tsv"), "w") as f:
        for key, (label, cls, shapes) in MODELS.items():
            try:
                print("\t".join(export(out, key, label, cls, shapes)), file=f)
            except Exception as e:  # one failing export leaves the others
                print(f"onnx_models: {key}: export failed: {e}", file=sys.stderr)


if __name__ == "__main__":
    main()
