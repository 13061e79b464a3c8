"""graphfuse: declarative graph rewriting for ML computation graphs.

Rules are YAML files (patterns in graphfuse's pattern language); graphs load from .graph,
.yaml/.yml, .json, .gfb and .onnx files, or from ONNX bytes. See docs/python.md.

    import graphfuse
    rules = graphfuse.load_rules("rules/onnx")
    g = graphfuse.load_graph("model.onnx")
    report = g.rewrite(rules)
    print(report.rewrites, g.op_counts())
    g.save("model.fused.onnx")
"""
from ._graphfuse import (  # noqa: F401
    Error,
    Graph,
    Report,
    Rules,
    __version__,
    load_graph,
    load_rules,
    load_rules_from_string,
    reserve_huge_page_heap,
    retain_freed_memory,
    verify,
)
from ._onnx_model import optimize  # noqa: F401  (ModelProto, bytes or a path; adds Graph.from_onnx/to_onnx)

__all__ = ["Error", "Graph", "Report", "Rules", "load_graph", "load_rules",
           "load_rules_from_string", "optimize", "reserve_huge_page_heap", "retain_freed_memory", "verify", "__version__"]
