"""Every script in examples/ runs end to end with its ``--steps 2`` smoke setting."""
import ast
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "examples")
SCRIPTS = sorted(f for f in os.listdir(EXAMPLES) if f.endswith(".py"))

# What each smoke run must print (besides exiting with status 0).
EXPECTED = {
    "custom_function.py": ["x.grad = tensor([0., 1., 1.])", "inf", "gradcheck passed"],
    "two_layer_net.py": ["train MSE", "test MSE"],
    "digits_cnn.py": ["test accuracy", "saved the weights"],
    "char_lstm.py": ["vocabulary of", "sample:"],
    "graph.py": ["seeds", "MulBackward0", "digraph"],
    "torch_interop.py": ["training accuracy", "saved"],
}


def run_example(name, tmp_path, *extra):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, os.path.join(EXAMPLES, name), "--steps", "2",
                           *extra], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)


def test_the_expected_examples_exist():
    assert set(EXPECTED) <= set(SCRIPTS)


@pytest.mark.parametrize("name", SCRIPTS)
def test_example_runs(name, tmp_path):
    proc = run_example(name, tmp_path)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    for phrase in EXPECTED.get(name, []):
        assert phrase in proc.stdout, (phrase, proc.stdout[-2000:])


@pytest.mark.parametrize("name", SCRIPTS)
def test_example_is_flat_and_documented(name):
    source = open(os.path.join(EXAMPLES, name), encoding="utf-8").read()
    assert len(source.splitlines()) <= 200
    doc = ast.get_docstring(ast.parse(source))
    assert doc and "Run:" in doc and "--steps" in doc
    assert max(len(line) for line in source.splitlines()) <= 100


def test_digits_cnn_checkpoint_loads_in_torch(torch, tmp_path):
    safetensors_torch = pytest.importorskip("safetensors.torch")
    proc = run_example("digits_cnn.py", tmp_path, "--save", "cnn.safetensors")
    assert proc.returncode == 0, proc.stderr[-4000:]
    state = safetensors_torch.load_file(str(tmp_path / "cnn.safetensors"))
    nn = torch.nn
    twin = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(128, 10))
    twin.load_state_dict(state)  # strict: every key and shape must match


def test_torch_interop_compares_both_ways(torch, tmp_path):
    pytest.importorskip("safetensors.torch")
    proc = run_example("torch_interop.py", tmp_path)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert "ember -> PyTorch" in proc.stdout and "PyTorch -> ember" in proc.stdout


def test_graph_writes_dot_and_html(tmp_path):
    proc = run_example("graph.py", tmp_path, "--out", "g")
    assert proc.returncode == 0, proc.stderr[-4000:]
    for name in ("seeds", "mlp", "dynamic"):
        dot = (tmp_path / "g" / (name + ".dot")).read_text()
        assert dot.lstrip().startswith("digraph") and "AccumulateGrad" in dot
        assert (tmp_path / "g" / (name + ".html")).stat().st_size > 0
