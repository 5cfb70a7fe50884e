"""Session 13, helper H15 (theme robust): torch.autograd.functional's argument errors, compared
with torch itself."""
import pytest

import ember
import ember.autograd.functional as EAF


def _errors(fn_torch, fn_ember):
    with pytest.raises(Exception) as et:
        fn_torch()
    with pytest.raises(Exception) as ee:
        fn_ember()
    assert type(ee.value) is type(et.value)
    assert str(ee.value) == str(et.value)


CASES = [
    ("jacobian int input", lambda AF, T: AF.jacobian(lambda a: a, 3)),
    ("jacobian int output", lambda AF, T: AF.jacobian(lambda a: 3, T.ones(3))),
    ("jacobian list input", lambda AF, T: AF.jacobian(lambda a: a * 2, [T.ones(3)])),
    ("vjp list v", lambda AF, T: AF.vjp(lambda a: a * 2, T.ones(3), [T.ones(3)])),
    ("vjp tuple with int", lambda AF, T: AF.vjp(lambda a, b: a * b, (T.ones(3), 2))),
    ("hvp v size", lambda AF, T: AF.hvp(lambda a: (a * a).sum(), T.ones(3), T.ones(2))),
    ("vjp tuple v size", lambda AF, T: AF.vjp(lambda a, b: (a * 2, b), (T.ones(3), T.ones(3)),
                                              (T.ones(3), T.ones(2)))),
    ("hessian strict linear", lambda AF, T: AF.hessian(lambda a: a.sum(), T.ones(3), strict=True)),
    ("hessian strict quadratic", lambda AF, T: AF.hessian(lambda a: (a * a).sum(), T.ones(3),
                                                          strict=True, create_graph=True)),
    ("jacobian strict create_graph", lambda AF, T: AF.jacobian(lambda a: a * 2, T.ones(3),
                                                               strict=True, create_graph=True)),
    ("vjp strict create_graph", lambda AF, T: AF.vjp(lambda a: a * 2, T.ones(3), T.ones(3),
                                                     strict=True, create_graph=True)),
    ("jvp strict create_graph", lambda AF, T: AF.jvp(lambda a: a * 2, T.ones(3), T.ones(3),
                                                     strict=True, create_graph=True)),
    ("vhp strict create_graph", lambda AF, T: AF.vhp(lambda a: (a * a).sum(), T.ones(3), T.ones(3),
                                                     strict=True, create_graph=True)),
    ("hvp strict create_graph", lambda AF, T: AF.hvp(lambda a: (a * a).sum(), T.ones(3), T.ones(3),
                                                     strict=True, create_graph=True)),
    ("jvp v None", lambda AF, T: AF.jvp(lambda a: a * 2, T.ones(3))),
    ("hvp v None", lambda AF, T: AF.hvp(lambda a: (a * a).sum(), T.ones(3))),
    ("jvp v tuple length", lambda AF, T: AF.jvp(lambda a, b: a * b, (T.ones(3), T.ones(3)),
                                                (T.ones(3),))),
    ("forward-mode strict", lambda AF, T: AF.jacobian(lambda a: a * 2, T.ones(3), strict=True,
                                                      vectorize=True, strategy="forward-mode")),
    ("forward-mode create_graph", lambda AF, T: AF.jacobian(lambda a: a * 2, T.ones(3),
                                                            create_graph=True, vectorize=True,
                                                            strategy="forward-mode")),
]


@pytest.mark.parametrize("name,call", CASES, ids=[c[0] for c in CASES])
def test_functional_errors_match_torch(torch, name, call):
    import torch.autograd.functional as TAF
    _errors(lambda: call(TAF, torch), lambda: call(EAF, ember))


def test_functional_tuple_inputs_still_work(torch):
    import torch.autograd.functional as TAF
    for AF, T in ((TAF, torch), (EAF, ember)):
        a, b = T.tensor([1.0, 2.0]), T.tensor([3.0, -1.0])
        res = AF.jacobian(lambda x, y: (x * y).sum(), (a, b))
        out = [r.tolist() for r in res]
        if T is torch:
            expected = out
    assert out == expected


def test_strict_create_graph_allows_dependent_results(torch):
    import torch.autograd.functional as TAF
    for AF, T in ((TAF, torch), (EAF, ember)):
        x = T.tensor([1.0, 2.0])
        h = AF.hessian(lambda a: (a ** 3).sum(), x, strict=True, create_graph=True)
        j = AF.jacobian(lambda a: a * a, x, strict=True, create_graph=True)
        _, hv = AF.hvp(lambda a: (a ** 3).sum(), x, T.ones(2), strict=True, create_graph=True)
        got = (h.tolist(), h.requires_grad, j.tolist(), j.requires_grad, hv.tolist(),
               hv.requires_grad)
        if T is torch:
            expected = got
    assert got == expected
