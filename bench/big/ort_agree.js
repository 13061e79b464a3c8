#!/usr/bin/env node
// Runs two ONNX models (external data allowed) in ONNX Runtime on one seeded input and
// prints the largest absolute difference of their first outputs; exit 1 when it is over
// the tolerance. The models are loaded one after the other (one in memory at a time).
//
//   node bench/big/ort_agree.js ORIGINAL.onnx REWRITTEN.onnx --dim D [--rows 2] [--tol 1e-4]
// (the input is [rows, D], as bench/big/gen_external.py makes it)
'use strict';

const path = require('path');

async function run(ort, file, feeds) {
  const session = await ort.InferenceSession.create(file, { executionProviders: ['cpu'] });
  const out = await session.run(feeds);
  const data = Float32Array.from(out[session.outputNames[0]].data);
  if (session.release) await session.release();
  return data;
}

async function main() {
  const argv = process.argv.slice(2);
  const files = [];
  let rows = 2, tol = 1e-4, dim = 0;
  for (let i = 0; i < argv.length; ++i) {
    if (argv[i] === '--rows') rows = Number(argv[++i]);
    else if (argv[i] === '--tol') tol = Number(argv[++i]);
    else if (argv[i] === '--dim') dim = Number(argv[++i]);
    else files.push(argv[i]);
  }
  if (files.length !== 2 || !(dim > 0)) {
    console.error('usage: node ort_agree.js ORIGINAL.onnx REWRITTEN.onnx --dim D [--rows 2] [--tol 1e-4]');
    process.exit(2);
  }
  let ort;
  try {
    ort = require(path.join(__dirname, '../../tests/ort/node_modules/onnxruntime-node'));
  } catch (e) {
    console.error('onnxruntime-node is not installed (tests/ort/install.sh)');
    process.exit(77);
  }
  const probe = await ort.InferenceSession.create(files[0], { executionProviders: ['cpu'] });
  const name = probe.inputNames[0];
  if (probe.release) await probe.release();
  const x = new Float32Array(rows * dim);
  let s = 12345;
  for (let i = 0; i < x.length; ++i) {  // a fixed LCG: the same input every run
    s = (s * 1103515245 + 12345) >>> 0;
    x[i] = (s / 4294967296) * 2 - 1;
  }
  const feeds = { [name]: new ort.Tensor('float32', x, [rows, dim]) };
  const t0 = Date.now();
  const a = await run(ort, files[0], feeds);
  const b = await run(ort, files[1], feeds);
  let diff = 0, ref = 0;
  for (let i = 0; i < a.length; ++i) {
    diff = Math.max(diff, Math.abs(a[i] - b[i]));
    ref = Math.max(ref, Math.abs(a[i]));
  }
  const ok = a.length === b.length && diff <= tol;
  console.log(`${a.length} outputs, max |original| ${ref.toPrecision(4)}, max |difference| ${diff.toPrecision(4)}, ` +
              `tolerance ${tol}: ${ok ? 'agree' : 'DIFFER'} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
  process.exit(ok ? 0 : 1);
}

main();
