#!/usr/bin/python3
"""Export small transformer blocks (BERT, GPT-2, Llama, Llama-GQA, ViT) to ONNX with torch.

Plain torch.nn modules written here (no HF transformers library), random weights from a fixed
seed, 2 layers, hidden 32 (4 heads of 8; FFN 128), vocab 1000, at most 128 positions: each
file stays under 300 KB so a set fits in the repository. Each model is exported at opset 14 and 17, once with
dynamic batch/sequence axes and once with fixed shapes (batch 2 x seq 16), as
    OUT/<model>.op<14|17>.<dynamic|fixed>.onnx
and OUT/README.txt lists each file with its inputs.

Usage: /usr/bin/python3 bench/transformers/export_blocks.py OUT_DIR [--models bert,gpt2,...]
"""
import argparse
import math
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

HIDDEN = 32
HEADS = 4
KV_HEADS = 2
LAYERS = 2
VOCAB = 1000
MAX_POS = 128
FFN = 4 * HIDDEN
FIXED_BATCH = 2
FIXED_SEQ = 16


# ---------------------------------------------------------------- BERT (post-LN, erf GELU)
class BertSelfAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.query = nn.Linear(HIDDEN, HIDDEN)
        self.key = nn.Linear(HIDDEN, HIDDEN)
        self.value = nn.Linear(HIDDEN, HIDDEN)
        self.head_dim = HIDDEN // HEADS

    def split(self, x):
        b, s = x.size(0), x.size(1)
        return x.view(b, s, HEADS, self.head_dim).permute(0, 2, 1, 3)

    def forward(self, x, ext_mask):
        q, k, v = self.split(self.query(x)), self.split(self.key(x)), self.split(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        scores = scores + ext_mask
        probs = F.softmax(scores, dim=-1)
        ctx = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous()
        return ctx.view(ctx.size(0), ctx.size(1), HIDDEN)


class BertLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = BertSelfAttention()
        self.attn_out = nn.Linear(HIDDEN, HIDDEN)
        self.ln1 = nn.LayerNorm(HIDDEN, eps=1e-12)
        self.inter = nn.Linear(HIDDEN, FFN)
        self.out = nn.Linear(FFN, HIDDEN)
        self.ln2 = nn.LayerNorm(HIDDEN, eps=1e-12)

    def forward(self, x, ext_mask):
        x = self.ln1(self.attn_out(self.attn(x, ext_mask)) + x)
        return self.ln2(self.out(F.gelu(self.inter(x))) + x)


class Bert(nn.Module):
    def __init__(self):
        super().__init__()
        self.word = nn.Embedding(VOCAB, HIDDEN)
        self.pos = nn.Embedding(MAX_POS, HIDDEN)
        self.tok_type = nn.Embedding(2, HIDDEN)
        self.ln = nn.LayerNorm(HIDDEN, eps=1e-12)
        self.layers = nn.ModuleList([BertLayer() for _ in range(LAYERS)])
        self.register_buffer("position_ids", torch.arange(MAX_POS).unsqueeze(0))

    def forward(self, input_ids, attention_mask, token_type_ids):
        seq = input_ids.size(1)
        pos_ids = self.position_ids[:, :seq]
        x = self.word(input_ids) + self.tok_type(token_type_ids) + self.pos(pos_ids)
        x = self.ln(x)
        ext = attention_mask[:, None, None, :].to(torch.float32)
        ext = (1.0 - ext) * -10000.0
        for layer in self.layers:
            x = layer(x, ext)
        return x


# ---------------------------------------------------------------- GPT-2 (pre-LN, tanh GELU)
class Gpt2Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.c_attn = nn.Linear(HIDDEN, 3 * HIDDEN)
        self.c_proj = nn.Linear(HIDDEN, HIDDEN)
        self.head_dim = HIDDEN // HEADS
        self.register_buffer("bias", torch.tril(torch.ones(MAX_POS, MAX_POS, dtype=torch.bool))
                             .view(1, 1, MAX_POS, MAX_POS))

    def split(self, x):
        b, s = x.size(0), x.size(1)
        return x.view(b, s, HEADS, self.head_dim).permute(0, 2, 1, 3)

    def forward(self, x, ext_mask):
        q, k, v = self.c_attn(x).split(HIDDEN, dim=2)
        q, k, v = self.split(q), self.split(k), self.split(v)
        w = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        s = q.size(-2)
        causal = self.bias[:, :, :s, :s]
        w = torch.where(causal, w, torch.tensor(torch.finfo(w.dtype).min, dtype=w.dtype))
        w = w + ext_mask
        w = F.softmax(w, dim=-1)
        a = torch.matmul(w, v).permute(0, 2, 1, 3).contiguous()
        a = a.view(a.size(0), a.size(1), HIDDEN)
        return self.c_proj(a)


class Gpt2Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln_1 = nn.LayerNorm(HIDDEN, eps=1e-5)
        self.attn = Gpt2Attention()
        self.ln_2 = nn.LayerNorm(HIDDEN, eps=1e-5)
        self.c_fc = nn.Linear(HIDDEN, FFN)
        self.c_proj = nn.Linear(FFN, HIDDEN)

    def forward(self, x, ext_mask):
        x = x + self.attn(self.ln_1(x), ext_mask)
        return x + self.c_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))


class Gpt2(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(VOCAB, HIDDEN)
        self.wpe = nn.Embedding(MAX_POS, HIDDEN)
        self.h = nn.ModuleList([Gpt2Block() for _ in range(LAYERS)])
        self.ln_f = nn.LayerNorm(HIDDEN, eps=1e-5)

    def forward(self, input_ids, attention_mask):
        seq = input_ids.size(1)
        pos = torch.arange(0, seq, dtype=torch.long).unsqueeze(0)
        x = self.wte(input_ids) + self.wpe(pos)
        ext = attention_mask[:, None, None, :].to(torch.float32)
        ext = (1.0 - ext) * torch.finfo(torch.float32).min
        for block in self.h:
            x = block(x, ext)
        return self.ln_f(x)


# ---------------------------------------------------------------- Llama (RMSNorm, rotary, SiLU MLP, GQA)
class RMSNorm(nn.Module):
    def __init__(self, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(HIDDEN))
        self.eps = eps

    def forward(self, x):
        dtype = x.dtype
        x = x.to(torch.float32)
        var = x.pow(2).mean(-1, keepdim=True)
        x = x * torch.rsqrt(var + self.eps)
        return self.weight * x.to(dtype)


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class Rotary(nn.Module):
    def __init__(self, dim, base=10000.0):
        super().__init__()
        inv = 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))
        t = torch.arange(MAX_POS).float()
        freqs = torch.outer(t, inv)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.register_buffer("cos_cached", emb.cos())
        self.register_buffer("sin_cached", emb.sin())

    def forward(self, position_ids):
        return self.cos_cached[position_ids], self.sin_cached[position_ids]


class LlamaAttention(nn.Module):
    def __init__(self, kv_heads):
        super().__init__()
        self.head_dim = HIDDEN // HEADS
        self.kv_heads = kv_heads
        self.q_proj = nn.Linear(HIDDEN, HEADS * self.head_dim, bias=False)
        self.k_proj = nn.Linear(HIDDEN, kv_heads * self.head_dim, bias=False)
        self.v_proj = nn.Linear(HIDDEN, kv_heads * self.head_dim, bias=False)
        self.o_proj = nn.Linear(HIDDEN, HIDDEN, bias=False)

    def forward(self, x, cos, sin, mask):
        b, s = x.size(0), x.size(1)
        q = self.q_proj(x).view(b, s, HEADS, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        rep = HEADS // self.kv_heads
        if rep > 1:  # repeat_kv
            k = k[:, :, None, :, :].expand(b, self.kv_heads, rep, s, self.head_dim) \
                .reshape(b, HEADS, s, self.head_dim)
            v = v[:, :, None, :, :].expand(b, self.kv_heads, rep, s, self.head_dim) \
                .reshape(b, HEADS, s, self.head_dim)
        w = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(self.head_dim)
        w = w + mask
        w = F.softmax(w, dim=-1, dtype=torch.float32).to(q.dtype)
        o = torch.matmul(w, v).transpose(1, 2).contiguous().reshape(b, s, HIDDEN)
        return self.o_proj(o)


class LlamaLayer(nn.Module):
    def __init__(self, kv_heads):
        super().__init__()
        self.input_layernorm = RMSNorm()
        self.self_attn = LlamaAttention(kv_heads)
        self.post_attention_layernorm = RMSNorm()
        inter = 86
        self.gate_proj = nn.Linear(HIDDEN, inter, bias=False)
        self.up_proj = nn.Linear(HIDDEN, inter, bias=False)
        self.down_proj = nn.Linear(inter, HIDDEN, bias=False)

    def forward(self, x, cos, sin, mask):
        x = x + self.self_attn(self.input_layernorm(x), cos, sin, mask)
        h = self.post_attention_layernorm(x)
        return x + self.down_proj(F.silu(self.gate_proj(h)) * self.up_proj(h))


class Llama(nn.Module):
    def __init__(self, kv_heads=HEADS):
        super().__init__()
        self.embed_tokens = nn.Embedding(VOCAB, HIDDEN)
        self.rotary = Rotary(HIDDEN // HEADS)
        self.layers = nn.ModuleList([LlamaLayer(kv_heads) for _ in range(LAYERS)])
        self.norm = RMSNorm()

    def forward(self, input_ids, attention_mask, position_ids):
        b, s = input_ids.size(0), input_ids.size(1)
        x = self.embed_tokens(input_ids)
        cos, sin = self.rotary(position_ids)
        fmin = torch.finfo(torch.float32).min
        causal = torch.triu(torch.full((s, s), fmin), diagonal=1)
        pad = (1.0 - attention_mask[:, None, None, :].to(torch.float32)) * fmin
        mask = causal[None, None, :, :] + pad
        for layer in self.layers:
            x = layer(x, cos, sin, mask)
        return self.norm(x)


# ---------------------------------------------------------------- ViT (patch conv + pre-LN encoder)
class VitLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1 = nn.LayerNorm(HIDDEN, eps=1e-12)
        self.attn = BertSelfAttention()
        self.attn_out = nn.Linear(HIDDEN, HIDDEN)
        self.ln2 = nn.LayerNorm(HIDDEN, eps=1e-12)
        self.inter = nn.Linear(HIDDEN, FFN)
        self.out = nn.Linear(FFN, HIDDEN)

    def forward(self, x):
        x = x + self.attn_out(self.attn(self.ln1(x), 0.0))
        return x + self.out(F.gelu(self.inter(self.ln2(x))))


class Vit(nn.Module):
    IMAGE = 32
    PATCH = 8

    def __init__(self):
        super().__init__()
        n = (self.IMAGE // self.PATCH) ** 2
        self.patch = nn.Conv2d(3, HIDDEN, self.PATCH, stride=self.PATCH)
        self.cls = nn.Parameter(0.02 * torch.randn(1, 1, HIDDEN))
        self.pos = nn.Parameter(0.02 * torch.randn(1, n + 1, HIDDEN))
        self.layers = nn.ModuleList([VitLayer() for _ in range(LAYERS)])
        self.ln = nn.LayerNorm(HIDDEN, eps=1e-12)

    def forward(self, pixel_values):
        x = self.patch(pixel_values).flatten(2).transpose(1, 2)
        x = torch.cat((self.cls.expand(x.size(0), -1, -1), x), dim=1) + self.pos
        for layer in self.layers:
            x = layer(x)
        return self.ln(x)


# ---------------------------------------------------------------- export
def text_inputs(names, batch, seq):
    g = torch.Generator().manual_seed(1)
    out = []
    for n in names:
        if n == "input_ids":
            out.append(torch.randint(0, VOCAB, (batch, seq), generator=g))
        elif n == "attention_mask":
            m = torch.ones(batch, seq, dtype=torch.long)
            m[-1, seq - 3:] = 0
            out.append(m)
        elif n == "token_type_ids":
            t = torch.zeros(batch, seq, dtype=torch.long)
            t[:, seq // 2:] = 1
            out.append(t)
        elif n == "position_ids":
            out.append(torch.arange(seq).unsqueeze(0).expand(batch, seq).contiguous())
    return tuple(out)


MODELS = {
    # name: (constructor, input names, output name)
    "bert": (Bert, ["input_ids", "attention_mask", "token_type_ids"], "last_hidden_state"),
    "gpt2": (Gpt2, ["input_ids", "attention_mask"], "last_hidden_state"),
    "llama": (lambda: Llama(HEADS), ["input_ids", "attention_mask", "position_ids"], "last_hidden_state"),
    "llama_gqa": (lambda: Llama(KV_HEADS), ["input_ids", "attention_mask", "position_ids"],
                  "last_hidden_state"),
    "vit": (Vit, ["pixel_values"], "last_hidden_state"),
}


def export(name, opset, dynamic, out_dir):
    ctor, in_names, out_name = MODELS[name]
    torch.manual_seed(42)
    model = ctor().eval()
    if name == "vit":
        args = (torch.randn(FIXED_BATCH, 3, Vit.IMAGE, Vit.IMAGE,
                            generator=torch.Generator().manual_seed(1)),)
        axes = {"pixel_values": {0: "batch"}, out_name: {0: "batch"}}
    else:
        args = text_inputs(in_names, FIXED_BATCH, FIXED_SEQ)
        axes = {n: {0: "batch", 1: "seq"} for n in in_names}
        axes[out_name] = {0: "batch", 1: "seq"}
    path = os.path.join(out_dir, "%s.op%d.%s.onnx" % (name, opset, "dynamic" if dynamic else "fixed"))
    with torch.no_grad():
        torch.onnx.export(model, args, path, input_names=in_names, output_names=[out_name],
                          opset_version=opset, do_constant_folding=True,
                          dynamic_axes=axes if dynamic else None)
    return path, in_names, [tuple(a.shape) for a in args], axes if dynamic else None


def describe(path, in_names, shapes, axes):
    import onnx
    m = onnx.load(path)
    nodes = sum(1 for n in m.graph.node if n.op_type != "Constant")
    ins = []
    for n, s in zip(in_names, shapes):
        dims = [(axes[n][i] if axes and i in axes[n] else str(d)) for i, d in enumerate(s)]
        ins.append("%s[%s]" % (n, ",".join(str(d) for d in dims)))
    return "%-32s %4d nodes  %7d bytes  inputs: %s" % (
        os.path.basename(path), nodes, os.path.getsize(path), " ".join(ins))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out_dir")
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--opsets", default="14,17")
    a = ap.parse_args()
    os.makedirs(a.out_dir, exist_ok=True)
    lines = []
    for name in a.models.split(","):
        if name not in MODELS:
            sys.exit("export_blocks.py: unknown model '%s' (have %s)" % (name, ", ".join(MODELS)))
        for opset in [int(o) for o in a.opsets.split(",")]:
            for dynamic in (True, False):
                lines.append(describe(*export(name, opset, dynamic, a.out_dir)))
                print(lines[-1], flush=True)
    with open(os.path.join(a.out_dir, "README.txt"), "w") as f:
        f.write("Generated by bench/transformers/export_blocks.py (torch %s): random weights "
                "(seed 42), hidden %d, %d heads (Llama GQA: %d KV heads), %d layers, vocab %d.\n"
                "Fixed-shape files take batch %d x seq %d (ViT: 2x3x32x32 images); dynamic ones "
                "any batch/seq <= %d. Token ids are int64, attention_mask int64 (1 = keep), "
                "position_ids int64 (0..seq-1). Node counts exclude Constant.\n\n"
                % (torch.__version__, HIDDEN, HEADS, KV_HEADS, LAYERS, VOCAB, FIXED_BATCH,
                   FIXED_SEQ, MAX_POS))
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
