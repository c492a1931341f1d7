"""What an outsider's Google API tooling expects of cairnd's AI Platform
surface, checked the way such tools use it rather than the way our own
client does:

- the discovery document follows the Discovery format (RestDescription,
  RestMethod, JsonSchema: allowed keys, types and formats, every $ref and
  path variable resolved, parameterOrder naming the required parameters);
- googleapiclient builds every method and renders its documentation (which
  walks every schema it references);
- every documented method is routed by cairnd (no "no route" answer);
- batchPath is served: googleapiclient's new_batch_http_request() runs a
  batch with each call authorized on its own, and malformed batches get a
  400 in Google's error shape.

Run by ctest (http_googleapiclient_expectations_test) with /usr/bin/python3
through tests/testing/run_pytest.py; skipped when python3-googleapi is
missing."""
import copy
import json
import os
import re
import sys
import urllib.error
import urllib.request

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from googleapi import discovery, errors, ml, server  # noqa: E402,F401

schema = pytest.importorskip("googleapiclient.schema")
PARENT = "projects/outsider"

# The Discovery format's fields (discovery v1: RestDescription, RestMethod,
# RestResource, JsonSchema) and the type/format pairs it defines.
DESCRIPTION_KEYS = {
    "kind", "etag", "discoveryVersion", "id", "name", "canonicalName",
    "version", "revision", "title", "description", "icons",
    "documentationLink", "labels", "protocol", "baseUrl", "basePath",
    "rootUrl", "mtlsRootUrl", "servicePath", "batchPath", "endpoints",
    "parameters", "auth", "features", "schemas", "methods", "resources",
    "ownerDomain", "ownerName", "packagePath", "version_module",
    "fullyEncodeReservedExpansion", "exponentialBackoffDefault"}
METHOD_KEYS = {
    "id", "path", "flatPath", "httpMethod", "description", "parameters",
    "parameterOrder", "request", "response", "scopes", "supportsMediaDownload",
    "supportsMediaUpload", "mediaUpload", "supportsSubscription",
    "useMediaDownloadService", "etagRequired", "streamingType", "apiVersion"}
SCHEMA_KEYS = {
    "id", "type", "$ref", "description", "default", "required", "format",
    "pattern", "minimum", "maximum", "enum", "enumDescriptions",
    "enumDeprecated", "repeated", "location", "properties",
    "additionalProperties", "items", "annotations", "readOnly", "deprecated",
    "variant"}
FORMATS = {
    "integer": {"int32", "uint32"},
    "number": {"double", "float"},
    "string": {"byte", "date", "date-time", "int64", "uint64",
               "google-datetime", "google-duration", "google-fieldmask"},
}
TYPES = {"any", "array", "boolean", "integer", "number", "object", "string",
         "null"}


@pytest.fixture(scope="module")
def doc(server):
    url = server.base + "/discovery/v1/apis/ml/v1/rest"
    with urllib.request.urlopen(url, timeout=30) as r:
        return json.loads(r.read())


def methods_of(doc):
    """(dotted resource path, method name, method) of every method."""
    out = []

    def walk(node, path):
        for name, method in node.get("methods", {}).items():
            out.append((path, name, method))
        for name, resource in node.get("resources", {}).items():
            walk(resource, path + [name])
    walk(doc, [])
    return out


def check_schema(s, where, schemas, problems):
    """Appends to `problems` what in JsonSchema `s` breaks the format."""
    for key in set(s) - SCHEMA_KEYS:
        problems.append("%s: unknown key %r" % (where, key))
    if "$ref" in s:
        if s["$ref"] not in schemas:
            problems.append("%s: $ref %r names no schema" % (where, s["$ref"]))
        return
    kind = s.get("type")
    if kind not in TYPES:
        problems.append("%s: type %r" % (where, kind))
    if "format" in s and s["format"] not in FORMATS.get(kind, set()):
        problems.append("%s: format %r for type %r" % (where, s["format"], kind))
    if "enum" in s and len(s.get("enumDescriptions", s["enum"])) != len(s["enum"]):
        problems.append("%s: enum and enumDescriptions differ in length" % where)
    if kind == "array" and "items" not in s:
        problems.append("%s: an array without items" % where)
    for name, sub in s.get("properties", {}).items():
        check_schema(sub, where + "." + name, schemas, problems)
    for key in ("items", "additionalProperties"):
        if isinstance(s.get(key), dict):
            check_schema(s[key], where + "." + key, schemas, problems)


def check_method(path, name, m, doc, problems):
    where = ".".join(path + [name])
    for key in set(m) - METHOD_KEYS:
        problems.append("%s: unknown key %r" % (where, key))
    if m.get("id") != ".".join([doc["name"]] + path + [name]):
        problems.append("%s: id %r" % (where, m.get("id")))
    if m.get("httpMethod") not in ("GET", "POST", "PUT", "PATCH", "DELETE"):
        problems.append("%s: httpMethod %r" % (where, m.get("httpMethod")))
    params = m.get("parameters", {})
    for pname, p in params.items():
        check_schema(p, where + "(" + pname + ")", doc["schemas"], problems)
        if p.get("location") not in ("query", "path"):
            problems.append("%s(%s): location %r" % (where, pname, p.get("location")))
    in_path = set(re.findall(r"{\+?([^}]+)}", m["path"]))
    declared = {n for n, p in params.items() if p.get("location") == "path"}
    if in_path != declared:
        problems.append("%s: path variables %s, path parameters %s"
                        % (where, sorted(in_path), sorted(declared)))
    required = {n for n, p in params.items() if p.get("required")}
    if not declared <= required or set(m.get("parameterOrder", [])) != required:
        problems.append("%s: parameterOrder %s, required %s"
                        % (where, m.get("parameterOrder"), sorted(required)))
    if m["httpMethod"] == "GET" and "request" in m:
        problems.append("%s: a GET with a request body" % where)
    for key in ("request", "response"):
        if key in m and m[key].get("$ref") not in doc["schemas"]:
            problems.append("%s: %s names no schema" % (where, key))


def test_discovery_document_follows_the_discovery_format(server, doc):
    problems = ["top level: unknown key %r" % k
                for k in set(doc) - DESCRIPTION_KEYS]
    assert doc["kind"] == "discovery#restDescription"
    assert doc["discoveryVersion"] == "v1" and doc["protocol"] == "rest"
    assert doc["id"] == "%s:%s" % (doc["name"], doc["version"])
    assert doc["rootUrl"] == server.base + "/"
    assert doc["baseUrl"] == doc["rootUrl"] + doc["servicePath"]
    for name, s in doc["schemas"].items():
        if s.get("id") != name:
            problems.append("schema %s: id %r" % (name, s.get("id")))
        check_schema(s, name, doc["schemas"], problems)
    for pname, p in doc.get("parameters", {}).items():
        check_schema(p, "parameter " + pname, doc["schemas"], problems)
    for path, name, m in methods_of(doc):
        check_method(path, name, m, doc, problems)
    assert problems == []


def test_googleapiclient_builds_every_method_and_its_documentation(doc):
    # build_from_document adds the global parameters to each method of the
    # document it is given: give it a copy.
    service = discovery.build_from_document(copy.deepcopy(doc))
    for path, name, m in methods_of(doc):
        resource = service
        for part in path:
            resource = getattr(resource, part)()
        text = getattr(resource, name).__doc__
        for pname in m.get("parameters", {}):
            assert pname in text, (name, pname)
    schemas = schema.Schemas(doc)
    for name in doc["schemas"]:
        assert schemas.prettyPrintByName(name)


def example_value(p):
    """A value of parameter `p` that its pattern and type accept."""
    if "pattern" in p:
        return p["pattern"].strip("^$").replace("[^/]+", "x")
    return {"integer": 1, "boolean": False}.get(p.get("type"), "x")


def test_every_documented_method_is_routed(server, doc):
    service = ml(server, server.token)
    for path, name, m in methods_of(doc):
        resource = service
        for part in path:
            resource = getattr(resource, part)()
        args = {p: example_value(m["parameters"][p])
                for p in m.get("parameterOrder", [])}
        if "request" in m:
            args["body"] = {}
        try:
            getattr(resource, name)(**args).execute()
        except errors.HttpError as e:
            error = json.loads(e.content)["error"]
            assert "no route" not in error["message"], (name, error)
            assert e.resp.status in (400, 404), (name, error)


def test_a_batch_runs_each_call_with_its_own_authorization(server):
    viewer = server.cli("token", "create", "--name", "batch-viewer",
                        "--role", "viewer")
    for token, create_status in ((server.token, 400), (viewer, 403)):
        service = ml(server, token)
        jobs = service.projects().jobs()
        answers = {}
        batch = service.new_batch_http_request(
            callback=lambda rid, resp, exc: answers.update({rid: (resp, exc)}))
        batch.add(jobs.list(parent=PARENT), request_id="list")
        batch.add(jobs.get(name=PARENT + "/jobs/none"), request_id="get")
        batch.add(jobs.create(parent=PARENT, body={"jobId": "b1"}),
                  request_id="create")
        batch.execute()
        assert set(answers) == {"list", "get", "create"}
        assert answers["list"] == ({}, None)
        assert answers["get"][1].resp.status == 404
        assert "none" in json.loads(answers["get"][1].content)["error"]["message"]
        assert answers["create"][1].resp.status == create_status
    audit = server.cli("audit", "list", "--json")
    assert "batch-viewer" in audit and "PERMISSION_DENIED" in audit


def post_batch(server, content_type, body):
    req = urllib.request.Request(
        server.base + "/batch", data=body.encode(), method="POST",
        headers={"Content-Type": content_type,
                 "Authorization": "Bearer " + server.token})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def test_malformed_batches_get_a_400_naming_the_problem(server):
    part = ("--b\r\nContent-Type: application/http\r\n\r\n"
            "GET /v1/projects/p/jobs HTTP/1.1\r\n\r\n\r\n")
    cases = [
        ("application/json", part + "--b--", "Content-Type"),
        ("multipart/mixed", part + "--b--", "boundary"),
        ("multipart/mixed; boundary=b", part, "close delimiter"),
        ("multipart/mixed; boundary=b", "--b--", "no part"),
        ("multipart/mixed; boundary=b", part * 1001 + "--b--", "1000 parts"),
    ]
    for content_type, body, words in cases:
        status, text = post_batch(server, content_type, body)
        assert status == 400 and len(text) < 1024, (content_type, text)
        assert words in json.loads(text)["error"]["message"], text
    # A part that is not a request, or not an API call (a nested batch),
    # gets its error in its own part; the other parts are served.
    status, text = post_batch(
        server, "multipart/mixed; boundary=b",
        "--b\r\n\r\nnot a request\r\n"
        "--b\r\n\r\nGET /batch HTTP/1.1\r\n\r\n\r\n" + part + "--b--")
    assert status == 200, text
    answers = re.findall(r"HTTP/1.1 (\d+) [^\r]*\r\n(?:.*\r\n)*?\r\n(.*)\r\n",
                         text)
    assert [a[0] for a in answers] == ["400", "404", "200"], text
    assert "not an HTTP request line" in answers[0][1]
    assert "only API calls" in answers[1][1]
