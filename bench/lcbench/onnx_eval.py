"""A small ONNX graph interpreter in numpy, for the LCBench surrogate.

Reads the model's protobuf with Debian's python3-onnx (parsing only: no ONNX
runtime is used) and evaluates the graph node by node in a chosen float
precision. It implements only the operators the LCBench surrogate uses
(OPS below: elementwise arithmetic, Gemm, BatchNormalization in inference
mode, Gather, Concat, Slice, Shape, Unsqueeze, Cast and activations) and
refuses any other operator, attribute value or input it does not
understand, naming it, rather than guess.

Precision: every floating-point tensor (initializers, constants and the
float inputs) is held in `dtype`; Cast to a float type keeps `dtype`, so a
float64 run evaluates the whole graph in float64 and a float32 run mirrors
what the exporter's float32 graph computes. Integer tensors (indices,
shapes) are int64.
"""
import numpy as np

try:
    import onnx
    from onnx import numpy_helper
except ImportError as e:  # pragma: no cover - depends on the machine
    raise ImportError("onnx_eval needs Debian's python3-onnx "
                      "(apt-get install python3-onnx)") from e

# TensorProto data types.
_FLOAT_TYPES = {1, 10, 11, 16}      # FLOAT, FLOAT16, DOUBLE, BFLOAT16
_INT_TYPES = {2, 3, 4, 5, 6, 7, 12, 13}  # (U)INT8..64
_BOOL = 9


class OnnxError(ValueError):
    """A graph, node or input this interpreter cannot evaluate."""


def _attrs(node):
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def _binary(fn):
    def op(ctx, node, a, b):
        if a.dtype.kind in "iu" and b.dtype.kind in "iu":
            return fn(a.astype(np.int64), b.astype(np.int64), integer=True)
        return fn(a.astype(ctx.dtype), b.astype(ctx.dtype), integer=False)
    return op


def _div(a, b, integer):
    if not integer:
        return a / b
    if np.any(b == 0):
        raise OnnxError("Div: integer division by zero")
    q = np.abs(a) // np.abs(b)  # ONNX integer Div truncates toward zero.
    return np.where((a < 0) != (b < 0), -q, q).astype(np.int64)


def _gemm(ctx, node, a, b, c=None):
    at = _attrs(node)
    if at.get("transA", 0):
        a = a.T
    if at.get("transB", 0):
        b = b.T
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        raise OnnxError("Gemm %s: shapes %s x %s do not multiply"
                        % (node.name or node.output[0], a.shape, b.shape))
    y = at.get("alpha", 1.0) * (a @ b)
    if c is not None:
        y = y + at.get("beta", 1.0) * c
    return y.astype(ctx.dtype)


def _batch_norm(ctx, node, x, scale, bias, mean, var):
    at = _attrs(node)
    if at.get("training_mode", 0):
        raise OnnxError("BatchNormalization %s: training_mode is not supported"
                        % node.output[0])
    if len(node.output) != 1:
        raise OnnxError("BatchNormalization %s: only the inference output "
                        "is supported" % node.output[0])
    eps = at.get("epsilon", 1e-5)
    # Channels are axis 1; the surrogate's inputs are [n, c].
    shape = [1, -1] + [1] * (x.ndim - 2)
    r = lambda t: t.reshape(shape)  # noqa: E731
    return ((x - r(mean)) / np.sqrt(r(var) + eps) * r(scale) + r(bias)).astype(
        ctx.dtype)


def _gather(ctx, node, data, indices):
    axis = _attrs(node).get("axis", 0)
    if indices.dtype.kind not in "iu":
        raise OnnxError("Gather %s: indices must be integers, got %s"
                        % (node.output[0], indices.dtype))
    n = data.shape[axis]
    if np.any(indices < -n) or np.any(indices >= n):
        raise OnnxError("Gather %s: index out of range [-%d, %d)"
                        % (node.output[0], n, n))
    return np.take(data, indices.astype(np.int64), axis=axis)


def _slice(ctx, node, data, starts, ends, axes=None, steps=None):
    axes = range(len(starts)) if axes is None else axes
    steps = [1] * len(starts) if steps is None else steps
    index = [slice(None)] * data.ndim
    for s, e, ax, st in zip(starts, ends, axes, steps):
        if st == 0:
            raise OnnxError("Slice %s: step 0" % node.output[0])
        index[int(ax)] = slice(int(s), int(e), int(st))
    return data[tuple(index)]


def _unsqueeze(ctx, node, data, axes=None):
    if axes is None:  # Opset < 13 keeps axes in an attribute.
        axes = _attrs(node).get("axes")
    out_rank = data.ndim + len(axes)
    for ax in sorted(int(a) % out_rank for a in axes):
        data = np.expand_dims(data, ax)
    return data


def _cast(ctx, node, x):
    to = _attrs(node)["to"]
    if to in _FLOAT_TYPES:
        return x.astype(ctx.dtype)
    if to in _INT_TYPES:
        return x.astype(np.int64)
    if to == _BOOL:
        return x.astype(bool)
    raise OnnxError("Cast %s: unsupported target type %d" % (node.output[0], to))


def _constant(ctx, node):
    at = [a for a in node.attribute]
    if len(at) != 1 or at[0].name != "value":
        raise OnnxError("Constant %s: only the 'value' attribute is supported"
                        % node.output[0])
    return ctx.tensor(numpy_helper.to_array(at[0].t))


OPS = {
    "Constant": _constant,
    "Cast": _cast,
    "Gather": _gather,
    "Concat": lambda ctx, node, *xs: np.concatenate(
        xs, axis=_attrs(node)["axis"]),
    "Add": _binary(lambda a, b, integer: a + b),
    "Sub": _binary(lambda a, b, integer: a - b),
    "Mul": _binary(lambda a, b, integer: a * b),
    "Div": _binary(_div),
    "Log": lambda ctx, node, x: np.log(x),
    "Exp": lambda ctx, node, x: np.exp(x),
    "Relu": lambda ctx, node, x: np.maximum(x, 0).astype(x.dtype),
    "Sigmoid": lambda ctx, node, x: 1.0 / (1.0 + np.exp(-x)),
    "Gemm": _gemm,
    "BatchNormalization": _batch_norm,
    "Shape": lambda ctx, node, x: np.array(x.shape, dtype=np.int64),
    "Slice": _slice,
    "Unsqueeze": _unsqueeze,
}


class Graph:
    """An ONNX model loaded for evaluation with numpy in `dtype`.

    Graph(path, dtype) raises OnnxError for a model using an operator outside
    OPS or a non-default domain. run(feeds) -> {output name: array}."""

    def __init__(self, path, dtype=np.float64):
        self.dtype = np.dtype(dtype)
        if self.dtype not in (np.dtype(np.float32), np.dtype(np.float64)):
            raise OnnxError("dtype must be float32 or float64, got %s" % dtype)
        model = onnx.load(path)
        self.graph = model.graph
        for node in self.graph.node:
            if node.domain not in ("", "ai.onnx"):
                raise OnnxError("node %s: domain %r is not supported"
                                % (node.output[0], node.domain))
            if node.op_type not in OPS:
                raise OnnxError("node %s: operator %s is not supported"
                                % (node.output[0], node.op_type))
        self.initializers = {t.name: self.tensor(numpy_helper.to_array(t))
                             for t in self.graph.initializer}
        self.inputs = [i.name for i in self.graph.input
                       if i.name not in self.initializers]
        self.outputs = [o.name for o in self.graph.output]

    def tensor(self, array):
        """`array` in this graph's precision (floats) or int64 (integers)."""
        array = np.asarray(array)
        if array.dtype.kind == "f":
            return array.astype(self.dtype)
        if array.dtype.kind in "iu":
            return array.astype(np.int64)
        return array

    def run(self, feeds):
        missing = [n for n in self.inputs if n not in feeds]
        extra = [n for n in feeds if n not in self.inputs]
        if missing or extra:
            raise OnnxError("inputs: missing %s, unexpected %s"
                            % (missing, extra))
        values = dict(self.initializers)
        values.update({k: self.tensor(v) for k, v in feeds.items()})
        for node in self.graph.node:
            args = []
            for name in node.input:
                if name == "":
                    args.append(None)  # An omitted optional input.
                elif name in values:
                    args.append(values[name])
                else:
                    raise OnnxError("node %s: input %s is not computed yet "
                                    "(graph not in topological order)"
                                    % (node.output[0], name))
            while args and args[-1] is None:
                args.pop()
            out = OPS[node.op_type](self, node, *args)
            values[node.output[0]] = out
        return {name: values[name] for name in self.outputs}
