"""ember.backends and the global switches torch programs set: present, with torch's defaults,
types and errors."""
import subprocess
import sys
import warnings

import pytest

import ember


def _torch():
    return pytest.importorskip("torch")


def test_backend_flags_have_torchs_defaults():
    torch = _torch()
    import ember.backends as eb
    for name in ("enabled", "benchmark", "deterministic", "allow_tf32"):
        assert getattr(eb.cudnn, name) == getattr(torch.backends.cudnn, name), name
    assert eb.cuda.matmul.allow_tf32 == torch.backends.cuda.matmul.allow_tf32
    assert eb.mps.is_available() is False and eb.cudnn.is_available() is False
    assert eb.cudnn.version() is None
    for sub in ("cpu", "cuda", "cudnn", "mkl", "mkldnn", "mps", "openmp", "opt_einsum"):
        assert hasattr(ember.backends, sub), sub


def test_flags_set_read_back_and_restore():
    import ember.backends as eb
    old = eb.cudnn.benchmark
    eb.cudnn.benchmark = True
    try:
        assert eb.cudnn.benchmark is True
        with eb.cudnn.flags(enabled=False, deterministic=True):
            assert eb.cudnn.enabled is False and eb.cudnn.deterministic is True
        assert eb.cudnn.enabled is True and eb.cudnn.deterministic is False
        with pytest.raises(TypeError):
            with eb.cudnn.flags(bogus=1):
                pass
    finally:
        eb.cudnn.benchmark = old


def test_matmul_precision_and_determinism_as_torch():
    torch = _torch()
    assert ember.get_float32_matmul_precision() == torch.get_float32_matmul_precision()
    ember.set_float32_matmul_precision("high")
    try:
        assert ember.get_float32_matmul_precision() == "high"
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            ember.set_float32_matmul_precision("bogus")
        assert "is not one of 'highest', 'high', or 'medium'" in str(w[0].message)
        assert ember.get_float32_matmul_precision() == "high"
    finally:
        ember.set_float32_matmul_precision("highest")
    assert ember.are_deterministic_algorithms_enabled() == \
        torch.are_deterministic_algorithms_enabled()
    ember.use_deterministic_algorithms(True, warn_only=True)
    try:
        assert ember.are_deterministic_algorithms_enabled()
        assert ember.is_deterministic_algorithms_warn_only_enabled()
    finally:
        ember.use_deterministic_algorithms(False)
    with pytest.raises(TypeError) as e:
        ember.use_deterministic_algorithms("yes")
    with pytest.raises(TypeError) as t:
        torch.use_deterministic_algorithms("yes")
    assert str(e.value) == str(t.value)


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "ember", *args], capture_output=True,
                          text=True, timeout=120)


def test_cli_rejects_unknown_options_and_prints_version():
    r = _cli("demo", "--bogus")
    assert r.returncode == 2 and "unrecognized arguments: --bogus" in r.stderr
    r = _cli("--version")
    assert r.returncode == 0 and r.stdout.strip() == "ember " + ember.version.ember


def test_check_on_a_missing_file_is_one_line():
    r = _cli("check", "/no/such/file.py")
    assert r.returncode == 2
    assert r.stdout.strip() == "ember check: no such file: /no/such/file.py"
    assert "Traceback" not in r.stderr
