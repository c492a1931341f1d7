#!/usr/bin/env python3
"""Regenerates the binary seed inputs of fuzz/corpus/ from fuzz/seeds/.

spec_validation: each seeds/*.textproto encoded as a cairn.v1.StudySpec.
trainer_checkpoint: a small checkpoint as EncodeCheckpoint writes it, once
whole (first byte 0) and once as a bare payload (first byte 1).
rpc: request sequences ([method byte][length byte][request]) that create a
study from a seed spec, then suggest, measure, complete and list.
Needs protoc (protobuf-compiler). Run from anywhere: python3 fuzz/make_seeds.py
"""
import pathlib
import struct
import subprocess
import zlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
PROTO = ROOT / "proto"
FUZZ = ROOT / "fuzz"


def encode(message, text):
    return subprocess.run(
        ["protoc", f"-I{PROTO}", f"--encode=cairn.v1.{message}",
         "cairn/v1/study_service.proto"],
        input=text.encode(), capture_output=True, check=True, cwd=PROTO).stdout


def record(method, message, text):
    body = encode(message, text)
    assert len(body) < 256, (message, len(body))
    return bytes([method, len(body)]) + body


def main():
    out = FUZZ / "corpus" / "spec_validation"
    out.mkdir(parents=True, exist_ok=True)
    specs = {}
    for seed in sorted((FUZZ / "seeds").glob("*.textproto")):
        specs[seed.stem] = seed.read_text()
        (out / f"{seed.stem}.bin").write_bytes(encode("StudySpec", specs[seed.stem]))

    out = FUZZ / "corpus" / "rpc"
    out.mkdir(parents=True, exist_ok=True)
    for name, spec in specs.items():
        create = record(0, "CreateStudyRequest",
                        f'study {{ display_name: "{name}" spec {{ {spec} }} }}')
        metric = "loss" if name == "branin" else "accuracy"
        extra = "" if name == "branin" else ' metrics { metric_id: "latency" value: 1 }'
        seq = (create + record(1, "SuggestTrialsRequest", "suggestion_count: 2")
               + record(2, "AddTrialMeasurementRequest",
                        f'measurement {{ step_count: 1 metrics {{ metric_id: "{metric}" value: 0.5 }} }}')
               + record(11, "GetMetricHistoryRequest", f'metric_id: "{metric}"')
               + record(3, "CompleteTrialRequest",
                        f'final_measurement {{ metrics {{ metric_id: "{metric}" value: 0.25 }}{extra} }}')
               + record(4, "ListTrialsRequest", "include_measurements: true")
               + record(10, "ListOptimalTrialsRequest", ""))
        (out / f"{name}.bin").write_bytes(seq)

    out = FUZZ / "corpus" / "trainer_checkpoint"
    out.mkdir(parents=True, exist_ok=True)
    fp = b"lr=0.1 hidden=4"
    floats = lambda xs: struct.pack("<Q", len(xs)) + struct.pack(f"<{len(xs)}f", *xs)
    payload = (struct.pack("<Q", len(fp)) + fp + struct.pack("<QQQ", 12, 1, 2)
               + struct.pack("<Q3I", 3, 2, 0, 1) + struct.pack("<dQdd", 1.5, 2, 0.7, 3.25)
               + floats([0.5, -0.25]) + floats([0.0, 0.0]) + floats([1.0, 1.0]))
    header = b"CAIRNCKP" + struct.pack("<IIQI", 1, 0, len(payload), zlib.crc32(payload))
    (out / "whole.bin").write_bytes(b"\x00" + header + payload)
    (out / "payload.bin").write_bytes(b"\x01" + payload)


if __name__ == "__main__":
    main()
