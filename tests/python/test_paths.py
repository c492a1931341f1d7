"""Relative paths in a study config's job_template.command resolve against
the config file's own directory, as `cairn study create --config` does."""
import os

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def test_command_path_resolves_in_the_configs_directory(cairn_lib,
                                                        monkeypatch, tmp_path):
    from cairn.spec import load_spec_file
    monkeypatch.chdir(tmp_path)  # Not the repository root.
    spec = load_spec_file(os.path.join(ROOT,
                                       "examples/studies/python-trainer.yaml"))
    assert list(spec.job_template.command) == [
        "/usr/bin/python3", os.path.join(ROOT, "examples/trainers/train.py"),
        "--epochs=10"]


def test_command_path_that_names_no_file_names_the_field(cairn_lib, tmp_path):
    import cairn
    from cairn.spec import load_spec_file
    path = tmp_path / "s.yaml"
    path.write_text("parameters: [{parameter_id: x, type: DOUBLE, "
                    "min_value: 0, max_value: 1}]\n"
                    "job_template: {command: [python3, trainers/nope.py]}\n")
    with pytest.raises(cairn.InvalidArgumentError) as e:
        load_spec_file(str(path))
    assert ("job_template.command[1]: 'trainers/nope.py' is not a file "
            "relative to the study config's directory '%s'" % tmp_path
            in e.value.message)
    assert len(e.value.message) < 1024
