#!/usr/bin/env node
// Times `graphfuse apply` with rules/onnx/*.yaml on every manifest model next to ONNX
// Runtime's session creation at level "extended" with optimizedModelFilePath (the nearest
// ORT equivalent: load, optimize, write the optimized model). Medians of N runs.
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawnSync } = require('child_process');

const USAGE = 'usage: node fused_timing.js --graphfuse EXE --rules DIR --models DIR [--runs N]';

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

function main() {
  const o = { runs: 7 };
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; ++i) {
    if (argv[i] === '--graphfuse') o.graphfuse = argv[++i];
    else if (argv[i] === '--rules') o.rules = argv[++i];
    else if (argv[i] === '--models') o.models = argv[++i];
    else if (argv[i] === '--runs') o.runs = Number(argv[++i]);
    else { console.error(USAGE); process.exit(2); }
  }
  if (!o.graphfuse || !o.rules || !o.models) { console.error(USAGE); process.exit(2); }
  const ruleArgs = fs.readdirSync(o.rules).filter((f) => f.endsWith('.yaml')).sort()
    .flatMap((f) => ['--rules', path.join(o.rules, f)]);
  const manifest = JSON.parse(fs.readFileSync(path.join(o.models, 'manifest.json'), 'utf8'));
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'graphfuse_timing.'));
  console.log('| model | graphfuse apply: load + rewrite + save = wall (ms) | ORT session create, extended + optimizedModelFilePath (ms) |');
  console.log('|---|---|---|');
  for (const key of Object.keys(manifest).sort()) {
    const model = path.join(o.models, manifest[key].file);
    const t = { load: [], rewrite: [], save: [], wall: [] };
    for (let i = 0; i < o.runs; ++i) {
      const t0 = process.hrtime.bigint();
      const r = spawnSync(o.graphfuse, ['apply', ...ruleArgs, model, '-o', path.join(work, 'out.onnx')], { encoding: 'utf8' });
      t.wall.push(Number(process.hrtime.bigint() - t0) / 1e6);
      const m = /time: load ([\d.]+) ms, rewrite ([\d.]+) ms, save ([\d.]+) ms/.exec(r.stdout || '');
      if (r.status !== 0 || !m) {
        console.error(`graphfuse failed on ${key}: ${r.stdout}${r.stderr}`);
        process.exit(1);
      }
      t.load.push(Number(m[1]));
      t.rewrite.push(Number(m[2]));
      t.save.push(Number(m[3]));
    }
    const ort = spawnSync(process.execPath, [path.join(__dirname, 'run_model.js'), model, '--model-key', key,
                                             '--manifest', path.join(o.models, 'manifest.json'), '--level', 'extended',
                                             '--optimized-out', path.join(work, 'ort.onnx'), '--bench', String(o.runs)],
                          { encoding: 'utf8' });
    const om = /median of \d+: create ([\d.]+) ms/.exec(ort.stdout || '');
    const f = (xs) => median(xs).toFixed(1);
    console.log(`| ${key} | ${f(t.load)} + ${f(t.rewrite)} + ${f(t.save)} = ${f(t.wall)} | ${om ? om[1] : 'n/a'} |`);
  }
  fs.rmSync(work, { recursive: true, force: true });
}

main();
