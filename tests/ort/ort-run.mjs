// ort-run.mjs NODE_PREFIX MODEL.onnx OUT_DIR IN_0.npy ... — runs MODEL in
// ONNX Runtime (onnxruntime-node, installed under NODE_PREFIX by
// scripts/install-ort.sh) on the .npy inputs, in the model's input order,
// and writes each output as OUT_DIR/output_K.npy.  test-onnx-interop.c
// compares them with Tracescope's results.
import { createRequire } from 'node:module';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const [prefix, model, outDir, ...inputs] = process.argv.slice(2);
const ort = createRequire(join(prefix, 'package.json'))('onnxruntime-node');

// NumPy descr <-> ONNX Runtime tensor type and typed array.
const DTYPES = [
  { descr: '<f4', type: 'float32', array: Float32Array },
  { descr: '<f8', type: 'float64', array: Float64Array },
  { descr: '<i4', type: 'int32', array: Int32Array },
  { descr: '<i8', type: 'int64', array: BigInt64Array },
  { descr: '|u1', type: 'uint8', array: Uint8Array },
  { descr: '|b1', type: 'bool', array: Uint8Array },
];

function readNpy(path) {
  const buf = readFileSync(path);
  if (buf.toString('latin1', 1, 6) !== 'NUMPY') throw new Error(`${path}: not a .npy file`);
  const major = buf[6];
  const headerLen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', start, start + headerLen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(',').filter((s) => s.trim()).map(Number);
  const d = DTYPES.find((x) => x.descr === descr);
  if (!d) throw new Error(`${path}: dtype ${descr}`);
  const body = buf.subarray(start + headerLen);
  const bytes = new Uint8Array(body.length);
  bytes.set(body);
  const data = new d.array(bytes.buffer, 0, body.length / d.array.BYTES_PER_ELEMENT);
  return new ort.Tensor(d.type, d.type === 'bool' ? Array.from(data, Boolean) : data, shape);
}

function writeNpy(path, tensor) {
  const d = DTYPES.find((x) => x.type === tensor.type);
  if (!d) throw new Error(`output of type ${tensor.type}`);
  const shape = tensor.dims.length === 1 ? `(${tensor.dims[0]},)` : `(${tensor.dims.join(', ')})`;
  let header = `{'descr': '${d.descr}', 'fortran_order': False, 'shape': ${shape}, }`;
  header += ' '.repeat(63 - ((10 + header.length) % 64)) + '\n';
  const pre = Buffer.alloc(10);
  pre.write('\x93NUMPY', 0, 'latin1');
  pre[6] = 1;
  pre[7] = 0;
  pre.writeUInt16LE(header.length, 8);
  const data = tensor.type === 'bool' ? Uint8Array.from(tensor.data, (b) => (b ? 1 : 0)) : tensor.data;
  const body = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  writeFileSync(path, Buffer.concat([pre, Buffer.from(header, 'latin1'), body]));
}

const session = await ort.InferenceSession.create(model, { intraOpNumThreads: 1 });
const feeds = {};
session.inputNames.forEach((name, i) => { feeds[name] = readNpy(inputs[i]); });
const results = await session.run(feeds);
session.outputNames.forEach((name, k) => writeNpy(join(outDir, `output_${k}.npy`), results[name]));
