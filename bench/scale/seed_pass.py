#!/usr/bin/env python3
"""The Python baseline of issue 7: the seed rule (Conv2D -> BiasAdd -> ReLU becomes
FusedConv2D_BiasAdd_ReLU) as a plain dict-of-nodes pass over a graph JSON file, with the
legality graphfuse applies (exact arity, BiasAdd reading output 0 of the Conv2D, interior
nodes used only inside the match and not graph outputs) and the same result. Times the
parse, the pass and the write separately; bench/scale/run_scale.sh compares it with
`graphfuse apply`.

    python3 bench/scale/seed_pass.py IN.json OUT.json [--no-gc] [--check GRAPHFUSE_OUT.json]

--check compares the rewritten graph with graphfuse's output for the same input (node by
node: op, inputs, attributes; graph outputs) and exits 1 when they differ.
"""
import gc
import json
import sys
import time


def node_of(ref):
    """'n5' and 'n5:1' both name node n5 (a value is node or node:port)."""
    return ref.split(":", 1)[0]


def fuse(graph):
    nodes = {n["id"]: n for n in graph["nodes"]}
    # Uses per node, every output port counted: graphfuse's interior-node rule is about
    # the node, not one of its values.
    uses = {}
    for n in graph["nodes"]:
        for ref in n.get("inputs", []):
            if ref is not None:
                uses[node_of(ref)] = uses.get(node_of(ref), 0) + 1
    outputs = {node_of(ref) for ref in graph.get("outputs", [])}
    fused = 0
    # Matches cannot overlap (the interior nodes have one use each and the ops differ),
    # so file order gives the same result as graphfuse's topological order.
    for relu in graph["nodes"]:
        if relu["op_type"] != "ReLU" or len(relu.get("inputs", [])) != 1:
            continue
        bias = nodes.get(relu["inputs"][0])  # None for 'x:1': the pattern reads output 0
        if not bias or bias["op_type"] != "BiasAdd" or len(bias.get("inputs", [])) != 2:
            continue
        conv = nodes.get(bias["inputs"][0])
        if not conv or conv["op_type"] != "Conv2D" or len(conv.get("inputs", [])) != 2:
            continue
        if None in conv["inputs"] or bias["inputs"][1] is None:
            continue  # x, w and b are leaves: they must be present values
        if uses.get(bias["id"], 0) != 1 or uses.get(conv["id"], 0) != 1:
            continue
        if bias["id"] in outputs or conv["id"] in outputs:
            continue
        attrs = dict(conv.get("attributes", {}))
        attrs["activation"] = "ReLU"
        attrs["_rule"] = "conv2d_biasadd_relu"
        relu["op_type"] = "FusedConv2D_BiasAdd_ReLU"
        relu["inputs"] = [conv["inputs"][0], conv["inputs"][1], bias["inputs"][1]]
        relu["attributes"] = attrs
        bias["dead"] = conv["dead"] = True
        fused += 1
    graph["nodes"] = [n for n in graph["nodes"] if not n.get("dead")]
    return fused


def same_graph(ours, theirs):
    """'' when both graphs have the same nodes (op, inputs, attributes) and outputs."""
    def table(g):
        return {n["id"]: (n["op_type"], n.get("inputs", []), n.get("attributes", {})) for n in g["nodes"]}
    a, b = table(ours), table(theirs)
    if a.keys() != b.keys():
        return f"node sets differ: {len(a.keys() - b.keys())} only here, {len(b.keys() - a.keys())} only in the other"
    for k in a:
        if a[k] != b[k]:
            return f"node {k} differs: {a[k]} vs {b[k]}"
    if ours.get("outputs", []) != theirs.get("outputs", []):
        return "graph outputs differ"
    return ""


def main():
    args = sys.argv[1:]
    check = None
    if "--check" in args:
        i = args.index("--check")
        if i + 1 >= len(args):
            sys.exit("seed_pass.py: --check needs a file")
        check = args.pop(i + 1)
        args.pop(i)
    if "--no-gc" in args:
        gc.disable()
    files = [a for a in args if not a.startswith("--")]
    if len(files) != 2:
        sys.exit(__doc__)
    src, dst = files
    t0 = time.perf_counter()
    with open(src) as f:
        graph = json.load(f)
    t1 = time.perf_counter()
    fused = fuse(graph)
    t2 = time.perf_counter()
    with open(dst, "w") as f:
        json.dump(graph, f)
    t3 = time.perf_counter()
    print(f"nodes {len(graph['nodes']) + 2 * fused} -> {len(graph['nodes'])} ({fused} rewrites); "
          f"parse {1e3 * (t1 - t0):.0f} ms, pass {1e3 * (t2 - t1):.0f} ms, write {1e3 * (t3 - t2):.0f} ms, "
          f"total {1e3 * (t3 - t0):.0f} ms")
    if check:
        with open(check) as f:
            why = same_graph(graph, json.load(f))
        if why:
            sys.exit(f"seed_pass.py: the result differs from {check}: {why}")
        print(f"same graph as {check}")


if __name__ == "__main__":
    main()
