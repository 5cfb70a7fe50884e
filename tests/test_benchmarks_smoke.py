"""Smoke tests of the benchmark workloads: each runs a few steps at a tiny size in ember and in
torch from the same weights, and the losses must agree (no timing is asserted)."""
import gc
import os
import sys

import numpy as np
import pytest

import ember

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks import floors, run, workloads  # noqa: E402

_STEP_KEYS = [w.key for w in workloads.WORKLOADS if w.kind in ("step", "gemm")]


@pytest.mark.parametrize("key", _STEP_KEYS)
def test_workload_loss_matches_torch(torch, key):
    w = workloads.by_key(key)
    lacking = workloads.missing(ember, w.requires)
    if lacking:
        pytest.skip("ember lacks " + ", ".join(lacking))
    cases = run.check_case(w, {"ember": ember, "torch": torch}, tiny=True, steps=3)
    e = run._loss_value(cases["ember"].step())
    t = run._loss_value(cases["torch"].step())
    assert np.isfinite(e)
    np.testing.assert_allclose(e, t, rtol=2e-3, atol=1e-4)


def test_wrong_answer_is_reported(torch):
    """A workload whose ember loss differs from torch's raises LossMismatch."""
    def build(lib, tiny=False, init=None):
        x = lib.tensor(np.arange(4, dtype=np.float32), requires_grad=True)
        bias = 1.0 if lib is ember else 0.0

        def step():
            loss = (x * x).sum() + bias
            loss.backward()
            return loss
        return workloads.Case(step, {})
    w = workloads.Workload("WX", "wrong on purpose", "step", build)
    with pytest.raises(run.LossMismatch, match="WX: ember's loss 15 differs from torch's 14"):
        run.check_case(w, {"ember": ember, "torch": torch}, steps=1)


def test_ember_alone_runs_without_a_check():
    cases = run.check_case(workloads.by_key("W1"), {"ember": ember}, tiny=True, steps=2)
    assert set(cases) == {"ember"}
    assert np.isfinite(run._loss_value(cases["ember"].step()))


def test_missing_dependency_is_named():
    assert workloads.missing(ember, ["nn.NoSuchLayer", "no_grad"]) == ["nn.NoSuchLayer"]
    row = run.run_workload(workloads.Workload("WY", "needs a layer", "step", None,
                                              requires=("nn.NoSuchLayer",)),
                           {"ember": ember}, {})
    assert row[0]["note"] == "skipped: ember lacks nn.NoSuchLayer"


def test_memory_probe_frees_the_graph():
    """W1 in ember keeps no graph alive between steps (tracemalloc sees no growth)."""
    out = run.probe_memory("W2", "ember", steps=0, tiny=True)
    assert out["traced_peak_mib"] is not None and out["traced_peak_mib"] < 1.0
    case = workloads.by_key("W2").build(ember, tiny=True)
    case.step()
    gc.collect()
    import tracemalloc
    tracemalloc.start()
    case.step()
    gc.collect()
    first = tracemalloc.get_traced_memory()[0]
    for _ in range(30):
        case.step()
    gc.collect()
    last = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    assert last - first < 4096


def test_table_lists_every_row():
    rows = [run._row("W1", "op overhead", "us/iter", 50.0, 70.0, 50 / 70, "<= 0.8", True),
            run._row("W3", "mlp", "ms/step", note="skipped: ember lacks optim.Adam")]
    table = run.format_table(rows)
    assert table.count("\n") == 3
    assert "| W1 | op overhead | us/iter | 50 | 70 | 0.714 | - | <= 0.8 | yes |" in table
    assert "skipped: ember lacks optim.Adam" in table


@pytest.mark.parametrize("key", ["W3", "W6"])
def test_floor_products_agree(torch, key):
    """Each product the floors time has the same number of multiply-adds and output elements in
    ember's layout as in torch's (the two layouts compute the same matrices)."""
    def size(r):
        return sum(x.size for x in r) if isinstance(r, list) else r.size

    for name, count, (sa, sb, f_np), (ta, tb, f_torch) in floors.products(key):
        out_np = f_np(np.ones(sa, np.float32), np.ones(sb, np.float32))
        out_t = f_torch(torch.ones(ta), torch.ones(tb)).numpy()
        assert size(out_np) == out_t.size, name
        # every entry of a product of all-ones operands is the inner dimension
        inner = {float(x.flat[0]) for x in (out_np if isinstance(out_np, list) else [out_np])}
        assert inner == {float(out_t.flat[0])}, name
        assert count >= 1


def test_floors_table(monkeypatch, capsys):
    """``python -m benchmarks.floors`` prints a row per product and the summary of W3 and W6
    (each measurement run once here)."""
    def once(fn, rounds, target_s=0.02):
        fn()
        return 1e-3
    monkeypatch.setattr(floors, "_median_time", once)
    assert floors.main(["--rounds", "1"]) == 0
    out = capsys.readouterr().out
    assert "| W3 | x @ W1.T |" in out and "| W6 | step: gates from h (x64) |" in out
    assert "| W3 | 8.00 ms |" in out and "<= 0.8 |" in out
    assert "| W6 | 135.00 ms |" in out    # 7 products once a step, 2 at each of 64 steps
