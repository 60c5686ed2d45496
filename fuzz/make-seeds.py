#!/usr/bin/env python3
"""Writes the hand-made seed files of fuzz/corpus/ (run from the repo root).

The corpora also hold inputs the fuzzers found (named crash-*, timeout-*,
leak-* or found-*); this script only (re)writes the seed-* files."""
import os
import struct

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def put(target, name, data):
    os.makedirs(os.path.join(ROOT, target), exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(ROOT, target, "seed-" + name), "wb") as f:
        f.write(data)


# ---- .npy ---------------------------------------------------------------------
def npy(descr, shape, payload, version=1, fortran=False, pad=True):
    shape_text = "(" + "".join("%d, " % d for d in shape)[:-2] + ("," if len(shape) == 1 else "") + ")"
    if not shape:
        shape_text = "()"
    header = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (
        descr, "True" if fortran else "False", shape_text)
    len_size = 2 if version == 1 else 4
    total = 6 + 2 + len_size + len(header) + 1
    if pad:
        header += " " * ((64 - total % 64) % 64)
    header += "\n"
    head = b"\x93NUMPY" + bytes([version, 0])
    head += struct.pack("<H" if version == 1 else "<I", len(header))
    return head + header.encode("latin1" if version != 3 else "utf8") + payload


def values(fmt, n, start=1):
    return b"".join(struct.pack(fmt, (start + i) % 256 if fmt[-1] in "B?" else start + i) for i in range(n))


for code, fmt in [("f4", "f"), ("f8", "d"), ("i4", "i"), ("i8", "q"), ("u1", "B")]:
    for order in "<>":
        f = (order if fmt != "B" else "") + fmt
        put("fuzz-npy", "%s%s-2x3" % ("le" if order == "<" else "be", code),
            npy(("|" if code == "u1" else order) + code, (2, 3), values(f, 6)))
put("fuzz-npy", "b1-4", npy("|b1", (4,), bytes([0, 1, 2, 255])))
put("fuzz-npy", "f4-scalar", npy("<f4", (), struct.pack("<f", 2.5)))
put("fuzz-npy", "f4-empty", npy("<f4", (0, 3), b""))
put("fuzz-npy", "f8-v2", npy("<f8", (3,), values("<d", 3), version=2))
put("fuzz-npy", "i4-v3", npy("<i4", (2, 2), values("<i", 4), version=3))
put("fuzz-npy", "i8-fortran", npy("<i8", (2, 3, 2), values("<q", 12), fortran=True))
put("fuzz-npy", "f4-rank8", npy("<f4", (1, 2, 1, 2, 1, 1, 2, 1), values("<f", 8)))
put("fuzz-npy", "f4-rank9", npy("<f4", (1,) * 9, values("<f", 1)))
put("fuzz-npy", "truncated-data", npy("<f8", (100,), values("<d", 3)))
put("fuzz-npy", "huge-shape", npy("<f4", (1 << 40, 1 << 40), b""))
put("fuzz-npy", "structured", npy("[('a', '<f4')]", (1,), b"\0" * 4))
put("fuzz-npy", "unpadded", npy("=f4", (2,), values("<f", 2), pad=False))

# ---- argument specs: every form of the ts_value_parse comment ------------------
specs = {
    "tensor": "f32[2,3]=1,2,3,4,5,6", "scalar": "f32[]=2.5", "uniform": "f32[20,28,28]:uniform",
    "uniform-seed": "i32[4]:uniform@7", "normal": "f64[3,3]:normal", "zeros": "u8[2]:zeros",
    "ones": "bool[2,2]:ones", "range": "i32[10]:range(-5)", "range-plain": "i64[2,5]:range",
    "bool-values": "bool[3]=true,false,1", "i64-extreme": "i64[2]=-9223372036854775808,9223372036854775807",
    "u8-out-of-range": "u8[1]=256", "npy": "npy:data.npy", "npy-empty": "npy:",
    "int": "100", "float": "-2.5", "bool": "true", "list": "[1,-1]", "nested": "[[1,2],[3,[4]],true,x]",
    "empty-list": "[]", "string": "hello world", "bad-dtype": "q32[2]=1,2", "string-dtype": "string[1]=a",
    "too-many-dims": "f32[1,1,1,1,1,1,1,1,1]:zeros", "huge": "f32[9223372036854775807]:zeros",
    "huge-product": "f32[4294967296,4294967296]:zeros", "missing-bracket": "f32[2", "count": "f32[2]=1",
    "dtype-name": "float32", "op-name": "MatMul", "float-exp": "1e400", "int-overflow": "99999999999999999999",
}
for name, text in specs.items():
    put("fuzz-arg-spec", name, text)

# ---- module export specs -------------------------------------------------------
def module(flags, title, *lines):
    return bytes([flags]) + "\n".join((title,) + lines).encode()

put("fuzz-module-spec", "seeds", module(0, "seed examples", "simple_nn_layer", "square_if_positive, x",
                                        "with_side_effect, x, y"))
put("fuzz-module-spec", "empty", module(0, "nothing"))
put("fuzz-module-spec", "no-title", module(0x08, "", "f"))
put("fuzz-module-spec", "duplicate", module(0, "t", "f, a", "f, b"))
put("fuzz-module-spec", "bad-name", module(0, "t", "1f, a"))
put("fuzz-module-spec", "empty-param", module(0, "t", "f, , b"))
put("fuzz-module-spec", "spaces", module(0, "t", "  f  ,  a  "))
put("fuzz-module-spec", "null-spec", module(0, "t", "\x01"))
put("fuzz-module-spec", "null-fn", module(0x10, "t", "f", "g"))
put("fuzz-module-spec", "abi", module(0x07 | 0x40, "t", "f"))
put("fuzz-module-spec", "negative", module(0x26, "t", "f"))
put("fuzz-module-spec", "null-path", module(0x80, "t", "f, x"))
put("fuzz-module-spec", "many", module(0, "t", *["f%d, a, b" % i for i in range(16)]))

# ---- the op fuzzer: every instruction on two small f32 inputs -------------------
def ops_input(header, program, shapes=((2, 3), (3, 2)), kinds=(0, 0)):
    out = bytes([header])
    for kind, shape in zip(kinds, shapes):
        out += bytes([kind, len(shape)] + list(shape)) + bytes(range(1, 17))
    return out + bytes(program)

# header 0x31: two inputs, no variables, eager + graph + signature
for code in range(32):
    for sub in (0, 1, 5, 7):
        put("fuzz-ops", "op%02d-%d" % (code, sub), ops_input(0x31, [code, 0, 1, 0, sub, 2, 2, 2, 2, 2, 2, 2, 2, 3]))
# with variables (header 0x35: two inputs, one variable; 0x39: two variables)
for code, sub in ((25, 0), (25, 1), (25, 2), (25, 3)):
    put("fuzz-ops", "var-%d" % sub, ops_input(0x35, [0, code, 0, 1, 0, 0, sub, 1]))
put("fuzz-ops", "two-vars", ops_input(0x39, [0, 0, 25, 0, 1, 0, 1, 1, 25, 1, 0, 0, 2, 2]))
# a matmul chain, conv2d and pooling on NHWC inputs
put("fuzz-ops", "matmul-chain", ops_input(0x31, [20, 0, 1, 0, 0, 5, 20, 5, 0, 0, 3, 6, 14, 6, 6, 6, 7, 6]))
put("fuzz-ops", "conv2d", ops_input(0x31, [22, 0, 1, 0, 0, 2, 2, 0, 4], shapes=((1, 4, 4, 2), (2, 2, 2, 3))))
put("fuzz-ops", "max-pool", ops_input(0x31, [23, 0, 0, 0, 0, 3, 3, 3, 3, 1, 4], shapes=((1, 4, 4, 2), (1,))))
# tensor arrays: make, write, read, stack
put("fuzz-ops", "tensor-array", ops_input(0x31, [26, 0, 0, 0, 0, 0, 3, 0, 5,
                                                 27, 5, 0, 0, 0, 2, 0, 6,
                                                 28, 6, 0, 0, 0, 2, 0, 7,
                                                 29, 6, 0, 0, 0, 8]))
# creation ops with huge and invalid shapes and dtypes
for which in range(16):
    put("fuzz-ops", "create-%02d" % which, ops_input(0x01, [0, 0, 0, 0, 0, which, 0, 2, 3, 4, 0, 1, 2, 3, 4, 5, 9, 2]))
put("fuzz-ops", "create-huge", ops_input(0x01, [0, 0, 0, 0, 0, 0, 0, 2, 226, 227, 0, 0, 0, 0, 0, 0, 0, 9, 2]))
put("fuzz-ops", "create-bad-dtype", ops_input(0x01, [0, 0, 0, 0, 0, 0, 221, 2, 1, 1, 9, 2]))
put("fuzz-ops", "create-bad-rank", ops_input(0x01, [0, 0, 0, 0, 0, 1, 0, 13, 1, 1, 9, 2]))
