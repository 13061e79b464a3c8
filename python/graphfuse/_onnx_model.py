"""optimize() and Graph.from_onnx / Graph.to_onnx for the forms Python users hold a model in:
an onnx.ModelProto, the serialized bytes, or a path (docs/python.md)."""
import contextlib
import os
import tempfile

from ._graphfuse import Error, Graph, load_graph
from ._graphfuse import optimize as _optimize_bytes

_TWO_GB = 2**31 - 1


def _is_model_proto(obj):
    try:
        import onnx
    except ImportError:
        return False
    return isinstance(obj, onnx.ModelProto)


def _has_external(model):
    import onnx

    return any(t.data_location == onnx.TensorProto.EXTERNAL for t in model.graph.initializer)


def _rewrite(g, rules, kw):
    report = g.rewrite(rules, **kw)
    if not report.converged:
        raise Error("the rules did not reach a fixed point (max_rounds or max_nodes): the model is only partly rewritten")
    return report


def _optimize_path(src, dst, rules, kw):
    g = load_graph(os.fspath(src))
    _rewrite(g, rules, kw)
    g.save(os.fspath(dst))  # keeps the input's form: external data stays external


@contextlib.contextmanager
def _model_file(model, base_dir):
    """A model file for a ModelProto graphfuse cannot take as one buffer: written beside its
    data files (base_dir) when its tensors refer to them, else into a temporary folder with
    its weights as external data. Removed afterwards."""
    import onnx

    if _has_external(model):
        if base_dir is None:
            raise Error("the ModelProto has external data: pass base_dir=, the folder its data files are in")
        fd, src = tempfile.mkstemp(suffix=".onnx", prefix=".graphfuse-", dir=os.fspath(base_dir))
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(model.SerializeToString())
            yield src
        finally:
            os.unlink(src)
        return
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "in.onnx")
        onnx.save_model(model, src, save_as_external_data=True, location="in.onnx.data")
        yield src


def _proto_via_files(model, rules, kw, base_dir):
    """A ModelProto too big for one buffer, or one whose tensors are in data files: through a
    model file, rewritten, read back whole."""
    import onnx

    with tempfile.TemporaryDirectory() as tmp, _model_file(model, base_dir) as src:
        out = os.path.join(tmp, "out.onnx")
        _optimize_path(src, out, rules, kw)
        return onnx.load(out)  # with its external data, as the caller had the weights in memory


def optimize(model, rules, *, output=None, base_dir=None, **kw):
    """Rewrites `model` with `rules` and returns the same kind it was given:

    - ``onnx.ModelProto`` -> a new ModelProto (external data handled: a proto whose tensors
      refer to data files needs ``base_dir=``, the folder they are in; a proto over 2 GB goes
      through a temporary folder with external data);
    - ``bytes`` -> the new model's bytes (what ``graphfuse apply`` writes);
    - a path (``str`` or ``os.PathLike``) -> the output path, ``output=`` or
      ``<name>.optimized.onnx`` beside the input; external data stays external.

    Keyword arguments (threads, target, fold, max_rounds, max_nodes, only) are Graph.rewrite's.
    Raises Error when the rules do not reach a fixed point.
    """
    if isinstance(model, (bytes, bytearray, memoryview)):
        return _optimize_bytes(bytes(model), rules, **kw)
    if isinstance(model, (str, os.PathLike)):
        src = os.fspath(model)
        if output is None:
            stem = src[:-5] if src.endswith(".onnx") else src
            output = stem + ".optimized.onnx"
        _optimize_path(src, output, rules, kw)
        return output
    if _is_model_proto(model):
        import onnx

        if _has_external(model) or model.ByteSize() > _TWO_GB:
            return _proto_via_files(model, rules, kw, base_dir)
        out = _optimize_bytes(model.SerializeToString(), rules, **kw)
        return onnx.load_from_string(out)
    raise TypeError(f"optimize: model must be an onnx.ModelProto, bytes or a path, not {type(model).__name__}")


def _from_onnx(model, base_dir=None):
    """Graph.from_onnx(onnx.ModelProto, base_dir=None): the graph of an in-memory model."""
    if not _is_model_proto(model):
        raise TypeError(f"Graph.from_onnx: expected an onnx.ModelProto, not {type(model).__name__}")
    if not _has_external(model) and model.ByteSize() <= _TWO_GB:
        return Graph.from_onnx_bytes(model.SerializeToString())
    with _model_file(model, base_dir) as src:
        return load_graph(src)


def _to_onnx(self):
    """Graph.to_onnx(): the graph as an onnx.ModelProto (weights in memory, as onnx.load gives them)."""
    import onnx

    try:
        return onnx.load_from_string(self.to_onnx_bytes())
    except Error:
        # Over 2 GB: one buffer cannot hold it; a file with external data can.
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "g.onnx")
            self.save(path)
            return onnx.load(path)


Graph.from_onnx = staticmethod(_from_onnx)
Graph.to_onnx = _to_onnx
