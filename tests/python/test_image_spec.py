"""job_template.image in a study config read by the Python SDK means what it
means to `cairn study create --config`: the trials run in that image, with
the command run inside it (never resolved against the config's directory)."""
import pytest


def test_image_shorthand_becomes_the_container(cairn_lib, tmp_path):
    from cairn.spec import load_spec_file
    path = tmp_path / "s.yaml"
    path.write_text("parameters: [{parameter_id: x, type: DOUBLE, "
                    "min_value: 0, max_value: 1}]\n"
                    "job_template: {image: 'localhost/trainer:1', "
                    "command: [python3, trainer/train.py], gpus_per_trial: 0}\n")
    spec = load_spec_file(str(path))
    t = spec.job_template
    assert t.container.image == "localhost/trainer:1"
    assert list(t.container.command) == ["python3", "trainer/train.py"]
    assert list(t.command) == []


def test_image_and_container_together_are_refused(cairn_lib):
    import cairn
    from cairn.spec import spec_from_dict
    with pytest.raises(cairn.InvalidArgumentError) as e:
        spec_from_dict({"jobTemplate": {"image": "a", "container": {"image": "b"}}})
    assert "job_template.image" in e.value.message
