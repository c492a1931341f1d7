"""SageMaker's API as boto3's own service model describes it: the
service-2.json that Debian's python3-botocore ships. The boto3 tests check
every response cairnd sends against its operation's output shape (required
members, types, enums, lengths, ranges, patterns, no member the shape does
not have, nested structures, lists and maps), and build requests that set
one input member each to see that Cairn refuses what it does not support.

The walk is generic: nothing here names a SageMaker member."""
import datetime
import json
import re
import unicodedata

MODEL_PATH = ("/usr/lib/python3/dist-packages/botocore/data/sagemaker/"
              "2017-07-24/service-2.json")

# \p{L}, \p{N}, \p{Z} (Java) become one private-use character each; a
# value is matched with each of its characters of that category mapped
# the same way (only for the patterns that use them).
_CATEGORIES = {"L": "\ue000", "N": "\ue001", "Z": "\ue002"}


def _python_pattern(pattern):
    if "\\p{" not in pattern:
        return re.compile(pattern), False
    for cat, mark in _CATEGORIES.items():
        pattern = pattern.replace("\\p{%s}" % cat, mark)
    return re.compile(pattern), True


def _categorized(text):
    return "".join(_CATEGORIES.get(unicodedata.category(c)[0], c)
                   for c in text)


class Model:
    def __init__(self, path=MODEL_PATH):
        with open(path) as f:
            model = json.load(f)
        self.shapes = model["shapes"]
        self.operations = model["operations"]
        self._patterns = {}

    # --- Responses. ---

    def response_errors(self, operation, status, body):
        """What is wrong with `body` (bytes) as `operation`'s answer with
        HTTP `status`: a list of messages, empty when it fits."""
        try:
            value = json.loads(body or b"{}")
        except ValueError:
            return ["%s: body is not JSON: %r" % (operation, body[:200])]
        if status >= 300:
            return self._error_errors(operation, value, len(body))
        out = self.operations[operation].get("output")
        if out is None:
            return [] if value == {} else [
                "%s: has no output shape but answered %r" % (operation,
                                                             value)]
        errors = []
        self.check(out["shape"], value, operation, errors)
        return errors

    def _error_errors(self, operation, value, size):
        errors = []
        if not isinstance(value, dict) or not isinstance(
                value.get("__type"), str):
            return ["%s: error body without __type: %r" % (operation, value)]
        message = value.get("message", value.get("Message"))
        if not isinstance(message, str) or not message:
            errors.append("%s: error %s has no message" % (
                operation, value["__type"]))
        if size >= 1024:
            errors.append("%s: error body of %d bytes" % (operation, size))
        code = value["__type"].split("#")[-1]
        modeled = [e["shape"] for e in
                   self.operations[operation].get("errors", [])]
        if code in self.shapes and code in modeled:
            self.check(code, {k: v for k, v in value.items()
                              if k not in ("__type", "message")},
                       operation + "." + code, errors)
        return errors

    def check(self, shape_name, value, path, errors):
        """Appends to `errors` each way `value` breaks shape `shape_name`."""
        shape = self.shapes[shape_name]
        kind = shape["type"]
        checker = getattr(self, "_check_" + kind, None)
        if checker is None:
            errors.append("%s: shape %s of type %s is not checked" % (
                path, shape_name, kind))
            return
        checker(shape, value, path, errors)

    def _check_structure(self, shape, value, path, errors):
        if not isinstance(value, dict):
            errors.append("%s: %r is not an object" % (path, value))
            return
        for name in shape.get("required", []):
            if name not in value:
                errors.append("%s: required member %s is missing" % (path,
                                                                     name))
        for name, member in value.items():
            if name not in shape["members"]:
                errors.append("%s: %s is not a member of the shape" % (
                    path, name))
                continue
            self.check(shape["members"][name]["shape"], member,
                       path + "." + name, errors)

    def _check_list(self, shape, value, path, errors):
        if not isinstance(value, list):
            errors.append("%s: %r is not a list" % (path, value))
            return
        self._check_size(shape, len(value), path, errors)
        for i, item in enumerate(value):
            self.check(shape["member"]["shape"], item, "%s[%d]" % (path, i),
                       errors)

    def _check_map(self, shape, value, path, errors):
        if not isinstance(value, dict):
            errors.append("%s: %r is not an object" % (path, value))
            return
        self._check_size(shape, len(value), path, errors)
        for k, v in value.items():
            self.check(shape["key"]["shape"], k, path + " key", errors)
            self.check(shape["value"]["shape"], v, "%s[%r]" % (path, k),
                       errors)

    def _check_string(self, shape, value, path, errors):
        if not isinstance(value, str):
            errors.append("%s: %r is not a string" % (path, value))
            return
        if "enum" in shape and value not in shape["enum"]:
            errors.append("%s: %r is not one of %s" % (path, value,
                                                       shape["enum"]))
        self._check_size(shape, len(value), path, errors)
        if "pattern" in shape and not self._matches(shape["pattern"], value):
            errors.append("%s: %r does not match %s" % (path, value,
                                                        shape["pattern"]))

    def _matches(self, pattern, value):
        if pattern not in self._patterns:
            self._patterns[pattern] = _python_pattern(pattern)
        compiled, categorized = self._patterns[pattern]
        return compiled.fullmatch(
            _categorized(value) if categorized else value) is not None

    def _check_integer(self, shape, value, path, errors):
        if isinstance(value, bool) or not isinstance(value, int):
            errors.append("%s: %r is not an integer" % (path, value))
            return
        self._check_range(shape, value, path, errors)

    _check_long = _check_integer

    def _check_float(self, shape, value, path, errors):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            errors.append("%s: %r is not a number" % (path, value))
            return
        self._check_range(shape, value, path, errors)

    _check_double = _check_float

    def _check_boolean(self, shape, value, path, errors):
        if not isinstance(value, bool):
            errors.append("%s: %r is not a boolean" % (path, value))

    def _check_timestamp(self, shape, value, path, errors):
        # The JSON protocol's timestamps are epoch seconds, as numbers.
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            errors.append("%s: %r is not epoch seconds" % (path, value))

    def _check_size(self, shape, size, path, errors):
        if size < shape.get("min", 0) or size > shape.get("max", size):
            errors.append("%s: length %d is outside %s..%s" % (
                path, size, shape.get("min", 0), shape.get("max", "")))

    def _check_range(self, shape, value, path, errors):
        if value < shape.get("min", value) or value > shape.get("max", value):
            errors.append("%s: %r is outside %s..%s" % (
                path, value, shape.get("min", ""), shape.get("max", "")))

    # --- Requests. ---

    def input_shape(self, operation):
        return self.operations[operation]["input"]["shape"]

    def sample(self, shape_name, depth=0):
        """A value of shape `shape_name` that boto3's own checks accept:
        required members only, minimum lengths and values, the first
        enum value, True for a boolean."""
        shape = self.shapes[shape_name]
        kind = shape["type"]
        if kind == "structure":
            return {name: self.sample(shape["members"][name]["shape"],
                                      depth + 1)
                    for name in shape.get("required", [])}
        if kind == "list":
            return [self.sample(shape["member"]["shape"], depth + 1)
                    for _ in range(max(1, shape.get("min", 1)))]
        if kind == "map":
            return {"k": self.sample(shape["value"]["shape"], depth + 1)}
        if kind == "string":
            if "enum" in shape:
                return shape["enum"][0]
            return "x" * max(1, shape.get("min", 1))
        if kind in ("integer", "long"):
            return max(1, shape.get("min", 1))
        if kind in ("float", "double"):
            return float(max(1, shape.get("min", 1)))
        if kind == "boolean":
            return True
        if kind == "timestamp":
            return datetime.datetime(2024, 1, 1,
                                     tzinfo=datetime.timezone.utc)
        raise ValueError("no sample for %s (%s)" % (shape_name, kind))
