#!/usr/bin/python3
"""Tests of bench/lcbench's ONNX interpreter and LCBench surrogate.

Part 1 (always): the interpreter on small graphs built here with
onnx.helper, against the same computation written out in numpy; operators
it does not implement are refused by name.
Part 2 (needs the LCBench data, ../shared/benchmarks/lcbench or
$CAIRN_LCBENCH_DIR; exits 77 = skipped, saying so, when it is absent):
  * the graph evaluated in float64 agrees with the float32 evaluation (the
    precision it was exported in) to float32 accuracy;
  * the interpreter agrees with the surrogate's network written out by hand
    from its weights (embedding, residual gated blocks, batch norms, head,
    output transforms);
  * against instance_target_statistics_lcbench.csv (per task min/max over
    random configurations, computed upstream): on random configurations,
    values stay inside the recorded ranges, and across all 34 tasks the
    evaluator's per-task extremes rank the tasks as the recorded ones do,
    which a wrong task encoding or output order would break (checked too).
"""
import os
import sys
import unittest

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench", "lcbench"))

import lcbench  # noqa: E402
import onnx_eval  # noqa: E402

SKIP = 77


def const(name, value):
    return helper.make_node("Constant", [], [name],
                            value=numpy_helper.from_array(np.asarray(value),
                                                          name + "_v"))


def save(tmp, nodes, inputs, outputs, initializers=()):
    graph = helper.make_graph(nodes, "t", inputs, outputs,
                              [numpy_helper.from_array(v, k)
                               for k, v in initializers])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    path = os.path.join(tmp, "m.onnx")
    onnx.save(model, path)
    return path


class InterpreterTest(unittest.TestCase):
    def setUp(self):
        import tempfile
        self.tmp = tempfile.mkdtemp(prefix="onnx_eval_test.")

    def test_gated_block_matches_numpy(self):
        rng = np.random.default_rng(0)
        w0 = rng.normal(size=(6, 4)).astype(np.float32)
        b0 = rng.normal(size=6).astype(np.float32)
        scale, bias = rng.random(4).astype(np.float32) + 0.5, rng.normal(size=4).astype(np.float32)
        mean, var = rng.normal(size=4).astype(np.float32), rng.random(4).astype(np.float32) + 0.1
        emb = rng.normal(size=(5, 2)).astype(np.float32)
        nodes = [
            const("i0", np.array(0, dtype=np.int64)),
            helper.make_node("Gather", ["cat", "i0"], ["c0"], axis=1),
            helper.make_node("Gather", ["emb", "c0"], ["e"]),       # [n, 2]
            helper.make_node("Gather", ["x", "i0"], ["x1"], axis=1),  # [n]
            const("one", np.array(1.0, dtype=np.float32)),
            helper.make_node("Add", ["x1", "one"], ["x1p"]),
            helper.make_node("Log", ["x1p"], ["lx"]),
            helper.make_node("Cast", ["lx"], ["lxc"], to=TensorProto.FLOAT),
            const("ax", np.array([1], dtype=np.int64)),
            helper.make_node("Unsqueeze", ["lxc", "ax"], ["lxu"]),    # [n, 1]
            helper.make_node("Concat", ["e", "lxu", "x"], ["z"], axis=1),  # [n, 4]
            helper.make_node("BatchNormalization", ["z", "s", "b", "m", "v"],
                             ["zn"], epsilon=1e-5),
            helper.make_node("Gemm", ["zn", "w0", "b0"], ["h"], transB=1),  # [n, 6]
            helper.make_node("Shape", ["h"], ["sh"]),
            const("last", np.array([-1], dtype=np.int64)),
            helper.make_node("Gather", ["sh", "last"], ["width"], axis=0),
            const("zero", np.array([0], dtype=np.int64)),
            const("two", np.array([2], dtype=np.int64)),
            helper.make_node("Div", ["width", "two"], ["half"]),        # int 3
            helper.make_node("Slice", ["h", "zero", "half", "last"], ["ha"]),
            helper.make_node("Mul", ["half", "two"], ["end"]),
            helper.make_node("Slice", ["h", "half", "end", "last"], ["hb"]),
            helper.make_node("Relu", ["hb"], ["rb"]),
            helper.make_node("Mul", ["ha", "rb"], ["g"]),
            helper.make_node("Sigmoid", ["g"], ["sg"]),
            helper.make_node("Exp", ["sg"], ["out"]),
        ]
        inputs = [helper.make_tensor_value_info("cat", TensorProto.INT32, ["n", 1]),
                  helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 1])]
        outputs = [helper.make_tensor_value_info("out", TensorProto.FLOAT, ["n", 3])]
        path = save(self.tmp, nodes, inputs, outputs,
                    [("emb", emb), ("s", scale), ("b", bias), ("m", mean),
                     ("v", var), ("w0", w0), ("b0", b0)])
        cat = np.array([[0], [3], [4]], dtype=np.int32)
        x = np.array([[0.5], [2.0], [7.0]])
        got = onnx_eval.Graph(path, np.float64).run({"cat": cat, "x": x})["out"]
        z = np.concatenate([emb[cat[:, 0]].astype(np.float64),
                            np.log(x + 1.0), x], axis=1)
        zn = (z - mean) / np.sqrt(var.astype(np.float64) + 1e-5) * scale + bias
        h = zn @ w0.T.astype(np.float64) + b0
        want = np.exp(1 / (1 + np.exp(-(h[:, :3] * np.maximum(h[:, 3:], 0)))))
        np.testing.assert_allclose(got, want, rtol=1e-12)
        got32 = onnx_eval.Graph(path, np.float32).run({"cat": cat, "x": x})["out"]
        self.assertEqual(got32.dtype, np.float32)
        np.testing.assert_allclose(got32, want, rtol=1e-5)

    def test_integer_div_truncates_toward_zero(self):
        nodes = [helper.make_node("Div", ["a", "b"], ["q"])]
        path = save(self.tmp, nodes,
                    [helper.make_tensor_value_info("a", TensorProto.INT64, [4]),
                     helper.make_tensor_value_info("b", TensorProto.INT64, [4])],
                    [helper.make_tensor_value_info("q", TensorProto.INT64, [4])])
        q = onnx_eval.Graph(path).run({"a": np.array([7, -7, 7, -7]),
                                       "b": np.array([2, 2, -2, -2])})["q"]
        self.assertEqual(q.tolist(), [3, -3, -3, 3])

    def test_unknown_operator_is_refused_by_name(self):
        nodes = [helper.make_node("Tanh", ["x"], ["y"])]
        path = save(self.tmp, nodes,
                    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
        with self.assertRaisesRegex(onnx_eval.OnnxError, "operator Tanh"):
            onnx_eval.Graph(path)

    def test_missing_input_and_bad_index_are_refused(self):
        nodes = [helper.make_node("Gather", ["x", "i"], ["y"], axis=0)]
        path = save(self.tmp, nodes,
                    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2]),
                     helper.make_tensor_value_info("i", TensorProto.INT64, [1])],
                    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
        g = onnx_eval.Graph(path)
        with self.assertRaisesRegex(onnx_eval.OnnxError, "missing \\['i'\\]"):
            g.run({"x": np.zeros(2)})
        with self.assertRaisesRegex(onnx_eval.OnnxError, "out of range"):
            g.run({"x": np.zeros(2), "i": np.array([2])})


def random_rows(space, n, rng):
    """n random inputs (INPUTS order): epochs uniform in 1..52, the
    hyperparameters uniform in the search space's scale."""
    rows = np.zeros((n, len(lcbench.INPUTS)))
    rows[:, 0] = rng.integers(1, lcbench.MAX_EPOCH + 1, n)
    for j, h in enumerate(lcbench.HYPERPARAMETERS):
        rows[:, j + 1] = [space.from_unit(h, u) for u in rng.random(n)]
    return rows


def handwritten_forward(model_path, code, rows):
    """The surrogate's network from its weights, in float64, written out
    without the interpreter: input transforms (read from the graph's
    Constant pattern per column), embedding, first layer, three residual
    blocks BN -> Linear -> (a * relu(b)) -> Linear, BN -> ReLU -> head ->
    sigmoid, and the per-output affine (and exp) transforms."""
    g = onnx.load(model_path).graph
    w = {t.name: numpy_helper.to_array(t).astype(np.float64) for t in g.initializer}
    c = {n.output[0]: numpy_helper.to_array(n.attribute[0].t).astype(np.float64)
         for n in g.node if n.op_type == "Constant"}
    consumers = {}
    for n in g.node:
        for i in n.input:
            consumers.setdefault(i, []).append(n)

    def chain(start):
        """Follow the single-consumer chain from `start`, collecting
        (op, constant operand) until Unsqueeze/Concat."""
        steps, cur = [], start
        while True:
            nxt = [n for n in consumers.get(cur, [])]
            if len(nxt) != 1 or nxt[0].op_type in ("Unsqueeze", "Concat"):
                return steps
            n = nxt[0]
            operand = [c[i] for i in n.input if i in c]
            steps.append((n.op_type, float(operand[0]) if operand else None))
            cur = n.output[0]

    def apply(steps, v):
        for op, k in steps:
            v = {"Add": lambda: v + k, "Sub": lambda: v - k,
                 "Mul": lambda: v * k, "Div": lambda: v / k,
                 "Log": lambda: np.log(v), "Exp": lambda: np.exp(v),
                 "Cast": lambda: v}[op]()
        return v

    def column_chains(source):
        out = {}
        for n in g.node:
            if n.op_type == "Gather" and n.input[0] == source:
                out[int(c[n.input[1]])] = chain(n.output[0])
        return [out[j] for j in sorted(out)]

    x = np.concatenate(
        [w["embds_fct.0.weight"][np.full(len(rows), code)]] +
        [apply(s, rows[:, j])[:, None] for j, s in
         enumerate(column_chains("x_cont"))], axis=1)

    def bn(v, p):
        return ((v - w[p + ".running_mean"]) /
                np.sqrt(w[p + ".running_var"] + 1e-5) * w[p + ".weight"] +
                w[p + ".bias"])

    def lin(v, p):
        return v @ w[p + ".weight"].T + w[p + ".bias"]

    h = lin(x, "first_layer")
    for k in range(3):
        u = lin(bn(h, "layers.%d.norm" % k), "layers.%d.linear0" % k)
        half = u.shape[1] // 2
        h = h + lin(u[:, :half] * np.maximum(u[:, half:], 0),
                    "layers.%d.linear1" % k)
    s = 1 / (1 + np.exp(-lin(np.maximum(bn(h, "last_normalization"), 0), "head")))
    sigmoid = [n for n in g.node if n.op_type == "Sigmoid"][0].output[0]
    return np.stack([apply(st, s[:, j]) for j, st in
                     enumerate(column_chains(sigmoid))], axis=1)


class SurrogateTest(unittest.TestCase):
    data = None

    @classmethod
    def setUpClass(cls):
        cls.s64 = lcbench.Surrogate(cls.data)
        cls.space = cls.s64.space
        cls.stats = lcbench.target_statistics(cls.data)

    def test_float64_agrees_with_float32(self):
        s32 = lcbench.Surrogate(self.data, np.float32)
        rows = random_rows(self.space, 200, np.random.default_rng(1))
        for task in lcbench.DEV_TASKS:
            a = self.s64.evaluate_rows(task, rows)
            b = s32.evaluate_rows(task, rows)
            for i, t in enumerate(lcbench.TARGETS):
                lo, hi = self.stats[task][t]
                err = np.max(np.abs(a[:, i] - b[:, i])) / (hi - lo)
                self.assertLess(err, 1e-4, "%s %s" % (task, t))

    def test_interpreter_agrees_with_handwritten_network(self):
        rows = random_rows(self.space, 100, np.random.default_rng(2))
        path = os.path.join(self.data, "model.onnx")
        for task in lcbench.DEV_TASKS:
            want = handwritten_forward(path, self.s64.codes[task], rows)
            got = self.s64.evaluate_rows(task, rows)
            np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)

    def test_values_stay_inside_recorded_ranges(self):
        rows = random_rows(self.space, 1000, np.random.default_rng(3))
        for task in lcbench.DEV_TASKS:
            out = self.s64.evaluate_rows(task, rows)
            for i, t in enumerate(lcbench.TARGETS):
                lo, hi = self.stats[task][t]
                margin = 0.05 * (hi - lo)
                inside = np.mean((out[:, i] >= lo - margin) &
                                 (out[:, i] <= hi + margin))
                self.assertGreaterEqual(inside, 0.99, "%s %s" % (task, t))

    def test_task_extremes_rank_as_recorded(self):
        rows = random_rows(self.space, 400, np.random.default_rng(4))
        tasks = self.space.tasks
        out = {t: self.s64.evaluate_rows(t, rows) for t in tasks}

        def spearman(a, b):
            ra, rb = np.argsort(np.argsort(a)), np.argsort(np.argsort(b))
            return np.corrcoef(ra, rb)[0, 1]

        correct, shifted, swapped = [], [], []
        for i, t in enumerate(lcbench.TARGETS):
            for end, fn in ((0, np.min), (1, np.max)):
                rec = np.array([self.stats[k][t][end] for k in tasks])
                ours = np.array([fn(out[k][:, i]) for k in tasks])
                correct.append(spearman(rec, ours))
                # Controls: each task read with its neighbour's code, and
                # the outputs read in the wrong order.
                shifted.append(spearman(rec, np.roll(ours, 1)))
                j = (i + 3) % len(lcbench.TARGETS)
                swapped.append(spearman(rec, [fn(out[k][:, j]) for k in tasks]))
        self.assertGreater(min(correct), 0.6, np.round(correct, 3))
        self.assertGreater(np.mean(correct), 0.9, np.round(correct, 3))
        self.assertLess(np.mean(shifted), 0.5, np.round(shifted, 3))
        self.assertLess(np.mean(swapped), 0.5, np.round(swapped, 3))

    def test_bad_configs_are_refused_by_name(self):
        good = {"batch_size": 64, "learning_rate": 0.01, "momentum": 0.9,
                "weight_decay": 0.01, "num_layers": 2, "max_units": 128,
                "max_dropout": 0.1}
        self.assertEqual(len(self.s64.curve("167152", good)["val_accuracy"]),
                         lcbench.MAX_EPOCH)
        with self.assertRaisesRegex(ValueError, "learning_rate = 2"):
            self.s64.curve("167152", dict(good, learning_rate=2))
        with self.assertRaisesRegex(ValueError, "max_units missing"):
            self.s64.curve("167152", {k: v for k, v in good.items()
                                      if k != "max_units"})
        with self.assertRaisesRegex(ValueError, "'1' is not an LCBench task"):
            self.s64.curve("1", good)


def main():
    suite = unittest.defaultTestLoader.loadTestsFromTestCase(InterpreterTest)
    ok = unittest.TextTestRunner(verbosity=2).run(suite).wasSuccessful()
    data = lcbench.find_data_dir()
    if data is None:
        print("SKIPPED: LCBench data not found (%s), so the checks against "
              "the surrogate were not run; it is read at run time from "
              "../shared/benchmarks/lcbench or $CAIRN_LCBENCH_DIR"
              % ", ".join(lcbench.FILES))
        return 1 if not ok else SKIP
    SurrogateTest.data = data
    suite = unittest.defaultTestLoader.loadTestsFromTestCase(SurrogateTest)
    ok = unittest.TextTestRunner(verbosity=2).run(suite).wasSuccessful() and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
