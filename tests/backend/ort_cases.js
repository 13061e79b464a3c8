#!/usr/bin/env node
// ONNX Runtime's side of tests/backend/backend_suite.py: for every case of the manifest it
// runs the original model, graphfuse's applied model and the frozen-and-folded model on the
// case's inputs and compares each with the expected outputs the way ONNX's backend tests do
// (rtol 1e-3, atol 1e-7, NaN equals NaN, integers exactly). Writes one JSON object, keyed by
// case name. Run from tests/ort (where onnxruntime-node is installed).
// usage: node ort_cases.js MANIFEST.json RESULTS.json
'use strict';

const fs = require('fs');
const path = require('path');
const ort = require(path.resolve(process.cwd(), 'node_modules', 'onnxruntime-node'));

const ARRAYS = {
  float32: Float32Array, float64: Float64Array, int8: Int8Array, uint8: Uint8Array,
  int16: Int16Array, uint16: Uint16Array, int32: Int32Array, uint32: Uint32Array,
  int64: BigInt64Array, uint64: BigUint64Array, bool: Uint8Array, float16: Uint16Array, bfloat16: Uint16Array,
};
const RTOL = 1e-3;
const ATOL = 1e-7;

function readRaw(spec) {
  const buf = fs.readFileSync(spec.file);
  const Arr = ARRAYS[spec.dtype];
  const copy = new ArrayBuffer(buf.length);  // aligned for the typed array
  new Uint8Array(copy).set(buf);
  return new Arr(copy);
}

function halfToFloat(h) {
  const s = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 0x1f;
  const m = h & 0x3ff;
  if (e === 0) return s * m * 2 ** -24;
  if (e === 31) return m ? NaN : s * Infinity;
  return s * (1 + m / 1024) * 2 ** (e - 15);
}

function numbers(data, dtype) {
  if (dtype === 'float16') {
    if (data instanceof Uint16Array) return Array.from(data, halfToFloat);
    return Array.from(data);  // a Float16Array where the runtime has one
  }
  return data;
}

// '' when `actual` (an ort.Tensor) matches the expected spec, else why not.
function compare(actual, spec) {
  const dtype = actual.type === 'bool' ? 'bool' : actual.type;
  if (dtype !== spec.dtype) return `dtype ${dtype}, expected ${spec.dtype}`;
  const shape = Array.from(actual.dims, Number);
  if (shape.length !== spec.shape.length || shape.some((d, i) => d !== spec.shape[i]))
    return `shape [${shape}], expected [${spec.shape}]`;
  const want = numbers(readRaw(spec), dtype);
  const got = numbers(actual.data, dtype);
  if (got.length !== want.length) return `${got.length} elements, expected ${want.length}`;
  const float = ['float32', 'float64', 'float16'].includes(dtype);
  for (let i = 0; i < want.length; ++i) {
    let a = got[i], e = want[i];
    if (dtype === 'bool') { a = a ? 1 : 0; e = e ? 1 : 0; }
    if (!float) {
      if (a !== e) return `element ${i}: ${a}, expected ${e}`;
      continue;
    }
    if (Number.isNaN(e) && Number.isNaN(a)) continue;
    if (a === e) continue;  // equal infinities
    if (!(Math.abs(a - e) <= ATOL + RTOL * Math.abs(e))) return `element ${i}: ${a}, expected ${e}`;
  }
  return '';
}

async function runOne(modelPath, c, withInputs) {
  try {
    const session = await ort.InferenceSession.create(modelPath, { intraOpNumThreads: 1, logSeverityLevel: 4 });
    const feeds = {};
    if (withInputs) {
      for (const spec of c.inputs) {
        if (!session.inputNames.includes(spec.name)) continue;
        feeds[spec.name] = new ort.Tensor(spec.dtype, readRaw(spec), spec.shape);
      }
    }
    const result = await session.run(feeds);
    const fails = [];
    for (const spec of c.outputs) {
      const t = result[spec.name];
      if (!t) { fails.push(`${spec.name}: missing`); continue; }
      const why = compare(t, spec);
      if (why) fails.push(`${spec.name}: ${why}`);
    }
    if (session.release) await session.release();
    return fails.length ? { status: 'fail', message: fails.join('; ') } : { status: 'pass' };
  } catch (e) {
    return { status: 'error', message: String(e.message || e).slice(0, 400) };
  }
}

async function main() {
  const [manifestPath, outPath] = process.argv.slice(2);
  if (!manifestPath || !outPath) {
    console.error('usage: node ort_cases.js MANIFEST.json RESULTS.json');
    process.exit(2);
  }
  const manifest = JSON.parse(fs.readFileSync(manifestPath, 'utf8'));
  const out = {};
  for (const c of manifest.cases) {
    const r = { original: await runOne(c.model, c, true) };
    r.applied = fs.existsSync(c.applied) ? await runOne(c.applied, c, true) : { status: 'absent' };
    if (c.folded) r.folded = fs.existsSync(c.folded) ? await runOne(c.folded, c, false) : { status: 'absent' };
    out[c.name] = r;
  }
  fs.writeFileSync(outPath, JSON.stringify(out));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
