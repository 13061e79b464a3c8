#!/usr/bin/env node
// The TF.js judge: runs an original and a rewritten TF.js graph model (model.json + shards)
// on the same seeded inputs with TensorFlow.js's cpu and wasm backends, compares every output
// within a tolerance of the output's largest magnitude, and times both.
'use strict';

const fs = require('fs');
const path = require('path');

const USAGE = `usage: node judge.js ORIGINAL/model.json REWRITTEN/model.json [options]
  --backends LIST  comma-separated: cpu, wasm (default cpu,wasm)
  --tol T          |a - b| <= T x max|original output| per output (default 1e-4)
  --runs N         timed runs per model and backend after one warm-up (default 0: no timing)
  --threads N      wasm threads (default 1)
  --seed S         input seed (default 1)
  --batch B        size for unknown (-1) dimensions (default 1)
  --shape N=D,D..  input N (name without ':0' or with it) gets this shape; N= is a scalar
                   (for inputs of unknown rank, such as a recurrent model's state)
  --fill N=V       input N holds V everywhere instead of seeded values (a ratio, a zero state)
  --clock C        wall (default) or cpu: the process's CPU time (user + system) per run,
                   which other processes on a loaded machine disturb far less than wall time
                   (the wasm backend on 1 thread computes on the calling thread)
  --json           one JSON line per backend instead of text
  Exit 0: every output agrees on every backend; 1: a disagreement or a model TF.js
  refuses; 2: bad usage or a file that cannot be read.`;

function fail(msg, code = 2) {
  console.error(`judge: ${msg}`);
  process.exit(code);
}

function parseArgs(argv) {
  const o = { models: [], backends: ['cpu', 'wasm'], tol: 1e-4, runs: 0, threads: 1, seed: 1, batch: 1, json: false, shapes: {}, fills: {}, clock: 'wall' };
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) fail(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--backends') o.backends = next().split(',').filter(Boolean);
    else if (a === '--tol') o.tol = Number(next());
    else if (a === '--runs') o.runs = Number(next());
    else if (a === '--threads') o.threads = Number(next());
    else if (a === '--seed') o.seed = Number(next());
    else if (a === '--batch') o.batch = Number(next());
    else if (a === '--json') o.json = true;
    else if (a === '--clock') {
      o.clock = next();
      if (o.clock !== 'wall' && o.clock !== 'cpu') fail(`--clock is wall or cpu, not ${o.clock}`);
    }
    else if (a === '--shape' || a === '--fill') {
      const v = next();
      const eq = v.indexOf('=');
      if (eq <= 0) fail(`${a} wants NAME=VALUE, not ${v}`);
      const name = v.slice(0, eq).replace(/:0$/, ''), rest = v.slice(eq + 1);
      if (a === '--fill') {
        if (rest === '' || !Number.isFinite(Number(rest))) fail(`${a} ${v}: not a number`);
        o.fills[name] = Number(rest);
      } else {
        const dims = rest === '' ? [] : rest.split(',').map(Number);
        if (dims.some((d) => !Number.isInteger(d) || d < 0)) fail(`${a} ${v}: dims are integers >= 0`);
        o.shapes[name] = dims;
      }
    }
    else if (a === '-h' || a === '--help') { console.log(USAGE); process.exit(0); }
    else if (a.startsWith('--')) fail(`unknown option ${a}\n${USAGE}`);
    else o.models.push(a);
  }
  if (o.models.length !== 2) fail(USAGE);
  for (const b of o.backends) if (b !== 'cpu' && b !== 'wasm') fail(`unknown backend ${b}`);
  return o;
}

// A TF.js IOHandler reading model.json and its shards from the file system (tfjs-node is
// not needed for that, and it would bring a native TensorFlow the judge must not depend on).
function fileHandler(tf, modelPath) {
  return {
    load: async () => {
      let model;
      try {
        model = JSON.parse(fs.readFileSync(modelPath, 'utf8'));
      } catch (e) {
        fail(`${modelPath}: ${e.message}`);
      }
      const dir = path.dirname(modelPath);
      const specs = [];
      const buffers = [];
      for (const group of model.weightsManifest || []) {
        specs.push(...group.weights);
        for (const p of group.paths) buffers.push(fs.readFileSync(path.join(dir, p)));
      }
      const all = Buffer.concat(buffers);
      return {
        modelTopology: model.modelTopology,
        weightSpecs: specs,
        weightData: all.buffer.slice(all.byteOffset, all.byteOffset + all.byteLength),
        format: model.format,
        generatedBy: model.generatedBy,
        convertedBy: model.convertedBy,
        signature: model.signature,
        userDefinedMetadata: model.userDefinedMetadata,
        modelInitializer: model.modelInitializer,
      };
    },
  };
}

// mulberry32: a small seeded generator, so both models see the very same inputs.
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function makeInputs(tf, model, o) {
  const next = rng(o.seed);
  const feeds = {};
  for (const inp of model.inputs) {
    const key = inp.name.replace(/:0$/, '');
    const shape = o.shapes[key] || (inp.shape || []).map((d) => (d == null || d < 0 ? o.batch : d));
    const n = shape.reduce((a, b) => a * b, 1);
    const dtype = inp.dtype || 'float32';
    let values;
    if (key in o.fills) values = Array(n).fill(o.fills[key]);
    else if (dtype === 'int32') values = Int32Array.from({ length: n }, () => Math.floor(next() * 10));
    else if (dtype === 'bool') values = Uint8Array.from({ length: n }, () => (next() < 0.5 ? 1 : 0));
    else values = Float32Array.from({ length: n }, () => next() * 2 - 1);
    feeds[inp.name] = tf.tensor(values, shape, dtype);
  }
  return feeds;
}

async function runOnce(tf, model, feeds) {
  const names = model.outputs.map((t) => t.name);
  // execute() where the graph has no control flow (faster, and what an app would call).
  let out;
  try {
    out = model.execute(feeds, names);
  } catch (e) {
    out = await model.executeAsync(feeds, names);
  }
  if (!Array.isArray(out)) out = [out];
  const arrays = [];
  for (const t of out) {
    arrays.push(await t.data());
    t.dispose();
  }
  return arrays;
}

async function timeRuns(tf, model, feeds, runs, clock) {
  const times = [];
  for (let r = 0; r < runs; ++r) {
    if (clock === 'cpu') {
      const c0 = process.cpuUsage();
      await runOnce(tf, model, feeds);
      const c = process.cpuUsage(c0);
      times.push((c.user + c.system) / 1e3);
      continue;
    }
    const t0 = process.hrtime.bigint();
    await runOnce(tf, model, feeds);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  times.sort((a, b) => a - b);
  return times.length ? times[Math.floor(times.length / 2)] : null;
}

function compare(a, b, tol) {
  if (a.length !== b.length) return { ok: false, why: `${a.length} vs ${b.length} outputs` };
  let worst = 0;
  for (let k = 0; k < a.length; ++k) {
    if (a[k].length !== b[k].length) return { ok: false, why: `output ${k}: ${a[k].length} vs ${b[k].length} elements` };
    let scale = 0;
    for (const v of a[k]) if (Number.isFinite(v)) scale = Math.max(scale, Math.abs(v));
    for (let i = 0; i < a[k].length; ++i) {
      const x = a[k][i], y = b[k][i];
      if (Number.isNaN(x) && Number.isNaN(y)) continue;
      const d = Math.abs(x - y) / (scale > 0 ? scale : 1);
      if (!(d <= worst)) worst = Number.isNaN(d) ? Infinity : d;
    }
  }
  return { ok: worst <= tol, worst };
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  for (const m of o.models) if (!fs.existsSync(m)) fail(`no such file: ${m}`);
  console.warn = () => {};  // TF.js's advice about tfjs-node and execute() is noise here
  const tf = require('@tensorflow/tfjs-core');
  require('@tensorflow/tfjs-backend-cpu');
  const wasm = require('@tensorflow/tfjs-backend-wasm');
  const converter = require('@tensorflow/tfjs-converter');
  wasm.setThreadsCount(o.threads);
  let allOk = true;
  for (const backend of o.backends) {
    await tf.setBackend(backend);
    await tf.ready();
    const results = [];
    const models = [];
    for (const m of o.models) {
      try {
        models.push(await converter.loadGraphModel(fileHandler(tf, m)));
      } catch (e) {
        fail(`${backend}: TF.js cannot load ${m}: ${e.message}`, 1);
      }
    }
    const feeds = makeInputs(tf, models[0], o);
    for (let k = 0; k < 2; ++k) {
      try {
        results.push(await runOnce(tf, models[k], feeds));
      } catch (e) {
        fail(`${backend}: TF.js refuses ${o.models[k]}: ${e.message}`, 1);
      }
    }
    const c = compare(results[0], results[1], o.tol);
    const ms = [null, null];
    if (o.runs > 0) {
      // Interleaved, so a load change on the machine touches both alike.
      const per = [[], []];
      for (let r = 0; r < o.runs; ++r)
        for (let k = 0; k < 2; ++k) per[k].push(await timeRuns(tf, models[k], feeds, 1, o.clock));
      for (let k = 0; k < 2; ++k) ms[k] = per[k].sort((a, b) => a - b)[Math.floor(o.runs / 2)];
    }
    for (const t of Object.values(feeds)) t.dispose();
    if (o.json) {
      console.log(JSON.stringify({ backend, agree: c.ok, worst: c.worst ?? null, why: c.why ?? null,
                                   original_ms: ms[0], rewritten_ms: ms[1], threads: o.threads, clock: o.clock }));
    } else {
      const timing = o.runs > 0 ? ` original ${ms[0].toFixed(2)} ms, rewritten ${ms[1].toFixed(2)} ms (${o.clock} time, median of ${o.runs})` : '';
      console.log(`${backend}: ${c.ok ? 'agree' : 'DISAGREE'} (${c.why || `max diff ${c.worst.toExponential(2)} of max |output|`})${timing}`);
    }
    allOk = allOk && c.ok;
  }
  process.exit(allOk ? 0 : 1);
}

// bench/tf/latency.js reuses the loading, inputs and running; run directly, this is the judge.
module.exports = { parseArgs, fileHandler, makeInputs, runOnce, compare,
  // TF.js resolved from this folder's node_modules (tests/tfjs/install.sh), whoever requires.
  loadTf: (threads) => {
    const tf = require('@tensorflow/tfjs-core');
    require('@tensorflow/tfjs-backend-cpu');
    require('@tensorflow/tfjs-backend-wasm').setThreadsCount(threads);
    return { tf, converter: require('@tensorflow/tfjs-converter') };
  } };
if (require.main === module) main().catch((e) => fail(e.stack || String(e)));
