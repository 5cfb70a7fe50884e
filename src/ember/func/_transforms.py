"""grad, grad_and_value, vjp, jacrev, jacfwd, hessian, jvp, linearize (torch.func).

Each transform runs ``func`` on new graph roots that require grad and differentiates with
ember's engine. Results stay differentiable exactly when their graph reaches a tensor that
requires grad outside the transform (an input or a closed-over tensor that requires grad, or
the roots of an enclosing transform); otherwise they are detached, as torch.func returns them
at the outermost level.
"""
import functools

from ..autograd import forward_ad as _fwd
from ..autograd.engine import grad as _autograd_grad
from ._checks import under_transform
from ..backend import get_array_module
from ..autograd.grad_mode import enable_grad, is_grad_enabled
from ..ops.shape import expand, stack, unsqueeze
from ..tensor import Tensor
from . import _batching as _b
from ._pytree import tree_flatten, tree_unflatten
from ._rng import _check_randomness, _rng_guard

_depends_outside = _fwd.depends_outside
_zeros = _fwd.zeros_like


def _check_argnums(argnums, n):
    if isinstance(argnums, int):
        nums = (argnums,)
    elif isinstance(argnums, tuple):
        if not argnums:
            raise RuntimeError("argnums must be non-empty")
        if not all(isinstance(a, int) for a in argnums):
            raise RuntimeError("argnums must be int or Tuple[int, ...], got: %s"
                               % (tuple(type(a) for a in argnums),))
        if len(set(argnums)) != len(argnums):
            raise RuntimeError("argnums elements must be unique, got %s" % (argnums,))
        nums = argnums
    else:
        raise RuntimeError("argnums must be int or Tuple[int, ...], got: %s" % type(argnums))
    for a in nums:
        if not -n <= a < n:
            raise RuntimeError("Got argnum=%d, but only %d positional inputs" % (a, n))
    return tuple(a % n for a in nums)


def _roots(args, argnums, require_float):
    """Replace the pytrees at ``argnums`` by new graph roots; return the new args, the roots
    (flat), their specs and the ids of the roots made here."""
    args = list(args)
    flats, specs, own = [], [], set()
    for a in argnums:
        leaves, spec = tree_flatten(args[a])
        new = []
        for leaf in leaves:
            if not isinstance(leaf, Tensor):
                raise ValueError("Thing passed to transform API must be Tensor, got %s"
                                 % type(leaf))
            if require_float:
                _fwd._check_float(leaf, "primal")
            elif not (leaf.dtype.is_floating_point or leaf.dtype.is_complex):
                raise RuntimeError("only Tensors of floating point dtype can require gradients")
            r = _fwd._root(leaf)
            if r.grad_fn is None:
                own.add(id(r))
            new.append(r)
        args[a] = tree_unflatten(new, spec)
        flats.append(new)
        specs.append(spec)
    return args, flats, specs, own


def _finish(t, own, keep):
    """``t`` detached unless it must stay differentiable for an enclosing computation."""
    if not isinstance(t, Tensor) or not t.requires_grad:
        return t
    if keep and _depends_outside([t], own):
        return t
    return t.detach()


def _finish_tree(tree, own, keep):
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([_finish(t, own, keep) for t in leaves], spec)


def _split_aux(out, has_aux, api):
    if not has_aux:
        return out, None
    if not (isinstance(out, tuple) and len(out) == 2):
        raise RuntimeError("%s: output of function f should be a tuple: (output, aux) if "
                           "has_aux is True" % api)
    return out


def grad_and_value(func, argnums=0, has_aux=False):
    """Like :func:`grad`, returning ``(gradient, value)`` (``(gradient, (value, aux))`` with
    ``has_aux``), as ``torch.func.grad_and_value``."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        outer = is_grad_enabled()
        nums = _check_argnums(argnums, len(args))
        level, size = _b.current()
        if level:
            return _batched_grad_and_value(func, argnums, has_aux, args, kwargs, nums, level,
                                           size, outer)
        with enable_grad():
            new_args, flats, specs, own = _roots(args, nums, False)
            with under_transform("grad"):
                out = func(*new_args, **kwargs)
            api = "grad_and_value(f)(*args)"
            out, aux = _split_aux(out, has_aux, api)
            if not isinstance(out, Tensor):
                raise RuntimeError("%s: Expected f(*args) to return a Tensor, got %s"
                                   % (api, type(out)))
            if out.dim() != 0:
                raise RuntimeError("%s: Expected f(*args) to return a scalar Tensor, got tensor "
                                   "with %d dims. Maybe you wanted to use the vjp or jacrev APIs "
                                   "instead?" % (api, out.dim()))
            inputs = [r for flat in flats for r in flat]
            keep = outer and _depends_outside([out], own)
            if out.requires_grad:
                grads = _autograd_grad(out, inputs, create_graph=keep, allow_unused=True)
            else:
                grads = (None,) * len(inputs)
        grads = [_zeros(r) if g is None else _finish(g, own, keep)
                 for g, r in zip(grads, inputs)]
        trees, k = [], 0
        for flat, spec in zip(flats, specs):
            trees.append(tree_unflatten(grads[k:k + len(flat)], spec))
            k += len(flat)
        g = trees[0] if isinstance(argnums, int) else tuple(trees)
        value = _finish(out, own, outer)
        if has_aux:
            return g, (value, _finish_tree(aux, own, outer))
        return g, value
    return wrapper


def _batched_grad_and_value(func, argnums, has_aux, args, kwargs, nums, level, size, outer):
    """grad_and_value inside a batched vmap: per-sample gradients from ONE backward.

    Each argument differentiated is given a physical root with one copy per sample (the batch
    first); sample ``b``'s output depends only on copy ``b``, so the gradient of the sum of the
    outputs with respect to the roots holds every sample's gradient.
    """
    api = "grad_and_value(f)(*args)"
    args = list(args)
    flats, specs, own, roots = [], [], set(), []
    with enable_grad():
        for a in nums:
            leaves, spec = tree_flatten(args[a])
            new = []
            for leaf in leaves:
                if not isinstance(leaf, Tensor):
                    raise ValueError("Thing passed to transform API must be Tensor, got %s"
                                     % type(leaf))
                if not (leaf.dtype.is_floating_point or leaf.dtype.is_complex):
                    raise RuntimeError("only Tensors of floating point dtype can require "
                                       "gradients")
                if _b._is(leaf, level):
                    phys = _b._at0(leaf)
                elif type(leaf) is _b.BatchedTensor:
                    raise _b.Escape()
                else:
                    phys = expand(unsqueeze(leaf, 0), (size,) + tuple(leaf.shape))
                r = _fwd._root(phys)
                if r.grad_fn is None:
                    own.add(id(r))
                roots.append(r)
                new.append(_b.make(r, 0, level))
            args[a] = tree_unflatten(new, spec)
            flats.append(new)
            specs.append(spec)
        with under_transform("grad"):
            out = func(*args, **kwargs)
        out, aux = _split_aux(out, has_aux, api)
        if not isinstance(out, Tensor):
            raise RuntimeError("%s: Expected f(*args) to return a Tensor, got %s"
                               % (api, type(out)))
        if out.dim() != 0:
            raise RuntimeError("%s: Expected f(*args) to return a scalar Tensor, got tensor "
                               "with %d dims. Maybe you wanted to use the vjp or jacrev APIs "
                               "instead?" % (api, out.dim()))
        if _b._is(out, level):
            phys_out = _b._at0(out)
        elif type(out) is _b.BatchedTensor or type(out._array) is _b._Sample:
            raise _b.Escape()
        else:
            phys_out = out      # (does not depend on the batched inputs)
        keep = outer and _depends_outside([phys_out], own)
        if phys_out.requires_grad:
            grads = _autograd_grad(phys_out.sum(), roots, create_graph=keep, allow_unused=True)
        else:
            grads = (None,) * len(roots)
    grads = [_b.make(_zeros(r) if g is None else _finish(g, own, keep), 0, level)
             for g, r in zip(grads, roots)]
    trees, k = [], 0
    for flat, spec in zip(flats, specs):
        trees.append(tree_unflatten(grads[k:k + len(flat)], spec))
        k += len(flat)
    g = trees[0] if isinstance(argnums, int) else tuple(trees)

    def finish(t):
        if _b._is(t, level):
            return _b.make(_finish(t._phys, own, outer), t._bdim, level)
        if type(t) is _b.BatchedTensor:
            raise _b.Escape()
        return _finish(t, own, outer)
    value = finish(out)
    if has_aux:
        leaves, spec = tree_flatten(aux)
        return g, (value, tree_unflatten([finish(t) for t in leaves], spec))
    return g, value


def grad(func, argnums=0, has_aux=False):
    """The gradient of the scalar function ``func`` with respect to the arguments ``argnums``,
    as ``torch.func.grad``; with ``has_aux``, ``func`` returns ``(output, aux)`` and the
    transformed function returns ``(gradient, aux)``.

    Example:
        >>> import ember
        >>> from ember.func import grad
        >>> grad(lambda x: (x ** 3).sum())(ember.tensor([1.0, 2.0]))
        tensor([ 3., 12.])
        >>> grad(grad(lambda x: x ** 3))(ember.tensor(2.0))
        tensor(12.)
    """
    gv = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        g, value = gv(*args, **kwargs)
        if has_aux:
            return g, value[1]
        return g
    return wrapper


def _check_outputs(out, api):
    leaves, spec = tree_flatten(out)
    for leaf in leaves:
        if not isinstance(leaf, Tensor):
            raise RuntimeError("%s: expected f(*primals) to return only tensors, got "
                               "unsupported type %s" % (api, type(leaf)))
    return leaves, spec


def vjp(func, *primals, has_aux=False):
    """``(output, vjp_fn)`` (and ``aux`` with ``has_aux``), as ``torch.func.vjp``:
    ``vjp_fn(cotangents)`` returns the vector-Jacobian products, a tuple with one entry per
    primal; it may be called many times.

    Example:
        >>> import ember
        >>> from ember.func import vjp
        >>> out, vjp_fn = vjp(lambda x: x ** 2, ember.tensor([1.0, 2.0]))
        >>> vjp_fn(ember.tensor([1.0, 1.0]))
        (tensor([2., 4.]),)
    """
    api = "vjp(f, *primals)"
    outer = is_grad_enabled()
    with enable_grad():
        new_args, flats, specs, own = _roots(primals, tuple(range(len(primals))), False)
        with under_transform("grad"):
            out = func(*new_args)
        out, aux = _split_aux(out, has_aux, api)
        leaves, out_spec = _check_outputs(out, api)
        if not leaves:
            raise RuntimeError("%s: Expected f to be a function that has non-empty output (got "
                               "output = %s)" % (api, leaves))
    inputs = [r for flat in flats for r in flat]
    keep = outer and _depends_outside(leaves, own)

    def vjp_fn(cotangents, *, retain_graph=True, create_graph=None):
        ct_leaves, ct_spec = tree_flatten(cotangents)
        if ct_spec != out_spec:
            raise RuntimeError("Expected pytree structure of cotangents to be the same as pytree "
                               "structure of outputs to the function. cotangents: %s, primal "
                               "output: %s" % (_pprint(ct_spec), _pprint(out_spec)))
        for i, (c, o) in enumerate(zip(ct_leaves, leaves)):
            if tuple(c.shape) != tuple(o.shape):
                raise RuntimeError("Mismatch in shape: grad_output[%d] has a shape of %s and "
                                   "output[%d] has a shape of %s."
                                   % (i, _size(c.shape), i, _size(o.shape)))
        pairs = [(o, c if c.dtype == o.dtype else c.to(o.dtype))
                 for o, c in zip(leaves, ct_leaves) if o.requires_grad]
        cg = create_graph
        if cg is None:
            cg = (keep or any(c.requires_grad for _, c in pairs)) and is_grad_enabled()
        with enable_grad():
            if pairs:
                grads = _autograd_grad([o for o, _ in pairs], inputs, [c for _, c in pairs],
                                       retain_graph=retain_graph, create_graph=cg,
                                       allow_unused=True)
            else:
                grads = (None,) * len(inputs)
        extra = own | {id(c) for _, c in pairs if c.grad_fn is None and not cg}
        grads = [_zeros(r) if g is None else _finish(g, extra, cg)
                 for g, r in zip(grads, inputs)]
        res, k = [], 0
        for flat, spec in zip(flats, specs):
            res.append(tree_unflatten(grads[k:k + len(flat)], spec))
            k += len(flat)
        return tuple(res)

    out = _finish_tree(out, own, keep)
    if has_aux:
        return out, vjp_fn, _finish_tree(aux, own, outer)
    return out, vjp_fn


def _size(shape):
    return "torch.Size([%s])" % ", ".join(str(s) for s in shape)


def _pprint(spec):
    """torch's ``treespec_pprint``: a pytree with ``*`` for each leaf."""
    if spec.type is None:
        return "*"
    kids = [_pprint(c) for c in spec.children]
    if spec.type is tuple:
        return "(%s)" % (kids[0] + "," if len(kids) == 1 else ", ".join(kids))
    if spec.type is list:
        return "[%s]" % ", ".join(kids)
    if issubclass(spec.type, dict):
        return "{%s}" % ", ".join("%r: %s" % (k, c) for k, c in zip(spec.context, kids))
    return "%s(%s)" % (spec.type.__name__, ", ".join(kids))


def _jac_tree(out_leaves, out_spec, per_out, argnums, specs):
    """Assemble the jacobian pytree: the outputs' structure, each leaf the argnums structure."""
    result = []
    for jacs in per_out:
        trees, k = [], 0
        for spec in specs:
            n = spec.num_leaves()
            trees.append(tree_unflatten(jacs[k:k + n], spec))
            k += n
        result.append(trees[0] if isinstance(argnums, int) else tuple(trees))
    return tree_unflatten(result, out_spec)


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """The Jacobian of ``func`` by reverse mode (one vector-Jacobian product per output
    element), as ``torch.func.jacrev``: each entry has shape ``output.shape + input.shape``.

    ``chunk_size`` is accepted (the products are computed one at a time).

    Example:
        >>> import ember
        >>> from ember.func import jacrev
        >>> jacrev(lambda x: x ** 2)(ember.tensor([1.0, 2.0]))
        tensor([[2., 0.],
                [0., 4.]])
    """
    if chunk_size is not None and chunk_size <= 0:
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    @functools.wraps(func)
    def wrapper(*args):
        nums = _check_argnums(argnums, len(args))

        def f(*prim):
            full = list(args)
            for a, p in zip(nums, prim):
                full[a] = p
            return func(*full)

        res = vjp(f, *[args[a] for a in nums], has_aux=has_aux)
        out, vjp_fn = res[0], res[1]
        out_leaves, out_spec = tree_flatten(out)
        in_specs = [tree_flatten(args[a])[1] for a in nums]
        in_leaves = [leaf for a in nums for leaf in tree_flatten(args[a])[0]]
        per_out = []
        for i, o in enumerate(out_leaves):
            rows = [[] for _ in in_leaves]
            for j in range(o.numel()):
                cts = [_zeros(x) for x in out_leaves]
                cts[i] = _onehot(o, j)
                g = vjp_fn(tree_unflatten(cts, out_spec))
                flat = [leaf for tree in g for leaf in tree_flatten(tree)[0]]
                for k, gk in enumerate(flat):
                    rows[k].append(gk)
            jacs = []
            for k, x in enumerate(in_leaves):
                shape = tuple(o.shape) + tuple(x.shape)
                if not rows[k]:
                    jacs.append(_zeros(x).new_zeros(shape))
                else:
                    jacs.append(stack(rows[k]).reshape(shape))
            per_out.append(jacs)
        jac = _jac_tree(out_leaves, out_spec, per_out, argnums, in_specs)
        if has_aux:
            return jac, res[2]
        return jac
    return wrapper


def _onehot(ref, j):
    """A tensor shaped, typed and placed like ``ref``: zero but a one at flat index ``j``."""
    arr = ref._array
    one = get_array_module(arr).zeros(arr.size, dtype=arr.dtype)
    one[j] = 1
    return Tensor._wrap(one.reshape(arr.shape))


def _linearize(func, primals, api):
    """Run ``func`` on new roots for ``primals`` (a tuple of pytrees); return the pieces the
    forward-mode transforms share."""
    outer = is_grad_enabled()
    with enable_grad():
        new_args, flats, specs, own = _roots(primals, tuple(range(len(primals))), True)
        with under_transform("grad"):
            out = func(*new_args)
    return outer, new_args, flats, specs, own, out


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """``(output, jvp_out)`` (and ``aux`` with ``has_aux``): ``func``'s output at
    ``primals`` and its Jacobian applied to ``tangents``, as ``torch.func.jvp``.

    Example:
        >>> import ember
        >>> from ember.func import jvp
        >>> jvp(lambda x: x ** 2, (ember.tensor([1.0, 2.0]),), (ember.tensor([1.0, 0.0]),))
        (tensor([1., 4.]), tensor([2., 0.]))
    """
    api = "jvp(f, primals, tangents)"
    if not isinstance(primals, tuple):
        raise RuntimeError("%s: Expected primals to be a tuple. E.g. it should be valid to call "
                           "f(*primals)." % api)
    p_leaves, p_spec = tree_flatten(primals)
    t_leaves, t_spec = tree_flatten(tangents)
    if p_spec != t_spec:
        raise RuntimeError("%s: Expected primals and tangents to have the same python "
                           "structure. For example, if primals is a tuple of 3 tensors, "
                           "tangents also must be. Got primals with structure %r and tangents "
                           "with structure %r" % (api, p_spec, t_spec))
    if not p_leaves:
        raise RuntimeError("%s: Expected primals to contain at least one Tensor." % api)
    for what, leaves in (("primals", p_leaves), ("tangents", t_leaves)):
        for leaf in leaves:
            if not isinstance(leaf, Tensor):
                raise RuntimeError("%s: Expected %s to only contain Tensors, got %s"
                                   % (api, what, type(leaf)))
    for p, t in zip(p_leaves, t_leaves):
        _fwd._check_tangent(p, t)
    outer, _, flats, _, own, out = _linearize(func, primals, api)
    with enable_grad():
        out, aux = _split_aux(out, has_aux, api)
        leaves, spec = _check_outputs(out, api)
        inputs = [r for flat in flats for r in flat]
        lin = _fwd.Linearized(leaves, inputs, own)
        keep = outer and _fwd.depends_outside(leaves + t_leaves, own)
        tans = lin.apply(t_leaves, keep)
    tans = [_zeros(o) if t is None else t for t, o in zip(tans, leaves)]
    res = (_finish_tree(out, own, keep), tree_unflatten(tans, spec))
    if has_aux:
        return res + (_finish_tree(aux, own, outer),)
    return res


def linearize(func, *primals):
    """``(output, jvp_fn)``: ``jvp_fn(*tangents)`` applies ``func``'s Jacobian at ``primals``
    to ``tangents`` (reusing one recorded graph), as ``torch.func.linearize``."""
    p_leaves, p_spec = tree_flatten(primals)
    outer, _, flats, _, own, out = _linearize(func, primals, "linearize")
    with enable_grad():
        leaves, spec = _check_outputs(out, "linearize")
        inputs = [r for flat in flats for r in flat]
        lin = _fwd.Linearized(leaves, inputs, own)

    def jvp_fn(*tangents):
        t_leaves, t_spec = tree_flatten(tangents)
        if t_spec != p_spec:
            raise RuntimeError("Expected the tangents %r to have the same argspec as the primals "
                               "%r" % (t_spec, p_spec))
        for i, (t, p) in enumerate(zip(t_leaves, p_leaves)):
            if tuple(t.shape) != tuple(p.shape):
                raise RuntimeError("tangent:%d with shape %s in flattened pytree doesn't match "
                                   "the shape %s of the corresponding primal."
                                   % (i, _size(t.shape), _size(p.shape)))
        keep = outer and is_grad_enabled() and _fwd.depends_outside(leaves + t_leaves, own)
        with enable_grad():
            tans = lin.apply(t_leaves, keep)
        tans = [_zeros(o) if t is None else t for t, o in zip(tans, leaves)]
        return tree_unflatten(tans, spec)

    return _finish_tree(out, own, outer and _fwd.depends_outside(leaves, own)), jvp_fn


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """The Jacobian of ``func`` by forward mode (one Jacobian-vector product per input
    element), as ``torch.func.jacfwd``: each entry has shape ``output.shape + input.shape``.

    ``randomness="error"`` raises torch's error when ``func`` draws random numbers.

    Example:
        >>> import ember
        >>> from ember.func import jacfwd
        >>> jacfwd(lambda x: x.sin())(ember.tensor([0.0, 0.0]))
        tensor([[1., 0.],
                [0., 1.]])
    """
    @functools.wraps(func)
    def wrapper(*args):
        _check_randomness(randomness)
        nums = _check_argnums(argnums, len(args))
        primals = tuple(args[a] for a in nums)
        for leaf in tree_flatten(primals)[0]:
            if not isinstance(leaf, Tensor):
                raise ValueError("Thing passed to transform API must be Tensor, got %s"
                                 % type(leaf))

        def f(*prim):
            full = list(args)
            for a, p in zip(nums, prim):
                full[a] = p
            return func(*full)

        with _rng_guard(randomness):
            outer, _, flats, specs, own, out = _linearize(f, primals, "jacfwd")
        api = "jvp(f, primals, tangents)"
        with enable_grad():
            out, aux = _split_aux(out, has_aux, api)
            leaves, out_spec = _check_outputs(out, api)
            inputs = [r for flat in flats for r in flat]
            lin = _fwd.Linearized(leaves, inputs, own)
            keep = outer and _fwd.depends_outside(leaves, own)
            cols = [[[] for _ in inputs] for _ in leaves]
            for k, x in enumerate(inputs):
                for j in range(x.numel()):
                    v = _onehot(x, j)
                    tans = lin.apply([v if kk == k else None for kk in range(len(inputs))],
                                     keep, only=k)
                    for i, t in enumerate(tans):
                        cols[i][k].append(_zeros(leaves[i]) if t is None else t)
        per_out = []
        for i, o in enumerate(leaves):
            jacs = []
            for k, x in enumerate(inputs):
                shape = tuple(o.shape) + tuple(x.shape)
                if not cols[i][k]:
                    jacs.append(_zeros(x).new_zeros(shape))
                    continue
                block = stack(cols[i][k], dim=-1)      # out.shape + (x.numel(),)
                jacs.append(_finish(block.reshape(shape), own, keep))
            per_out.append(jacs)
        jac = _jac_tree(leaves, out_spec, per_out, argnums, specs)
        if has_aux:
            return jac, _finish_tree(aux, own, outer)
        return jac
    return wrapper


def hessian(func, argnums=0):
    """The Hessian of the scalar function ``func``: ``jacfwd(jacrev(func))``, as
    ``torch.func.hessian``.

    Example:
        >>> import ember
        >>> from ember.func import hessian
        >>> hessian(lambda x: (x ** 3).sum())(ember.tensor([1.0, 2.0]))
        tensor([[ 6.,  0.],
                [ 0., 12.]])
    """
    return jacfwd(jacrev(func, argnums), argnums)


def functionalize(func, *, remove="mutations"):
    """``func`` itself: ember runs in-place ops eagerly, so there is nothing to functionalize
    (the values are those ``torch.func.functionalize`` gives)."""
    if remove not in ("mutations", "mutations_and_views"):
        raise RuntimeError("functionalize(f, remove='mutations'): received invalid argument for "
                           "remove=%s. Valid options are:\n     remove='mutations': all inplace "
                           "and out= operators will be removed from the program, and replaced "
                           "with their out-of-place equivalents.\n     "
                           "remove='mutations_and_views': In addition to the above, all aliasing "
                           "operators {view} will be replaced with their non-aliasing "
                           "counterparts, {view}_copy.\n" % remove)
    return func
