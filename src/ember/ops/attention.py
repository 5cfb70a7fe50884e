"""The fused CPU attention behind ``nn.functional.scaled_dot_product_attention``."""
from ..autograd.function import Function, once_differentiable
from ..backend import errstate
from ..tensor import Tensor
from ._util import xp_of
from .conversion import like_strides, restrided

__all__ = []


def _scores(xp, q, k, mask, causal, scale):
    """``q k^T * scale + mask``, with ``-inf`` above the diagonal when ``causal``."""
    s = xp.matmul(q, xp.swapaxes(k, -1, -2)) * q.dtype.type(scale)
    if mask is not None:
        s = s + mask.astype(s.dtype, copy=False)
    if causal:
        lq, lk = s.shape[-2:]
        s = xp.where(xp.tril(xp.ones((lq, lk), dtype=bool)), s, -xp.inf)
    return s


def _probabilities(xp, s):
    """Softmax of the scores ``s`` over the keys, as (unnormalised ``exp``, row sums, log-sum-exp
    per row); a row masked throughout gives 0 (and a log-sum-exp of 0, as torch's kernel)."""
    m = s.max(-1, keepdims=True) if s.shape[-1] else s.sum(-1, keepdims=True)
    dead = m == -xp.inf
    with errstate(invalid="ignore", over="ignore", divide="ignore"):
        e = xp.where(dead, 0, xp.exp(s - xp.where(dead, 0, m)))
        total = xp.where(dead, 1, e.sum(-1, keepdims=True))
        lse = xp.where(dead, 0, m + xp.log(total))
    return e, total, lse[..., 0]


def _repeat_heads(xp, arr, heads):
    """Key/value heads repeated to the query's head count (``repeat_interleave`` on dim 1)."""
    return arr if arr.shape[1] == heads else xp.repeat(arr, heads // arr.shape[1], axis=1)


def _sum_heads(grad, heads):
    """The gradient of ``_repeat_heads``: the repeated heads' gradients summed per group."""
    b, h = grad.shape[:2]
    if h == heads:
        return grad
    return grad.reshape((b, heads, h // heads) + grad.shape[2:]).sum(2)


class FlashAttentionCpu(Function):
    """``softmax(q k^T * scale + mask) v`` over 4-D ``(B, H, L, E)`` in one node (torch's CPU
    flash kernel); ``mask`` is a raw float array (no gradient) or None. ``key``/``value`` may
    have fewer heads than ``query`` (grouped-query attention: query head ``i`` reads key head
    ``i // (H // H_kv)``)."""

    node_name = "ScaledDotProductFlashAttentionForCpuBackward0"
    edge_args = (0, 1, 2)

    @staticmethod
    def forward(ctx, query, key, value, mask, causal, scale, given_scale=None):
        xp = xp_of(query)
        k, v = _repeat_heads(xp, key._array, query.shape[1]), \
            _repeat_heads(xp, value._array, query.shape[1])
        dt = query._array.dtype
        q = query._array
        if dt.itemsize == 2:
            # NOTE: as torch's kernel, half/bfloat16 work in float32 but the unnormalised
            # exps are rounded to the input dtype before they meet ``value``
            q, k, v = (a.astype("float32") for a in (q, k, v))
        e, total, lse = _probabilities(xp, _scores(xp, q, k, mask, causal, scale))
        ctx.scale, ctx.causal = scale, causal
        ctx.given_scale, ctx.dropout_p = given_scale, 0.0    # (torch's _saved_scale: the user's)
        if dt.itemsize == 2:
            e = e.astype(dt).astype(e.dtype)
        out = (xp.matmul(e, v) / total).astype(dt, copy=False)
        # NOTE: laid out as torch's kernel lays it (empty_like(query): a (B, L, H, E) query
        # seen as (B, H, L, E) gives that memory order, so a later reshape is a view)
        st = like_strides(query._array)
        output = Tensor._wrap(out if st is None else restrided(out, st))
        # torch's saved state, in its order: attn_mask, key, query, value, logsumexp, output
        ctx.save_for_backward(None if mask is None else Tensor._wrap(mask), key, query, value,
                              Tensor._wrap(lse), output)
        return output

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        mask, key, query, value, lse, _ = ctx.saved_tensors
        xp = xp_of(query)
        h = query.shape[1]
        q, lse = query._array, lse._array
        k, v = _repeat_heads(xp, key._array, h), _repeat_heads(xp, value._array, h)
        dt = q.dtype
        q, k, v = (a.astype(lse.dtype, copy=False) for a in (q, k, v))
        s = _scores(xp, q, k, None if mask is None else mask._array, ctx.causal, ctx.scale)
        with errstate(invalid="ignore", over="ignore"):
            p = xp.exp(s - lse[..., None])
        g = grad_output._array.astype(q.dtype, copy=False)
        dv = xp.matmul(xp.swapaxes(p, -1, -2), g)
        dp = xp.matmul(g, xp.swapaxes(v, -1, -2))
        ds = p * (dp - (dp * p).sum(-1, keepdims=True)) * q.dtype.type(ctx.scale)
        dq = xp.matmul(ds, k)
        dk = _sum_heads(xp.matmul(xp.swapaxes(ds, -1, -2), q), key.shape[1])
        dv = _sum_heads(dv, value.shape[1])
        return (Tensor._wrap(dq.astype(dt, copy=False)),
                Tensor._wrap(dk.astype(dt, copy=False)),
                Tensor._wrap(dv.astype(dt, copy=False)), None, None, None, None)
