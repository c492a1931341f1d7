"""AI Platform custom containers through a real cairnd and real podman:
the TFX-shaped googleapiclient submission (ZenML's GCAIP backend) polled to
SUCCEEDED and FAILED, and a master + 2 workers job from `cairn jobs submit
training --master-image-uri`, one container per replica with TF_CONFIG."""
import json
import os
import subprocess
import time

import pytest

from conftest import BIN, IMAGE, Server, containers_of

discovery = pytest.importorskip("googleapiclient.discovery")
credentials = pytest.importorskip("google.oauth2.credentials")


@pytest.fixture(scope="module")
def rest_server():
    # --gpus 1 on a machine without device nodes: the container starts
    # without device flags (warned once).
    s = Server(["--gpus", "1", "--grace-seconds", "2"],
               http_listen="127.0.0.1:0")
    yield s
    s.stop()


def tfx_body(job_id, job_dir, args):
    """The request TFX's AI Platform trainer sends (ZenML's
    SingleGPUTrainingGCAIPBackend)."""
    return {
        "jobId": job_id,
        "labels": {"tfx_version": "1-14-0", "tfx_executor": "third_party"},
        "trainingInput": {
            "scaleTier": "CUSTOM",
            "masterType": "n1-standard-4",
            "masterConfig": {
                "imageUri": IMAGE,
                "containerCommand": ["python3", "/opt/trainer/trainer.py"],
                "acceleratorConfig": {"count": 1, "type": "NVIDIA_TESLA_K80"},
            },
            "args": args,
            "region": "us-central1",
            "jobDir": job_dir,
            "pythonVersion": "3.7",
            "scheduling": {"maxRunningTime": "7200s"},
        },
    }


def poll(jobs, name, timeout=90):
    deadline = time.monotonic() + timeout
    while True:
        job = jobs.get(name=name).execute()
        if job["state"] in ("SUCCEEDED", "FAILED", "CANCELLED"):
            return job
        assert time.monotonic() < deadline, job
        time.sleep(0.5)


@pytest.fixture(scope="module")
def jobs(rest_server):
    """googleapiclient's projects.jobs, from cairnd's discovery document."""
    ml = discovery.build(
        "ml", "v1", cache_discovery=False,
        discoveryServiceUrl=rest_server.http_base +
        "/discovery/v1/apis/{api}/{apiVersion}/rest",
        credentials=credentials.Credentials(rest_server.token))
    return ml.projects().jobs()


def test_tfx_shaped_submission_polled_to_its_end(rest_server, jobs):
    root = os.path.join(rest_server.data_dir, "jobs")
    jobs.create(parent="projects/p", body=tfx_body(
        "tfx_ok", os.path.join(root, "tfx_ok"),
        ["--metric-path=env", "--x=2"])).execute()
    jobs.create(parent="projects/p", body=tfx_body(
        "tfx_fail", os.path.join(root, "tfx_fail"), ["--exit=3"])).execute()
    ok = poll(jobs, "projects/p/jobs/tfx_ok")
    assert ok["state"] == "SUCCEEDED", (ok, rest_server.log())
    failed = poll(jobs, "projects/p/jobs/tfx_fail")
    assert failed["state"] == "FAILED"
    assert "exit code 3" in failed["errorMessage"]
    with open(os.path.join(root, "tfx_ok", "job.log")) as f:
        log = f.read()
    assert "whoami uid=" in log and "--x=2" in log
    assert "no /dev/nvidia* nodes" in rest_server.log()


def test_master_and_two_workers_one_container_each(rest_server, tmp_path):
    config = tmp_path / "config.yaml"
    config.write_text("""
trainingInput:
  scaleTier: CUSTOM
  masterType: n1-standard-1
  workerType: n1-standard-1
  workerCount: 2
""")
    env = dict(os.environ, CAIRN_SERVER=rest_server.address,
               CAIRN_TOKEN_FILE=os.path.join(rest_server.data_dir,
                                             "admin.token"))
    out = subprocess.run(
        [os.path.join(BIN, "cairn"), "jobs", "submit", "training", "replicas",
         "--config", str(config), "--master-image-uri", IMAGE,
         "--stream-logs", "--", "--metric-path=env", "--wait-workers=2"],
        env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    job_dir = os.path.join(rest_server.data_dir, "jobs", "replicas")
    clusters = []
    for name in ("master-replica-0", "worker-replica-0", "worker-replica-1"):
        path = os.path.join(job_dir, "result-%s.json" % name)
        assert os.path.exists(path), os.listdir(job_dir)
        with open(path) as f:
            cluster_spec = json.loads(json.load(f)["cluster_spec"])
        assert len(cluster_spec["cluster"]["worker"]) == 2
    for log in ("job.log", "worker-replica-0.log", "worker-replica-1.log"):
        with open(os.path.join(job_dir, log)) as f:
            line = [l for l in f if l.startswith("whoami")][-1]
        tf_config = json.loads(line.split("tf_config=", 1)[1])
        clusters.append(tf_config["cluster"])
        assert len(tf_config["cluster"]["worker"]) == 2
    assert clusters[0] == clusters[1] == clusters[2]


def test_cancel_removes_the_container_within_the_grace(rest_server, jobs):
    job_dir = os.path.join(rest_server.data_dir, "jobs", "tfx_cancel")
    jobs.create(parent="projects/p", body=tfx_body(
        "tfx_cancel", job_dir, ["--sleep=120", "--ignore-term=1"])).execute()
    deadline = time.monotonic() + 30
    while not containers_of(rest_server.data_dir):
        assert time.monotonic() < deadline, rest_server.log()
        time.sleep(0.1)
    cancelled_ones = containers_of(rest_server.data_dir)
    # The server's one GPU is taken: this job waits for its slot.
    after = "projects/p/jobs/tfx_after_cancel"
    jobs.create(parent="projects/p", body=tfx_body(
        "tfx_after_cancel", job_dir + "_after", [])).execute()
    name = "projects/p/jobs/tfx_cancel"
    jobs.cancel(name=name, body={}).execute()
    cancelled = time.monotonic()
    # SIGTERM is ignored: CANCELLING until the grace's SIGKILL, and the
    # job may be cancelled again meanwhile.
    assert jobs.get(name=name).execute()["state"] == "CANCELLING"
    assert jobs.cancel(name=name, body={}).execute() == {}
    while True:
        # The waiting job starts only once the cancelled one has ended.
        waiting = jobs.get(name=after).execute()["state"]
        state = jobs.get(name=name).execute()["state"]
        assert waiting in ("QUEUED", "PREPARING") or state == "CANCELLED", \
            (waiting, state)
        if state == "CANCELLED":
            break
        assert state == "CANCELLING", state
        assert time.monotonic() - cancelled < 6, rest_server.log()  # grace 2 s
        time.sleep(0.1)
    left = set(containers_of(rest_server.data_dir)) & set(cancelled_ones)
    assert not left, left
    status = poll(jobs, after)
    assert status["state"] == "SUCCEEDED", status


def test_a_root_owned_job_dir_is_given_to_the_job_user(rest_server, jobs):
    # The trainer runs as the job user: cairnd makes a job dir that exists
    # but is not writable by that user its own before the container starts.
    job_dir = os.path.join(rest_server.data_dir, "jobs", "tfx_root_dir")
    os.makedirs(job_dir, mode=0o755)
    assert os.stat(job_dir).st_uid == os.getuid()
    jobs.create(parent="projects/p", body=tfx_body(
        "tfx_root_dir", job_dir, ["--metric-path=env"])).execute()
    assert poll(jobs, "projects/p/jobs/tfx_root_dir")["state"] == "SUCCEEDED"
    result = os.path.join(job_dir, "result-master-replica-0.json")
    assert os.stat(result).st_uid == os.stat(job_dir).st_uid
    if os.getuid() == 0:
        assert os.stat(result).st_uid != 0
