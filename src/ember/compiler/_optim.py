"""``ember.compile(optimizer.step)``: SGD and Adam(W) updates as a few passes over flat buffers.

Per parameter group, the gradients are gathered into one flat array, the optimizer's state
(momentum buffers; Adam's moments) lives in flat arrays that the state tensors view, and the
update is computed in one pass per operation over all parameters, then added to each parameter.
The per-element operations are eager's (``ember/optim/sgd.py``, the cache-blocked loop of
``ember/optim/adam.py``) in the same order, so the numbers are bit-for-bit eager's. Anything
else (other optimizers, amsgrad, hooks, mixed dtypes or devices, a first step that creates the
state) runs the optimizer's own step.
"""
from ..backend import get_array_module
from ..optim.adam import Adam
from ..optim.optimizer import _lerp_, _scalar_state, _zeros_like
from ..optim.sgd import SGD

__all__ = ["CompiledStep"]

_SUPPORTED = {SGD._update: "sgd", Adam._update: "adam"}

# NOTE: parameters above this many elements keep eager's per-parameter update: their passes
# are memory-bound, and gathering them into flat buffers costs more than it saves (W3 in
# benchmarks/compiled.py: 1.6x slower fused); the fused passes win on many small tensors.
_FUSE_MAX = 32768


class _Plan:
    """Flat buffers of one parameter group (valid while its parameters and state hold)."""

    def __init__(self, kind, params, states, names):
        self.kind = kind
        self.params = params
        arrays = [p._array for p in params]
        xp = self.xp = get_array_module(arrays[0])
        self.shapes = [a.shape for a in arrays]
        self.sizes = [a.size for a in arrays]
        self.offsets = []
        n = 0
        for s in self.sizes:
            self.offsets.append(n)
            n += s
        d = arrays[0].dtype
        self.G = xp.empty(n, d)
        self.T1 = xp.empty(n, d)
        self.T2 = xp.empty(n, d) if kind == "adam" else None
        # the state buffers, flat; the state tensors become views of them
        self.flat = {}
        self.views = []
        for name in names:
            flat = xp.concatenate([st[name]._array.reshape(-1) for st in states])
            self.flat[name] = flat
            for st, view in zip(states, self._split(flat)):
                st[name]._array = view
                self.views.append((st, name, view))
        self.steps = [st["step"] for st in states] if kind == "adam" else None

    def _split(self, flat):
        return [flat[o:o + s].reshape(shape)
                for o, s, shape in zip(self.offsets, self.sizes, self.shapes)]

    def holds(self, params, states):
        if params != self.params:
            return False
        for st, name, view in self.views:
            t = st.get(name)
            if t is None or t._array is not view:
                return False
        for p, shape in zip(params, self.shapes):
            a = p._array
            if a.shape != shape or not a.flags.c_contiguous or p._grad._array.dtype != a.dtype:
                return False
        return True

    def gather(self, maximize, wd):
        xp = self.xp
        G = xp.concatenate([p._grad._array.reshape(-1) for p in self.params], out=self.G)
        if maximize:
            G = -G
        if wd:
            G = G + wd * xp.concatenate([p._array.reshape(-1) for p in self.params])
        return G

    def sgd(self, group):
        G = self.gather(group["maximize"], group["weight_decay"])
        momentum = group["momentum"]
        if momentum != 0:
            b = self.flat["momentum_buffer"]
            b *= momentum
            b += (1 - group["dampening"]) * G
            G = G + momentum * b if group["nesterov"] else b
        U = self.xp.multiply(group["lr"], G, out=self.T1)
        for p, u in zip(self.params, self._split(U)):
            p._array -= u
            p._bump()

    def adam(self, group, decoupled):
        xp = self.xp
        lr, wd, eps = group["lr"], group["weight_decay"], group["eps"]
        beta1, beta2 = group["betas"]
        for t in self.steps:
            t._array += 1
        step = float(self.steps[0]._array)
        G = self.gather(group["maximize"], 0 if decoupled else wd)
        if wd != 0 and decoupled:
            for p in self.params:
                p._array *= 1 - lr * wd
        step_size = lr / (1 - beta1 ** step)
        bias_correction2_sqrt = (1 - beta2 ** step) ** 0.5
        w1, w2 = 1 - beta1, 1 - beta2
        eps_bc2, scale = eps * bias_correction2_sqrt, -step_size * bias_correction2_sqrt
        M, V, T1, T2 = self.flat["exp_avg"], self.flat["exp_avg_sq"], self.T1, self.T2
        _lerp_(M, G, w1, T1)
        V *= beta2
        xp.multiply(G, w2, out=T1)
        T1 *= G
        V += T1
        xp.sqrt(V, out=T2)
        T2 += eps_bc2
        xp.divide(M, T2, out=T1)
        T1 *= scale
        for p, u in zip(self.params, self._split(T1)):
            p._array += u
            p._bump()


class CompiledStep:
    """What ``ember.compile(optimizer.step)`` returns: ``step(closure=None)``."""

    def __init__(self, opt):
        self.opt = opt
        self.plans = {}
        self.work = {}          # (array type, shape, dtype) -> a work array (``_sgd_one``)
        self.__wrapped__ = opt.step
        self.__name__ = "step"

    def __call__(self, closure=None):
        opt = self.opt
        kind = _SUPPORTED.get(getattr(type(opt)._update, "__func__", type(opt)._update))
        if kind is None or opt._optimizer_step_pre_hooks or opt._optimizer_step_post_hooks:
            return opt.step(closure)
        loss = opt._run_closure(closure)
        for i, group in enumerate(opt.param_groups):
            params = []
            rest = []
            for p in group["params"]:
                if p._grad is not None:
                    (params if p._array.size <= _FUSE_MAX else rest).append(p)
            plan = self._plan(i, kind, group, params) if len(params) > 1 else None
            if plan is None:
                rest = params + rest
            for p in rest:
                if kind != "sgd" or not self._sgd_one(p, group, opt.state[p]):
                    opt._update(p, group, opt.state[p])
                p._bump()
            if plan is None:
                continue
            if kind == "sgd":
                plan.sgd(group)
            else:
                plan.adam(group, group["decoupled_weight_decay"])
        return loss

    def _sgd_one(self, p, group, state):
        """SGD with momentum on one (large) parameter, into a work array kept across steps:
        eager's passes (``ember/optim/sgd.py``) without its two temporaries, and ``(1 -
        dampening) * g`` as ``g`` when dampening is 0 (the same numbers). False where eager's
        update must run (weight decay, maximize, nesterov, the first step...)."""
        buf = state.get("momentum_buffer")
        momentum = group["momentum"]
        if buf is None or momentum == 0 or group["weight_decay"] != 0 or group["maximize"] \
                or group["nesterov"]:
            return False
        a, g, b = p._array, p._grad._array, buf._array
        if not (type(a) is type(g) is type(b)) or not a.dtype == g.dtype == b.dtype or \
                not a.shape == g.shape == b.shape:
            return False
        xp = get_array_module(a)
        key = (type(a), a.shape, a.dtype)
        work = self.work.get(key)
        if work is None:
            work = self.work[key] = xp.empty(a.shape, a.dtype)
        b *= momentum
        dampening = group["dampening"]
        if dampening == 0:
            b += g
        else:
            xp.multiply(1 - dampening, g, out=work)
            b += work
        xp.multiply(group["lr"], b, out=work)
        a -= work
        return True

    def _plan(self, i, kind, group, params):
        states = [self.opt.state[p] for p in params]
        plan = self.plans.get(i)
        if plan is not None and plan.holds(params, states):
            return plan
        self.plans.pop(i, None)
        arrays = [p._array for p in params]
        a0 = arrays[0]
        if any(type(a) is not type(a0) or a.dtype != a0.dtype or not a.flags.c_contiguous or
               p._grad._array.dtype != a0.dtype for p, a in zip(params, arrays)):
            return None
        if kind == "adam" and type(a0).__module__ != "numpy":
            return None     # (eager's Adam runs its cache-blocked formula on NumPy arrays only)
        if kind == "sgd":
            names = ("momentum_buffer",) if group["momentum"] != 0 else ()
            if names and any(st.get("momentum_buffer") is None for st in states):
                return None     # (the first step makes the buffers: eager)
        else:
            if group["amsgrad"]:
                return None
            for p, st in zip(params, states):
                if not st:
                    st["step"] = _scalar_state()
                    st["exp_avg"] = _zeros_like(p)
                    st["exp_avg_sq"] = _zeros_like(p)
            steps = set(float(st["step"]._array) for st in states)
            if len(steps) != 1:
                return None
            names = ("exp_avg", "exp_avg_sq")
        if any(st[name]._array.dtype != a0.dtype or st[name]._array.shape != a.shape
               for st, a in zip(states, arrays) for name in names):
            return None
        plan = self.plans[i] = _Plan(kind, params, states, names)
        return plan
