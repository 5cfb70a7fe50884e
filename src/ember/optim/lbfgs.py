"""L-BFGS with an optional strong-Wolfe line search (torch's port of minFunc)."""
from ..autograd.grad_mode import enable_grad, no_grad
from ..backend import get_array_module
from ..ops._util import xp_of
from ..tensor import Tensor
from .optimizer import Optimizer, _as_real, _check_tensor_lr

__all__ = ["LBFGS"]


def _cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    """Minimiser of the cubic through (x1, f1, g1) and (x2, f2, g2), clipped to ``bounds``."""
    if bounds is not None:
        xmin_bound, xmax_bound = bounds
    else:
        xmin_bound, xmax_bound = (x1, x2) if x1 <= x2 else (x2, x1)
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if d2_square >= 0:
        d2 = get_array_module(d2_square).sqrt(d2_square)
        if x1 <= x2:
            min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(min_pos, xmin_bound), xmax_bound)
    return (xmin_bound + xmax_bound) / 2.0


def _strong_wolfe(obj_func, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9,
                  max_ls=25):
    """Line search along ``d`` for a step ``t`` meeting the strong Wolfe conditions.

    Returns ``(f_new, g_new, t, number_of_function_evaluations)``.
    """
    d_norm = get_array_module(d).abs(d).max()
    g = g.copy()
    f_new, g_new = obj_func(x, t, d)
    ls_func_evals = 1
    gtd_new = g_new.dot(d)
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        min_step = t + 0.01 * (t - t_prev)
        max_step = t * 10
        tmp = t
        t = _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                               bounds=(min_step, max_step))
        t_prev, f_prev, g_prev, gtd_prev = tmp, f_new, g_new.copy(), gtd_new
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
    if ls_iter == max_ls:
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]
        bracket_gtd = [gtd, gtd_new]

    # Zoom: shrink the bracket until a point meets the conditions.
    insuf_progress = False
    low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0],
                               bracket[1], bracket_f[1], bracket_gtd[1])
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insuf_progress or t >= max(bracket) or t <= min(bracket):
                if abs(t - max(bracket)) < abs(t - min(bracket)):
                    t = max(bracket) - eps
                else:
                    t = min(bracket) + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low_pos]:
            bracket[high_pos], bracket_f[high_pos] = t, f_new
            bracket_g[high_pos], bracket_gtd[high_pos] = g_new.copy(), gtd_new
            low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high_pos] - bracket[low_pos]) >= 0:
                bracket[high_pos], bracket_f[high_pos] = bracket[low_pos], bracket_f[low_pos]
                bracket_g[high_pos] = bracket_g[low_pos]
                bracket_gtd[high_pos] = bracket_gtd[low_pos]
            bracket[low_pos], bracket_f[low_pos] = t, f_new
            bracket_g[low_pos], bracket_gtd[low_pos] = g_new.copy(), gtd_new
    return bracket_f[low_pos], bracket_g[low_pos], bracket[low_pos], ls_func_evals


def _raw(value):
    """State loaded by ``load_state_dict`` holds Tensors; the algorithm works on arrays."""
    if isinstance(value, Tensor):
        return value._array if value._array.ndim else value._array[()]
    if isinstance(value, list):
        return [_raw(v) for v in value]
    return value


def _tensor(value):
    if isinstance(value, list):
        return [_tensor(v) for v in value]
    return None if value is None or isinstance(value, Tensor) else Tensor._wrap(value)


def _number(value):
    return value.item() if hasattr(value, "item") else value


class LBFGS(Optimizer):
    """L-BFGS. Matches ``torch.optim.LBFGS``; ``step`` needs a closure returning the loss.

    Each iteration::

        d = -H g            (two-loop recursion over the last history_size (s, y) pairs,
                             H0 = s.y / y.y; d = -g on the first iteration)
        t = lr              (first iteration: min(1, 1 / |g|_1) * lr; or a strong-Wolfe search)
        p = p + t * d

    It stops after ``max_iter`` iterations, ``max_eval`` evaluations, when ``max|g| <=
    tolerance_grad`` or when the step or the loss change falls below ``tolerance_change``.

    Args:
        params: parameters to optimize (one group only).
        lr: learning rate (default 1).
        max_iter: iterations per ``step`` (default 20).
        max_eval: function evaluations per ``step`` (default ``max_iter * 5 // 4``).
        tolerance_grad: termination tolerance on first-order optimality (default 1e-7).
        tolerance_change: termination tolerance on changes (default 1e-9).
        history_size: update history size (default 100).
        line_search_fn: ``'strong_wolfe'`` or None (default None).
    """

    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7,
                 tolerance_change=1e-9, history_size=100, line_search_fn=None):
        _check_tensor_lr(lr)
        if not 0.0 <= lr:
            raise ValueError("Invalid learning rate: %s" % lr)
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = dict(lr=lr, max_iter=max_iter, max_eval=max_eval,
                        tolerance_grad=tolerance_grad, tolerance_change=tolerance_change,
                        history_size=history_size, line_search_fn=line_search_fn)
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    def _gather_flat_grad(self):
        xp = xp_of(self._params[0])
        views = [xp.zeros(p._array.shape, p._array.dtype) if p._grad is None
                 else p._grad._array for p in self._params]
        # A complex tensor counts as its real view (view_as_real), as in torch.
        return xp.concatenate([(_as_real(v) if v.dtype.kind == "c" else v).reshape(-1)
                               for v in views])

    def _add_grad(self, step_size, update):
        offset = 0
        for p in self._params:
            arr = _as_real(p._array) if p._array.dtype.kind == "c" else p._array
            n = arr.size
            arr += step_size * update[offset:offset + n].reshape(arr.shape)
            p._bump()
            offset += n

    def _set_param(self, params_data):
        for p, data in zip(self._params, params_data):
            p._array[...] = data

    def _directional_evaluate(self, closure, x, t, d):
        self._add_grad(t, d)
        loss = float(closure())
        flat_grad = self._gather_flat_grad()
        self._set_param(x)
        return loss, flat_grad

    def step(self, closure):
        """Run up to ``max_iter`` L-BFGS iterations; returns the closure's first loss."""
        def evaluate():
            with enable_grad():
                return closure()

        with no_grad():
            return self._step(evaluate)

    def _step(self, closure):
        group = self.param_groups[0]
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        line_search_fn, history_size = group["line_search_fn"], group["history_size"]
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        orig_loss = closure()
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._gather_flat_grad()
        xp = get_array_module(flat_grad)
        if xp.abs(flat_grad).max() <= tolerance_grad:
            return orig_loss

        d, t = _raw(state.get("d")), _raw(state.get("t"))
        old_dirs, old_stps = _raw(state.get("old_dirs")), _raw(state.get("old_stps"))
        ro, H_diag = _raw(state.get("ro")), _raw(state.get("H_diag"))
        prev_flat_grad = _raw(state.get("prev_flat_grad"))
        prev_loss = _raw(state.get("prev_loss"))
        al = _raw(state.get("al"))
        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d = -flat_grad
                old_dirs, old_stps, ro = [], [], []
                H_diag = 1
            else:
                y = flat_grad - prev_flat_grad
                s = d * t
                ys = y.dot(s)
                if ys > 1e-10:
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    H_diag = ys / y.dot(y)
                num_old = len(old_dirs)
                if al is None:
                    al = [None] * history_size
                q = -flat_grad
                for i in range(num_old - 1, -1, -1):
                    al[i] = old_stps[i].dot(q) * ro[i]
                    q += -al[i] * old_dirs[i]
                d = r = q * H_diag
                for i in range(num_old):
                    be_i = old_dirs[i].dot(r) * ro[i]
                    r += (al[i] - be_i) * old_stps[i]
            if prev_flat_grad is None:
                prev_flat_grad = flat_grad.copy()
            else:
                prev_flat_grad[...] = flat_grad
            prev_loss = loss
            if state["n_iter"] == 1:
                t = min(1.0, 1.0 / xp.abs(flat_grad).sum()) * lr
            else:
                t = lr
            gtd = flat_grad.dot(d)
            if gtd > -tolerance_change:
                break

            ls_func_evals = 0
            if line_search_fn is not None:
                if line_search_fn != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                x_init = [p._array.copy() for p in self._params]

                def obj_func(x, t, d):
                    return self._directional_evaluate(closure, x, t, d)

                loss, flat_grad, t, ls_func_evals = _strong_wolfe(
                    obj_func, x_init, t, d, loss, flat_grad, gtd, max_ls=max_eval - current_evals)
                self._add_grad(t, d)
                opt_cond = xp.abs(flat_grad).max() <= tolerance_grad
            else:
                self._add_grad(t, d)
                opt_cond = False
                if n_iter != max_iter:
                    loss = float(closure())
                    flat_grad = self._gather_flat_grad()
                    opt_cond = xp.abs(flat_grad).max() <= tolerance_grad
                    ls_func_evals = 1
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals
            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if xp.abs(d * t).max() <= tolerance_change:
                break
            if abs(loss - prev_loss) < tolerance_change:
                break

        # kept as torch keeps them: arrays as Tensors, step size and loss as Python numbers
        if al is not None:
            state["al"] = _tensor(al)
        state.update(d=_tensor(d), t=_number(t), old_dirs=_tensor(old_dirs),
                     old_stps=_tensor(old_stps), ro=_tensor(ro), H_diag=_tensor(H_diag),
                     prev_flat_grad=_tensor(prev_flat_grad), prev_loss=_number(prev_loss))
        return orig_loss
