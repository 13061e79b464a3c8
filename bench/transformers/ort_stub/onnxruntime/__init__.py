"""A stand-in for the `onnxruntime` Python package, written for graphfuse's benchmarks.

ONNX Runtime's transformers optimizer (onnxruntime/python/tools/transformers) imports
`onnxruntime` at import time, and with opt_level > 0 creates an InferenceSession only to have
ORT save its optimized graph. Debian has no onnxruntime wheel, so this package gives the few
names it touches, and InferenceSession saves the optimized model through onnxruntime-node
(tests/ort/run_model.js --optimized-out), the same runtime graphfuse's judge uses.
Nothing here is ONNX Runtime code.
"""
import os
import subprocess
import tempfile

__version__ = "1.30.0-graphfuse-stub"

_RUN_MODEL = os.environ.get(
    "GRAPHFUSE_RUN_MODEL",
    os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "tests", "ort", "run_model.js"))


class GraphOptimizationLevel:
    ORT_DISABLE_ALL = "disabled"
    ORT_ENABLE_BASIC = "basic"
    ORT_ENABLE_EXTENDED = "extended"
    ORT_ENABLE_LAYOUT = "all"
    ORT_ENABLE_ALL = "all"


class SessionOptions:
    def __init__(self):
        self.graph_optimization_level = GraphOptimizationLevel.ORT_ENABLE_ALL
        self.optimized_model_filepath = ""
        self.log_severity_level = 2
        self.intra_op_num_threads = 1

    def add_session_config_entry(self, key, value):
        pass

    def add_external_initializers(self, names, values):
        if names:
            raise NotImplementedError("graphfuse's onnxruntime stub: external initializers")


def get_available_providers():
    return ["CPUExecutionProvider"]


def get_device():
    return "CPU"


class InferenceSession:
    """Only what optimize_by_onnxruntime needs: save ORT's optimized graph."""

    def __init__(self, model, sess_options=None, providers=None, **kwargs):
        if sess_options is None or not sess_options.optimized_model_filepath:
            raise NotImplementedError("graphfuse's onnxruntime stub only saves optimized models")
        # kwargs may name disabled_optimizers (the optimizer turns off e.g. ConstantSharing);
        # onnxruntime-node has no such option, so ORT's whole level runs.
        tmp = None
        if isinstance(model, (bytes, bytearray)):
            fd, tmp = tempfile.mkstemp(suffix=".onnx")
            with os.fdopen(fd, "wb") as f:
                f.write(model)
            model = tmp
        try:
            subprocess.run(["node", _RUN_MODEL, model, "--quiet", "--level",
                            sess_options.graph_optimization_level, "--optimized-out",
                            sess_options.optimized_model_filepath, "--manifest", "/dev/null"],
                           check=False, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            # run_model.js exits 2 after saving when it has no input data: the file is what counts.
            if not os.path.isfile(sess_options.optimized_model_filepath):
                raise RuntimeError("onnxruntime-node did not save %s" % sess_options.optimized_model_filepath)
        finally:
            if tmp:
                os.unlink(tmp)


class OrtValue:
    """Named by onnx_utils.py's imports; only used for external data, which the stub refuses."""

    @staticmethod
    def ortvalue_from_numpy(array):
        raise NotImplementedError("graphfuse's onnxruntime stub: OrtValue")
