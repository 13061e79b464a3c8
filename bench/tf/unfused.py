#!/usr/bin/python3
"""Counts what a target could still fuse in a TF.js graph model (model.json): a Conv2D,
DepthwiseConv2dNative or MatMul (or a fused one carrying only its bias) whose only reader
is something the target's fused form takes in.

  usage: unfused.py TARGET.yaml model.json [model.json ...] [--json] [--list]

Missed, per producer (its one reader is):
  bias        BiasAdd, or Add/AddV2 of a constant with one value per output channel
              (for a plain convolution / MatMul)
  activation  an activation the target's fused op lists after BiasAdd (Relu, Relu6, ...),
              read from the target profile's fused_ops values; Prelu with a constant alpha
  scale       Mul by a constant with one value per output channel (a batch norm written
              as Mul + Add: folds into the filter)
A producer that is a graph output, or read by more than one node, is not counted: fusing
would have to keep its value. Exit 0 always (this is a report); 2 on unreadable input.
"""
import json
import sys
from collections import Counter, defaultdict


PLAIN = {"Conv2D": "_FusedConv2D", "DepthwiseConv2dNative": "FusedDepthwiseConv2dNative", "MatMul": "_FusedMatMul"}
FUSED = set(PLAIN.values())


def fused_activations(target_path):
    """op -> activations the target takes as [BiasAdd, act]. Reads the profile's lines
    (ops: / OP: / available: / fused_ops: values: - [BiasAdd, Act]) without a YAML library,
    so the ctest that calls this needs nothing beyond Debian's python3."""
    acts, op, in_fused, unavailable = {}, None, False, set()
    with open(target_path) as f:
        for line in f:
            text = line.split("#", 1)[0].rstrip()
            if not text.strip():
                continue
            indent = len(text) - len(text.lstrip())
            item = text.strip()
            if indent == 2 and item.endswith(":"):
                op, in_fused = item[:-1], False
            elif indent == 0:
                op = None
            elif op and item.startswith("fused_ops:"):
                in_fused = True
            elif op and item == "available: false":
                unavailable.add(op)
            elif op in FUSED and in_fused and item.startswith("- [") and item.endswith("]"):
                v = [x.strip() for x in item[3:-1].split(",")]
                acts.setdefault(op, set())
                if v[0] == "BiasAdd":
                    if len(v) == 1 or v[1] != "Add":  # [BiasAdd, Add]: a residual operand, not an activation
                        acts[op].add(v[1] if len(v) == 2 else "")
            elif op and indent <= 6 and not item.startswith("-") and not item.startswith("values"):
                in_fused = item.startswith("fused_ops")
    return {k: v for k, v in acts.items() if k not in unavailable}


def strings(attr):
    import base64
    return [base64.b64decode(s).decode() for s in attr.get("list", {}).get("s", [])]


def const_shape(node):
    if node is None or node["op"] != "Const":
        return None
    t = node.get("attr", {}).get("value", {}).get("tensor", {})
    return [int(d.get("size", 0)) for d in t.get("tensorShape", {}).get("dim", [])]


def channels(node, by_name):
    """Output channels of a convolution / MatMul from its constant weight, or None."""
    w = by_name.get(node["input"][1].split(":")[0]) if len(node.get("input", [])) > 1 else None
    s = const_shape(w)
    if not s:
        return None
    if node["op"] in ("DepthwiseConv2dNative", "FusedDepthwiseConv2dNative"):
        return s[2] * s[3] if len(s) == 4 else None
    if node["op"] in ("MatMul", "_FusedMatMul"):
        tb = node.get("attr", {}).get("transpose_b", {}).get("b", False)
        return s[0] if tb else s[-1]
    return s[-1]


def per_channel_const(name, by_name, c):
    s = const_shape(by_name.get(name.split(":")[0]))
    return s is not None and c is not None and len(s) >= 1 and s[-1] == c and all(d == 1 for d in s[:-1])


def check(model_path, acts):
    with open(model_path) as f:
        model = json.load(f)
    nodes = model["modelTopology"]["node"]
    by_name = {n["name"]: n for n in nodes}
    readers = defaultdict(list)
    for n in nodes:
        for i in n.get("input", []):
            if not i.startswith("^"):
                readers[i.split(":")[0]].append(n)
    sig = model.get("signature") or (model.get("userDefinedMetadata") or {}).get("signature") or {}
    outputs = {v.get("name", k).split(":")[0] for k, v in (sig.get("outputs") or {}).items()}
    missed = Counter()
    where = []
    for n in nodes:
        op = n["op"]
        if op not in PLAIN and op not in FUSED:
            continue
        fused_op = PLAIN.get(op, op)
        if fused_op not in acts or n["name"] in outputs or len(readers[n["name"]]) != 1:
            continue
        if op in FUSED and strings(n.get("attr", {}).get("fused_ops", {})) != ["BiasAdd"]:
            continue
        r = readers[n["name"]][0]
        c = channels(n, by_name)
        others = [i for i in r.get("input", []) if not i.startswith("^") and i.split(":")[0] != n["name"]]
        kind = None
        if op in PLAIN and r["op"] == "BiasAdd" and r["input"][0].split(":")[0] == n["name"]:
            kind = "bias"
        elif op in PLAIN and r["op"] in ("Add", "AddV2") and len(others) == 1 and per_channel_const(others[0], by_name, c):
            kind = "bias"
        elif op in PLAIN and op != "MatMul" and r["op"] == "Mul" and len(others) == 1 and per_channel_const(others[0], by_name, c):
            kind = "scale"
        elif r["op"] in acts[fused_op] and r["op"] != "Prelu":
            kind = "activation"
        elif r["op"] == "Prelu" and "Prelu" in acts[fused_op] and per_channel_const(r["input"][1], by_name, c):
            kind = "activation"
        if kind:
            missed[kind] += 1
            where.append(f"{n['name']} ({op}) -> {r['name']} ({r['op']}): {kind}")
    count = Counter(n["op"] for n in nodes)
    return {
        "nodes": len(nodes),
        "plain": sum(count[o] for o in PLAIN),
        "fused": sum(count[o] for o in FUSED),
        "missed": sum(missed.values()),
        "missed_bias": missed["bias"],
        "missed_activation": missed["activation"],
        "missed_scale": missed["scale"],
        "where": where,
    }


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    if len(args) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        acts = fused_activations(args[0])
        for m in args[1:]:
            r = check(m, acts)
            if "--json" in argv:
                print(json.dumps({"model": m, **{k: v for k, v in r.items() if k != "where"}}))
            else:
                print(f"{m}: {r['nodes']} nodes, {r['plain']} conv/depthwise/matmul, {r['fused']} fused, "
                      f"missed {r['missed']} (bias {r['missed_bias']}, activation {r['missed_activation']}, "
                      f"scale {r['missed_scale']})")
            if "--list" in argv:
                for w in r["where"]:
                    print("  " + w)
    except (OSError, ValueError, KeyError) as e:
        print(f"unfused.py: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
