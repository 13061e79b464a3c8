#!/usr/bin/env node
// The ONNX Runtime judge for bench/quant/measure.py: runs several models on one seeded float32
// input, each at its own optimization level, saves ORT's optimized graph of each (to count the
// quantized kernels it made) and each output, and with --bench N times them interleaved
// (round r runs every model once, in a rotated order), 1 intra-op thread.
// usage: node judge.js SPEC.json OUT.json
//   SPEC.json: {"input": {"file": F, "shape": [..]}, "bench": N,
//               "runs": [{"key": K, "model": M, "level": L, "optimized": F|null, "output": F}]}
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require(path.resolve(__dirname, '..', '..', 'tests', 'ort', 'node_modules', 'onnxruntime-node'));

async function main() {
  const [specFile, outFile] = process.argv.slice(2);
  if (!outFile) { console.error('usage: node judge.js SPEC.json OUT.json'); process.exit(2); }
  const spec = JSON.parse(fs.readFileSync(specFile, 'utf8'));
  const buf = fs.readFileSync(spec.input.file);
  const data = new Float32Array(buf.buffer, buf.byteOffset, buf.length / 4);
  const result = {};
  const sessions = [];
  for (const r of spec.runs) {
    const opts = { graphOptimizationLevel: r.level, intraOpNumThreads: 1, interOpNumThreads: 1, logSeverityLevel: 3 };
    if (r.optimized) opts.optimizedModelFilePath = r.optimized;
    let s;
    try {
      s = await ort.InferenceSession.create(r.model, opts);
    } catch (e) {
      result[r.key] = { error: String(e.message).slice(0, 400) };
      continue;
    }
    const feeds = { [s.inputNames[0]]: new ort.Tensor('float32', data, spec.input.shape) };
    try {
      const out = await s.run(feeds);
      const t = out[s.outputNames[0]];
      fs.writeFileSync(r.output, Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength));
      result[r.key] = { ok: true, times: [] };
      sessions.push({ key: r.key, s, feeds });
    } catch (e) {
      result[r.key] = { error: String(e.message).slice(0, 400) };
    }
  }
  const n = spec.bench || 0;
  for (let round = 0; round < n; ++round) {
    for (let k = 0; k < sessions.length; ++k) {
      const x = sessions[(k + round) % sessions.length];
      const t0 = process.hrtime.bigint();
      await x.s.run(x.feeds);
      result[x.key].times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
  }
  fs.writeFileSync(outFile, JSON.stringify(result, null, 1));
}
main().catch((e) => { console.error(`judge: ${e.message}`); process.exit(1); });
