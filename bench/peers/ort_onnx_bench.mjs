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
import { loadNpy as readNpy } from './npy.mjs';

const WARMUP = 5, MIN_RUNS = 30, MIN_TOTAL_MS = 1000, MAX_RUNS = 10000;
const RTOL = 1e-3, ATOL = 1e-5;

const [prefix, modelPath, dataDir, threadArg] = process.argv.slice(2);
const require = createRequire(resolve(prefix, 'node_modules', 'noop.js'));
const ort = require('onnxruntime-node');
const loadNpy = (path) => readNpy(ort, path);

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
