"""Session 13 (H16, generative-model programs) fixes, checked against torch."""
import numpy as np

import ember


def _sn_pair(torch):
    """The same spectral-normed Linear in both libraries (weights, u, v copied from torch);
    out > in so that W^T W is invertible and the legacy ``v`` is well defined."""
    torch.manual_seed(0)
    t_mod = torch.nn.utils.spectral_norm(torch.nn.Linear(3, 4))
    e_mod = ember.nn.utils.spectral_norm(ember.nn.Linear(3, 4))
    e_mod.load_state_dict({k: ember.tensor(v.numpy()) for k, v in t_mod.state_dict().items()})
    return t_mod, e_mod


def test_spectral_norm_state_dict_metadata(torch):
    t_mod, e_mod = _sn_pair(torch)
    assert e_mod.state_dict()._metadata[""] == t_mod.state_dict()._metadata[""]
    seq_t = torch.nn.Sequential(t_mod)
    seq_e = ember.nn.Sequential(e_mod)
    assert seq_e.state_dict()._metadata["0"] == seq_t.state_dict()._metadata["0"]


def test_spectral_norm_loads_version0_state_dict(torch):
    t_mod, e_mod = _sn_pair(torch)
    t_mod(torch.ones(2, 3))
    e_mod(ember.ones(2, 3))
    # a pre-1.1 state dict: the normalised weight itself, no ``weight_v``, no version
    legacy = {k: v for k, v in t_mod.state_dict().items() if k != "weight_v"}
    legacy["weight"] = t_mod.weight.detach().clone()
    for mod, conv in ((t_mod, torch.tensor), (e_mod, ember.tensor)):
        sd = {k: conv(v.numpy()) for k, v in legacy.items()}
        mod.load_state_dict(sd)
    np.testing.assert_allclose(e_mod.weight_v.numpy(), t_mod.weight_v.numpy(), rtol=1e-4,
                               atol=1e-6)
    t_mod.eval()
    e_mod.eval()
    np.testing.assert_allclose(e_mod(ember.ones(1, 3)).detach().numpy(),
                               t_mod(torch.ones(1, 3)).detach().numpy(), rtol=1e-4, atol=1e-6)
    # missing keys are reported as torch reports them
    t_res = torch.nn.utils.spectral_norm(torch.nn.Linear(4, 3)).load_state_dict(
        {"bias": torch.zeros(3)}, strict=False)
    e_res = ember.nn.utils.spectral_norm(ember.nn.Linear(4, 3)).load_state_dict(
        {"bias": ember.zeros(3)}, strict=False)
    assert sorted(e_res.missing_keys) == sorted(t_res.missing_keys)


def _keys(lib, mod, sd, strict):
    try:
        res = mod.load_state_dict(sd, strict=strict)
        return list(res.missing_keys), list(res.unexpected_keys)
    except RuntimeError as e:
        return str(e)


def test_load_state_dict_key_order_as_torch(torch):
    """Missing/unexpected keys come module by module (pre-hooks' keys first), as in torch."""
    results = []
    for lib in (torch, ember):
        nn = lib.nn
        lib.manual_seed(0)
        m = nn.Sequential(nn.utils.spectral_norm(nn.Linear(2, 3)), nn.BatchNorm1d(3))
        sd = dict(m.state_dict())
        del sd["0.weight_v"], sd["1.running_mean"]
        sd["0.foo"] = lib.zeros(1)
        sd["2.x"] = lib.zeros(1)
        results.append([_keys(lib, m, sd, False), _keys(lib, m, sd, True)])
    assert results[1] == results[0]


def test_parametrized_weight_norm_loads_old_weight_norm(torch):
    """parametrizations.weight_norm accepts a state dict of the hook-based weight_norm."""
    import warnings
    outs = []
    for lib in (torch, ember):
        nn = lib.nn
        lib.manual_seed(0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            old = nn.utils.weight_norm(nn.Linear(3, 2))
        new = nn.utils.parametrizations.weight_norm(nn.Linear(3, 2))
        res = new.load_state_dict(old.state_dict())
        outs.append((list(res.missing_keys), list(res.unexpected_keys),
                     new(lib.ones(1, 3)).detach().numpy()))
    assert outs[1][:2] == outs[0][:2]
    np.testing.assert_allclose(outs[1][2], outs[0][2], rtol=1e-5, atol=1e-6)
