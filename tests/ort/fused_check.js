#!/usr/bin/env node
// Checks fused models: counts their fused nodes against per-model targets (read from the
// ONNX file itself, independently of graphfuse), and runs them in ONNX Runtime with graph
// optimization disabled, so that ORT executes graphfuse's fused nodes exactly as written.
'use strict';

const fs = require('fs');
const path = require('path');
const { spawnSync } = require('child_process');

const USAGE = `usage: node fused_check.js --models DIR --work DIR [--rtol R] [--only KEY,KEY] [--no-run]
  For every manifest model, reads WORK/<key>/<file> (the fused model written by
  roundtrip_test.js --convert), counts its fused nodes, checks the counts against the
  targets below, and (unless --no-run) runs it in ONNX Runtime at optimization level
  "disabled", comparing the outputs with the references within rtol (1e-4).
  --counts-only FILE...   just print the fused-node counts of ONNX files`;

// Fused-node targets: at least what ONNX Runtime 1.30's "extended" optimizer makes of each
// model, plus the residual FusedConvs it leaves out. mobilenet_v2.raw reaches mobilenet_v2's
// counts once rules/onnx/batchnorm.yaml and constant folding fold its BatchNormalizations.
// A target { exactly: n } must be met exactly: the opset-13 transformer must get no
// LayerNormalization (the op exists from opset 17), and in the opset-17 one every
// LayerNormalization follows a residual Add, so all of them become SkipLayerNormalization.
const TARGETS = {
  resnet18: { 'FusedConv(act)': 9, 'FusedConv(act,Z)': 8 },
  mobilenet_v2: { 'FusedConv(act)': 35, 'FusedConv(Z)': 10 },
  'mobilenet_v2.raw': { 'FusedConv(act)': 35, 'FusedConv(Z)': 10 },
  squeezenet1_1: { 'FusedConv(act)': 26 },
  transformer_encoder: { FusedMatMul: 8, SkipLayerNormalization: 8, LayerNormalization: { exactly: 0 } },
  'transformer_encoder.opset17': { FusedMatMul: 8, SkipLayerNormalization: 8, LayerNormalization: { exactly: 0 } },
};

// ---- a minimal protobuf reader: just the ModelProto fields the counts need ----

function readVarint(buf, pos) {
  let v = 0n, shift = 0n;
  for (;;) {
    if (pos >= buf.length) throw new Error('truncated varint');
    const b = buf[pos++];
    v |= BigInt(b & 0x7f) << shift;
    if (!(b & 0x80)) return [v, pos];
    shift += 7n;
  }
}

// Calls fn(field, wireType, value) for each field of the message in buf[start, end);
// value is a BigInt (varint), a [start, end) pair (length-delimited) or a byte offset (fixed).
function fields(buf, start, end, fn) {
  let pos = start;
  while (pos < end) {
    let key;
    [key, pos] = readVarint(buf, pos);
    const field = Number(key >> 3n), wire = Number(key & 7n);
    if (wire === 0) {
      let v;
      [v, pos] = readVarint(buf, pos);
      fn(field, wire, v);
    } else if (wire === 2) {
      let len;
      [len, pos] = readVarint(buf, pos);
      const s = pos, e = pos + Number(len);
      if (e > end) throw new Error('truncated field');
      fn(field, wire, [s, e]);
      pos = e;
    } else if (wire === 5) {
      fn(field, wire, pos);
      pos += 4;
    } else if (wire === 1) {
      fn(field, wire, pos);
      pos += 8;
    } else {
      throw new Error(`unsupported wire type ${wire}`);
    }
  }
}

const str = (buf, [s, e]) => buf.toString('utf8', s, e);

// AttributeProto -> {name, value}: the scalar kinds and int/float lists only.
function readAttribute(buf, range) {
  const a = { name: '', value: undefined };
  const list = [];
  fields(buf, range[0], range[1], (f, w, v) => {
    if (f === 1) a.name = str(buf, v);
    else if (f === 2 && w === 5) a.value = buf.readFloatLE(v);
    else if (f === 3 && w === 0) a.value = Number(BigInt.asIntN(64, v));
    else if (f === 4) a.value = str(buf, v);
    else if (f === 7 && w === 5) list.push(buf.readFloatLE(v));
    else if (f === 7 && w === 2) for (let p = v[0]; p < v[1]; p += 4) list.push(buf.readFloatLE(p));
    else if (f === 8 && w === 0) list.push(Number(BigInt.asIntN(64, v)));
    else if (f === 8 && w === 2) {
      for (let p = v[0]; p < v[1];) {
        let x;
        [x, p] = readVarint(buf, p);
        list.push(Number(BigInt.asIntN(64, x)));
      }
    }
  });
  if (a.value === undefined && list.length) a.value = list;
  return a;
}

/// The nodes of an ONNX model's main graph: {op, domain, inputs, attrs}.
function readNodes(file) {
  const buf = fs.readFileSync(file);
  const nodes = [];
  fields(buf, 0, buf.length, (f, w, graph) => {
    if (f !== 7 || w !== 2) return;  // ModelProto.graph
    fields(buf, graph[0], graph[1], (gf, gw, node) => {
      if (gf !== 1 || gw !== 2) return;  // GraphProto.node
      const n = { op: '', domain: '', inputs: [], attrs: {} };
      fields(buf, node[0], node[1], (nf, nw, v) => {
        if (nf === 1) n.inputs.push(str(buf, v));
        else if (nf === 4) n.op = str(buf, v);
        else if (nf === 7) n.domain = str(buf, v);
        else if (nf === 5) {
          const a = readAttribute(buf, v);
          n.attrs[a.name] = a.value;
        }
      });
      nodes.push(n);
    });
  });
  return nodes;
}

/// Fused-node counts by kind. FusedConv is split by what it fuses: an activation, a residual
/// input Z (a fourth, non-empty input), or both.
function countFused(nodes) {
  const c = {};
  const bump = (k) => { c[k] = (c[k] || 0) + 1; };
  for (const n of nodes) {
    const ms = n.domain === 'com.microsoft';
    if (ms && n.op === 'FusedConv') {
      const z = n.inputs.length >= 4 && n.inputs[3] !== '';
      const act = typeof n.attrs.activation === 'string' && n.attrs.activation !== '';
      bump(`FusedConv(${[act ? 'act' : '', z ? 'Z' : ''].filter(Boolean).join(',') || 'plain'})`);
      if (act) bump(`FusedConv activation=${n.attrs.activation}`);
    } else if (ms || n.op === 'LayerNormalization' || n.op === 'Gemm') {
      bump(n.op);
    }
  }
  return c;
}

// ---- the checks ----

function parseArgs(argv) {
  const o = { rtol: '1e-4', only: null, run: true };
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    if (a === '--models') o.models = argv[++i];
    else if (a === '--work') o.work = argv[++i];
    else if (a === '--rtol') o.rtol = argv[++i];
    else if (a === '--only') o.only = argv[++i].split(',');
    else if (a === '--no-run') o.run = false;
    else if (a === '--counts-only') { o.countsOnly = argv.slice(i + 1); break; }
    else { console.error(USAGE); process.exit(2); }
  }
  if (!o.countsOnly && (!o.models || !o.work)) { console.error(USAGE); process.exit(2); }
  return o;
}

function run(cmd, args) {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  const text = ((r.stdout || '') + (r.stderr || '')).trim();
  return { ok: r.status === 0, text: r.error ? String(r.error) : text };
}

function formatCounts(c) {
  const keys = Object.keys(c).sort();
  return keys.length ? keys.map((k) => `${k} ${c[k]}`).join(', ') : 'no fused nodes';
}

function main() {
  const o = parseArgs(process.argv.slice(2));
  if (o.countsOnly) {
    for (const f of o.countsOnly) console.log(`${f}: ${formatCounts(countFused(readNodes(f)))}`);
    return;
  }
  const manifestFile = path.join(o.models, 'manifest.json');
  const manifest = JSON.parse(fs.readFileSync(manifestFile, 'utf8'));
  let failures = 0;
  const check = (ok, label, text) => {
    if (!ok) ++failures;
    console.log(`  ${ok ? 'ok  ' : 'FAIL'} ${label}${text ? '\n      ' + text.split('\n').join('\n      ') : ''}`);
  };
  for (const key of Object.keys(manifest).sort()) {
    if (o.only && !o.only.includes(key)) continue;
    const entry = manifest[key];
    const dir = path.join(o.work, key);
    const fused = path.join(dir, entry.file);
    console.log(`${key}:`);
    if (!fs.existsSync(fused)) {
      check(false, `fused model ${fused} exists`);
      continue;
    }
    let counts;
    try {
      counts = countFused(readNodes(fused));
    } catch (e) {
      check(false, `read ${fused}`, e.message);
      continue;
    }
    console.log(`  fused nodes: ${formatCounts(counts)}`);
    const target = TARGETS[key];
    if (!target) console.log('  (no fused-node target for this model)');
    for (const [kind, want] of Object.entries(target || {})) {
      const have = counts[kind] || 0;
      if (typeof want === 'object') check(have === want.exactly, `${kind}: ${have} == ${want.exactly}`);
      else check(have >= want, `${kind}: ${have} >= ${want}`);
    }
    if (!o.run) continue;
    const out = path.join(dir, 'fused_unoptimized');
    const r = run(process.execPath, [path.join(__dirname, 'run_model.js'), fused, '--manifest', manifestFile,
                                     '--model-key', key, '--level', 'disabled', '--out', out]);
    check(r.ok, 'ONNX Runtime runs the fused model with optimizations disabled', r.ok ? '' : r.text);
    if (!r.ok) continue;
    (entry.io_outputs || []).forEach((io, k) => {
      const c = run(process.execPath, [path.join(__dirname, 'compare.js'), path.join(out, `output${k}.bin`),
                                       path.join(o.models, io.ref_file), '--rtol', o.rtol]);
      check(c.ok, `fused (unoptimized) vs reference, output ${k}`, c.text);
    });
  }
  console.log(failures ? `${failures} check(s) failed` : 'all checks passed');
  process.exit(failures ? 1 : 0);
}

if (require.main === module) main();

module.exports = { readNodes, countFused };
