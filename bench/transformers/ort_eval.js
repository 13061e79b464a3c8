#!/usr/bin/env node
// Runs several ONNX models on the same inputs with ONNX Runtime (onnxruntime-node, CPU) at the
// given graph optimization levels: every output compared with the reference model's (the first
// model at the first level), and latency from interleaved runs (model A, B, C, A, B, C, ...) so
// that load on the machine hits every model alike.
// usage: node ort_eval.js SPEC.json > RESULT.json
//   SPEC: {"feeds": {NAME: {"dtype": "float32"|"int64", "shape": [..], "file": RAW}},
//          "models": [{"key": K, "path": P}], "levels": ["disabled", "basic", "all"],
//          "threads": 1, "runs": 20, "warmup": 3, "min_ms": 0}
//   runs: interleaved rounds at least; min_ms: more rounds until each model ran that long in all
// RESULT: {K: {LEVEL: {"error": msg} | {"median_ms", "min_ms", "runs", "rel_err", "max_abs_err"}}}
// rel_err: max |out - ref| over every output divided by max |ref| of that output (the largest).
'use strict';

const fs = require('fs');
const path = require('path');

const ortDir = process.env.GRAPHFUSE_ORT_DIR || path.resolve(__dirname, '..', '..', 'tests', 'ort');
const ort = require(require.resolve('onnxruntime-node', { paths: [ortDir] }));

const TYPES = { float32: Float32Array, int64: BigInt64Array, int32: Int32Array };

function feedsOf(spec) {
  const feeds = {};
  for (const [name, f] of Object.entries(spec.feeds)) {
    const buf = fs.readFileSync(f.file);
    const T = TYPES[f.dtype];
    const data = new T(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength));
    feeds[name] = new ort.Tensor(f.dtype, data, f.shape);
  }
  return feeds;
}

function relErr(out, ref) {
  let worst = 0, worstAbs = 0;
  for (const name of Object.keys(ref)) {
    const a = out[name], r = ref[name];
    if (!a) return { rel: Infinity, abs: Infinity };
    if (a.dims.join('x') !== r.dims.join('x')) return { rel: Infinity, abs: Infinity };
    let mag = 0, diff = 0;
    for (let i = 0; i < r.data.length; ++i) {
      const rv = Number(r.data[i]), av = Number(a.data[i]);
      mag = Math.max(mag, Math.abs(rv));
      const d = Math.abs(av - rv);
      diff = Number.isNaN(d) ? Infinity : Math.max(diff, d);
    }
    worst = Math.max(worst, mag > 0 ? diff / mag : diff);
    worstAbs = Math.max(worstAbs, diff);
  }
  return { rel: worst, abs: worstAbs };
}

async function main() {
  const spec = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  const feeds = feedsOf(spec);
  const runs = spec.runs || 20, warmup = spec.warmup || 3, minMs = spec.min_ms || 0;
  const result = {};
  let ref = null;
  for (const level of spec.levels) {
    const live = [];
    for (const m of spec.models) {
      result[m.key] = result[m.key] || {};
      const opts = { executionProviders: ['cpu'], graphOptimizationLevel: level,
                     intraOpNumThreads: spec.threads || 1, interOpNumThreads: 1 };
      try {
        const session = await ort.InferenceSession.create(m.path, opts);
        const out = await session.run(feeds);
        if (!ref) ref = out;
        const e = relErr(out, ref);
        result[m.key][level] = { rel_err: e.rel, max_abs_err: e.abs, times: [] };
        live.push({ key: m.key, session });
      } catch (e) {
        result[m.key][level] = { error: String(e.message || e).split('\n')[0].slice(0, 200) };
      }
    }
    // At least `runs` rounds, and more until every model has run `min_ms` in all: 15 runs of
    // a 0.2 ms model are 3 ms of samples, which one descheduling on a shared machine skews.
    const spent = new Map(live.map((m) => [m.key, 0]));
    const cap = Math.max(runs, 1) * 200;
    for (let r = 0; r < warmup + cap; ++r) {
      if (r >= warmup + runs && live.every((m) => spent.get(m.key) >= minMs)) break;
      for (const m of live) {
        const t0 = process.hrtime.bigint();
        await m.session.run(feeds);
        const ms = Number(process.hrtime.bigint() - t0) / 1e6;
        if (r >= warmup) {
          result[m.key][level].times.push(ms);
          spent.set(m.key, spent.get(m.key) + ms);
        }
      }
    }
    for (const m of live) {
      const t = result[m.key][level].times.sort((a, b) => a - b);
      result[m.key][level].median_ms = t[Math.floor(t.length / 2)];
      result[m.key][level].min_ms = t[0];
      result[m.key][level].runs = t.length;
      delete result[m.key][level].times;
      if (m.session.release) await m.session.release();
    }
  }
  process.stdout.write(JSON.stringify(result, (k, v) => (v === Infinity ? 'inf' : v), 1) + '\n');
}

main().catch((e) => { console.error(`ort_eval: ${e.stack || e}`); process.exit(1); });
