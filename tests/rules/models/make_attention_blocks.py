#!/usr/bin/python3
"""Writes the small attention blocks the attention and rotary rule tests read.

Run with Debian's python3 (python3-torch, python3-onnx): /usr/bin/python3 make_attention_blocks.py
Random weights, fixed seed; sizes are tiny so the files stay a few KB. The blocks follow the
Hugging Face modules as torch's ONNX exporter writes them:

  llama_attn_rope.onnx       Llama self-attention: q/k/v projections, rotate-half rotary
                             embeddings with cos/sin gathered by position ids, additive mask
  llama_attn_not_rope.onnx   the same graph, but the cos/sin caches' two halves differ, so the
                             "rotation" is not one (the rotary rule must not fire)
  bert_attn.onnx             BERT self-attention: q/k/v projections with bias, 0/1 attention
                             mask turned into (1 - mask) * -10000, Softmax, context, output
  bert_attn_mul.onnx         the same, scores scaled by a Mul by 1/sqrt(head) (not a Div)
  llama_attn_rope_mul.onnx   llama_attn_rope with the Mul scale
  vit_attn_mul.onnx          bert_attn_mul without a mask: the scores plus a constant 0 (ViT)
  llama_attn_rope_dyn.onnx   llama_attn_rope exported with dynamic batch and sequence axes
  llama_attn_rope_interleaved.onnx      llama_attn_rope with GPT-J's interleaved rotation
                             (rotate_every_two: pairs (2i, 2i + 1)) over caches whose columns
                             repeat in pairs (freqs.repeat_interleave(2))
  llama_attn_rope_interleaved_dyn.onnx  the same with dynamic batch and sequence axes
  llama_attn_not_rope_interleaved.onnx  the interleaved graph over caches whose pairs differ
                             (the interleaved rotary rule must not fire)
  gpt2_attn.onnx             GPT-2 self-attention: one packed QKV projection split in three,
                             scores kept where the causal buffer (lower triangle) allows,
                             0/1 attention mask turned into (1 - mask) * lowest float; key 0
                             is never masked (a left-padded query that sees only masked keys
                             differs between the export and a fused Attention, docs/transformers.md),
                             so `verify`'s random 0/1 masks compare rows every runtime agrees on
  gpt2_attn_dyn.onnx         the same with dynamic batch and sequence axes: the buffer is
                             sliced to [:seq, :seq] at run time
  gpt2_attn_not_causal.onnx  gpt2_attn_dyn with a buffer that is not lower triangular (the
                             causal attention rule must not fire)
  llama_gqa_attn.onnx        Llama grouped-query attention: 4 query heads over 2 key/value
                             heads (repeat_kv: unsqueeze, expand, reshape), rotate-half rotary,
                             scores scaled by a Mul, the mask built in the graph as Llama does:
                             triu(full(lowest), 1) plus (1 - mask) * lowest from a 0/1 mask
                             whose key 0 is never masked (as gpt2_attn)
  llama_gqa_attn_dyn.onnx    the same with dynamic batch and sequence axes
  llama_gqa_attn_diag.onnx   the same with triu(..., 0): the diagonal masked too, which is not
                             the causal mask GroupQueryAttention applies (the rule must not fire)
"""
import math
import os
import sys

import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
H, N, HD, B, S, P = 16, 2, 8, 2, 4, 16
GQA_N, GQA_KV, GQA_HD = 4, 2, 4  # grouped-query blocks: each key/value head serves two query heads


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def rotate_every_two(x):
    pairs = torch.stack((-x[..., 1::2], x[..., ::2]), dim=-1)
    return pairs.flatten(-2)


class LlamaAttention(nn.Module):
    def __init__(self, rope=True, scale_mul=False, interleaved=False):
        super().__init__()
        self.scale_mul = scale_mul
        self.interleaved = interleaved
        self.q = nn.Linear(H, H, bias=False)
        self.k = nn.Linear(H, H, bias=False)
        self.v = nn.Linear(H, H, bias=False)
        self.o = nn.Linear(H, H, bias=False)
        inv = 1.0 / (10000 ** (torch.arange(0, HD, 2).float() / HD))
        f = torch.outer(torch.arange(P).float(), inv)
        if interleaved:  # columns (2i, 2i + 1) equal; "not rope": the odd ones differ
            emb = torch.stack((f, f if rope else 1.5 * f), -1).flatten(-2)
        else:
            emb = torch.cat((f, f if rope else 1.5 * f), -1)
        self.register_buffer("cos_cached", emb.cos())
        self.register_buffer("sin_cached", emb.sin())

    def forward(self, x, position_ids, attention_mask):
        b, s, _ = x.shape
        q = self.q(x).view(b, s, N, HD).transpose(1, 2)
        k = self.k(x).view(b, s, N, HD).transpose(1, 2)
        v = self.v(x).view(b, s, N, HD).transpose(1, 2)
        cos = self.cos_cached[:s][position_ids].unsqueeze(1)
        sin = self.sin_cached[:s][position_ids].unsqueeze(1)
        rot = rotate_every_two if self.interleaved else rotate_half
        q = q * cos + rot(q) * sin
        k = k * cos + rot(k) * sin
        a = torch.matmul(q, k.transpose(2, 3))
        a = a * (1.0 / math.sqrt(HD)) if self.scale_mul else a / math.sqrt(HD)
        a = torch.softmax(a + attention_mask, dim=-1)
        o = torch.matmul(a, v).transpose(1, 2).reshape(b, s, H)
        return self.o(o)


class BertAttention(nn.Module):
    def __init__(self, scale_mul=False, no_mask=False):
        super().__init__()
        self.scale_mul = scale_mul
        self.no_mask = no_mask
        self.q = nn.Linear(H, H)
        self.k = nn.Linear(H, H)
        self.v = nn.Linear(H, H)
        self.o = nn.Linear(H, H)

    def heads(self, t):
        b, s, _ = t.shape
        return t.view(b, s, N, HD).permute(0, 2, 1, 3)

    def forward(self, x, attention_mask):
        ext = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * -10000.0
        q, k, v = self.heads(self.q(x)), self.heads(self.k(x)), self.heads(self.v(x))
        a = torch.matmul(q, k.transpose(-1, -2))
        a = a * (1.0 / math.sqrt(HD)) if self.scale_mul else a / math.sqrt(HD)
        if self.no_mask:  # ViT's export: the scores plus a constant 0
            ext = torch.zeros((), dtype=x.dtype)
        a = torch.softmax(a + ext, dim=-1)
        c = torch.matmul(a, v).permute(0, 2, 1, 3).contiguous()
        return self.o(c.view(c.shape[0], c.shape[1], H))


class Gpt2Attention(nn.Module):
    def __init__(self, causal=True, first_key_visible=False):
        super().__init__()
        self.first_key_visible = first_key_visible
        self.c_attn = nn.Linear(H, 3 * H)
        self.c_proj = nn.Linear(H, H)
        tri = torch.tril(torch.ones(P, P, dtype=torch.bool))
        if not causal:  # one future key visible: not a causal mask
            tri[0, 1] = True
        self.register_buffer("bias", tri[None, None])

    def heads(self, t):
        b, s, _ = t.shape
        return t.view(b, s, N, HD).permute(0, 2, 1, 3)

    def forward(self, x, attention_mask):
        low = torch.finfo(x.dtype).min
        if self.first_key_visible:
            attention_mask = torch.cat([torch.ones_like(attention_mask[:, :1]), attention_mask[:, 1:]], 1)
        ext = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * low
        q, k, v = self.c_attn(x).split(H, dim=2)
        q, k, v = self.heads(q), self.heads(k), self.heads(v)
        # Scaled by a Mul, as bert_attn_mul: rule tests do not fold, and matmul.yaml folds
        # a Mul scale into FusedMatMul without folding (a Div needs its reciprocal folded).
        a = torch.matmul(q, k.transpose(-1, -2)) * (1.0 / math.sqrt(HD))
        s = q.size(-2)
        a = torch.where(self.bias[:, :, :s, :s], a, torch.tensor(low, dtype=a.dtype))
        a = torch.softmax(a + ext, dim=-1)
        c = torch.matmul(a, v).permute(0, 2, 1, 3).contiguous()
        return self.c_proj(c.view(c.shape[0], c.shape[1], H))


class LlamaGqaAttention(nn.Module):
    def __init__(self, diagonal=1):
        super().__init__()
        self.diagonal = diagonal
        self.q = nn.Linear(H, H, bias=False)
        self.k = nn.Linear(H, GQA_KV * GQA_HD, bias=False)
        self.v = nn.Linear(H, GQA_KV * GQA_HD, bias=False)
        self.o = nn.Linear(H, H, bias=False)
        inv = 1.0 / (10000 ** (torch.arange(0, GQA_HD, 2).float() / GQA_HD))
        emb = torch.cat((torch.outer(torch.arange(P).float(), inv),) * 2, -1)
        self.register_buffer("cos_cached", emb.cos())
        self.register_buffer("sin_cached", emb.sin())

    def forward(self, x, position_ids, attention_mask):
        b, s, _ = x.shape
        low = torch.finfo(x.dtype).min
        # Key 0 always visible, by a Where over positions (a [:, :1] slice would be
        # min(seq, 1), an unknown dim, docs/shapes.md).
        attention_mask = torch.where(torch.arange(s) == 0, torch.ones_like(attention_mask), attention_mask)
        causal = torch.triu(torch.full((s, s), low), diagonal=self.diagonal)
        mask = causal[None, None, :, :] + (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * low
        q = self.q(x).view(b, s, GQA_N, GQA_HD).transpose(1, 2)
        k = self.k(x).view(b, s, GQA_KV, GQA_HD).transpose(1, 2)
        v = self.v(x).view(b, s, GQA_KV, GQA_HD).transpose(1, 2)
        cos = self.cos_cached[position_ids].unsqueeze(1)
        sin = self.sin_cached[position_ids].unsqueeze(1)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        rep = GQA_N // GQA_KV
        k = k[:, :, None, :, :].expand(b, GQA_KV, rep, s, GQA_HD).reshape(b, GQA_N, s, GQA_HD)
        v = v[:, :, None, :, :].expand(b, GQA_KV, rep, s, GQA_HD).reshape(b, GQA_N, s, GQA_HD)
        a = torch.matmul(q, k.transpose(2, 3)) * (1.0 / math.sqrt(GQA_HD))
        a = torch.softmax(a + mask, dim=-1)
        o = torch.matmul(a, v).transpose(1, 2).reshape(b, s, H)
        return self.o(o)


def export(model, args, names, path, opset=14, dynamic_axes=None):
    torch.onnx.export(model.eval(), args, os.path.join(HERE, path), opset_version=opset,
                      input_names=names, output_names=["y"], dynamic_axes=dynamic_axes)


def main():
    torch.manual_seed(0)
    x = torch.randn(B, S, H)
    pos = torch.arange(S).unsqueeze(0).expand(B, S)
    mask = torch.triu(torch.full((S, S), -1e9), 1)[None, None].expand(B, 1, S, S).contiguous()
    export(LlamaAttention(True), (x, pos, mask), ["x", "position_ids", "attention_mask"], "llama_attn_rope.onnx")
    export(LlamaAttention(False), (x, pos, mask), ["x", "position_ids", "attention_mask"], "llama_attn_not_rope.onnx")
    am = torch.ones(B, S, dtype=torch.int64)
    export(BertAttention(), (x, am), ["x", "attention_mask"], "bert_attn.onnx")
    # Scaled by a Mul: matmul.yaml folds it into FusedMatMul's alpha without constant
    # folding, so rule tests (which do not fold) see the form `graphfuse apply` reaches.
    export(BertAttention(scale_mul=True), (x, am), ["x", "attention_mask"], "bert_attn_mul.onnx")
    export(LlamaAttention(True, scale_mul=True), (x, pos, mask), ["x", "position_ids", "attention_mask"],
           "llama_attn_rope_mul.onnx")
    export(BertAttention(scale_mul=True, no_mask=True), (x, am), ["x", "attention_mask"], "vit_attn_mul.onnx")
    bs = {0: "batch", 1: "seq"}
    export(LlamaAttention(True), (x, pos, mask), ["x", "position_ids", "attention_mask"], "llama_attn_rope_dyn.onnx",
           dynamic_axes={"x": bs, "position_ids": bs, "attention_mask": {0: "batch", 2: "seq", 3: "seq"}, "y": bs})
    am[-1, -1] = 0
    export(Gpt2Attention(first_key_visible=True), (x, am), ["x", "attention_mask"], "gpt2_attn.onnx")
    dyn = {"x": bs, "attention_mask": bs, "y": bs}
    export(Gpt2Attention(), (x, am), ["x", "attention_mask"], "gpt2_attn_dyn.onnx", dynamic_axes=dyn)
    export(Gpt2Attention(causal=False), (x, am), ["x", "attention_mask"], "gpt2_attn_not_causal.onnx",
           dynamic_axes=dyn)
    # Exported last: torch's random state then leaves the files above as they were.
    export(LlamaAttention(True, interleaved=True), (x, pos, mask), ["x", "position_ids", "attention_mask"],
           "llama_attn_rope_interleaved.onnx")
    export(LlamaAttention(True, interleaved=True), (x, pos, mask), ["x", "position_ids", "attention_mask"],
           "llama_attn_rope_interleaved_dyn.onnx",
           dynamic_axes={"x": bs, "position_ids": bs, "attention_mask": {0: "batch", 2: "seq", 3: "seq"}, "y": bs})
    export(LlamaAttention(False, interleaved=True), (x, pos, mask), ["x", "position_ids", "attention_mask"],
           "llama_attn_not_rope_interleaved.onnx")
    gqa_axes = {"x": bs, "position_ids": bs, "attention_mask": bs, "y": bs}
    export(LlamaGqaAttention(), (x, pos, am), ["x", "position_ids", "attention_mask"], "llama_gqa_attn.onnx")
    export(LlamaGqaAttention(), (x, pos, am), ["x", "position_ids", "attention_mask"], "llama_gqa_attn_dyn.onnx",
           dynamic_axes=gqa_axes)
    export(LlamaGqaAttention(diagonal=0), (x, pos, am), ["x", "position_ids", "attention_mask"],
           "llama_gqa_attn_diag.onnx", dynamic_axes=gqa_axes)


if __name__ == "__main__":
    sys.exit(main())
