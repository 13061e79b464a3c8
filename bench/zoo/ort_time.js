#!/usr/bin/env node
// Times ONNX models in onnxruntime-node (CPU): one session per model, one warm-up run each,
// then N runs of each, interleaved (run r of every model before run r + 1 of any, the first
// model switching each time) so that background load hits all alike.
//   node bench/zoo/ort_time.js MODEL.onnx [MODEL2.onnx ...] [--runs N] [--threads T]
//        [--level disabled|basic|extended|all] [--clock wall|cpu]
// --clock cpu times a run by the process's CPU time (user + system; meaningful with one
// thread on a shared machine, where wall time also measures the scheduler).
// Inputs are seeded uniform [-1, 1) float32 (or zeros for integer inputs) in the shapes the
// model declares; a dimension without a fixed size is 1. Prints one line per model, in order:
//   median_ms=M min_ms=m runs=N threads=T level=L clock=C model=PATH
// Needs tests/ort/node_modules (tests/ort/install.sh).
'use strict';

const path = require('path');

function fail(msg) {
  console.error(`ort_time: ${msg}`);
  process.exit(2);
}

function parse(argv) {
  const o = { runs: 20, threads: 1, level: 'all', clock: 'wall', models: [] };
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    const val = () => (i + 1 < argv.length ? argv[++i] : fail(`${a} needs a value`));
    if (a === '--runs') o.runs = Number(val());
    else if (a === '--threads') o.threads = Number(val());
    else if (a === '--level') o.level = val();
    else if (a === '--clock') o.clock = val();
    else if (a.startsWith('--')) fail(`unknown option ${a}`);
    else o.models.push(a);
  }
  if (!o.models.length) fail('usage: ort_time.js MODEL.onnx [MODEL2.onnx ...] [--runs N] [--threads T] [--level L] [--clock C]');
  if (!['wall', 'cpu'].includes(o.clock)) fail(`bad --clock ${o.clock}`);
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
  const benches = [];
  for (const model of o.models) {
    let session;
    try {
      session = await ort.InferenceSession.create(model, options);
    } catch (e) {
      fail(`ONNX Runtime rejected ${model}: ${e.message}`);
    }
    const feeds = makeFeeds(ort, session, model);
    await session.run(feeds);  // warm-up: first-run allocations and lazy kernel setup
    benches.push({ model, session, feeds, ms: [] });
  }
  const now = o.clock === 'cpu' ? () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e3; }
                                : () => Number(process.hrtime.bigint()) / 1e6;
  for (let r = 0; r < o.runs; ++r) {
    for (let k = 0; k < benches.length; ++k) {
      const b = benches[(k + r) % benches.length];
      const t0 = now();
      await b.session.run(b.feeds);
      b.ms.push(now() - t0);
    }
  }
  for (const b of benches) {
    const ms = b.ms.sort((x, y) => x - y);
    const n = ms.length;
    const median = n % 2 ? ms[(n - 1) / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2;
    console.log(`median_ms=${median.toFixed(3)} min_ms=${ms[0].toFixed(3)} runs=${o.runs} threads=${o.threads} ` +
                `level=${o.level} clock=${o.clock} model=${b.model}`);
  }
}

// Seeded inputs in the shapes `session` declares; the same for every model of a run, so
// that models with the same inputs (a model before and after rewriting) get the same data.
function makeFeeds(ort, session, model) {
  const rand = filler(12345);
  const feeds = {};
  for (const name of session.inputNames) {
    const meta = (session.inputMetadata || []).find((m) => m.name === name);
    const shape = meta && meta.shape ? meta.shape.map((d) => (typeof d === 'number' && d > 0 ? d : 1)) : null;
    if (!shape) fail(`${model}: input '${name}': no shape in the model`);
    const n = shape.reduce((a, b) => a * b, 1);
    const type = meta.type || 'float32';
    if (type === 'float32') {
      const data = new Float32Array(n);
      for (let i = 0; i < n; ++i) data[i] = rand();
      feeds[name] = new ort.Tensor('float32', data, shape);
    } else if (type === 'int64') {
      feeds[name] = new ort.Tensor('int64', new BigInt64Array(n), shape);
    } else {
      fail(`${model}: input '${name}': element type ${type} not supported`);
    }
  }
  return feeds;
}

main().catch((e) => fail(e.stack || String(e)));
