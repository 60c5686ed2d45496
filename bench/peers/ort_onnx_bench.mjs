// ort_onnx_bench.mjs — ONNX Runtime's side of scripts/bench-onnx.
//
//   node ort_onnx_bench.mjs NODE_PREFIX MODEL.onnx DATA_DIR THREADS  ->  JSON on stdout
//
// Runs MODEL.onnx in onnxruntime-node from NODE_PREFIX (npm install
// --prefix) on DATA_DIR/input_I.npy (the model's inputs in order, as
// tracescope-bench-onnx --save wrote them): intraOpNumThreads THREADS,
// interOpNumThreads 1, sequential, graph optimizations all.  Compares its
// first output with ours (DATA_DIR/output.npy): within rtol 1e-3 (atol
// 1e-5 for values near zero).  Times single calls through the binding's
// synchronous run (ONNX Runtime's own cost, without session.run's
// Promise and event-loop turn) the way bench/bench-onnx.c times ours:
// 5 warm-up calls, then at least 30 calls and 1 s, the median.
import { createRequire } from 'node:module';
import { readFileSync, existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

const WARMUP = 5, MIN_RUNS = 30, MIN_TOTAL_MS = 1000, MAX_RUNS = 10000;
const RTOL = 1e-3, ATOL = 1e-5;

const [prefix, modelPath, dataDir, threadArg] = process.argv.slice(2);
const require = createRequire(resolve(prefix, 'node_modules', 'noop.js'));
const ort = require('onnxruntime-node');

// A C-order .npy (format 1.x-3.x) of float32/float64/int32/int64 as an ort.Tensor.
const NPY_TYPES = {
  '<f4': ['float32', Float32Array], '<f8': ['float64', Float64Array],
  '<i4': ['int32', Int32Array], '<i8': ['int64', BigInt64Array],
};
function loadNpy(path) {
  const buf = readFileSync(path);
  if (buf.toString('latin1', 1, 6) !== 'NUMPY')
    throw new Error(`${path}: not a .npy file`);
  const major = buf[6];
  const headerLen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', start, start + headerLen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)?.[1];
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)?.[1].split(',').filter((s) => s.trim()).map(Number);
  if (!NPY_TYPES[descr] || /'fortran_order':\s*True/.test(header) || !shape)
    throw new Error(`${path}: unsupported .npy header ${header}`);
  const [type, Array] = NPY_TYPES[descr];
  const data = buf.subarray(start + headerLen);
  const values = new Array(data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength));
  return new ort.Tensor(type, values, shape);
}

// The worst |ort - ours| / (atol + rtol |ours|): at most 1 agrees.
function worstRatio(a, b) {
  if (a.data.length !== b.data.length)
    throw new Error(`ONNX Runtime's output has ${a.data.length} elements, ours ${b.data.length}`);
  let worst = 0, maxAbs = 0;
  for (let i = 0; i < a.data.length; i++) {
    const x = Number(a.data[i]), y = Number(b.data[i]);
    const d = Math.abs(x - y);
    maxAbs = Math.max(maxAbs, d);
    worst = Math.max(worst, Number.isNaN(d) ? Infinity : d / (ATOL + RTOL * Math.abs(y)));
  }
  return { worst, maxAbs };
}

const threads = Number(threadArg);
const options = { intraOpNumThreads: threads, interOpNumThreads: 1, executionMode: 'sequential',
                  graphOptimizationLevel: 'all' };
const session = await ort.InferenceSession.create(modelPath, options);
const feeds = {};
session.inputNames.forEach((name, i) => {
  const file = join(dataDir, `input_${i}.npy`);
  if (!existsSync(file))
    throw new Error(`${file}: missing (the model has ${session.inputNames.length} inputs)`);
  feeds[name] = loadNpy(file);
});
const out = (await session.run(feeds))[session.outputNames[0]];
const { worst, maxAbs } = worstRatio(out, loadNpy(join(dataDir, 'output.npy')));
await session.release();

const { binding, initOrt } = require('onnxruntime-node/dist/binding');
initOrt?.();
const native = new binding.InferenceSession();
native.loadModel(modelPath, options);
const fetches = { [session.outputNames[0]]: null };
const now = () => Number(process.hrtime.bigint()) / 1e6;
for (let i = 0; i < WARMUP; i++)
  native.run(feeds, fetches, {});
const t = [];
let total = 0;
while (t.length < MAX_RUNS && (t.length < MIN_RUNS || total < MIN_TOTAL_MS)) {
  const t0 = now();
  native.run(feeds, fetches, {});
  const ms = now() - t0;
  t.push(ms);
  total += ms;
}
native.dispose?.();
t.sort((a, b) => a - b);
console.log(JSON.stringify({
  onnxruntime: ort.env.versions?.node ?? null, threads, runs: t.length,
  median_us: t[t.length >> 1] * 1e3, min_us: t[0] * 1e3,
  max_abs_diff: maxAbs, agrees: worst <= 1,
}));
