#!/usr/bin/env node
// Which rules/tf fusions pay in TensorFlow.js: each fused form against the ops it replaces,
// alone, on shapes taken from the real models (MobileNet / BlazeFace-sized NHWC tensors), with
// TF.js's wasm backend (XNNPACK) in node on 1 thread. The unfused form (A), the unfused form
// again (A2) and the fused one (B) are timed in rounds in one process, each round in another
// of the six orders (bench/tf/stats.js), so a change of machine load touches all alike.
//   usage: node bench/tf/fusion_pay.js [--runs N] [--budget S] [--backend wasm|cpu] [--threads T]
//          [--clock wall|cpu] [--filter REGEX] [--json]
// --runs N rounds (default 31), or with --budget S rounds until S seconds are measured per case
// (at least N, at most 5000); --filter: only the cases whose name it matches; --clock cpu times the
// process's CPU time (less disturbed by other load than wall time). Needs
// tests/tfjs/node_modules (tests/tfjs/install.sh). Prints one row per case: unfused ms, fused
// ms (medians), fused / unfused with its 95% interval, unfused again / unfused (the noise
// floor) with its interval, and the verdict (slower / same / faster, as latency.js's).
'use strict';

const path = require('path');
const modules = path.join(__dirname, '../../tests/tfjs/node_modules');
const need = (m) => require(path.join(modules, m));
const stats = require(path.join(__dirname, 'stats.js'));

function args(argv) {
  const o = { runs: 31, budget: 0, backend: 'wasm', threads: 1, json: false, clock: 'wall' };
  for (let i = 0; i < argv.length; ++i) {
    if (argv[i] === '--runs') o.runs = Number(argv[++i]);
    else if (argv[i] === '--budget') o.budget = Number(argv[++i]);
    else if (argv[i] === '--backend') o.backend = argv[++i];
    else if (argv[i] === '--threads') o.threads = Number(argv[++i]);
    else if (argv[i] === '--json') o.json = true;
    else if (argv[i] === '--clock') o.clock = argv[++i];
    else if (argv[i] === '--filter') o.filter = new RegExp(argv[++i]);
    else { console.error(`fusion_pay.js: unknown argument ${argv[i]}`); process.exit(2); }
  }
  return o;
}

async function main() {
  const o = args(process.argv.slice(2));
  console.warn = () => {};
  const tf = need('@tensorflow/tfjs-core');
  need('@tensorflow/tfjs-backend-cpu');
  const wasm = need('@tensorflow/tfjs-backend-wasm');
  wasm.setThreadsCount(o.threads);
  await tf.setBackend(o.backend);
  await tf.ready();
  tf.randomUniform([1]).dispose();
  const r = (shape) => tf.randomUniform(shape, -1, 1, 'float32', 7);
  const x56 = r([1, 56, 56, 64]), x112 = r([1, 112, 112, 32]), x28 = r([1, 28, 28, 128]);
  const w1x1 = r([1, 1, 64, 64]), w3x3 = r([3, 3, 32, 32]), dw = r([3, 3, 128, 1]), dw32 = r([3, 3, 32, 1]);
  const b64 = r([64]), b32 = r([32]), b128 = r([128]), s128 = r([128]);
  // The zero bias is made once, as a model's constant is: a new tensor per run makes the wasm
  // backend create a new XNNPACK operator (its cache is keyed by the filter and bias tensors)
  // every run, which measured the fused form 1.05 [1.04, 1.06] times the unfused one.
  const zero32 = tf.zeros([32]);
  const x64 = r([1, 64, 64, 96]), w96 = r([1, 1, 96, 17]), b17 = r([17]);
  const a = r([1, 1024]), wm = r([1024, 256]), bm = r([256]);
  const pads = [[0, 0], [1, 1], [1, 1], [0, 0]];
  const explicit = [[0, 0], [1, 1], [1, 1], [0, 0]];
  const cases = [
    // rule (what it produces), unfused, fused
    ['tf_conv2d_biasadd_activation: conv 1x1 64->64 + bias + relu6 (56x56)',
      () => tf.relu6(tf.add(tf.conv2d(x56, w1x1, 1, 'same'), b64)),
      () => tf.fused.conv2d({ x: x56, filter: w1x1, strides: 1, pad: 'same', bias: b64, activation: 'relu6' })],
    ['tf_conv2d_biasadd: conv 1x1 64->64 + bias (56x56)',
      () => tf.add(tf.conv2d(x56, w1x1, 1, 'same'), b64),
      () => tf.fused.conv2d({ x: x56, filter: w1x1, strides: 1, pad: 'same', bias: b64 })],
    ['tf_conv2d_activation_zero_bias: conv 3x3 32->32 + sigmoid (112x112)',
      () => tf.sigmoid(tf.conv2d(x112, w3x3, 1, 'same')),
      () => tf.fused.conv2d({ x: x112, filter: w3x3, strides: 1, pad: 'same', bias: zero32, activation: 'sigmoid' })],
    ['tf_fusedconv2d_activation: fused conv 1x1 96->17 + bias, then sigmoid (64x64, movenet-thunder\'s heatmap head)',
      () => tf.sigmoid(tf.fused.conv2d({ x: x64, filter: w96, strides: 1, pad: 'same', bias: b17 })),
      () => tf.fused.conv2d({ x: x64, filter: w96, strides: 1, pad: 'same', bias: b17, activation: 'sigmoid' })],
    ['tf_depthwise_bias_activation: depthwise 3x3 128 + bias + relu6 (28x28)',
      () => tf.relu6(tf.add(tf.depthwiseConv2d(x28, dw, 1, 'same'), b128)),
      () => tf.fused.depthwiseConv2d({ x: x28, filter: dw, strides: 1, pad: 'same', bias: b128, activation: 'relu6' })],
    ['tf_depthwise_bias: depthwise 3x3 128 + bias (28x28)',
      () => tf.add(tf.depthwiseConv2d(x28, dw, 1, 'same'), b128),
      () => tf.fused.depthwiseConv2d({ x: x28, filter: dw, strides: 1, pad: 'same', bias: b128 })],
    ['tf_depthwise_mul_vector_fold: depthwise 3x3 128 + per-channel Mul (28x28)',
      () => tf.mul(tf.depthwiseConv2d(x28, dw, 1, 'same'), s128),
      () => tf.depthwiseConv2d(x28, dw, 1, 'same')],
    ['tf_pad_fuseddepthwise_explicit: Pad + fused depthwise 3x3 32 VALID, stride 2 (112x112)',
      () => tf.fused.depthwiseConv2d({ x: tf.pad(x112, pads), filter: dw32, strides: 2, pad: 'valid', bias: b32, activation: 'relu' }),
      () => tf.fused.depthwiseConv2d({ x: x112, filter: dw32, strides: 2, pad: explicit, bias: b32, activation: 'relu' })],
    ['tf_pad_conv2d_explicit: Pad + conv 3x3 32->32 VALID (112x112)',
      () => tf.conv2d(tf.pad(x112, pads), w3x3, 1, 'valid'),
      () => tf.conv2d(x112, w3x3, 1, explicit)],
    ['tf_fusedmatmul_activation: matmul 1x1024x256 + bias, then sigmoid',
      () => tf.sigmoid(tf.fused.matMul({ a, b: wm, bias: bm })),
      () => tf.fused.matMul({ a, b: wm, bias: bm, activation: 'sigmoid' })],
  ];
  const rows = [];
  for (const [name, unfused, fused] of cases.filter(([name]) => !o.filter || o.filter.test(name))) {
    const run = (f) => {
      const t0 = process.hrtime.bigint(), c0 = process.cpuUsage();
      const y = tf.tidy(f);
      y.dataSync();
      y.dispose();
      if (o.clock === 'cpu') {
        const c = process.cpuUsage(c0);
        return (c.user + c.system) / 1e3;
      }
      return Number(process.hrtime.bigint() - t0) / 1e6;
    };
    run(unfused); run(fused);  // warm-up: kernels set up, XNNPACK operators cached
    const forms = [unfused, unfused, fused];
    const t = await stats.rounds(async (k) => run(forms[k]), o.runs, o.budget * 1e3, 5000);
    const s = stats.summarize(t);
    rows.push({ name, runs: s.runs, unfused_ms: s.original_ms, fused_ms: s.rewritten_ms, ratio: s.ratio, ratio_lo: s.ratio_lo,
                ratio_hi: s.ratio_hi, noise: s.noise, noise_lo: s.noise_lo, noise_hi: s.noise_hi, verdict: s.verdict });
  }
  if (o.json) { for (const r of rows) console.log(JSON.stringify({ backend: o.backend, threads: o.threads, clock: o.clock, ...r })); return; }
  console.log(`| fusion (TF.js ${o.backend}, ${o.threads} thread(s), ${o.clock} time) | rounds | unfused ms | fused ms | fused / unfused [95% interval] | unfused again / unfused [95% interval] | verdict |`);
  console.log('|---|---|---|---|---|---|---|');
  const f = (x) => x.toFixed(3);
  for (const r of rows)
    console.log(`| ${r.name} | ${r.runs} | ${f(r.unfused_ms)} | ${f(r.fused_ms)} | ${f(r.ratio)} [${f(r.ratio_lo)}, ${f(r.ratio_hi)}] | ` +
                `${f(r.noise)} [${f(r.noise_lo)}, ${f(r.noise_hi)}] | ${r.verdict} |`);
}

main().catch((e) => { console.error(e.stack || String(e)); process.exit(1); });
