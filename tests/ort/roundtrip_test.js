#!/usr/bin/env node
// For every model in a manifest: convert it (graphfuse), run original and converted model in
// ONNX Runtime, and check both against the reference outputs and against each other.
'use strict';

const fs = require('fs');
const path = require('path');
const { spawnSync } = require('child_process');

const USAGE = `usage: node roundtrip_test.js --models DIR --work DIR [--rtol R] [--only KEY,KEY]
                         --convert EXE ARG... ({in} and {out} stand for the model paths)
  Converts every manifest model with the command after --convert (all remaining
  arguments), runs both models on CPU with the io/ inputs, and requires: original vs
  reference, converted vs reference and converted vs original all within rtol (1e-4).`;

function parseArgs(argv) {
  const o = { rtol: '1e-4', only: null };
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    if (a === '--models') o.models = argv[++i];
    else if (a === '--work') o.work = argv[++i];
    else if (a === '--rtol') o.rtol = argv[++i];
    else if (a === '--only') o.only = argv[++i].split(',');
    else if (a === '--convert') { o.convert = argv.slice(i + 1); break; }
    else { console.error(USAGE); process.exit(2); }
  }
  if (!o.models || !o.work || !o.convert || !o.convert.length) { console.error(USAGE); process.exit(2); }
  return o;
}

function run(cmd, args) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  const text = ((r.stdout || '') + (r.stderr || '')).trim();
  return { ok: r.status === 0, ms, text: r.error ? String(r.error) : text };
}

function main() {
  const o = parseArgs(process.argv.slice(2));
  const manifestFile = path.join(o.models, 'manifest.json');
  const manifest = JSON.parse(fs.readFileSync(manifestFile, 'utf8'));
  const node = process.execPath;
  const runModel = path.join(__dirname, 'run_model.js');
  const compare = path.join(__dirname, 'compare.js');
  let failures = 0;
  const check = (label, r) => {
    if (!r.ok) ++failures;
    console.log(`  ${r.ok ? 'ok  ' : 'FAIL'} ${label}${r.text ? '\n      ' + r.text.split('\n').join('\n      ') : ''}`);
    return r.ok;
  };
  for (const key of Object.keys(manifest).sort()) {
    if (o.only && !o.only.includes(key)) continue;
    const entry = manifest[key];
    const input = path.join(o.models, entry.file);
    const dir = path.join(o.work, key);
    fs.mkdirSync(dir, { recursive: true });
    const converted = path.join(dir, entry.file);
    console.log(`${key}:`);
    const args = o.convert.slice(1).map((a) => a.replace('{in}', input).replace('{out}', converted));
    const conv = run(o.convert[0], args);
    if (!check(`convert (${conv.ms.toFixed(0)} ms)`, conv)) continue;
    const common = ['--manifest', manifestFile, '--model-key', key];
    const orig = run(node, [runModel, input, ...common, '--out', path.join(dir, 'orig')]);
    const mine = run(node, [runModel, converted, ...common, '--out', path.join(dir, 'converted')]);
    const okOrig = check('ONNX Runtime runs the original', orig);
    const okMine = check('ONNX Runtime runs the converted model', mine);
    const refs = [];
    (entry.io_outputs || []).forEach((io, k) => refs.push([`output${k}.bin`, path.join(o.models, io.ref_file)]));
    if (okOrig)
      for (const [out, ref] of refs)
        check('original vs reference', run(node, [compare, path.join(dir, 'orig', out), ref, '--rtol', o.rtol]));
    if (okMine)
      for (const [out, ref] of refs)
        check('converted vs reference', run(node, [compare, path.join(dir, 'converted', out), ref, '--rtol', o.rtol]));
    if (okOrig && okMine)
      check('converted vs original',
            run(node, [compare, path.join(dir, 'converted'), path.join(dir, 'orig'), '--rtol', o.rtol]));
  }
  console.log(failures ? `${failures} check(s) failed` : 'all checks passed');
  process.exit(failures ? 1 : 0);
}

main();
