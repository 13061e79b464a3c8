// Statistics shared by bench/tf/latency.js and fusion_pay.js: interleaved rounds of an
// original (A), the original again (A2) and a candidate (B), and what they say.
'use strict';

// The six orders of three, cycled through round by round, so that the position within a
// round (cache state, a load change mid-round) favours none of A, A2, B.
const PERMS = [[0, 1, 2], [1, 2, 0], [2, 0, 1], [0, 2, 1], [2, 1, 0], [1, 0, 2]];

function quantile(sorted, q) {
  const x = q * (sorted.length - 1), i = Math.floor(x);
  return i + 1 < sorted.length ? sorted[i] + (x - i) * (sorted[i + 1] - sorted[i]) : sorted[i];
}

// The median of v and a confidence interval of at least 95% for it: the k-th smallest and
// k-th largest values, k = floor((n - 1.96 sqrt(n)) / 2) (the normal approximation of the
// binomial(n, 1/2) the count below the true median follows; n = 31: the 10th and 22nd, 97%).
function medianCI(v) {
  const s = [...v].sort((a, b) => a - b), n = s.length;
  const k = Math.max(1, Math.floor((n - 1.96 * Math.sqrt(n)) / 2));
  return { median: quantile(s, 0.5), lo: s[k - 1], hi: s[n - k] };
}

// Times t[0] (A), t[1] (A2), t[2] (B), one entry per round: medians, B / A and A2 / A as
// medians of the per-round ratios (a load change that touches a round touches both of its
// terms) with their intervals, the spread of A (IQR / median) and the verdict: "slower" when
// B / A's whole interval lies above 1 and its median above the noise floor's interval,
// "faster" the mirror image, else "same".
function summarize(t) {
  const ratio = medianCI(t[2].map((b, r) => b / t[0][r]));
  const noise = medianCI(t[1].map((a2, r) => a2 / t[0][r]));
  const a = [...t[0]].sort((x, y) => x - y);
  const ms = t.map((v) => medianCI(v).median);
  let verdict = 'same';
  if (ratio.lo > 1 && ratio.median > noise.hi) verdict = 'slower';
  else if (ratio.hi < 1 && ratio.median < noise.lo) verdict = 'faster';
  return { runs: t[0].length, original_ms: ms[0], repeat_ms: ms[1], rewritten_ms: ms[2],
           ratio: ratio.median, ratio_lo: ratio.lo, ratio_hi: ratio.hi,
           noise: noise.median, noise_lo: noise.lo, noise_hi: noise.hi,
           spread: (quantile(a, 0.75) - quantile(a, 0.25)) / ms[0], verdict };
}

// Runs rounds of time(0), time(1), time(2) in the cycled orders: at least minRuns, then
// until the times measured add up to budgetMs (0: exactly minRuns), at most maxRuns.
async function rounds(time, minRuns, budgetMs, maxRuns) {
  const t = [[], [], []];
  let spent = 0;
  for (let r = 0; r < maxRuns && (r < minRuns || spent < budgetMs); ++r)
    for (const k of PERMS[r % PERMS.length]) {
      const x = await time(k);
      t[k].push(x);
      spent += x;
    }
  return t;
}

module.exports = { PERMS, quantile, medianCI, summarize, rounds };
