#!/usr/bin/env node
// Times one ONNX model in onnxruntime-node (CPU): one session, one warm-up run, then N runs.
//   node bench/zoo/ort_time.js MODEL.onnx [--runs N] [--threads T] [--level disabled|basic|extended|all]
// Inputs are seeded uniform [-1, 1) float32 (or zeros for integer inputs) in the shapes the
// model declares; a dimension without a fixed size is 1. Prints one line:
//   median_ms=M min_ms=m runs=N threads=T level=L
// Needs tests/ort/node_modules (tests/ort/install.sh).
'use strict';

const path = require('path');

function fail(msg) {
  console.error(`ort_time: ${msg}`);
  process.exit(2);
}

function parse(argv) {
  const o = { runs: 20, threads: 1, level: 'all' };
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    const val = () => (i + 1 < argv.length ? argv[++i] : fail(`${a} needs a value`));
    if (a === '--runs') o.runs = Number(val());
    else if (a === '--threads') o.threads = Number(val());
    else if (a === '--level') o.level = val();
    else if (a.startsWith('--')) fail(`unknown option ${a}`);
    else if (!o.model) o.model = a;
    else fail(`unexpected argument ${a}`);
  }
  if (!o.model) fail('usage: ort_time.js MODEL.onnx [--runs N] [--threads T] [--level L]');
  if (!(o.runs >= 1)) fail('--runs must be at least 1');
  if (!['disabled', 'basic', 'extended', 'all'].includes(o.level)) fail(`bad --level ${o.level}`);
  return o;
}

// xorshift32: the same inputs in every run of the script.
function filler(seed) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13; s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5; s >>>= 0;
    return (s / 4294967296) * 2 - 1;
  };
}

async function main() {
  const o = parse(process.argv.slice(2));
  let ort;
  try {
    ort = require(path.resolve(__dirname, '..', '..', 'tests', 'ort', 'node_modules', 'onnxruntime-node'));
  } catch (e) {
    fail(`onnxruntime-node is not installed (tests/ort/install.sh): ${e.message}`);
  }
  const options = { executionProviders: ['cpu'], graphOptimizationLevel: o.level, intraOpNumThreads: o.threads,
                    interOpNumThreads: 1, executionMode: 'sequential' };
  let session;
  try {
    session = await ort.InferenceSession.create(o.model, options);
  } catch (e) {
    fail(`ONNX Runtime rejected ${o.model}: ${e.message}`);
  }
  const rand = filler(12345);
  const feeds = {};
  for (const name of session.inputNames) {
    const meta = (session.inputMetadata || []).find((m) => m.name === name);
    const shape = meta && meta.shape ? meta.shape.map((d) => (typeof d === 'number' && d > 0 ? d : 1)) : null;
    if (!shape) fail(`input '${name}': no shape in the model`);
    const n = shape.reduce((a, b) => a * b, 1);
    const type = meta.type || 'float32';
    if (type === 'float32') {
      const data = new Float32Array(n);
      for (let i = 0; i < n; ++i) data[i] = rand();
      feeds[name] = new ort.Tensor('float32', data, shape);
    } else if (type === 'int64') {
      feeds[name] = new ort.Tensor('int64', new BigInt64Array(n), shape);
    } else {
      fail(`input '${name}': element type ${type} not supported`);
    }
  }
  await session.run(feeds);  // warm-up: first-run allocations and lazy kernel setup
  const ms = [];
  for (let i = 0; i < o.runs; ++i) {
    const t0 = process.hrtime.bigint();
    await session.run(feeds);
    ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  ms.sort((a, b) => a - b);
  const median = ms.length % 2 ? ms[(ms.length - 1) / 2] : (ms[ms.length / 2 - 1] + ms[ms.length / 2]) / 2;
  console.log(`median_ms=${median.toFixed(3)} min_ms=${ms[0].toFixed(3)} runs=${o.runs} threads=${o.threads} level=${o.level}`);
}

main().catch((e) => fail(e.stack || String(e)));
