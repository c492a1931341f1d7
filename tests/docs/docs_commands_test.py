#!/usr/bin/python3
"""Runs the commands that README.md and docs/*.md show, so the docs cannot
drift from the binaries (issue 33).

The marker: a line `<!-- test -->` (or `<!-- test: a note -->`) right before
a ```sh, ```bash or ```python fence marks that block as run by this test.
GitHub renders the comment as nothing. A marker anywhere else is an error.

How a page runs: every marked block of one page, in order, in one bash
(`set -eE -o pipefail`), so a tour's later steps see the earlier ones'
studies, files and exports. The working dir is a fresh temp dir that looks
like the repository root: `examples/` and `python/` link to the checkout,
`build/bin/` to $CAIRN_BIN_DIR (default build/bin). A ```python block runs
with /usr/bin/python3, the SDK pip-installed offline into a temp dir as
tests/python/cairn_testenv.py does, its names that the docs leave to the
reader ("your objective": evaluate, train_step, objective) given stubs.

What the runner provides instead of what the docs fix:
- `cairnd` and `build/bin/cairnd` are a shell function. Starting the server
  (any cairnd without --verify, --repair, --help or --version) runs the real
  cairnd in the background with the doc's flags except its addresses:
  gRPC and HTTP on 127.0.0.1:0 (ports from --port-file and cairnd's log),
  metrics on a free port; it waits until cairnd serves and exports
  CAIRN_SERVER. A second start stops the first. --verify and --repair stop
  a running cairnd first and start it again afterwards, as the docs say to.
  A page that starts no cairnd gets one on ./cairn-data. After a start
  CAIRN_TOKEN_FILE names its admin token (unless the page exports it
  itself, as README's tour does), $CAIRN_TOKEN holds it for pages that use
  it, and a page that creates no study but reads one gets
  examples/studies/branin.yaml as studies/1.
- the addresses 127.0.0.1:8080, :9464 and :50051 in a command become the
  running cairnd's HTTP, metrics and gRPC ports; paths under /var/ move
  under a temp root; the placeholder DIR is ./cairn-data.
- `xdg-open URL` fetches the URL (it must answer 2xx/3xx); `curl` gets
  --fail, so an HTTP error fails the block.
A failure names the page, the block's line, the failing command's doc line
and the last 1,000 bytes of the block's output.

Left unmarked, because a test cannot run them on a CI machine in seconds:
- installing (Quick start's scripts/demo.sh and scripts/test.sh build the
  tree; `pip install` into the system Python, `cmake --install`, dpkg);
- systemd (`systemctl enable --now cairnd`);
- commands that name real hosts or addresses (security.md's TLS walk-through:
  cairn.example.com, 10.0.0.5, 0.0.0.0:50051);
- synopses with alternatives and brackets (cli.md's command list);
- code that runs only inside a trial job (`cairn.job`), or needs a study to
  finish or a package that is a placeholder (python-sdk.md's client sketch
  with `study.wait()` on a 30-trial study, training-jobs.md's
  googleapiclient example with file:///home/me/...);
- long runs: Optuna's sampler suite (its own ctest, optuna_sampler_suite_test),
  benchmarks (scripts/bench.sh), fuzzing; Slurm cluster setup
  (scripts/slurm-local.sh); GPUs.
Output samples (fences without a language, ```yaml configs) are not commands.

Usage: docs_commands_test.py [FILE.md ...]  (default README.md docs/*.md);
CAIRN_DOC_KEEP=1 keeps a passing page's temp dir (its state/output).
"""
import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.path.abspath(os.environ.get("CAIRN_BIN_DIR")
                      or os.path.join(ROOT, "build", "bin"))
PAGE_TIMEOUT = 150

MARK = re.compile(r"^<!--\s*test(?::[^>]*)?\s*-->\s*$")
FENCE = re.compile(r"^```(sh|bash|python)\s*$")

SHELL_PRELUDE = r'''
set -eE -o pipefail
_cairn_doc_trap() {
  echo "@@CAIRN_DOC_FAILED $1 ${BASH_LINENO[*]} :: $BASH_COMMAND" >&2
}
trap '_cairn_doc_trap $LINENO' ERR
_cairn_doc_stop() {
  if [ -n "${CAIRN_DOC_PID:-}" ]; then
    kill "$CAIRN_DOC_PID" 2>/dev/null || true
    wait "$CAIRN_DOC_PID" 2>/dev/null || true
    CAIRN_DOC_PID=
  fi
}
cairnd() {
  local args=() data=./cairn-data mode=serve
  while [ $# -gt 0 ]; do
    case $1 in
      --listen|--http-listen|--metrics-listen|--port-file) shift 2; continue;;
      --listen=*|--http-listen=*|--metrics-listen=*|--port-file=*) shift; continue;;
      --data-dir) data=$2;;
      --data-dir=*) data=${1#--data-dir=};;
      --verify|--repair) mode=offline;;
      --help|-h|--version) mode=info;;
    esac
    args+=("$1"); shift
  done
  if [ $mode = info ]; then "$CAIRN_BIN_DIR/cairnd" "${args[@]}"; return; fi
  if [ $mode = offline ]; then
    local running=${CAIRN_DOC_PID:-} rc=0
    _cairn_doc_stop
    "$CAIRN_BIN_DIR/cairnd" "${args[@]}" || rc=$?
    if [ -n "$running" ]; then cairnd "${CAIRN_DOC_ARGS[@]}"; fi
    return $rc
  fi
  _cairn_doc_stop
  CAIRN_DOC_ARGS=("${args[@]}")
  CAIRN_DOC_METRICS_PORT=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  local log=$CAIRN_DOC_STATE/cairnd.log port=$CAIRN_DOC_STATE/cairnd.port
  rm -f "$port"; : > "$log"
  "$CAIRN_BIN_DIR/cairnd" "${args[@]}" --listen 127.0.0.1:0 --port-file "$port" \
    --http-listen 127.0.0.1:0 --metrics-listen "127.0.0.1:$CAIRN_DOC_METRICS_PORT" \
    >"$log" 2>&1 &
  CAIRN_DOC_PID=$!
  echo "$CAIRN_DOC_PID" >> "$CAIRN_DOC_STATE/pids"
  local i
  for i in $(seq 400); do
    [ -s "$port" ] && break
    if ! kill -0 "$CAIRN_DOC_PID" 2>/dev/null; then
      echo "cairnd exited:" >&2; tail -c 800 "$log" >&2; CAIRN_DOC_PID=; return 1
    fi
    sleep 0.05
  done
  [ -s "$port" ] || { echo "cairnd did not start in 20 s" >&2; tail -c 800 "$log" >&2; return 1; }
  CAIRN_DOC_GRPC_PORT=$(cat "$port")
  CAIRN_DOC_HTTP_PORT=$(sed -n 's/.*web UI and REST API on .* (port \([0-9]*\)).*/\1/p' "$log" | tail -n 1)
  export CAIRN_SERVER=127.0.0.1:$CAIRN_DOC_GRPC_PORT
  if [ -z "${CAIRN_DOC_OWN_TOKEN_FILE:-}" ]; then
    export CAIRN_TOKEN_FILE=$(cd "$data" && pwd)/admin.token
  fi
  if [ -n "${CAIRN_DOC_WANT_TOKEN:-}" ]; then
    export CAIRN_TOKEN=$(cat "$data/admin.token")
  fi
  if [ -n "${CAIRN_DOC_SEED:-}" ] && [ -z "${CAIRN_DOC_SEEDED:-}" ]; then
    CAIRN_DOC_SEEDED=1
    CAIRN_TOKEN_FILE=$data/admin.token "$CAIRN_BIN_DIR/cairn" study create \
      --config examples/studies/branin.yaml >/dev/null
  fi
}
'''

PY_DRIVER = r'''
import sys
page, line, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def evaluate(**parameters):            # "your objective"
    return sum(float(v) ** 2 for v in parameters.values() if isinstance(v, (int, float)))
def train_step(**parameters):
    return evaluate(**parameters)
def objective(trial):
    x = trial.suggest_float("x", -10, 10)
    return (x - 2) ** 2
names = {"__name__": "__main__", "evaluate": evaluate,
         "train_step": train_step, "objective": objective}
source = "\n" * line + open(path).read()   # tracebacks name the doc's lines
exec(compile(source, page, "exec"), names)
'''


def marked_blocks(path):
    """[(fence line, language, text)] of the marked blocks of a page."""
    lines = open(path).read().split("\n")
    blocks, i = [], 0
    while i < len(lines):
        if MARK.match(lines[i]):
            fence = FENCE.match(lines[i + 1]) if i + 1 < len(lines) else None
            if not fence:
                raise SystemExit("%s:%d: a test marker must sit right before "
                                 "a ```sh, ```bash or ```python fence"
                                 % (os.path.relpath(path, ROOT), i + 1))
            end = i + 2
            while end < len(lines) and lines[end].rstrip() != "```":
                end += 1
            blocks.append((i + 2, fence.group(1), "\n".join(lines[i + 2:end])))
            i = end
        i += 1
    return blocks


def rewrite(text):
    """The docs' fixed addresses and paths -> the test's."""
    text = re.sub(r"(?<![\w.-])build/bin/cairnd\b", "cairnd", text)
    text = text.replace("127.0.0.1:8080", "127.0.0.1:${CAIRN_DOC_HTTP_PORT}")
    text = text.replace("127.0.0.1:9464", "127.0.0.1:${CAIRN_DOC_METRICS_PORT}")
    text = text.replace("127.0.0.1:50051", "127.0.0.1:${CAIRN_DOC_GRPC_PORT}")
    text = re.sub(r"(?<![\w./$-])/var/", "${CAIRN_DOC_ROOT}/var/", text)
    text = re.sub(r"\bDIR\b", "./cairn-data", text)
    return text


def reachable_tempdir(prefix):
    path = tempfile.mkdtemp(prefix=prefix)
    os.chmod(path, 0o755)   # jobs run as nobody when the test runs as root
    return path


def install_sdk():
    sys.path.insert(0, os.path.join(ROOT, "tests", "python"))
    import cairn_testenv
    return cairn_testenv.install_sdk()


def make_tree(tmp):
    work = os.path.join(tmp, "work")
    os.makedirs(os.path.join(work, "build"))
    for name in ("examples", "python"):
        os.symlink(os.path.join(ROOT, name), os.path.join(work, name))
    os.symlink(BIN, os.path.join(work, "build", "bin"))
    shims = os.path.join(tmp, "shims")
    os.makedirs(shims)
    with open(os.path.join(shims, "xdg-open"), "w") as f:
        f.write('#!/bin/sh\nexec /usr/bin/curl -sS -o /dev/null --fail "$1"\n')
    with open(os.path.join(shims, "curl"), "w") as f:
        f.write('#!/bin/sh\nexec /usr/bin/curl --fail --show-error "$@"\n')
    for name in ("cairn", "cairn-train"):
        if os.path.exists(os.path.join(BIN, name)):
            os.symlink(os.path.join(BIN, name), os.path.join(shims, name))
    for name in os.listdir(shims):
        os.chmod(os.path.join(shims, name), 0o755)
    os.makedirs(os.path.join(tmp, "root", "var"))
    return work, shims


def run_page(page, blocks, sdk):
    rel = os.path.relpath(page, ROOT)
    if rel.startswith(".."):
        rel = os.path.abspath(page)
    tmp = reachable_tempdir("cairn-docs-")
    state = os.path.join(tmp, "state")
    os.makedirs(state)
    work, shims = make_tree(tmp)
    script = [SHELL_PRELUDE]
    uses_token = any("$CAIRN_TOKEN" in re.sub(r"\$CAIRN_TOKEN_FILE", "", t)
                     for _, _, t in blocks)
    starts = any(re.search(r"^\s*(build/bin/)?cairnd\s(?!.*--(verify|repair))", t,
                           re.M) for _, lang, t in blocks if lang != "python")
    if not starts:
        script.append("cairnd --data-dir ./cairn-data\n")
    ranges = []   # (first script line, last, fence line, block index)
    for index, (line, lang, text) in enumerate(blocks):
        script.append('echo "@@CAIRN_DOC_BLOCK %d" >&2\n' % index)
        if lang == "python":
            path = os.path.join(state, "block-%d.py" % line)
            with open(path, "w") as f:
                f.write(text + "\n")
            body = ('/usr/bin/python3 "$CAIRN_DOC_STATE/driver.py" %s %d %s'
                    % (rel, line, path))
        else:
            body = rewrite(text)
        first = "".join(script).count("\n") + 1
        script.append(body + "\n")
        if lang != "python":   # a python block's traceback names its lines
            ranges.append((first, first + body.count("\n"), line, index))
    script.append('echo "@@CAIRN_DOC_DONE" >&2\n')
    with open(os.path.join(state, "driver.py"), "w") as f:
        f.write(PY_DRIVER)
    with open(os.path.join(state, "page.sh"), "w") as f:
        f.write("".join(script))
    env = dict(os.environ)
    env.update({
        "CAIRN_BIN_DIR": BIN, "CAIRN_DOC_STATE": state,
        "CAIRN_DOC_ROOT": os.path.join(tmp, "root"),
        "PATH": shims + ":" + env.get("PATH", "/usr/bin:/bin"),
        "PYTHONPATH": sdk or "", "PYTHONDONTWRITEBYTECODE": "1",
        "HOME": tmp,
    })
    for name in ("CAIRN_SERVER", "CAIRN_TOKEN", "CAIRN_TOKEN_FILE", "CAIRN_TLS_CA"):
        env.pop(name, None)
    if uses_token:
        env["CAIRN_DOC_WANT_TOKEN"] = "1"
    if any("CAIRN_TOKEN_FILE=" in t for _, _, t in blocks):
        env["CAIRN_DOC_OWN_TOKEN_FILE"] = "1"
    if not any(re.search(r"study create|create_study", t) for _, _, t in blocks):
        env["CAIRN_DOC_SEED"] = "1"
    started = time.monotonic()
    timed_out = False
    with open(os.path.join(state, "output"), "wb") as out:
        proc = subprocess.Popen(["/bin/bash", os.path.join(state, "page.sh")],
                                cwd=work, env=env, stdout=out, stderr=out,
                                stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            proc.wait(PAGE_TIMEOUT)
        except subprocess.TimeoutExpired:
            timed_out = True
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    pids = open(os.path.join(state, "pids")).read().split() \
        if os.path.exists(os.path.join(state, "pids")) else []
    for pid in pids:
        try:
            os.kill(int(pid), signal.SIGTERM)
        except (ProcessLookupError, ValueError):
            pass
    for pid in pids:   # cairnd stops its jobs on SIGTERM
        for _ in range(200):
            try:
                os.kill(int(pid), 0)
            except (ProcessLookupError, ValueError):
                break
            time.sleep(0.05)
    output = open(os.path.join(state, "output"), "rb").read().decode(
        "utf-8", "replace")
    seconds = time.monotonic() - started
    if not timed_out and proc.returncode == 0 and "@@CAIRN_DOC_DONE" in output:
        print("ok   %s: %d blocks (lines %s) in %.1f s"
              % (rel, len(blocks), ", ".join(str(b[0]) for b in blocks), seconds))
        if os.environ.get("CAIRN_DOC_KEEP"):
            print("     (kept: %s)" % tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
        return True
    started_blocks = [int(m) for m in re.findall(r"@@CAIRN_DOC_BLOCK (\d+)", output)]
    index = started_blocks[-1] if started_blocks else None
    block_output = output.split("@@CAIRN_DOC_BLOCK %d\n" % index, 1)[-1] \
        if index is not None else output
    failure = re.search(r"@@CAIRN_DOC_FAILED ([\d ]+) :: (.*)", block_output)
    doc_line = None
    if failure:
        for number in (int(n) for n in failure.group(1).split()):
            for first, last, fence, _ in ranges:
                if first <= number <= last:
                    doc_line = fence + 1 + number - first
                    break
            if doc_line:
                break
    shown = re.sub(r"@@CAIRN_DOC_FAILED[^\n]*\n?", "", block_output)
    shown = shown.encode()[-1000:].decode("utf-8", "replace")
    where = "%s:%d" % (rel, blocks[index][0]) if index is not None else rel
    print("FAIL %s: the block at %s %s" % (rel, where, "timed out after %d s"
          % PAGE_TIMEOUT if timed_out else "failed (exit %d)" % proc.returncode))
    if failure:
        command = failure.group(2).strip()
        if doc_line:   # the doc's own text of the command
            command = open(page).read().split("\n")[doc_line - 1].strip()
        print("     failing command%s: %s" % (
            " (%s:%d)" % (rel, doc_line) if doc_line else "", command))
    print("     its output (last 1,000 bytes):")
    print("\n".join("     | " + l for l in shown.rstrip("\n").split("\n")))
    print("     (kept: %s)" % tmp)
    return False


def main():
    pages = sys.argv[1:] or [os.path.join(ROOT, "README.md")] + sorted(
        glob.glob(os.path.join(ROOT, "docs", "*.md")))
    work = [(p, marked_blocks(p)) for p in pages]
    work = [(p, b) for p, b in work if b]
    if not work:
        print("no marked blocks")
        return 1
    for tool in ("cairnd", "cairn"):
        if not os.access(os.path.join(BIN, tool), os.X_OK):
            print("no %s in %s (set CAIRN_BIN_DIR)" % (tool, BIN))
            return 1
    sdk = install_sdk() if any(l == "python" for _, b in work for _, l, _ in b) \
        else None
    try:
        results = [run_page(p, b, sdk) for p, b in work]
    finally:
        if sdk:
            shutil.rmtree(sdk, ignore_errors=True)
    print("%d of %d pages passed" % (sum(results), len(results)))
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
