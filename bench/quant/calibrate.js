#!/usr/bin/env node
// MinMax calibration for bench/quant/quantize.py: runs a float model whose every float tensor
// is a graph output (the quantizer writes it) with ONNX Runtime, level disabled so that the
// tensors are the model's own, on each input set listed, and writes {tensor: [min, max]} over
// all runs.
// usage: node calibrate.js MODEL.onnx SPEC.json OUT.json
//   SPEC.json: {"runs": [{"NAME": {"file": "x.bin", "shape": [..]}, ...}, ...]}  (float32 raw)
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require(path.resolve(__dirname, '..', '..', 'tests', 'ort', 'node_modules', 'onnxruntime-node'));

async function main() {
  const [model, specFile, outFile] = process.argv.slice(2);
  if (!outFile) { console.error('usage: node calibrate.js MODEL.onnx SPEC.json OUT.json'); process.exit(2); }
  const spec = JSON.parse(fs.readFileSync(specFile, 'utf8'));
  const session = await ort.InferenceSession.create(model, { graphOptimizationLevel: 'disabled', intraOpNumThreads: 1, logSeverityLevel: 3 });
  const ranges = {};
  for (const run of spec.runs) {
    const feeds = {};
    for (const [name, t] of Object.entries(run)) {
      const buf = fs.readFileSync(t.file);
      feeds[name] = new ort.Tensor('float32', new Float32Array(buf.buffer, buf.byteOffset, buf.length / 4), t.shape);
    }
    const out = await session.run(feeds);
    for (const [name, t] of Object.entries(out)) {
      if (t.type !== 'float32') continue;
      let lo = Infinity, hi = -Infinity;
      for (const v of t.data) { if (v < lo) lo = v; if (v > hi) hi = v; }
      const r = ranges[name];
      ranges[name] = r ? [Math.min(r[0], lo), Math.max(r[1], hi)] : [lo, hi];
    }
  }
  fs.writeFileSync(outFile, JSON.stringify(ranges));
}
main().catch((e) => { console.error(`calibrate: ${e.message}`); process.exit(1); });
