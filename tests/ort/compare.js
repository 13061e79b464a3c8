#!/usr/bin/env node
// Compares raw float32 outputs (files or run_model.js output folders) within rtol/atol; exit 1 on mismatch.
'use strict';

const fs = require('fs');
const path = require('path');

const USAGE = `usage: node compare.js A B [A2 B2 ...] [--rtol R] [--atol A] [--quiet]
  A, B        two raw little-endian float32 files, or two folders written by
              run_model.js --out (every output<k>.bin of A is compared with B's)
  --rtol R    relative tolerance (default 1e-4)
  --atol A    absolute tolerance (default: rtol x the largest |B| of that output, so
              values near zero are judged on the output's scale, not their own)
  Element i matches when |a - b| <= atol + rtol * |b| (NaN matches NaN only).
  Exit 0: all match; 1: a mismatch or a size difference; 2: bad usage or missing files.`;

function fail(msg) {
  console.error(`compare: ${msg}`);
  process.exit(2);
}

function parseArgs(argv) {
  const o = { paths: [], rtol: 1e-4, atol: null, quiet: false };
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    const num = () => {
      const v = Number(argv[++i]);
      if (!Number.isFinite(v) || v < 0) fail(`${a} needs a non-negative number`);
      return v;
    };
    if (a === '--rtol') o.rtol = num();
    else if (a === '--atol') o.atol = num();
    else if (a === '--quiet') o.quiet = true;
    else if (a === '-h' || a === '--help') { console.log(USAGE); process.exit(0); }
    else if (a.startsWith('--')) fail(`unknown option ${a}\n${USAGE}`);
    else o.paths.push(a);
  }
  if (o.paths.length === 0 || o.paths.length % 2) fail(USAGE);
  return o;
}

// Expands folder pairs into file pairs (by output<k>.bin name); files stay as given.
function filePairs(paths) {
  const pairs = [];
  for (let i = 0; i < paths.length; i += 2) {
    const [a, b] = [paths[i], paths[i + 1]];
    for (const p of [a, b]) if (!fs.existsSync(p)) fail(`no such file or folder: ${p}`);
    if (fs.statSync(a).isDirectory()) {
      const names = fs.readdirSync(a).filter((n) => /^output\d+\.bin$/.test(n)).sort();
      if (!names.length) fail(`${a} holds no output<k>.bin files`);
      for (const n of names) pairs.push([path.join(a, n), path.join(b, n)]);
    } else {
      pairs.push([a, b]);
    }
  }
  return pairs;
}

function floats(file) {
  if (!fs.existsSync(file)) fail(`no such file: ${file}`);
  const buf = fs.readFileSync(file);
  if (buf.length % 4) fail(`${file}: ${buf.length} bytes is not a whole number of float32s`);
  const out = new Float32Array(buf.length / 4);
  new Uint8Array(out.buffer).set(buf);
  return out;
}

function compare(aFile, bFile, o) {
  const a = floats(aFile), b = floats(bFile);
  if (a.length !== b.length) return { ok: false, text: `${a.length} vs ${b.length} elements` };
  let scale = 0;
  for (const v of b) if (Number.isFinite(v)) scale = Math.max(scale, Math.abs(v));
  const atol = o.atol !== null ? o.atol : o.rtol * scale;
  let bad = 0, first = -1, maxAbs = 0;
  for (let i = 0; i < a.length; ++i) {
    const x = a[i], y = b[i];
    let ok;
    if (Number.isNaN(x) || Number.isNaN(y)) ok = Number.isNaN(x) && Number.isNaN(y);
    else if (!Number.isFinite(x) || !Number.isFinite(y)) ok = x === y;
    else {
      const d = Math.abs(x - y);
      maxAbs = Math.max(maxAbs, d);
      ok = d <= atol + o.rtol * Math.abs(y);
    }
    if (!ok && bad++ === 0) first = i;
  }
  const rel = scale > 0 ? maxAbs / scale : maxAbs;
  let text = `${a.length} elements, max |a-b| ${maxAbs.toExponential(3)} (${rel.toExponential(3)} of max |b|), ` +
             `atol ${atol.toExponential(2)} rtol ${o.rtol}`;
  if (bad) text += `; ${bad} mismatch(es), first at [${first}]: ${a[first]} vs ${b[first]}`;
  return { ok: bad === 0, text };
}

function main() {
  const o = parseArgs(process.argv.slice(2));
  let failed = 0;
  for (const [a, b] of filePairs(o.paths)) {
    const r = compare(a, b, o);
    if (!r.ok) ++failed;
    if (!r.ok || !o.quiet) console.log(`${r.ok ? 'ok      ' : 'MISMATCH'} ${a} vs ${b}: ${r.text}`);
  }
  process.exit(failed ? 1 : 0);
}

main();
