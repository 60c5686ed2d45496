// ort_bench.mjs — ONNX Runtime's side of the side-by-side benchmark
// (scripts/bench-peers).
//
//   node ort_bench.mjs NODE_PREFIX ONNX_DIR THREADS,...  ->  JSON on stdout
//
// Runs the models torch_bench.py exported (ONNX_DIR/manifest.json: each
// model with its inputs and our output as .npy) in onnxruntime-node from
// NODE_PREFIX (npm install --prefix), one session per thread count:
// intraOpNumThreads N, executionMode sequential, graphOptimizationLevel
// all.  Checks the output against ours and times calls the way
// bench/bench-peers.c times ours: the fastest of 7 batches after warm-up.
// Each call is timed twice: through the public session.run (a Promise and
// an event-loop turn per call, as a JS application pays) and straight
// through the binding's synchronous run, which is ONNX Runtime's own cost
// and what the table compares with.
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadNpy as readNpy } from './npy.mjs';

const REPEATS = 7, WARMUP = 2, BATCH_MS = 20;

const [prefix, onnxDir, threadList] = process.argv.slice(2);
const require = createRequire(resolve(prefix, 'node_modules', 'noop.js'));
const ort = require('onnxruntime-node');
const loadNpy = (path) => readNpy(ort, path);

function maxAbsDiff(a, b) {
  if (a.data.length !== b.data.length)
    throw new Error(`output has ${a.data.length} elements, ours ${b.data.length}`);
  let m = 0;
  for (let i = 0; i < a.data.length; i++)
    m = Math.max(m, Math.abs(Number(a.data[i]) - Number(b.data[i])));
  return m;
}

// Microseconds per call: the fastest of REPEATS batches (as bench-peers.c).
async function fastestPerCall(fn) {
  const now = () => Number(process.hrtime.bigint()) / 1e6;
  let iters = 1;
  for (;;) {
    const t0 = now();
    for (let i = 0; i < iters; i++) await fn();
    if (now() - t0 >= BATCH_MS / 4 || iters >= 1 << 20) break;
    iters *= 2;
  }
  for (let w = 0; w < WARMUP; w++)
    for (let i = 0; i < iters; i++) await fn();
  iters *= 4;
  let best = Infinity;
  for (let r = 0; r < REPEATS; r++) {
    const t0 = now();
    for (let i = 0; i < iters; i++) await fn();
    best = Math.min(best, now() - t0);
  }
  return (best / iters) * 1e3;
}

// The binding's own session (what session.run calls inside an event-loop
// turn); null where this onnxruntime-node lays its files out otherwise.
function nativeSession(path, options) {
  try {
    const { binding, initOrt } = require('onnxruntime-node/dist/binding');
    initOrt?.();
    const s = new binding.InferenceSession();
    s.loadModel(path, options);
    return s;
  } catch {
    return null;
  }
}

async function benchModel(key, m, threads) {
  const feeds = Object.fromEntries(m.inputs.map((i) => [i.name, loadNpy(join(onnxDir, i.file))]));
  const expected = loadNpy(join(onnxDir, m.expected));
  const result = { label: m.label, threads: {} };
  for (const n of threads) {
    const options = { intraOpNumThreads: n, interOpNumThreads: 1, executionMode: 'sequential',
                      graphOptimizationLevel: 'all' };
    const path = join(onnxDir, m.model);
    const session = await ort.InferenceSession.create(path, options);
    const out = (await session.run(feeds))[session.outputNames[0]];
    result.max_abs_diff = maxAbsDiff(out, expected);
    const t = { run_us: await fastestPerCall(() => session.run(feeds)) };
    const native = nativeSession(path, options);
    if (native) {
      const fetches = { [session.outputNames[0]]: null };
      t.native_us = await fastestPerCall(() => native.run(feeds, fetches, {}));
      native.dispose();
    }
    result.threads[String(n)] = t;
    await session.release();
  }
  return result;
}

const threads = threadList.split(',').map(Number);
const manifest = JSON.parse(readFileSync(join(onnxDir, 'manifest.json'), 'utf8'));
const report = { onnxruntime: ort.env.versions?.node ?? null, workloads: {} };
for (const [key, m] of Object.entries(manifest)) {
  try {
    report.workloads[key] = await benchModel(key, m, threads);
  } catch (e) { // one model failing leaves the others' numbers
    report.workloads[key] = { error: String(e.message ?? e) };
  }
  process.stderr.write(`ort_bench: ${key} done\n`);
}
console.log(JSON.stringify(report, null, 1));
