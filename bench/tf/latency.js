#!/usr/bin/env node
// Is a rewritten TF.js graph model slower than its original, beyond the noise of the machine?
// Loads the original twice (A and A2, two independent instances of the same graph) and the
// rewritten model (B), feeds them the judge's seeded inputs, and times RUNS rounds; each round
// runs A, A2 and B once, in an order that cycles through all six permutations, so that the
// position within a round (cache state, a load change mid-round) favours none of them.
//   usage: node bench/tf/latency.js ORIGINAL/model.json REWRITTEN/model.json [--runs N]
//          [--budget S] [--max-runs N] [--clock cpu|wall] [--threads T] [--backends wasm|cpu]
//          [--shape N=D,..] [--fill N=V] [--json]
// --budget S: rounds until the times measured add up to S seconds of the clock, at least
// --runs and at most --max-runs (2000): a small model gets many rounds, so its interval is as
// narrow as a large one's. Defaults: 31 rounds, CPU time of the process (what
// the kernels cost: on 1 wasm thread they run on the calling thread, and CPU time is far less
// disturbed than wall time by the other processes of a loaded machine), wasm backend, 1
// thread. Reports:
//   ms of A, A2 and B: medians of the rounds;
//   B / A: the median of the per-round ratios with its 95% confidence interval (distribution-
//     free: order statistics of the sorted ratios, binomial ranks; bench/tf/stats.js), so a
//     load change that touches one round touches both of its terms;
//   A2 / A: the same for the repeat of the original against itself, the noise floor: a ratio
//     that an identical graph reaches on this machine at this moment;
//   spread: the interquartile range of A's times over their median.
// Verdict "slower" when B / A's whole interval lies above 1 and its median above A2 / A's
// interval; "faster" the mirror image; otherwise "same" (no difference this measurement sees).
// Needs tests/tfjs/node_modules (tests/tfjs/install.sh).
'use strict';

const path = require('path');
const judge = require(path.join(__dirname, '../../tests/tfjs/judge.js'));
const stats = require(path.join(__dirname, 'stats.js'));

async function timeOne(tf, model, feeds, clock) {
  if (clock === 'cpu') {
    const c0 = process.cpuUsage();
    await judge.runOnce(tf, model, feeds);
    const c = process.cpuUsage(c0);
    return (c.user + c.system) / 1e3;
  }
  const t0 = process.hrtime.bigint();
  await judge.runOnce(tf, model, feeds);
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

async function main() {
  const argv = process.argv.slice(2);
  if (argv.includes('-h') || argv.includes('--help')) {
    console.log('usage: node bench/tf/latency.js ORIGINAL/model.json REWRITTEN/model.json [--runs N] [--clock cpu|wall] ' +
                '[--budget S] [--max-runs N] [--threads T] [--backends wasm|cpu] [--shape N=D,..] [--fill N=V] [--seed S] [--batch B] [--json]');
    return;
  }
  // --budget S and --max-runs N are latency.js's own; the rest are the judge's options.
  let budget = 0, maxRuns = 2000;
  for (let i = argv.length - 2; i >= 0; --i) {
    if (argv[i] !== '--budget' && argv[i] !== '--max-runs') continue;
    const v = Number(argv[i + 1]);
    if (!(v > 0)) { console.error(`latency.js: ${argv[i]} wants a positive number, not ${argv[i + 1]}`); process.exit(2); }
    if (argv[i] === '--budget') budget = v; else maxRuns = Math.floor(v);
    argv.splice(i, 2);
  }
  const o = judge.parseArgs(argv);
  if (!argv.includes('--backends')) o.backends = ['wasm'];
  if (!argv.includes('--clock')) o.clock = 'cpu';
  if (!argv.includes('--runs')) o.runs = 31;
  if (o.backends.length !== 1) { console.error('latency.js: one backend'); process.exit(2); }
  if (!(Number.isInteger(o.runs) && o.runs >= 5)) { console.error('latency.js: --runs N with N >= 5'); process.exit(2); }
  console.warn = () => {};
  const { tf, converter } = judge.loadTf(o.threads);
  await tf.setBackend(o.backends[0]);
  await tf.ready();
  const files = [o.models[0], o.models[0], o.models[1]];
  const models = [];
  for (const f of files) models.push(await converter.loadGraphModel(judge.fileHandler(tf, f)));
  const feeds = judge.makeInputs(tf, models[0], o);
  // Two warm-up runs each: kernels set up, XNNPACK operators created and cached.
  for (let w = 0; w < 2; ++w) for (const m of models) await judge.runOnce(tf, m, feeds);
  const t = await stats.rounds((k) => timeOne(tf, models[k], feeds, o.clock), o.runs, budget * 1e3, Math.max(o.runs, maxRuns));
  for (const x of Object.values(feeds)) x.dispose();
  const r = { backend: o.backends[0], threads: o.threads, clock: o.clock, ...stats.summarize(t) };
  const ms = [r.original_ms, r.repeat_ms, r.rewritten_ms];
  if (o.json) { console.log(JSON.stringify(r)); return; }
  const f = (x) => x.toFixed(2);
  console.log(`${r.backend}, ${r.threads} thread(s), ${r.clock} time, ${r.runs} rounds: original ${f(ms[0])} ms, ` +
              `again ${f(ms[1])} ms, rewritten ${f(ms[2])} ms; rewritten / original ${f(r.ratio)} ` +
              `[${f(r.ratio_lo)}, ${f(r.ratio_hi)}], original again / original ${f(r.noise)} [${f(r.noise_lo)}, ` +
              `${f(r.noise_hi)}], spread ${(100 * r.spread).toFixed(1)}%: ${r.verdict}`);
}

main().catch((e) => { console.error(`latency.js: ${e.stack || e}`); process.exit(1); });
