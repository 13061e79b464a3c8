"""Tests of the graphfuse Python module (python/module.cpp): each function, bad input, and that
the module's results equal the CLI's byte for byte. ctest runs it with /usr/bin/python3 and
PYTHONPATH=build/python; GRAPHFUSE_CLI and GRAPHFUSE_SOURCE_DIR name the CLI and the tree."""
import os
import pathlib
import subprocess
import sys
import tempfile
import threading
import unittest

import graphfuse

SRC = pathlib.Path(os.environ.get("GRAPHFUSE_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
CLI = os.environ.get("GRAPHFUSE_CLI", str(SRC / "build" / "graphfuse"))
SEED_RULES = SRC / "rules" / "seed.yaml"
ONNX_RULES = SRC / "rules" / "onnx"
SEED_CHAIN = SRC / "examples" / "seed_chain.graph"
CNN = SRC / "examples" / "cnn_400.yaml"
SQUEEZENET = SRC / "examples" / "models" / "squeezenet1_1.onnx"


def cli(*args):
    return subprocess.run([CLI, *map(str, args)], check=True, capture_output=True, text=True).stdout


class Base(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.tmp = pathlib.Path(self._tmp.name)

    def tearDown(self):
        self._tmp.cleanup()


class Loading(Base):
    def test_version(self):
        self.assertRegex(graphfuse.__version__, r"^\d+\.\d+\.\d+$")

    def test_load_rules_file_dir_list(self):
        one = graphfuse.load_rules(SEED_RULES)
        self.assertIn("conv2d_biasadd_relu", one.names)
        files = sorted(ONNX_RULES.glob("*.yaml"))
        as_dir = graphfuse.load_rules(str(ONNX_RULES))
        as_list = graphfuse.load_rules([str(f) for f in files])
        self.assertGreater(len(as_dir), 5)
        self.assertEqual(as_dir.names, as_list.names)

    def test_load_rules_from_string(self):
        rules = graphfuse.load_rules_from_string(
            "rules:\n  - name: r\n    pattern: Identity(x)\n    rewrite: Copy(x)\n", "inline.yaml")
        self.assertEqual(rules.names, ["r"])

    def test_rule_error_has_position(self):
        with self.assertRaises(graphfuse.Error) as cm:
            graphfuse.load_rules_from_string("rules:\n  - name: r\n    pattern: Conv(x\n    rewrite: x\n", "bad.yaml")
        e = cm.exception
        self.assertEqual(e.file, "bad.yaml")
        self.assertEqual(e.line, 3)
        self.assertGreater(e.column, 0)
        self.assertIn(f"bad.yaml:3:{e.column}: error:", str(e))

    def test_missing_rule_file(self):
        with self.assertRaises(graphfuse.Error) as cm:
            graphfuse.load_rules(self.tmp / "nope.yaml")
        self.assertIn("nope.yaml", str(cm.exception))
        with self.assertRaises(graphfuse.Error):
            graphfuse.load_rules([])

    def test_load_graph_every_format(self):
        g = graphfuse.load_graph(SEED_CHAIN)
        self.assertEqual(len(g), 6)
        for ext in ("graph", "yaml", "json", "gfb", "onnx"):
            path = self.tmp / f"g.{ext}"
            if ext == "onnx":
                graphfuse.load_graph(SQUEEZENET).save(path)
                self.assertEqual(graphfuse.load_graph(path).op_counts(), graphfuse.load_graph(SQUEEZENET).op_counts())
                continue
            g.save(path)
            self.assertEqual(graphfuse.load_graph(path).to_text(), g.to_text(), ext)

    def test_graph_error_has_position(self):
        bad = self.tmp / "bad.graph"
        bad.write_text("input x\nr = ReLU(y)\noutput r\n")
        with self.assertRaises(graphfuse.Error) as cm:
            graphfuse.load_graph(bad)
        self.assertEqual(cm.exception.line, 2)
        self.assertIn("bad.graph:2:", str(cm.exception))
        with self.assertRaises(graphfuse.Error):
            graphfuse.load_graph(self.tmp / "missing.graph")
        with self.assertRaises(graphfuse.Error):
            graphfuse.Graph.from_text("r = ReLU(\n")

    def test_bad_onnx_bytes(self):
        with self.assertRaises(graphfuse.Error) as cm:
            graphfuse.Graph.from_onnx_bytes(b"\x08\x07not a model\xff\xff", "junk.onnx")
        self.assertIn("junk.onnx", str(cm.exception))
        with self.assertRaises(graphfuse.Error):
            graphfuse.optimize(b"\xff" * 64, graphfuse.load_rules(SEED_RULES))


class Rewriting(Base):
    def test_rewrite_report(self):
        g = graphfuse.load_graph(SEED_CHAIN)
        self.assertEqual(g.op_counts()["Conv2D"], 1)
        report = g.rewrite(graphfuse.load_rules(SEED_RULES))
        self.assertEqual(report.rewrites, {"conv2d_biasadd_relu": 1})
        self.assertTrue(report.converged)
        self.assertEqual(report.rounds, 1)
        self.assertEqual((report.nodes_before, report.nodes_after), (6, 4))
        self.assertEqual(g.op_counts().get("FusedConv2D_BiasAdd_ReLU"), 1)
        self.assertNotIn("Conv2D", g.op_counts())
        stats = report.stats
        row = [r for r in stats["rules"] if r["rule"] == "conv2d_biasadd_relu"][0]
        self.assertEqual(row["applied"], 1)
        self.assertIn("conv2d_biasadd_relu", report.stats_text)

    def test_same_graph_for_any_thread_count(self):
        rules = graphfuse.load_rules(SEED_RULES)
        texts = set()
        for threads in (1, 2, 0):
            g = graphfuse.load_graph(CNN)
            g.rewrite(rules, threads=threads)
            texts.add(g.to_text())
        self.assertEqual(len(texts), 1)

    def test_equals_cli_apply_yaml(self):
        cli("apply", "--rules", SEED_RULES, CNN, "-o", self.tmp / "cli.yaml", "-q")
        g = graphfuse.load_graph(CNN)
        g.rewrite(graphfuse.load_rules(SEED_RULES))
        g.save(self.tmp / "py.yaml")
        self.assertEqual((self.tmp / "py.yaml").read_bytes(), (self.tmp / "cli.yaml").read_bytes())

    def test_optimize_equals_cli_apply_onnx(self):
        cli("apply", "--rules", ONNX_RULES, SQUEEZENET, "-o", self.tmp / "cli.onnx", "-q")
        out = graphfuse.optimize(SQUEEZENET.read_bytes(), graphfuse.load_rules(ONNX_RULES))
        self.assertIsInstance(out, bytes)
        self.assertEqual(out, (self.tmp / "cli.onnx").read_bytes())
        # Graph.rewrite + to_onnx_bytes and save() give the same bytes too.
        g = graphfuse.load_graph(SQUEEZENET)
        g.rewrite(graphfuse.load_rules(ONNX_RULES))
        self.assertEqual(g.to_onnx_bytes(), out)
        g.save(self.tmp / "py.onnx")
        self.assertEqual((self.tmp / "py.onnx").read_bytes(), out)

    def test_optimize_output_loads_in_onnx(self):
        import onnx  # Debian's python3-onnx, installed by scripts/setup
        model = onnx.load(str(SQUEEZENET))
        fused = onnx.load_from_string(graphfuse.optimize(model.SerializeToString(), graphfuse.load_rules(ONNX_RULES)))
        onnx.checker.check_model(fused)
        ops = [n.op_type for n in fused.graph.node]
        self.assertEqual(ops.count("FusedConv"), 26)
        self.assertNotIn("Relu", ops)

    def test_bad_options(self):
        g = graphfuse.load_graph(SEED_CHAIN)
        rules = graphfuse.load_rules(SEED_RULES)
        for kwargs in ({"target": "no_such_target"}, {"fold": "sometimes"}, {"max_rounds": 0}, {"threads": -1},
                       {"only": ["no_such_rule"]}):
            with self.subTest(**kwargs), self.assertRaises(graphfuse.Error):
                g.rewrite(rules, **kwargs)
        self.assertEqual(len(g), 6, "a rejected call must leave the graph alone")

    def test_not_converging(self):
        rules = graphfuse.load_rules_from_string(
            "rules:\n"
            "  - {name: ab, pattern: A(x), rewrite: B(x)}\n"
            "  - {name: ba, pattern: B(x), rewrite: A(x)}\n", "flip.yaml")
        g = graphfuse.Graph.from_text("input x\na = A(x)\nr = ReLU(a)\noutput r\n")
        report = g.rewrite(rules, max_rounds=3)
        self.assertFalse(report.converged)
        self.assertNotEqual(report.stop_reason, "fixed point")
        with self.assertRaises(graphfuse.Error):
            graphfuse.optimize(graphfuse.load_graph(SQUEEZENET).to_onnx_bytes(),
                               graphfuse.load_rules_from_string(
                                   "rules:\n  - {name: ab, pattern: Relu(x), rewrite: Abs(x)}\n"
                                   "  - {name: ba, pattern: Abs(x), rewrite: Relu(x)}\n"),
                               max_rounds=3)

    def test_gil_released_while_rewriting(self):
        # Deterministic, not timed: with a 100 s switch interval the interpreter never takes
        # the GIL from a thread that holds it. If rewrite() kept the GIL, the main thread could
        # run only after the worker had finished and set `done`, so `ticks` would be exactly 0.
        big = self.tmp / "big.gfb"
        cli("gen", "--nodes", "1000000", "--seed", "3", "-o", big)
        g = graphfuse.load_graph(big)
        rules = graphfuse.load_rules(SEED_RULES)
        started, done = threading.Event(), threading.Event()
        report = []

        def work():
            started.set()
            report.append(g.rewrite(rules, threads=1, fold="off"))
            done.set()

        old = sys.getswitchinterval()
        sys.setswitchinterval(100)
        try:
            t = threading.Thread(target=work)
            t.start()
            started.wait()
            ticks = 0
            while not done.wait(0.001):  # each wait lets the worker take the GIL back
                ticks += 1
            t.join()
        finally:
            sys.setswitchinterval(old)
        self.assertGreater(report[0].rewrites["conv2d_biasadd_relu"], 10000)
        self.assertGreater(ticks, 0, "the main thread never ran while rewrite() worked: GIL held")


class Verifying(Base):
    def test_verify_passes(self):
        result = graphfuse.verify(SEED_CHAIN, graphfuse.load_rules(SEED_RULES))
        self.assertTrue(result["passed"])
        self.assertEqual(result["rewrites"], {"conv2d_biasadd_relu": 1})
        self.assertEqual(len(result["outputs"]), 1)
        self.assertLess(result["outputs"][0]["max_abs"], 1e-4)

    def test_verify_detects_wrong_rule(self):
        # ReLU dropped: the rewrite changes every negative output, verify must say so.
        wrong = graphfuse.load_rules_from_string(
            "rules:\n  - name: drop_relu\n    pattern: |\n      bias = BiasAdd(c, b)\n      ReLU(bias)\n"
            "    rewrite: BiasAdd(c, b)\n", "wrong.yaml")
        result = graphfuse.verify(graphfuse.load_graph(SEED_CHAIN), wrong)
        self.assertEqual(result["rewrites"], {"drop_relu": 1})
        self.assertFalse(result["passed"])
        self.assertFalse(result["outputs"][0]["passed"])

class ProcessMemory(Base):
    def test_retain_freed_memory_says_what_it_set(self):
        applied, detail = graphfuse.retain_freed_memory()
        self.assertIsInstance(applied, bool)
        if applied:
            self.assertIn("M_MMAP_MAX=0", detail)
        else:
            self.assertTrue(detail)
        huge, why = graphfuse.reserve_huge_page_heap(64)
        self.assertIsInstance(huge, bool)
        self.assertTrue(why)
        if applied and huge:
            self.assertIn("64 MB", why)
        # Rewrites work as before afterwards.
        g = graphfuse.load_graph(SEED_CHAIN)
        self.assertEqual(g.rewrite(graphfuse.load_rules(SEED_RULES)).rewrites, {"conv2d_biasadd_relu": 1})


if __name__ == "__main__":
    unittest.main()
