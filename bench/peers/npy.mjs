// npy.mjs — a C-order .npy (format 1.x-3.x) of float32/float64/int32/int64
// as an ort.Tensor, for the benchmarks that hand our inputs to ONNX Runtime.
import { readFileSync } from 'node:fs';

const NPY_TYPES = {
  '<f4': ['float32', Float32Array], '<f8': ['float64', Float64Array],
  '<i4': ['int32', Int32Array], '<i8': ['int64', BigInt64Array],
};
export function loadNpy(ort, path) {
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
