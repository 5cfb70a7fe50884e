"""``python -m ember check``: the notes' Functions pass (MySoftplus overflows), broken ones fail."""
import os
import subprocess
import sys

import pytest

from ember import _check

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
SEEDS = os.path.join(FIXTURES, "seed_functions.py")
BROKEN = os.path.join(FIXTURES, "broken_functions.py")


@pytest.fixture(scope="module")
def seed_results():
    module = _check._load(SEEDS)
    return {name: _check.check_function(cls) for name, cls in _check.find_functions(module)}


@pytest.fixture(scope="module")
def broken_results():
    module = _check._load(BROKEN)
    return {name: _check.check_function(cls) for name, cls in _check.find_functions(module)}


def test_finds_the_seed_functions(seed_results):
    assert list(seed_results) == ["MyReLU", "LinearFunction", "MySoftplus"]


@pytest.mark.parametrize("name", ["MyReLU", "LinearFunction"])
def test_correct_seed_functions_pass(seed_results, name):
    r = seed_results[name]
    assert not r.failed, r.details
    for c in ("forward", "gradcheck", "gradgradcheck", "needs_input_grad", "mark_dirty",
              "ctx_attributes", "extreme"):
        assert r.status[c] == "ok", (c, r.status[c], r.details[c])


def test_mysoftplus_gradient_consistent_but_overflows(seed_results):
    r = seed_results["MySoftplus"]
    assert r.status["gradcheck"] == "ok"
    assert r.status["gradgradcheck"] == "ok"
    assert r.status["extreme"] == "FAIL"
    assert any("+100 in float32" in d and "not finite" in d for d in r.details["extreme"])


def test_wrong_formula_names_the_input(broken_results):
    r = broken_results["WrongFormula"]
    assert r.status["gradcheck"] == "FAIL"
    (detail,) = r.details["gradcheck"]
    assert "input 1" in detail and "analytic" in detail and "numeric" in detail


def test_wrong_shape_names_the_index(broken_results):
    r = broken_results["WrongShape"]
    assert r.status["gradcheck"] == "FAIL"
    assert "index 1" in r.details["gradcheck"][0]
    assert "[4, 3]" in r.details["gradcheck"][0] and "[3, 4]" in r.details["gradcheck"][0]


def test_ignoring_needs_input_grad_is_caught(broken_results):
    r = broken_results["IgnoresNeedsInputGrad"]
    assert r.status["gradcheck"] == "ok" and r.status["gradgradcheck"] == "ok"
    assert r.status["needs_input_grad"] == "FAIL"
    assert any("gradient for input 1" in d for d in r.details["needs_input_grad"])
    assert any("gradient for input 0" in d for d in r.details["needs_input_grad"])


def test_ctx_attribute_misuse_gives_wrong_double_backward(broken_results):
    r = broken_results["CtxAttribute"]
    assert r.status["gradcheck"] == "ok"
    assert r.status["gradgradcheck"] == "FAIL"
    assert "input 0" in r.details["gradgradcheck"][0]
    assert r.status["ctx_attributes"] == "FAIL"
    assert "ctx.e" in r.details["ctx_attributes"][0]


def test_missing_mark_dirty_is_caught(broken_results):
    r = broken_results["DirtyWithoutMark"]
    assert r.status["mark_dirty"] == "FAIL"
    assert "input 0" in r.details["mark_dirty"][0]


def test_every_broken_function_fails(broken_results):
    assert all(r.failed for r in broken_results.values())
    assert len(broken_results) == 5


def test_ctx_attribute_on_input_only_warns(tmp_path):
    src = tmp_path / "ctx_input.py"
    src.write_text(
        "import ember as torch\n"
        "class MyReLUCtxAttr(torch.autograd.Function):\n"
        "    @staticmethod\n"
        "    def forward(ctx, input):\n"
        "        ctx.input = input\n"
        "        return input.clamp(min=0)\n"
        "    @staticmethod\n"
        "    def backward(ctx, grad_output):\n"
        "        input = ctx.input\n"
        "        grad_input = grad_output.clone()\n"
        "        grad_input[input < 0] = 0\n"
        "        return grad_input\n")
    (name, cls), = _check.find_functions(_check._load(str(src)))
    r = _check.check_function(cls)
    assert r.status["ctx_attributes"] == "warn" and not r.failed, r.details


def test_legacy_function_and_shape_hint(tmp_path):
    src = tmp_path / "legacy.py"
    src.write_text(
        "import ember\n"
        "class Square(ember.autograd.Function):\n"
        "    def forward(self, x: (2, 5)):\n"
        "        self.save_for_backward(x)\n"
        "        return x * x\n"
        "    def backward(self, grad_output):\n"
        "        x, = self.saved_tensors\n"
        "        return 2 * x * grad_output\n")
    (name, cls), = _check.find_functions(_check._load(str(src)))
    assert name == "Square"
    r = _check.check_function(cls)
    assert not r.failed, r.details


def test_cli_exit_status_and_table():
    env = dict(os.environ)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = os.path.join(root, "src") + os.pathsep + env.get("PYTHONPATH", "")
    ok = subprocess.run([sys.executable, "-m", "ember", "check", SEEDS, "--name", "MyReLU",
                         "--name", "LinearFunction"], capture_output=True, text=True, env=env,
                        cwd=root)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "MyReLU" in ok.stdout and "0 failed" in ok.stdout
    bad = subprocess.run([sys.executable, "-m", "ember", "check", BROKEN, "--name",
                          "WrongFormula"], capture_output=True, text=True, env=env, cwd=root)
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "gradient wrong for input 1" in bad.stdout
    shaped = subprocess.run([sys.executable, "-m", "ember", "check", SEEDS, "--name",
                             "LinearFunction", "--shape", "2,5", "--shape", "3,5"],
                            capture_output=True, text=True, env=env, cwd=root)
    assert shaped.returncode == 0, shaped.stdout + shaped.stderr


MULTI = '''
import ember


class SplitNoneSafe(ember.autograd.Function):
    """Two outputs, handles a None gradient (set_materialize_grads(False))."""

    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        return x * 2, x * 3

    @staticmethod
    def backward(ctx, g1, g2):
        g = None
        if g1 is not None:
            g = g1 * 2
        if g2 is not None:
            g = g2 * 3 if g is None else g + g2 * 3
        return g


class SplitNoneUnsafe(ember.autograd.Function):
    """Asks for unmaterialized gradients, then adds them as if they were tensors."""

    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        return x * 2, x * 3

    @staticmethod
    def backward(ctx, g1, g2):
        return g1 * 2 + g2 * 3


class ScaleInPlace(ember.autograd.Function):
    """Modifies its input in place, correctly marked dirty."""

    @staticmethod
    def forward(ctx, x):
        x.mul_(2)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * 2
'''


def test_materialize_grads_and_mark_dirty(tmp_path):
    src = tmp_path / "multi.py"
    src.write_text(MULTI)
    found = _check.find_functions(_check._load(str(src)))
    results = {n: _check.check_function(c) for n, c in found}
    assert not results["SplitNoneSafe"].failed, results["SplitNoneSafe"].details
    assert results["SplitNoneSafe"].status["materialize_grads"] == "ok"
    bad = results["SplitNoneUnsafe"]
    assert bad.status["materialize_grads"] == "FAIL"
    assert "None" in bad.details["materialize_grads"][0]
    dirty = results["ScaleInPlace"]
    assert dirty.status["mark_dirty"] == "ok" and not dirty.failed, dirty.details


def _check_src(tmp_path, text, **kw):
    src = tmp_path / "fn.py"
    src.write_text(text)
    found = _check._load(str(src))
    return {n: _check.check_function(c, **kw) for n, c in _check.find_functions(found)}


SCALE = '''
import ember


class Scale(ember.autograd.Function):
    @staticmethod
    def forward(ctx, x, factor):
        ctx.factor = factor
        return x * factor

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.factor, None


class Power(ember.autograd.Function):
    @staticmethod
    def forward(ctx, x, p: float):
        ctx.save_for_backward(x)
        ctx.p = p
        return x * x.abs() ** (p - 1)

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return grad_output * ctx.p * x.abs() ** (ctx.p - 1), None


class SumDim(ember.autograd.Function):
    @staticmethod
    def forward(ctx, x, dim):
        ctx.shape, ctx.dim = x.shape, dim
        return x.sum(dim)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output.unsqueeze(ctx.dim).expand(ctx.shape), None
'''


def test_non_tensor_arguments_are_numbers(tmp_path):
    r = _check_src(tmp_path, SCALE)
    for name in ("Scale", "Power", "SumDim"):
        assert not r[name].failed, (name, r[name].details)
        assert r[name].status["gradcheck"] == "ok"
    assert any("factor = 0.5" in n and "--arg factor=" in n for n in r["Scale"].notes)
    assert any("dim = 1" in n for n in r["SumDim"].notes)
    assert r["Power"].notes == []       # annotated: no guess to report
    r = _check_src(tmp_path, SCALE, values={"factor": 3.0})
    assert not r["Scale"].failed and r["Scale"].notes == []


def test_arg_and_reference_on_the_command_line(tmp_path):
    src = tmp_path / "scale.py"
    src.write_text(SCALE)
    env = dict(os.environ)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = os.path.join(root, "src") + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run([sys.executable, "-m", "ember", "check", str(src), "--name", "Scale",
                          "--arg", "factor=2.0", "--reference", "operator:mul"],
                         capture_output=True, text=True, env=env, cwd=str(tmp_path))
    assert out.returncode == 0, out.stdout + out.stderr
    assert "0 failed" in out.stdout
    bad = subprocess.run([sys.executable, "-m", "ember", "check", str(src), "--name", "Scale",
                          "--arg", "factor=2.0", "--reference", "operator:add"],
                         capture_output=True, text=True, env=env, cwd=str(tmp_path))
    assert bad.returncode == 1 and "the reference operator:add gives" in bad.stdout, bad.stdout
    # the failing inputs' values are printed, not only their index
    assert "x = tensor of shape (3, 4) float64 [" in bad.stdout, bad.stdout
    helptext = subprocess.run([sys.executable, "-m", "ember", "check", "--help"],
                              capture_output=True, text=True, env=env, cwd=str(tmp_path))
    assert "--arg NAME=VALUE" in helptext.stdout and "--reference" in helptext.stdout


def test_forward_compared_with_float64_and_reference(seed_results):
    torch = pytest.importorskip("torch")
    r = seed_results["MySoftplus"]
    assert r.status["forward"] == "FAIL"
    assert any("inf in float32 where the same forward in float64 gives 100" in d
               for d in r.details["forward"]), r.details["forward"]
    module = _check._load(SEEDS)
    cls = dict(_check.find_functions(module))["MySoftplus"]
    ref = _check.check_function(cls, reference=torch.nn.functional.softplus)
    assert any("-21.4164 in float64" in d and "x = -100" in d and "e-44" in d
               for d in ref.details["forward"]), ref.details["forward"]
    relu = dict(_check.find_functions(module))["MyReLU"]
    assert not _check.check_function(relu, reference="torch.nn.functional:relu").failed


def test_reference_attribute_on_the_class(tmp_path):
    r = _check_src(tmp_path, '''
import ember


class Sigmoidish(ember.autograd.Function):
    reference = "ember:sigmoid"

    @staticmethod
    def forward(ctx, x):
        y = 1 / (1 + (-x).exp())
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return grad_output * y * (1 - y)


class Wrong(ember.autograd.Function):
    reference = staticmethod(ember.tanh)

    @staticmethod
    def forward(ctx, x):
        return x * 1

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output
''')
    assert not r["Sigmoidish"].failed, r["Sigmoidish"].details
    assert r["Wrong"].status["forward"] == "FAIL"
    assert "the reference ember" in r["Wrong"].details["forward"][0]


def test_gradient_failure_prints_the_input_values(broken_results):
    (detail,) = broken_results["WrongFormula"].details["gradcheck"]
    assert "at that element input 1 is" in detail and "w = tensor of shape (3, 4)" in detail


def test_same_error_is_printed_once(tmp_path):
    r = _check_src(tmp_path, '''
import ember


class Boom(ember.autograd.Function):
    @staticmethod
    def forward(ctx, x, y):
        return x * y

    @staticmethod
    def backward(ctx, grad_output):
        raise RuntimeError("backward is not written yet")
''')["Boom"]
    text = _check.format_table([r])
    assert text.count("backward is not written yet") == 1, text
    assert "the same RuntimeError as above" in text
