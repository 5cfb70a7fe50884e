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
    "graph.py": ["first_example", "MulBackward0", "digraph"],
    "torch_interop.py": ["training accuracy", "saved"],
    "ddp_digits.py": ["test accuracy", "rank 0 saved", "loaded the checkpoint"],
}


def run_example(name, cwd, *extra):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "src") + os.pathsep
               + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, os.path.join(EXAMPLES, name), "--steps", "2",
                           *extra], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=300)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Each example run once, in its own folder: ``runs(name) -> (process, folder)``."""
    done = {}

    def get(name):
        if name not in done:
            cwd = tmp_path_factory.mktemp(name[:-3])
            done[name] = (run_example(name, cwd), cwd)
        return done[name]
    return get


def test_the_expected_examples_exist():
    assert set(EXPECTED) <= set(SCRIPTS)


@pytest.mark.parametrize("name", SCRIPTS)
def test_example_runs(name, runs):
    proc, _ = runs(name)
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


def test_digits_cnn_checkpoint_loads_in_torch(torch, runs):
    safetensors_torch = pytest.importorskip("safetensors.torch")
    proc, cwd = runs("digits_cnn.py")
    assert proc.returncode == 0, proc.stderr[-4000:]
    state = safetensors_torch.load_file(str(cwd / "ember-out" / "digits_cnn.safetensors"))
    nn = torch.nn
    twin = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(128, 10))
    twin.load_state_dict(state)  # strict: every key and shape must match


def test_torch_interop_compares_both_ways(torch, runs):
    pytest.importorskip("safetensors.torch")
    proc, _ = runs("torch_interop.py")
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert "ember -> PyTorch" in proc.stdout and "PyTorch -> ember" in proc.stdout


def test_graph_writes_dot_and_html(runs):
    proc, cwd = runs("graph.py")
    assert proc.returncode == 0, proc.stderr[-4000:]
    expected = {"first_example": ["MulBackward0", "AddBackward0", "MeanBackward0"],
                "mlp": ["AddmmBackward0", "0.weight", "2.bias"], "dynamic": ["MulBackward0"]}
    for name, phrases in expected.items():
        dot = (cwd / "ember-out" / "graphs" / (name + ".dot")).read_text()
        assert dot.lstrip().startswith("digraph")
        assert all(p in dot for p in phrases), (name, dot)
        assert (cwd / "ember-out" / "graphs" / (name + ".html")).stat().st_size > 0
