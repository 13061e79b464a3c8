#!/usr/bin/env node
// ONNX Runtime as the judge of every rule in rules/onnx, one small model per rule family:
// each model is built here with seeded random weights and inputs, fused by graphfuse, and
// run by ONNX Runtime before and after (optimizer disabled, so ORT runs graphfuse's fused
// nodes as written). The outputs must agree within rtol, and the fused model must hold
// exactly the expected ops, so a case cannot pass without its rules firing. A case may name a
// target profile (`target`), which the rewrite then runs under.
'use strict';

const fs = require('fs');
const path = require('path');
const { spawnSync } = require('child_process');
const { readNodes } = require('./fused_check.js');

const USAGE = `usage: node fused_cases.js --graphfuse EXE --rules DIR --work DIR [--rtol R] [--only NAME,NAME]`;

// ---- deterministic data ----

function rng(seed) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296;
  };
}
const size = (shape) => shape.reduce((a, b) => a * b, 1);

// ---- a tiny model builder (graphfuse's JSON graph format) ----

class Model {
  constructor(name, opset = 13) {
    this.name = name;
    this.opset = opset;
    this.nodes = [];
    this.inputs = [];
    this.outputs = [];
    this.rand = rng(name.split('').reduce((h, c) => Math.imul(h ^ c.charCodeAt(0), 16777619) >>> 0, 2166136261));
  }
  input(id, shape) {
    this.inputs.push({ id, shape });
    this.nodes.push({ id, op_type: 'Input', types: [{ dtype: 'float32', shape }] });
    return id;
  }
  // A float32 initializer: random in [lo, hi) unless values are given.
  weight(id, shape, { lo = -0.5, hi = 0.5, values = null } = {}) {
    const data = values || Array.from({ length: size(shape) }, () => lo + (hi - lo) * this.rand());
    this.nodes.push({ id, op_type: 'Const', attributes: { value: { tensor: 'float32', shape, data } } });
    return id;
  }
  ints(id, values) {
    this.nodes.push({ id, op_type: 'Const', attributes: { value: { tensor: 'int64', shape: [values.length], data: values } } });
    return id;
  }
  // An ONNX Constant node holding a float32 scalar (how exporters write Clip bounds, eps, ...).
  scalar(id, v) {
    this.nodes.push({ id, op_type: 'Constant', attributes: { value: { tensor: 'float32', shape: [], data: [v] } } });
    return id;
  }
  op(id, op_type, inputs, attributes) {
    const n = { id, op_type, inputs };
    if (attributes) n.attributes = attributes;
    this.nodes.push(n);
    return id;
  }
  output(...ids) {
    for (const id of ids) {
      this.outputs.push(id);
      this.nodes.find((n) => n.id === id).types = [{ dtype: 'float32' }];
    }
  }
  json() {
    const domains = [''], versions = [this.opset];
    return JSON.stringify({
      inputs: this.inputs.map((i) => i.id), outputs: this.outputs,
      properties: { 'onnx.opset_domains': domains, 'onnx.opset_versions': versions }, nodes: this.nodes,
    });
  }
}

// ---- the cases: what each model holds, and the ops the fused model must have ----

function convCases() {
  const out = [];
  let m = new Model('conv_activations');
  const x = m.input('x', [1, 4, 6, 6]);
  const w = m.weight('w', [4, 4, 3, 3]);
  const b = m.weight('b', [4]);
  const cp = { kernel_shape: [3, 3], pads: [1, 1, 1, 1] };
  const acts = [
    ['Relu', [x, w, b]], ['Tanh', [x, w]], ['Sigmoid', [x, w, b]],
    ['LeakyRelu', [x, w, b], { alpha: 0.2 }], ['LeakyRelu', [x, w]],
    ['HardSigmoid', [x, w, b], { alpha: 0.3, beta: 0.4 }], ['HardSigmoid', [x, w]],
  ];
  acts.forEach(([act, ins, attrs], i) => {
    m.op(`c${i}`, 'Conv', ins, cp);
    m.op(`a${i}`, act, [`c${i}`], attrs);
    m.output(`a${i}`);
  });
  m.op('c7', 'Conv', [x, w, b], cp);
  m.op('a7', 'Clip', ['c7', m.scalar('lo', 0), m.scalar('hi', 0.3)]);
  m.op('c8', 'Conv', [x, w, b], cp);
  m.op('a8', 'Clip', ['c8', m.scalar('lo8', -0.1)]);
  m.output('a7', 'a8');
  out.push({ model: m, expect: { 'com.microsoft.FusedConv': 9, Conv: 0, Constant: 0 } });

  m = new Model('conv_clip_opset10', 10);
  m.input('x', [1, 4, 6, 6]);
  m.weight('w', [4, 4, 3, 3]);
  m.weight('b', [4]);
  m.op('c', 'Conv', ['x', 'w', 'b'], { kernel_shape: [3, 3] });
  m.op('y', 'Clip', ['c'], { min: -0.2, max: 0.2 });
  m.output('y');
  out.push({ model: m, expect: { 'com.microsoft.FusedConv': 1, Clip: 0 } });

  m = new Model('conv_residual');
  m.input('x', [1, 4, 6, 6]);
  for (const k of [1, 2, 3]) {
    m.weight(`w${k}`, [4, 4, 3, 3]);
    m.weight(`b${k}`, [4]);
  }
  const p = { kernel_shape: [3, 3], pads: [1, 1, 1, 1] };
  m.op('c1', 'Conv', ['x', 'w1', 'b1'], p);
  m.op('r1', 'Relu', ['c1']);
  m.op('c2', 'Conv', ['r1', 'w2', 'b2'], p);
  m.op('s2', 'Add', ['c2', 'x']);
  m.op('r2', 'Relu', ['s2']);
  m.op('c3', 'Conv', ['r2', 'w3', 'b3'], p);
  m.op('s3', 'Add', ['r2', 'c3']);
  m.output('s3');
  out.push({ model: m, expect: { 'com.microsoft.FusedConv': 3, Add: 0, Relu: 0 } });
  return out;
}

function matmulCases() {
  const out = [];
  let m = new Model('matmul_transposes_scales');
  m.input('a2', [5, 3]);
  m.input('b2', [5, 4]);
  m.op('t1', 'Transpose', ['a2'], { perm: [1, 0] });
  m.op('m1', 'MatMul', ['t1', 'b2']);
  m.input('a3', [2, 3, 5]);
  m.input('b3', [2, 4, 5]);
  m.op('t2', 'Transpose', ['b3'], { perm: [0, 2, 1] });
  m.op('m2', 'MatMul', ['a3', 't2']);
  m.input('x4', [2, 2, 5, 3]);
  m.input('y4', [2, 2, 4, 5]);
  m.op('tx', 'Transpose', ['x4'], { perm: [0, 1, 3, 2] });
  m.op('ty', 'Transpose', ['y4'], { perm: [0, 1, 3, 2] });
  m.op('m3', 'MatMul', ['tx', 'ty']);
  m.input('q', [3, 2, 5]);
  m.weight('w3', [2, 5, 4]);
  m.op('tq', 'Transpose', ['q'], { perm: [1, 0, 2] });
  m.op('m4', 'MatMul', ['tq', 'w3']);
  m.input('k', [4, 2, 5]);
  m.weight('w3b', [2, 3, 5]);
  m.op('tk', 'Transpose', ['k'], { perm: [1, 2, 0] });
  m.op('m5', 'MatMul', ['w3b', 'tk']);
  m.input('p', [2, 3, 5]);
  m.weight('w3c', [2, 5, 4]);
  m.op('tp', 'Transpose', ['p'], { perm: [1, 2, 0] });  // [3, 5, 2]
  m.weight('w3d', [3, 2, 4]);
  m.op('m6', 'MatMul', ['tp', 'w3d']);
  m.input('v', [5, 2, 4]);
  m.op('tv', 'Transpose', ['v'], { perm: [1, 0, 2] });
  m.op('m7', 'MatMul', ['w3b', 'tv']);
  m.scalar('c', 0.5);
  m.op('sa', 'Mul', ['a3', 'c']);
  m.op('m8', 'MatMul', ['sa', 'w3c']);
  m.op('sb', 'Mul', ['c', 'w3c']);
  m.op('m9', 'MatMul', ['a3', 'sb']);
  m.op('m10', 'MatMul', ['a3', 'w3c']);
  m.op('m10s', 'Mul', ['m10', 'c']);
  m.op('sa11', 'Mul', ['a3', 'c']);
  m.op('tb11', 'Transpose', ['b3'], { perm: [0, 2, 1] });
  m.op('m11', 'MatMul', ['sa11', 'tb11']);
  m.op('t12', 'Transpose', ['a3'], { perm: [0, 2, 1] });  // [2, 5, 3]
  m.input('b12', [3, 4]);
  m.op('t12b', 'Transpose', ['b12'], { perm: [1, 0] });   // [4, 3]
  m.op('m12', 'MatMul', ['t12', 'b12']);
  m.op('m13', 'MatMul', ['m12', 't12b']);
  m.scalar('c4', 4);
  m.op('da', 'Div', ['a3', 'c4']);
  m.op('m14', 'MatMul', ['da', 'w3c']);
  m.op('db', 'Div', ['b2', 'c4']);
  m.op('m15', 'MatMul', ['g', 'db']);
  m.op('m16', 'MatMul', ['a3', 'w3c']);
  m.op('m16d', 'Div', ['m16', 'c4']);
  m.input('g', [3, 5]);
  m.weight('gw', [5, 4]);
  m.weight('gb', [4]);
  m.op('gm', 'MatMul', ['g', 'gw']);
  m.op('gemm', 'Add', ['gb', 'gm']);
  m.output('m1', 'm2', 'm3', 'm4', 'm5', 'm6', 'm7', 'm8', 'm9', 'm10s', 'm11', 'm13', 'm14', 'm15', 'm16d', 'gemm');
  out.push({ model: m, expect: { 'com.microsoft.FusedMatMul': 16, Gemm: 1, MatMul: 0, Transpose: 0, Mul: 0,
                                 Div: 0, Reciprocal: 0 } });

  for (const scale of ['Div', 'Mul']) {
    m = new Model(`attention_${scale.toLowerCase()}`);
    m.input('q', [6, 4, 8]);
    m.input('k', [6, 4, 8]);
    m.input('v', [6, 4, 8]);
    m.scalar('c', scale === 'Div' ? 2.828427 : 0.35355339);
    m.op('tq', 'Transpose', ['q'], { perm: [1, 0, 2] });
    m.op('sq', scale, ['tq', 'c']);
    m.op('tk', 'Transpose', ['k'], { perm: [1, 2, 0] });
    m.op('s', 'MatMul', ['sq', 'tk']);
    m.op('p', 'Softmax', ['s'], { axis: -1 });
    m.op('tv', 'Transpose', ['v'], { perm: [1, 0, 2] });
    m.op('o', 'MatMul', ['p', 'tv']);
    m.op('to', 'Transpose', ['o'], { perm: [1, 0, 2] });
    m.output('to');
    // Div: Reciprocal(c) is folded and the Mul by 1/c moves into alpha, as ORT does.
    out.push({ model: m, expect: { 'com.microsoft.FusedMatMul': 2, MatMul: 0, Transpose: 1, Softmax: 1,
                                   Div: 0, Mul: 0, Reciprocal: 0 } });
  }
  return out;
}

function geluCases() {
  const out = [];
  let m = new Model('gelu_family');
  m.input('x', [2, 3, 8]);
  m.scalar('r2', Math.SQRT2);
  m.scalar('ir2', Math.SQRT1_2);
  m.scalar('one', 1);
  m.scalar('half', 0.5);
  m.weight('bias', [8]);
  m.op('xb', 'Add', ['x', 'bias']);
  // 0.5 * xb * (1 + erf(xb / sqrt2)) -> Gelu(xb) -> BiasGelu(x, bias)
  m.op('d1', 'Div', ['xb', 'r2']);
  m.op('e1', 'Erf', ['d1']);
  m.op('a1', 'Add', ['e1', 'one']);
  m.op('m1', 'Mul', ['xb', 'a1']);
  m.op('g1', 'Mul', ['m1', 'half']);
  m.op('d2', 'Mul', ['x', 'ir2']);
  m.op('e2', 'Erf', ['d2']);
  m.op('a2', 'Add', ['one', 'e2']);
  m.op('m2', 'Mul', ['a2', 'x']);
  m.op('g2', 'Mul', ['half', 'm2']);
  m.op('d3', 'Div', ['x', 'r2']);
  m.op('e3', 'Erf', ['d3']);
  m.op('a3', 'Add', ['e3', 'one']);
  m.op('h3', 'Mul', ['x', 'half']);
  m.op('g3', 'Mul', ['h3', 'a3']);
  m.op('d4', 'Mul', ['ir2', 'x']);
  m.op('e4', 'Erf', ['d4']);
  m.op('a4', 'Add', ['e4', 'one']);
  m.op('h4', 'Mul', ['half', 'x']);
  m.op('g4', 'Mul', ['a4', 'h4']);
  m.op('s5', 'Sigmoid', ['x']);
  m.op('q5', 'Mul', ['s5', 'x']);
  m.scalar('alpha', 1.702);
  m.op('sx6', 'Mul', ['x', 'alpha']);
  m.op('s6', 'Sigmoid', ['sx6']);
  m.op('q6', 'Mul', ['x', 's6']);
  m.output('g1', 'g2', 'g3', 'g4', 'q5', 'q6');
  out.push({ model: m, expect: { 'com.microsoft.BiasGelu': 1, 'com.microsoft.Gelu': 3, 'com.microsoft.QuickGelu': 2,
                                 Erf: 0, Mul: 0, Sigmoid: 0, Add: 0, Constant: 0 } });

  m = new Model('gelu_onnx20_bias', 20);
  m.input('x', [2, 3, 8]);
  m.weight('bias', [8]);
  m.op('xb', 'Add', ['bias', 'x']);
  m.op('g', 'Gelu', ['xb']);
  m.output('g');
  out.push({ model: m, expect: { 'com.microsoft.BiasGelu': 1, Gelu: 0, Add: 0 } });

  // The tanh GELU: GPT-2's spelling on a biased input (-> FastGelu with its bias input),
  // x * (1 + tanh) * 0.5, and torch's gelu(approximate="tanh") with the cube as x * (x * x).
  m = new Model('fast_gelu_family', 14);
  m.input('x', [2, 3, 8]);
  m.weight('bias', [8]);
  for (const [id, v] of [['three', 3], ['kappa', 0.044715], ['beta', Math.sqrt(2 / Math.PI)], ['one', 1], ['half', 0.5]])
    m.scalar(id, v);
  const tanhGelu = (t, y, cube, halfLast) => {
    if (cube) m.op(`p${t}`, 'Pow', [y, 'three']);
    else m.op(`p${t}`, 'Mul', [y, m.op(`xx${t}`, 'Mul', [y, y])]);
    m.op(`k${t}`, 'Mul', [`p${t}`, 'kappa']);
    m.op(`i${t}`, 'Add', [y, `k${t}`]);
    m.op(`s${t}`, 'Mul', ['beta', `i${t}`]);
    m.op(`t${t}`, 'Tanh', [`s${t}`]);
    m.op(`o${t}`, 'Add', [`t${t}`, 'one']);
    if (!halfLast) return m.op(`g${t}`, 'Mul', [m.op(`h${t}`, 'Mul', [y, 'half']), `o${t}`]);
    return m.op(`g${t}`, 'Mul', ['half', m.op(`m${t}`, 'Mul', [y, `o${t}`])]);
  };
  m.op('xb', 'Add', ['x', 'bias']);
  m.output(tanhGelu('1', 'xb', true, false), tanhGelu('2', 'x', true, true), tanhGelu('3', 'x', false, true));
  out.push({ model: m, expect: { 'com.microsoft.FastGelu': 3, Tanh: 0, Mul: 0, Add: 0, Pow: 0, Constant: 0 } });
  return out;
}

function layerNormCases() {
  const out = [];
  const decomposed = (m, tag, s) => {
    m.op(`mean${tag}`, 'ReduceMean', [s], { axes: [-1] });
    m.op(`d${tag}`, 'Sub', [s, `mean${tag}`]);
    m.op(`sq${tag}`, 'Pow', [`d${tag}`, 'two']);
    m.op(`var${tag}`, 'ReduceMean', [`sq${tag}`], { axes: [-1] });
    m.op(`ve${tag}`, 'Add', [`var${tag}`, 'eps']);
    m.op(`std${tag}`, 'Sqrt', [`ve${tag}`]);
    m.op(`n${tag}`, 'Div', [`d${tag}`, `std${tag}`]);
    m.op(`sc${tag}`, 'Mul', [`n${tag}`, `gamma${tag}`]);
    return m.op(`ln${tag}`, 'Add', [`sc${tag}`, `beta${tag}`]);
  };
  let m = new Model('skip_layernorm_decomposed');
  m.input('x', [1, 4, 16]);
  m.input('y', [1, 4, 16]);
  m.scalar('two', 2);
  m.scalar('eps', 1e-5);
  for (const t of ['1', '2']) {
    m.weight(`gamma${t}`, [16], { lo: 0.5, hi: 1.5 });
    m.weight(`beta${t}`, [16]);
  }
  m.op('s1', 'Add', ['x', 'y']);
  decomposed(m, '1', 's1');
  m.op('f', 'Tanh', ['ln1']);
  m.op('s2', 'Add', ['ln1', 'f']);
  decomposed(m, '2', 's2');
  m.output('ln2');
  out.push({ model: m, expect: { 'com.microsoft.SkipLayerNormalization': 2, ReduceMean: 0, Add: 0 } });

  m = new Model('skip_layernorm_native', 17);
  m.input('x', [1, 4, 16]);
  m.input('y', [1, 4, 16]);
  for (const t of ['1', '2']) {
    m.weight(`gamma${t}`, [16], { lo: 0.5, hi: 1.5 });
    m.weight(`beta${t}`, [16]);
  }
  m.op('s1', 'Add', ['y', 'x']);
  m.op('ln1', 'LayerNormalization', ['s1', 'gamma1', 'beta1'], { axis: -1, epsilon: 1e-5 });
  m.op('f', 'Relu', ['ln1']);
  m.op('s2', 'Add', ['ln1', 'f']);
  m.op('ln2', 'LayerNormalization', ['s2', 'gamma2', 'beta2'], { axis: -1, epsilon: 1e-3 });
  m.output('ln2');
  out.push({ model: m, expect: { 'com.microsoft.SkipLayerNormalization': 2, LayerNormalization: 0, Add: 0 } });

  // Pre-LN blocks (GPT-2, ViT): each residual sum feeds a layer norm and the next residual;
  // the Linear in front of each residual has a bias vector. At opset 14 the bias and
  // residual Adds before each norm go (the biases into input 5, the sums the next residuals
  // read into output 3 of the fused nodes); 3 Adds per block stay (a bias before Tanh, two
  // residuals no norm reads). At opset 17 the residual Adds stay beside LayerNormalization,
  // which ONNX Runtime's CPU kernel runs faster than SkipLayerNormalization's output-3 form
  // (rules/onnx/layernorm.yaml): 5 Adds per block.
  for (const opset of [14, 17]) {
    m = new Model(`skip_layernorm_pre_ln_opset${opset}`, opset);
    m.input('h', [2, 4, 16]);
    m.scalar('two', 2);
    m.scalar('eps', 1e-5);
    let h = 'h';
    for (const t of ['1', '2', '3']) {
      m.weight(`gamma${t}`, [16], { lo: 0.5, hi: 1.5 });
      m.weight(`beta${t}`, [16]);
      m.weight(`w${t}`, [16, 16]);
      m.weight(`bias${t}`, [16]);
      const lin = m.op(`lin${t}`, 'Add', [m.op(`mm${t}`, 'MatMul', [h, `w${t}`]), `bias${t}`]);
      const s = m.op(`s${t}`, 'Add', [h, m.op(`act${t}`, 'Tanh', [lin])]);
      const xb = m.op(`xb${t}`, 'Add', [m.op(`mx${t}`, 'MatMul', [s, `w${t}`]), `bias${t}`]);
      const r = m.op(`r${t}`, 'Add', [xb, s]);
      if (opset >= 17) m.op(`ln${t}`, 'LayerNormalization', [r, `gamma${t}`, `beta${t}`], { axis: -1, epsilon: 1e-5 });
      else decomposed(m, t, r);
      h = m.op(`res${t}`, 'Add', [r, m.op(`f${t}`, 'Sigmoid', [`ln${t}`])]);
    }
    m.output(h);
    out.push({ model: m, expect: opset >= 17
      ? { 'com.microsoft.SkipLayerNormalization': 0, LayerNormalization: 3, ReduceMean: 0, Add: 15 }
      : { 'com.microsoft.SkipLayerNormalization': 3, LayerNormalization: 0, ReduceMean: 0, Add: 9 } });
  }

  // onnx_layernorm_decomposed: a decomposed layer norm without a fusable residual Add in
  // front (the first on the input itself, the second behind an Add of a constant, which
  // SkipLayerNormalization does not take) becomes ONNX's LayerNormalization, which exists
  // from opset 17 only: at 17 both fuse, at 13 the same graph must stay as it is.
  // With --target ort-cpu (raise_onnx_opset: 17) the opset-13 graph is raised to 17 first
  // (every op in it changed at most compatibly since 13), so it fuses as the opset-17 one.
  for (const [opset, target] of [[17, null], [13, null], [13, 'ort-cpu']]) {
    m = new Model(`layernorm_decomposed_opset${opset}${target ? '_' + target : ''}`, opset);
    m.input('x', [2, 5, 32]);
    m.scalar('two', 2);
    m.scalar('eps', 1e-5);
    for (const t of ['1', '2']) {
      m.weight(`gamma${t}`, [32], { lo: 0.5, hi: 1.5 });
      m.weight(`beta${t}`, [32]);
    }
    m.weight('shift', [32]);
    decomposed(m, '1', 'x');
    m.op('r', 'Relu', ['ln1']);
    m.op('s2', 'Add', ['r', 'shift']);
    decomposed(m, '2', 's2');
    m.output('ln2');
    out.push({ model: m, target, expect: opset >= 17 || target
      ? { LayerNormalization: 2, 'com.microsoft.SkipLayerNormalization': 0, ReduceMean: 0, Sub: 0, Pow: 0,
          Sqrt: 0, Div: 0, Mul: 0, Add: 1 }
      : { LayerNormalization: 0, 'com.microsoft.SkipLayerNormalization': 0, ReduceMean: 4, Sqrt: 2, Div: 2,
          Add: 5 } });
  }
  return out;
}

// Llama's RMSNorm as torch exports it (Casts to float32 around it, rsqrt as Div(1, Sqrt)),
// in two pre-norm blocks: the first norm stays SimplifiedLayerNormalization, the next three
// take their residual Add (the middle ones hand the sum on through output 3). A norm over
// axis 1 of the same rank-3 input (ONNX Runtime's ViT mistake) must stay as it is.
function rmsNormCases() {
  const out = [];
  const m = new Model('rmsnorm_llama', 14);
  m.input('h', [2, 4, 16]);
  m.scalar('two', 2);
  m.scalar('one', 1);
  m.scalar('eps', 1e-6);
  const rms = (tag, x, axes = [-1]) => {
    m.weight(`g${tag}`, [16], { lo: 0.5, hi: 1.5 });
    m.op(`c${tag}`, 'Cast', [x], { to: 1 });
    m.op(`sq${tag}`, 'Pow', [`c${tag}`, 'two']);
    m.op(`var${tag}`, 'ReduceMean', [`sq${tag}`], { axes, keepdims: 1 });
    m.op(`ve${tag}`, 'Add', [`var${tag}`, 'eps']);
    m.op(`std${tag}`, 'Sqrt', [`ve${tag}`]);
    m.op(`inv${tag}`, 'Div', ['one', `std${tag}`]);
    m.op(`n${tag}`, 'Mul', [`c${tag}`, `inv${tag}`]);
    m.op(`cb${tag}`, 'Cast', [`n${tag}`], { to: 1 });
    return m.op(`rms${tag}`, 'Mul', [`g${tag}`, `cb${tag}`]);
  };
  let h = 'h';
  for (const l of ['1', '2']) {
    const a = m.op(`att${l}`, 'Tanh', [rms(`${l}a`, h)]);
    const s = m.op(`s${l}a`, 'Add', [h, a]);
    const f = m.op(`mlp${l}`, 'Sigmoid', [rms(`${l}b`, s)]);
    h = m.op(`s${l}b`, 'Add', [s, f]);
  }
  m.output(rms('final', h));
  // The first norm (no residual in front) is the self-skip form SkipSimplified(h, h) (rmsnorm.yaml).
  out.push({ model: m, expect: { SimplifiedLayerNormalization: 0, 'com.microsoft.SkipSimplifiedLayerNormalization': 5,
                                 Add: 0, Cast: 0, ReduceMean: 0 } });
  const v = new Model('rmsnorm_axis1_stays', 14);
  v.input('x', [2, 4, 16]);
  v.scalar('two', 2);
  v.scalar('eps', 1e-6);
  v.weight('g', [4, 1], { lo: 0.5, hi: 1.5 });
  v.op('sq', 'Pow', ['x', 'two']);
  v.op('var', 'ReduceMean', ['sq'], { axes: [1], keepdims: 1 });
  v.op('ve', 'Add', ['var', 'eps']);
  v.op('std', 'Sqrt', ['ve']);
  v.op('n', 'Div', ['x', 'std']);
  v.op('y', 'Mul', ['n', 'g']);
  v.output('y');
  out.push({ model: v, expect: { SimplifiedLayerNormalization: 0, ReduceMean: 1, Mul: 1 } });
  return out;
}

function cleanupCases() {
  const m = new Model('cleanup');
  m.input('x', [2, 3, 4, 5]);
  m.op('i', 'Identity', ['x']);
  m.op('d0', 'Dropout', ['i']);
  m.scalar('ratio', 0.3);
  m.op('d', 'Dropout', ['d0', 'ratio']);
  m.op('t1', 'Transpose', ['d'], { perm: [0, 2, 3, 1] });
  m.op('t2', 'Transpose', ['t1'], { perm: [0, 3, 1, 2] });
  m.op('r', 'Relu', ['t2']);
  m.op('u1', 'Transpose', ['r'], { perm: [1, 0, 2, 3] });
  m.op('u2', 'Transpose', ['u1'], { perm: [0, 2, 3, 1] });
  m.ints('s1', [6, 20]);
  m.ints('s2', [3, -1, 5]);
  m.op('h1', 'Reshape', ['r', 's1']);
  m.op('h2', 'Reshape', ['h1', 's2']);
  m.op('o', 'Sigmoid', ['h2']);
  m.output('u2', 'o');
  return [{ model: m, expect: { Identity: 0, Dropout: 0, Transpose: 1, Reshape: 1 } }];
}

// Exporters often end a graph in Identity nodes. Each one goes and its input takes over the
// output's name (the names ONNX Runtime's callers fetch stay), except one whose input is a
// graph input: that name must stay too, so the Identity does.
function identityOutputCases() {
  const m = new Model('identity_outputs');
  m.input('x', [2, 3, 4, 5]);
  m.op('r', 'Relu', ['x']);
  m.op('y', 'Identity', ['r']);
  m.op('s', 'Sigmoid', ['r']);
  m.op('i1', 'Identity', ['s']);
  m.op('z', 'Identity', ['i1']);
  m.op('w', 'Identity', ['x']);
  m.output('y', 'z', 'w');
  return [{ model: m, expect: { Identity: 1, Relu: 1, Sigmoid: 1 } }];
}

// ---- running them ----

function run(cmd, args) {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  return { ok: r.status === 0, text: ((r.stdout || '') + (r.stderr || '') + (r.error ? String(r.error) : '')).trim() };
}

function opCounts(file) {
  const c = {};
  for (const n of readNodes(file)) {
    const k = n.domain ? `${n.domain}.${n.op}` : n.op;
    c[k] = (c[k] || 0) + 1;
  }
  return c;
}

function main() {
  const o = { rtol: '1e-4' };
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    if (a === '--graphfuse') o.graphfuse = argv[++i];
    else if (a === '--rules') o.rules = argv[++i];
    else if (a === '--work') o.work = argv[++i];
    else if (a === '--rtol') o.rtol = argv[++i];
    else if (a === '--only') o.only = argv[++i].split(',');
    else { console.error(USAGE); process.exit(2); }
  }
  if (!o.graphfuse || !o.rules || !o.work) { console.error(USAGE); process.exit(2); }
  const ruleArgs = fs.readdirSync(o.rules).filter((f) => f.endsWith('.yaml')).sort()
    .flatMap((f) => ['--rules', path.join(o.rules, f)]);
  fs.mkdirSync(o.work, { recursive: true });
  const none = path.join(o.work, 'no_rules.yaml');
  fs.writeFileSync(none, 'rules: []\n');
  const node = process.execPath;
  let failures = 0;
  const check = (ok, label, text) => {
    if (!ok) ++failures;
    console.log(`  ${ok ? 'ok  ' : 'FAIL'} ${label}${!ok && text ? '\n      ' + text.split('\n').join('\n      ') : ''}`);
    return ok;
  };
  const cases = [...convCases(), ...matmulCases(), ...geluCases(), ...layerNormCases(), ...rmsNormCases(), ...cleanupCases(),
                 ...identityOutputCases()];
  for (const { model, expect, target } of cases) {
    if (o.only && !o.only.includes(model.name)) continue;
    console.log(`${model.name}:`);
    const dir = path.join(o.work, model.name);
    fs.mkdirSync(dir, { recursive: true });
    const json = path.join(dir, 'model.json'), orig = path.join(dir, 'orig.onnx'), fused = path.join(dir, 'fused.onnx');
    fs.writeFileSync(json, model.json());
    if (!check(run(o.graphfuse, ['apply', '--rules', none, json, '-o', orig, '-q']).ok, 'build the model')) continue;
    const r = run(o.graphfuse, ['apply', ...ruleArgs, ...(target ? ['--target', target] : []), orig, '-o', fused]);
    if (!check(r.ok, 'graphfuse apply', r.text)) continue;
    const counts = opCounts(fused);
    for (const [op, want] of Object.entries(expect))
      check((counts[op] || 0) === want, `${op}: ${counts[op] || 0} (want ${want})`);
    const rand = rng(7);
    const feeds = [];
    for (const { id, shape } of model.inputs) {
      const f = path.join(dir, `${id}.bin`);
      fs.writeFileSync(f, Buffer.from(Float32Array.from({ length: size(shape) }, () => 2 * rand() - 1).buffer));
      feeds.push('--input', `${id}=${f}:${shape.join('x')}`);
    }
    const runModel = path.join(__dirname, 'run_model.js');
    const a = run(node, [runModel, orig, ...feeds, '--level', 'disabled', '--out', path.join(dir, 'orig'), '--quiet']);
    const b = run(node, [runModel, fused, ...feeds, '--level', 'disabled', '--out', path.join(dir, 'fused'), '--quiet']);
    check(a.ok, 'ONNX Runtime runs the original', a.text);
    if (!check(b.ok, 'ONNX Runtime runs the fused model as written', b.text) || !a.ok) continue;
    const c = run(node, [path.join(__dirname, 'compare.js'), path.join(dir, 'fused'), path.join(dir, 'orig'), '--rtol', o.rtol]);
    check(c.ok, 'fused vs original', c.text);
    // Rewrites never rename a graph output (erase-style ones at an output pass the name on).
    const names = (d) => JSON.parse(fs.readFileSync(path.join(dir, d, 'outputs.json'), 'utf8')).map((x) => x.name).join(', ');
    check(names('fused') === names('orig'), `output names ${names('fused')} (want ${names('orig')})`);
  }
  console.log(failures ? `${failures} check(s) failed` : 'all checks passed');
  process.exit(failures ? 1 : 0);
}

main();
