#!/usr/bin/env node
// graphfuse's ONNX I/O beside ONNX Runtime's session creation, per model, interleaved:
// each round runs `graphfuse apply --rules rules/onnx MODEL -o OUT` (its own load, rewrite
// and save figures) and then creates an ORT session on the same file with
// optimizedModelFilePath (load, optimize at level `extended`, write the optimized model),
// timed around InferenceSession.create in this process. Medians over the rounds.
//
//   node bench/big/io_vs_ort.js --graphfuse build/graphfuse --rules rules/onnx [--runs 9] MODEL.onnx...
//
// onnxruntime-node comes from tests/ort/node_modules (tests/ort/install.sh).
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawnSync } = require('child_process');

const USAGE = 'usage: node io_vs_ort.js --graphfuse EXE --rules DIR [--runs N] [--level extended] MODEL.onnx...';

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

async function main() {
  const o = { runs: 9, level: 'extended', models: [] };
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; ++i) {
    if (argv[i] === '--graphfuse') o.graphfuse = argv[++i];
    else if (argv[i] === '--rules') o.rules = argv[++i];
    else if (argv[i] === '--runs') o.runs = Number(argv[++i]);
    else if (argv[i] === '--level') o.level = argv[++i];
    else if (argv[i].startsWith('--')) { console.error(USAGE); process.exit(2); }
    else o.models.push(argv[i]);
  }
  if (!o.graphfuse || !o.rules || o.models.length === 0) { console.error(USAGE); process.exit(2); }
  let ort;
  try {
    ort = require(path.join(__dirname, '../../tests/ort/node_modules/onnxruntime-node'));
  } catch (e) {
    console.error('onnxruntime-node is not installed (tests/ort/install.sh)');
    process.exit(77);
  }
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'graphfuse_io_vs_ort.'));
  console.log('| model | MB | graphfuse load | rewrite | save | load+rewrite+save | ORT create+save | ratio |');
  console.log('|---|---|---|---|---|---|---|---|');
  for (const model of o.models) {
    const t = { load: [], rewrite: [], save: [], ort: [] };
    for (let i = 0; i < o.runs; ++i) {
      const r = spawnSync(o.graphfuse, ['apply', '--rules', o.rules, model, '-o', path.join(work, 'out.onnx')],
                          { encoding: 'utf8' });
      const m = /time: load ([\d.]+) ms, rewrite ([\d.]+) ms, save ([\d.]+) ms/.exec(r.stdout || '');
      if (r.status !== 0 || !m) {
        console.error(`graphfuse failed on ${model}: ${r.stdout}${r.stderr}`);
        process.exit(1);
      }
      t.load.push(Number(m[1]));
      t.rewrite.push(Number(m[2]));
      t.save.push(Number(m[3]));
      const options = { executionProviders: ['cpu'], graphOptimizationLevel: o.level,
                        optimizedModelFilePath: path.join(work, 'ort.onnx') };
      const t0 = process.hrtime.bigint();
      const session = await ort.InferenceSession.create(model, options);
      t.ort.push(Number(process.hrtime.bigint() - t0) / 1e6);
      if (session.release) await session.release();
    }
    const total = t.load.map((x, k) => x + t.rewrite[k] + t.save[k]);
    const f = (xs) => median(xs).toFixed(1);
    const mb = (fs.statSync(model).size / 1e6).toFixed(1);
    console.log(`| ${path.basename(model)} | ${mb} | ${f(t.load)} | ${f(t.rewrite)} | ${f(t.save)} | ${f(total)} | ` +
                `${f(t.ort)} | ${(median(total) / median(t.ort)).toFixed(2)} |`);
  }
  fs.rmSync(work, { recursive: true, force: true });
}

main();
