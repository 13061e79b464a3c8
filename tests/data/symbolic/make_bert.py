# Writes a small HF-style BERT (token + position embeddings, 2 post-LN blocks, hidden 16)
# exported by torch.onnx with dynamic batch and sequence axes: the Shape/Slice/Reshape
# chains symbolic shape inference follows (tests/unit/sym_shapes_test.cpp, docs/shapes.md).
# usage: /usr/bin/python3 make_bert.py OUT.onnx OPSET
import torch, torch.nn as nn, math, sys
torch.manual_seed(0)
class Block(nn.Module):
    def __init__(s, h=16, heads=2):
        super().__init__()
        s.h, s.heads = h, heads
        s.q = nn.Linear(h, h); s.k = nn.Linear(h, h); s.v = nn.Linear(h, h); s.o = nn.Linear(h, h)
        s.ln1 = nn.LayerNorm(h); s.ln2 = nn.LayerNorm(h)
        s.f1 = nn.Linear(h, 4*h); s.f2 = nn.Linear(4*h, h)
    def split(s, x):
        b, t, _ = x.size()
        return x.view(b, t, s.heads, s.h // s.heads).permute(0, 2, 1, 3)
    def forward(s, x, mask):
        q, k, v = s.split(s.q(x)), s.split(s.k(x)), s.split(s.v(x))
        a = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(s.h // s.heads) + mask
        a = a.softmax(-1)
        c = torch.matmul(a, v).permute(0, 2, 1, 3).contiguous()
        c = c.view(c.size()[:-2] + (s.h,))
        x = s.ln1(x + s.o(c))
        return s.ln2(x + s.f2(torch.nn.functional.gelu(s.f1(x))))
class Bert(nn.Module):
    def __init__(s, h=16):
        super().__init__()
        s.we = nn.Embedding(32, h); s.pe = nn.Embedding(32, h); s.ln = nn.LayerNorm(h)
        s.register_buffer("pos", torch.arange(32).unsqueeze(0))
        s.blocks = nn.ModuleList([Block(h), Block(h)])
    def forward(s, ids, am):
        t = ids.size(1)
        x = s.ln(s.we(ids) + s.pe(s.pos[:, :t]))
        m = (1.0 - am[:, None, None, :].float()) * -10000.0
        for b in s.blocks: x = b(x, m)
        return x
m = Bert().eval()
ids = torch.randint(0, 32, (2, 8)); am = torch.ones(2, 8, dtype=torch.int64)
torch.onnx.export(m, (ids, am), sys.argv[1], input_names=["ids", "mask"], output_names=["out"],
                  dynamic_axes={"ids": {0: "batch", 1: "seq"}, "mask": {0: "batch", 1: "seq"}, "out": {0: "batch", 1: "seq"}},
                  opset_version=int(sys.argv[2]))
