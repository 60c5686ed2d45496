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


# ---- Chrome trace JSON (profiler import) -------------------------------------------
put("fuzz-chrome-import", "foreign",
    '[{"ph":"M","name":"thread_name","pid":1,"tid":7,"args":{"name":"worker"}},'
    '{"ph":"B","name":"outer","pid":1,"tid":7,"ts":10},'
    '{"ph":"X","name":"MatMul","pid":1,"tid":7,"ts":11,"dur":2.5},'
    '{"ph":"E","pid":1,"tid":7,"ts":20},'
    '{"ph":"i","name":"mark","pid":1,"tid":7,"ts":21},'
    '{"ph":"C","name":"mem","pid":1,"ts":21,"args":{"v":3}}]')
put("fuzz-chrome-import", "ours",
    '{"displayTimeUnit":"ns",\n'
    ' "tracescope":{"version":1,"base_ns":"81592551234000",\n'
    '   "locs":[["/src/seeds.c","simple_nn_layer",57]],\n'
    '   "concretes":[["simple_nn_layer","(x: f32[3,3], y: f32[3,3])"]],\n'
    '   "nodes":[{"name":"MatMul","scope":"","shape":"f32[3,3]","op":"MatMul","graph":"simple_nn_layer",\n'
    '             "loc":1,"concrete":1,"id":2,"optimized":false,"eager_twin":true,"origins":[]}]},\n'
    ' "traceEvents":[\n'
    '  {"name":"process_name","ph":"M","pid":1,"args":{"name":"tracescope"}},\n'
    '  {"name":"thread_name","cat":"__metadata","ph":"M","ts":0.000,"pid":1,"tid":14776,"args":{"name":"main"}},\n'
    '  {"name":"trace simple_nn_layer","cat":"trace","ph":"X","ts":10.285,"pid":1,"tid":14776,"dur":26.991,\n'
    '   "args":{"function":"simple_nn_layer","signature":"(x: f32[3,3], y: f32[3,3])","reason":"first call","reason_code":0,"c":1}},\n'
    '  {"name":"MatMul","cat":"op","ph":"X","ts":51.276,"pid":1,"tid":14776,"dur":14.822,\n'
    '   "args":{"mode":"graph","node":"MatMul","shape":"f32[3,3]","source":"seeds.c:57","device":"CPU",\n'
    '           "run":1,"seq":1,"parent_seq":0,"n":1,"t":1,"l":1}},\n'
    '  {"name":"simple_nn_layer","cat":"call","ph":"X","ts":0.000,"pid":1,"tid":14776,"dur":81.101,\n'
    '   "args":{"mode":"graph","run":1,"signature":"(x: f32[3,3], y: f32[3,3])","c":1}},\n'
    '  {"name":"call","cat":"flow","ph":"s","ts":0.000,"pid":1,"tid":14776,"id":1},\n'
    '  {"name":"call","cat":"flow","ph":"f","ts":51.276,"pid":1,"tid":14776,"bp":"e","id":1}\n'
    ' ]}\n')
put("fuzz-chrome-import", "wrong-types",
    '[{"ph":"X","name":"Add","ts":"1"},{"ph":"X","name":"Add","ts":1,"dur":[1]},'
    '{"ph":"X","name":"Add","ts":1,"tid":1.5,"args":{"run":null,"seq":true}}]')
put("fuzz-chrome-import", "huge-numbers",
    '[{"ph":"X","name":"Add","ts":1e300},{"ph":"X","name":"Add","ts":1,'
    '"dur":123456789012345678901234567890},{"ph":"X","name":"Add","ts":-5}]')
put("fuzz-chrome-import", "unbalanced", '[{"ph":"B","name":"a","ts":5},{"ph":"E","ts":1},{"ph":"E","ts":9}]')
put("fuzz-chrome-import", "truncated", '{"traceEvents":[{"ph":"X","name":"Add","ts":1,"args":{"n"')
put("fuzz-chrome-import", "nested", '[{"ph":"X","name":"Add","ts":1,"args":{"a":[[[[{"b":[1,{"c":2}]}]]]],"n":0}}]')
put("fuzz-chrome-import", "memory",
    '[{"ph":"C","name":"memory","pid":1,"tid":7,"ts":1,"delta":100,"args":{"CPU":100}},'
    '{"ph":"C","name":"memory","pid":1,"tid":7,"ts":2,"args":{"GPU":40,"other":1}},'
    '{"ph":"C","name":"memory","pid":1,"tid":7,"ts":3,"args":{"CPU":null}}]')

# ---- saved sessions (the app's session reader) ------------------------------------
import base64
import json


def graph_b64(name):
    with open(os.path.join(ROOT, "fuzz-graph-serial", "seed-" + name), "rb") as f:
        return base64.b64encode(f.read()).decode()


def session(**members):
    doc = {"format": "tracescope-session", "version": 1, "module": "seeds"}
    doc.update(members)
    return json.dumps(doc, indent=2)


put("fuzz-session", "minimal", session())
put("fuzz-session", "full", session(
    function="sum_even", mode="graph",
    arguments=[{"function": "sum_even", "specs": ["i32[4]=10,12,15,20"], "repeat": 3}],
    trace_log=[
        {"function": "sum_even", "signature": "(x: i32[4])", "reason": 0, "reason_text": "first call",
         "duration_ns": 41230, "n_concrete": 1, "call": "#1 sum_even(i32[4]=10,12,15,20)",
         "time_us": 1795564800000000, "failed": False, "pretty_signature": "sum_even(x)",
         "graph": graph_b64("sum_even")},
        {"function": "square_if_positive", "signature": "(x: f32[])", "reason": 1,
         "reason_text": "arg 0 (x): shape", "duration_ns": 5, "n_concrete": 2, "call": None,
         "time_us": 0, "graph": graph_b64("square_if_positive")},
        {"function": "my_function", "signature": "()", "reason": 0, "reason_text": "it failed",
         "duration_ns": 0, "n_concrete": 0, "time_us": 0, "failed": True},
    ],
    view={"function": "sum_even", "signature": "(x: i32[4])", "expanded": ["while", "while/body"],
          "zoom": 1.25, "centre": [212.5, 340.0]}))
put("fuzz-session", "wrong-types", session(mode=3, arguments={"x": 1}, trace_log=[{"function": 1}]))
put("fuzz-session", "bad-graph", session(trace_log=[
    {"function": "f", "signature": "()", "reason": 0, "duration_ns": 0, "n_concrete": 1, "time_us": 0,
     "graph": "AAAA"}]))
put("fuzz-session", "nested", '{"format":"tracescope-session","version":1,"module":"seeds","x":'
    + "[" * 80 + "]" * 80 + "}")
put("fuzz-session", "truncated", '{"format":"tracescope-session","version":1,"module":"se')
