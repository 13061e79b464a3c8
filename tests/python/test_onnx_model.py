"""graphfuse.optimize with an onnx.ModelProto, bytes or a path, external data included, and
Graph.from_onnx / Graph.to_onnx (python/graphfuse/_onnx_model.py). Results must equal the CLI's."""
import os
import pathlib
import subprocess
import sys
import tempfile
import unittest

import graphfuse

try:
    import onnx
except ImportError:  # pragma: no cover
    onnx = None

SRC = pathlib.Path(os.environ.get("GRAPHFUSE_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
CLI = os.environ.get("GRAPHFUSE_CLI", str(SRC / "build" / "graphfuse"))
RULES = SRC / "rules" / "onnx"
GEN = SRC / "bench" / "big" / "gen_external.py"


@unittest.skipIf(onnx is None, "needs python3-onnx")
class OnnxModels(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.tmp = pathlib.Path(self._tmp.name)
        self.src = self.tmp / "m.onnx"
        subprocess.run([sys.executable, str(GEN), str(self.src), "--layers", "3", "--dim", "64"], check=True,
                       capture_output=True)
        self.rules = graphfuse.load_rules(str(RULES))
        subprocess.run([CLI, "apply", "-q", "-r", str(RULES), str(self.src), "-o", str(self.tmp / "cli.onnx"),
                        "--external-data", "inline"], check=True)
        self.want = (self.tmp / "cli.onnx").read_bytes()

    def tearDown(self):
        self._tmp.cleanup()

    def test_model_proto_in_model_proto_out(self):
        m = onnx.load(str(self.src))  # external data loaded into the proto
        out = graphfuse.optimize(m, self.rules)
        self.assertIsInstance(out, onnx.ModelProto)
        self.assertEqual(out.SerializeToString(), self.want)
        self.assertEqual([n.op_type for n in out.graph.node].count("Gemm"), 3)

    def test_model_proto_with_external_refs(self):
        m = onnx.load(str(self.src), load_external_data=False)
        with self.assertRaisesRegex(graphfuse.Error, "base_dir"):
            graphfuse.optimize(m, self.rules)
        out = graphfuse.optimize(m, self.rules, base_dir=self.tmp)
        # onnx.load of an external-data output marks its tensors DEFAULT explicitly: compare
        # what the model says, not those two fields.
        for t in out.graph.initializer:
            t.ClearField("data_location")
            del t.external_data[:]
        self.assertEqual(out.SerializeToString(), self.want)
        self.assertEqual(sorted(p.name for p in self.tmp.iterdir()), ["cli.onnx", "m.onnx", "m.onnx.data"])

    def test_bytes_in_bytes_out(self):
        inline = graphfuse.load_graph(str(self.src)).to_onnx_bytes()
        out = graphfuse.optimize(inline, self.rules)
        self.assertIsInstance(out, bytes)
        self.assertEqual(out, self.want)

    def test_path_in_path_out_keeps_external_data(self):
        out = graphfuse.optimize(str(self.src), self.rules)
        self.assertEqual(out, str(self.tmp / "m.optimized.onnx"))
        self.assertTrue((self.tmp / "m.optimized.onnx.data").exists())
        loaded = onnx.load(out, load_external_data=False)
        self.assertTrue(any(t.data_location == onnx.TensorProto.EXTERNAL for t in loaded.graph.initializer))
        out2 = graphfuse.optimize(self.src, self.rules, output=self.tmp / "x.onnx")
        self.assertEqual(pathlib.Path(out2), self.tmp / "x.onnx")

    def test_graph_from_onnx_to_onnx(self):
        g = graphfuse.Graph.from_onnx(onnx.load(str(self.src)))
        g.rewrite(self.rules)
        self.assertEqual(g.to_onnx().SerializeToString(), self.want)
        with self.assertRaises(TypeError):
            graphfuse.Graph.from_onnx(b"not a proto")

    def test_target_raises_the_opset(self):
        # An opset-14 decomposed layer norm: ort-cpu raises the model to opset 17 first
        # (raise_onnx_opset), where the rules write LayerNormalization; the report says so.
        h = onnx.helper
        init = [h.make_tensor("two", onnx.TensorProto.FLOAT, [], [2.0]),
                h.make_tensor("eps", onnx.TensorProto.FLOAT, [], [1e-5]),
                h.make_tensor("gamma", onnx.TensorProto.FLOAT, [8], [1.0] * 8),
                h.make_tensor("beta", onnx.TensorProto.FLOAT, [8], [0.0] * 8)]
        nodes = [h.make_node("ReduceMean", ["x"], ["mean"], axes=[-1]), h.make_node("Sub", ["x", "mean"], ["d"]),
                 h.make_node("Pow", ["d", "two"], ["sq"]), h.make_node("ReduceMean", ["sq"], ["var"], axes=[-1]),
                 h.make_node("Add", ["var", "eps"], ["ve"]), h.make_node("Sqrt", ["ve"], ["std"]),
                 h.make_node("Div", ["d", "std"], ["n"]), h.make_node("Mul", ["n", "gamma"], ["s"]),
                 h.make_node("Add", ["s", "beta"], ["y"])]
        graph = h.make_graph(nodes, "ln", [h.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2, 4, 8])],
                             [h.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2, 4, 8])], init)
        model = h.make_model(graph, opset_imports=[h.make_opsetid("", 14)])
        g = graphfuse.Graph.from_onnx(model)
        report = g.rewrite(self.rules, target="ort-cpu")
        self.assertEqual(report.notes, ["ONNX opset raised from 14 to 17 for the target (no node changes meaning)"])
        self.assertEqual(report.stats["notes"], report.notes)
        out = g.to_onnx()
        self.assertEqual([(o.domain, o.version) for o in out.opset_import if o.domain in ("", "ai.onnx")], [("", 17)])
        self.assertEqual([n.op_type for n in out.graph.node], ["LayerNormalization"])
        onnx.checker.check_model(out)
        self.assertEqual(graphfuse.Graph.from_onnx(model).rewrite(self.rules).notes, [])

    def test_wrong_kind(self):
        with self.assertRaises(TypeError):
            graphfuse.optimize(42, self.rules)


if __name__ == "__main__":
    unittest.main()
