"""Study configs: a dict in the shape of the YAML study config (the protobuf
JSON mapping of cairn.v1.StudySpec), or a path to a YAML or .json file, as
`cairn study create --config` reads them (cli/study_config.h).

Parsing goes through protobuf's json_format, so the proto stays the one
schema. YAML is read with the YAML 1.2 core schema the CLI uses (only
true/false are booleans; 1e-3 is a number).
"""
import json
import os
import re

import grpc
import yaml
from google.protobuf import json_format

from cairn.errors import make_error
from cairn.v1 import study_pb2


class _Yaml12Loader(yaml.SafeLoader):
    """SafeLoader with YAML 1.2 core-schema booleans, numbers and nulls."""


_Yaml12Loader.yaml_implicit_resolvers = {
    k: [r for r in v if r[0] not in ("tag:yaml.org,2002:bool",
                                     "tag:yaml.org,2002:float",
                                     "tag:yaml.org,2002:int")]
    for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()}
_Yaml12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
    list("tTfF"))
_Yaml12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:int", re.compile(r"^[-+]?[0-9]+$"),
    list("-+0123456789"))
_Yaml12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float", re.compile(
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
        r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"),
    list("-+.0123456789"))


def _invalid(message):
    return make_error(grpc.StatusCode.INVALID_ARGUMENT, message)


# The bounds of util/yaml/yaml_json.h and bounded_file.h, as cairn's:
# a config file is read up to 16 MiB, and YAML aliases may expand it to at
# most 2,000,000 values and 16 MiB of text (a few hundred bytes of aliases
# can stand for billions of values).
_MAX_CONFIG_FILE_BYTES = 16 << 20
_MAX_CONFIG_VALUES = 2000000
_MAX_CONFIG_SCALAR_BYTES = 16 << 20


def _check_expansion(data):
    """Raises InvalidArgumentError if `data` spells out past the bounds."""
    values, text, stack = 0, 0, [data]
    while stack:
        item = stack.pop()
        values += 1
        if values > _MAX_CONFIG_VALUES:
            raise _invalid("the YAML expands to more than %d values (aliases "
                           "repeat what they name; write the values out)"
                           % _MAX_CONFIG_VALUES)
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
        elif isinstance(item, (str, bytes)):
            text += len(item)
            if text > _MAX_CONFIG_SCALAR_BYTES:
                raise _invalid("the YAML expands to more than %d bytes "
                               "(aliases repeat what they name; write the "
                               "values out)" % _MAX_CONFIG_SCALAR_BYTES)


def load_spec_file(path):
    """The StudySpec in a YAML or .json file; errors start with the path."""
    path = os.fspath(path)
    try:
        with open(path, "rb") as f:
            raw = f.read(_MAX_CONFIG_FILE_BYTES + 1)
    except OSError as e:
        raise make_error(grpc.StatusCode.NOT_FOUND,
                         "%s: cannot open the study config file (%s)"
                         % (path, e.strerror))
    if len(raw) > _MAX_CONFIG_FILE_BYTES:
        raise _invalid("%s: the study config file is over %d bytes"
                       % (path, _MAX_CONFIG_FILE_BYTES))
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise _invalid("%s: the study config is not valid UTF-8" % path)
    try:
        if path.endswith(".json"):
            data = json.loads(text)
        else:
            data = yaml.load(text, Loader=_Yaml12Loader)
    except (ValueError, yaml.YAMLError) as e:
        raise _invalid("%s: syntax error: %s" % (path, str(e).replace("\n", " ")))
    try:
        _check_expansion(data)
    except Exception as e:
        raise _invalid("%s: %s" % (path, getattr(e, "message", e)))
    try:
        spec = spec_from_dict(data)
        resolve_command_paths(os.path.dirname(path), spec)
        return spec
    except Exception as e:  # CairnError: prefix the path.
        raise _invalid("%s: %s" % (path, getattr(e, "message", e)))


def resolve_command_paths(config_dir, spec):
    """Makes the relative file paths of spec.job_template.command absolute
    against config_dir (the study config's directory), the rule of
    `cairn study create --config` (cli/study_config.h): absolute paths,
    flags and program names with no '/' that name no file there stay as they
    are; a relative path with a '/' that names no file there raises
    InvalidArgumentError naming job_template.command[i]."""
    if not spec.HasField("job_template"):
        return
    base = os.path.abspath(config_dir or ".")
    command = spec.job_template.command
    for i, arg in enumerate(command):
        if not arg or arg.startswith(("/", "-")):
            continue
        path = os.path.normpath(os.path.join(base, arg))
        if os.path.isfile(path):
            command[i] = path
        elif "/" in arg:
            raise _invalid(
                "job_template.command[%d]: '%s' is not a file relative to "
                "the study config's directory '%s' (a relative path in the "
                "command is resolved there; write it relative to the config "
                "file, or absolute)" % (i, arg[:200], base[:300]))


def _expand_image_shorthand(data):
    """job_template.image (+ command, run inside the image) is shorthand for
    job_template.container {image, command}, as for `cairn study create
    --config` (cli/study_config.cc). Returns data, copied where changed."""
    for key in ("job_template", "jobTemplate"):
        template = data.get(key)
        if not isinstance(template, dict) or "image" not in template:
            continue
        if "container" in template:
            raise _invalid("job_template.image: give image (with command) or "
                           "container, not both")
        template = dict(template)
        container = {"image": template.pop("image")}
        if "command" in template:
            container["command"] = template.pop("command")
        template["container"] = container
        data = dict(data, **{key: template})
    return data


def spec_from_dict(data):
    """StudySpec from a dict of its fields (proto names or lowerCamelCase,
    enums as strings). Unknown fields and bad values raise
    InvalidArgumentError naming the field."""
    if data is None:
        raise _invalid("the study config is empty")
    if not isinstance(data, dict):
        raise _invalid("the study config must be a mapping of StudySpec "
                       "fields (parameters, metrics, algorithm, ...)")
    data = _expand_image_shorthand(data)
    spec = study_pb2.StudySpec()
    try:
        json_format.ParseDict(data, spec)
    except json_format.ParseError as e:
        # One line, under 1 KB (protobuf lists every field on a second line).
        raise _invalid(" ".join(str(e).split())[:900])
    return spec


def to_spec(spec):
    """Accepts a StudySpec, a dict or a path (str / os.PathLike)."""
    if isinstance(spec, study_pb2.StudySpec):
        return spec
    if isinstance(spec, (str, os.PathLike)):
        return load_spec_file(spec)
    return spec_from_dict(spec)
