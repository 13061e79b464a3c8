#!/usr/bin/env node
// Runs an ONNX model with ONNX Runtime (CPU) on raw little-endian inputs: the judge for graphfuse.
'use strict';

const fs = require('fs');
const path = require('path');

const USAGE = `usage: node run_model.js MODEL.onnx [options]
  --input NAME=FILE[:D0xD1x...]  raw little-endian input (float32 unless the model says
                                 otherwise); the shape comes from the suffix, the model, or
                                 the manifest, in that order. Repeatable.
  --manifest FILE                manifest.json with io_inputs (default: ../shared/models)
  --model-key KEY                manifest entry to take inputs and shapes from (default:
                                 the entry whose file name matches MODEL)
  --out DIR                      write output<k>.bin and outputs.json there
  --optimized-out FILE           save ORT's optimized model (optimizedModelFilePath)
  --level disabled|basic|extended|all   graph optimization level (default all)
  --threads N                    intra-op threads (default: ORT's choice)
  --bench N                      create the session N times and run N times; report times
  --quiet                        print nothing but errors`;

const DEFAULT_MANIFEST = path.resolve(__dirname, '..', '..', '..', 'shared', 'models', 'manifest.json');

const ARRAYS = {
  float32: Float32Array, float64: Float64Array, int8: Int8Array, uint8: Uint8Array,
  int16: Int16Array, uint16: Uint16Array, int32: Int32Array, uint32: Uint32Array,
  int64: BigInt64Array, uint64: BigUint64Array, bool: Uint8Array,
};

function fail(msg, code = 2) {
  console.error(`run_model: ${msg}`);
  process.exit(code);
}

function parseArgs(argv) {
  const o = { inputs: [], manifest: DEFAULT_MANIFEST, level: 'all', bench: 0, quiet: false };
  const need = (i) => (i + 1 < argv.length ? argv[i + 1] : fail(`${argv[i]} needs a value\n${USAGE}`));
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    if (a === '--input') o.inputs.push(need(i++));
    else if (a === '--manifest') o.manifest = need(i++);
    else if (a === '--model-key') o.modelKey = need(i++);
    else if (a === '--out') o.out = need(i++);
    else if (a === '--optimized-out') o.optimizedOut = need(i++);
    else if (a === '--level') o.level = need(i++);
    else if (a === '--threads') o.threads = Number(need(i++));
    else if (a === '--bench') o.bench = Number(need(i++));
    else if (a === '--quiet') o.quiet = true;
    else if (a === '-h' || a === '--help') { console.log(USAGE); process.exit(0); }
    else if (a.startsWith('--')) fail(`unknown option ${a}\n${USAGE}`);
    else if (!o.model) o.model = a;
    else fail(`unexpected argument ${a}\n${USAGE}`);
  }
  if (!o.model) fail(USAGE);
  if (!['disabled', 'basic', 'extended', 'all'].includes(o.level)) fail(`bad --level ${o.level}`);
  return o;
}

// The manifest entry for this model: by --model-key, else by file name.
function manifestEntry(o) {
  if (!fs.existsSync(o.manifest)) return null;
  const manifest = JSON.parse(fs.readFileSync(o.manifest, 'utf8'));
  if (o.modelKey) {
    if (!manifest[o.modelKey]) fail(`no entry '${o.modelKey}' in ${o.manifest}`);
    return manifest[o.modelKey];
  }
  const base = path.basename(o.model);
  return Object.values(manifest).find((e) => e.file === base) || null;
}

// One input's feed: FILE bytes as the model's element type, in the first known shape.
function makeFeed(ort, spec, meta, entry) {
  const { name, file, shape: explicit } = spec;
  const type = meta && meta.isTensor && meta.type ? meta.type : 'float32';
  const Arr = ARRAYS[type];
  if (!Arr) fail(`input '${name}': element type ${type} is not supported`);
  let shape = explicit;
  if (!shape && meta && meta.isTensor && meta.shape && meta.shape.length &&
      meta.shape.every((d) => typeof d === 'number' && d >= 0)) shape = meta.shape;
  if (!shape && entry) {
    const io = (entry.io_inputs || []).find((x) => x.name === name);
    if (io) shape = io.shape;
  }
  if (!shape) fail(`input '${name}': shape unknown; give it as ${name}=${file}:D0xD1x...`);
  if (!fs.existsSync(file)) fail(`input '${name}': no such file ${file}`);
  const buf = fs.readFileSync(file);
  const count = shape.reduce((a, b) => a * b, 1);
  if (buf.length !== count * Arr.BYTES_PER_ELEMENT)
    fail(`input '${name}': ${file} has ${buf.length} bytes, shape [${shape}] of ${type} needs ${count * Arr.BYTES_PER_ELEMENT}`);
  const data = new Arr(count);
  new Uint8Array(data.buffer).set(buf);
  return new ort.Tensor(type, data, shape);
}

// FNV-1a over the bytes: identical outputs print identical checksums.
function fnv1a(bytes) {
  let h = 0x811c9dc5;
  for (let i = 0; i < bytes.length; ++i) h = Math.imul(h ^ bytes[i], 0x01000193) >>> 0;
  return h.toString(16).padStart(8, '0');
}

function summarize(t) {
  let sum = 0, absmax = 0;
  for (const v of t.data) {
    const x = Number(v);
    sum += x;
    absmax = Math.max(absmax, Math.abs(x));
  }
  const bytes = new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength);
  return { sum, absmax, fnv1a: fnv1a(bytes), bytes };
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  let ort;
  try {
    ort = require('onnxruntime-node');
  } catch (e) {
    fail(`onnxruntime-node is not installed (run tests/ort/install.sh): ${e.message}`);
  }
  const options = { executionProviders: ['cpu'], graphOptimizationLevel: o.level };
  if (o.threads) options.intraOpNumThreads = o.threads;
  if (o.optimizedOut) options.optimizedModelFilePath = path.resolve(o.optimizedOut);

  let session, createMs;
  const createTimes = [];
  for (let i = 0; i < Math.max(1, o.bench); ++i) {
    const t0 = process.hrtime.bigint();
    try {
      session = await ort.InferenceSession.create(o.model, options);
    } catch (e) {
      fail(`ONNX Runtime rejected ${o.model}: ${e.message}`, 1);
    }
    createTimes.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  createMs = createTimes[0];

  const entry = manifestEntry(o);
  const manifestDir = path.dirname(o.manifest);
  let specs = o.inputs.map((s) => {
    const m = /^([^=]+)=(.+?)(?::(\d+(?:x\d+)*))?$/.exec(s);
    if (!m) fail(`bad --input '${s}' (want NAME=FILE[:D0xD1...])`);
    return { name: m[1], file: m[2], shape: m[3] ? m[3].split('x').map(Number) : null };
  });
  if (!specs.length && entry)
    specs = (entry.io_inputs || []).map((x) => ({ name: x.name, file: path.join(manifestDir, x.file), shape: x.shape }));
  const metas = session.inputMetadata || [];
  const feeds = {};
  for (const spec of specs) {
    if (!session.inputNames.includes(spec.name))
      fail(`the model has no input '${spec.name}' (inputs: ${session.inputNames.join(', ')})`);
    feeds[spec.name] = makeFeed(ort, spec, metas.find((m) => m.name === spec.name), entry);
  }
  const missing = session.inputNames.filter((n) => !feeds[n]);
  if (missing.length) fail(`no data for input(s) ${missing.join(', ')}`);

  let results;
  const runTimes = [];
  for (let i = 0; i < Math.max(1, o.bench); ++i) {
    const t0 = process.hrtime.bigint();
    try {
      results = await session.run(feeds);
    } catch (e) {
      fail(`ONNX Runtime failed to run ${o.model}: ${e.message}`, 1);
    }
    runTimes.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }

  if (o.out) fs.mkdirSync(o.out, { recursive: true });
  const listing = [];
  session.outputNames.forEach((name, k) => {
    const t = results[name];
    const s = summarize(t);
    if (!o.quiet)
      console.log(`${name} shape=[${t.dims.join(',')}] type=${t.type} sum=${s.sum.toPrecision(9)} ` +
                  `absmax=${s.absmax.toPrecision(6)} fnv1a=${s.fnv1a}`);
    if (o.out) {
      const file = `output${k}.bin`;
      fs.writeFileSync(path.join(o.out, file), s.bytes);
      listing.push({ name, file, type: t.type, shape: t.dims.map(Number) });
    }
  });
  if (o.out) fs.writeFileSync(path.join(o.out, 'outputs.json'), JSON.stringify(listing, null, 1) + '\n');
  if (!o.quiet) {
    const bench = o.bench > 1 ? ` (median of ${o.bench}: create ${median(createTimes).toFixed(1)} ms, ` +
                                `run ${median(runTimes).toFixed(1)} ms)` : '';
    console.log(`session_create_ms=${createMs.toFixed(1)} run_ms=${runTimes[0].toFixed(1)} level=${o.level}${bench}`);
  }
}

main().catch((e) => fail(e.stack || String(e), 1));
