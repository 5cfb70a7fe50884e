"""Functional autograd: jacobian, hessian, vjp, jvp, vhp, hvp (torch.autograd.functional).

Each is built on :func:`ember.autograd.grad`; ``jvp`` and ``hvp`` use the double-backward
trick (the gradient of a vector-Jacobian product with respect to its vector), as torch does.
"""
from ..backend import get_array_module
from . import forward_ad as fwAD
from .engine import grad as _autograd_grad
from .function import Stack as _Stack
from .grad_mode import enable_grad

__all__ = ["vjp", "jvp", "jacobian", "hessian", "vhp", "hvp"]


def _tensor_cls():
    from ..tensor import Tensor
    return Tensor


def _zeros(ref, requires_grad=False):
    """A new zero tensor shaped, typed and placed like the tensor ``ref``."""
    arr = ref._array
    return _tensor_cls()._wrap(get_array_module(arr).zeros(arr.shape, dtype=arr.dtype),
                               requires_grad=requires_grad)


def _ones(ref):
    """A new tensor of ones shaped, typed and placed like the tensor ``ref``."""
    arr = ref._array
    return _tensor_cls()._wrap(get_array_module(arr).ones(arr.shape, dtype=arr.dtype))


def _as_tuple(inp, arg_name, fn_name=None):
    Tensor = _tensor_cls()
    is_tuple = isinstance(inp, tuple)
    items = tuple(inp) if is_tuple else (inp,)
    for i, el in enumerate(items):
        if not isinstance(el, Tensor):
            where = "value at index %d" % i if is_tuple else "given %s" % arg_name
            raise TypeError("The %s given to %s must be either a Tensor or a tuple of Tensors but "
                            "the %s has type %s." % (arg_name, fn_name, where, type(el)))
    return is_tuple, items


def _tuple_postprocess(res, to_unpack):
    if isinstance(to_unpack, tuple):
        if not to_unpack[1]:
            res = tuple(el[0] for el in res)
        if not to_unpack[0]:
            res = res[0]
    elif not to_unpack:
        res = res[0]
    return res


def _grad_preprocess(inputs, create_graph):
    """Inputs that require grad and are new graph roots (views of the originals when the
    result must stay differentiable with respect to them)."""
    out = []
    for t in inputs:
        if create_graph and t.requires_grad:
            out.append(t.view_as(t))
        else:
            out.append(t.detach().requires_grad_(True))
    return tuple(out)


def _grad_postprocess(inputs, create_graph):
    return inputs if create_graph else tuple(None if t is None else t.detach() for t in inputs)


def _validate_v(v, other, is_other_tuple):
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError("v is a tuple of invalid length: should be %d but got %d."
                               % (len(other), len(v)))
        raise RuntimeError("The given v should contain a single Tensor.")
    for idx, (el_v, el_other) in enumerate(zip(v, other)):
        if tuple(el_v.shape) != tuple(el_other.shape):
            prepend = "Entry %d in " % idx if is_other_tuple else ""
            raise RuntimeError("%sv has invalid size: should be %s but got %s."
                               % (prepend, el_other.size(), el_v.size()))


def _check_requires_grad(inputs, input_type, strict):
    if not strict:
        return
    if input_type not in ("outputs", "grad_inputs", "jacobian", "hessian"):
        raise RuntimeError("Invalid input_type to _check_requires_grad")
    for i, inp in enumerate(inputs):
        if inp is None:
            raise RuntimeError("The output of the user-provided function is independent of input "
                               "%d. This is not allowed in strict mode." % i)
        if not inp.requires_grad:
            if input_type == "hessian":
                raise RuntimeError("The hessian of the user-provided function with respect to "
                                   "input %d is independent of the input. This is not allowed in "
                                   "strict mode. You should ensure that your function is thrice "
                                   "differentiable and that the hessian depends on the inputs." % i)
            if input_type == "jacobian":
                raise RuntimeError("While computing the hessian, found that the jacobian of the "
                                   "user-provided function with respect to input %d is "
                                   "independent of the input. This is not allowed in strict "
                                   "mode. You should ensure that your function is twice "
                                   "differentiable and that the jacobian depends on the inputs "
                                   "(this would be violated by a linear function for example)." % i)
            if input_type == "grad_inputs":
                raise RuntimeError("The gradient with respect to input %d is independent of the "
                                   "inputs of the user-provided function. This is not allowed in "
                                   "strict mode." % i)
            raise RuntimeError("Output %d of the user-provided function does not require "
                               "gradients. The outputs must be computed in a differentiable "
                               "manner from the input when running in strict mode." % i)


def _grad(outputs, inputs, grad_outputs, create_graph, retain_graph=None):
    """autograd.grad over the outputs that require grad; None for unreachable inputs."""
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs)
             if o is not None and o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    return _autograd_grad(tuple(o for o, _ in pairs), inputs, tuple(g for _, g in pairs),
                          create_graph=create_graph, retain_graph=retain_graph,
                          allow_unused=True)


def _fill_in_zeros(grads, refs, strict, create_graph, stage):
    res = []
    for i, (g, r) in enumerate(zip(grads, refs)):
        if g is None:
            if strict:
                if stage == "back":
                    raise RuntimeError("The output of the user-provided function is independent "
                                       "of input %d. This is not allowed in strict mode." % i)
                if stage == "back_trick":
                    raise RuntimeError("The gradient with respect to the input is independent of "
                                       "entry %d in the grad_outputs when using the double "
                                       "backward trick to compute forward mode gradients. This "
                                       "is not allowed in strict mode." % i)
                if stage == "double_back":
                    raise RuntimeError("The jacobian of the user-provided function is independent "
                                       "of input %d. This is not allowed in strict mode." % i)
                raise RuntimeError("The hessian of the user-provided function is independent of "
                                   "entry %d in the grad_jacobian. This is not allowed in strict "
                                   "mode as it prevents from using the double backward trick to "
                                   "replace forward mode AD." % i)
            g = _zeros(r)
        elif strict and create_graph and not g.requires_grad:
            raise RuntimeError("The %s of the user-provided function is independent of input %d. "
                               "This is not allowed in strict mode when create_graph=True."
                               % ("hessian" if "double" in stage else "jacobian", i))
        res.append(g)
    return tuple(res)


def _prepare_v(v, tensors, is_tuple, fn_name, whose="user-provided function returns"):
    """The vector ``v`` checked against ``tensors`` (the outputs, or for jvp/vhp/hvp the
    inputs: ``whose`` says which); ones for a single 1-element tensor."""
    if v is not None:
        _, v = _as_tuple(v, "v", fn_name)
        _validate_v(v, tensors, is_tuple)
        return v
    if len(tensors) != 1 or tensors[0].numel() != 1:
        raise RuntimeError("The vector v can only be None if the %s a single Tensor with a "
                           "single element." % whose)
    return (_ones(tensors[0]),)


_INPUT = "input to the user-provided function is"


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """Vector-Jacobian product ``v^T J`` of ``func`` at ``inputs``.

    Returns:
        ``(func_output, vjp)``, shaped like ``func``'s output and like ``inputs``.

    Example:
        >>> import ember
        >>> out, g = vjp(lambda x: x ** 2, ember.tensor([1.0, 2.0]), ember.tensor([1.0, 1.0]))
        >>> g
        tensor([2., 4.])
    """
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _grad_preprocess(inputs, create_graph)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function",
                                              "vjp")
        _check_requires_grad(outputs, "outputs", strict)
        v = _prepare_v(v, outputs, is_outputs_tuple, "vjp")
        grad_res = _grad(outputs, inputs, v, create_graph)
        vjp_res = _fill_in_zeros(grad_res, inputs, strict, create_graph, "back")
    outputs = _grad_postprocess(outputs, create_graph)
    vjp_res = _grad_postprocess(vjp_res, create_graph)
    return (_tuple_postprocess(outputs, is_outputs_tuple),
            _tuple_postprocess(vjp_res, is_inputs_tuple))


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """Jacobian-vector product ``J v`` of ``func`` at ``inputs`` (double-backward trick).

    Returns:
        ``(func_output, jvp)``, both shaped like ``func``'s output.
    """
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _grad_preprocess(inputs, create_graph)
        v = _prepare_v(v, inputs, is_inputs_tuple, "jvp", _INPUT)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function",
                                              "jvp")
        _check_requires_grad(outputs, "outputs", strict)
        grad_outputs = tuple(_zeros(o, requires_grad=True) for o in outputs)
        grad_inputs = _grad(outputs, inputs, grad_outputs, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict)
        grad_res = _grad(grad_inputs, grad_outputs, v, create_graph=create_graph)
        jvp_res = _fill_in_zeros(grad_res, outputs, strict, create_graph, "back_trick")
    outputs = _grad_postprocess(outputs, create_graph)
    jvp_res = _grad_postprocess(jvp_res, create_graph)
    return (_tuple_postprocess(outputs, is_outputs_tuple),
            _tuple_postprocess(jvp_res, is_outputs_tuple))


def _jacfwd(func, inputs, strict, vectorize):
    """The Jacobian by forward-mode AD: one jvp per input element (torch batches them with
    vmap; the columns are the same)."""
    if strict:
        raise RuntimeError('torch.autograd.functional.jacobian: `strict=True` and `strategy="for'
                           'ward-mode"` are not supported together (yet). Please either set '
                           '`strict=False` or `strategy="reverse-mode"`.')
    if not vectorize:
        raise NotImplementedError(
            "Computing Jacobian using forward-AD or forward-over-reverse Hessian is"
            "only implemented for `vectorize=True`.")
    Tensor = _tensor_cls()
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    columns, outputs, is_outputs_tuple = [], None, False
    for j, inp in enumerate(inputs):
        xp = get_array_module(inp._array)
        for e in range(inp.numel()):
            onehot = xp.zeros(inp.numel(), dtype=inp._array.dtype)
            onehot[e] = 1
            with fwAD.dual_level():
                duals = tuple(fwAD.make_dual(x, Tensor._wrap(onehot.reshape(x.shape)) if k == j
                                             else _zeros(x)) for k, x in enumerate(inputs))
                is_outputs_tuple, outs = _as_tuple(func(*duals), "outputs")
                unpacked = [fwAD.unpack_dual(o) for o in outs]
            outputs = [u.primal for u in unpacked]
            columns.append([u.tangent if u.tangent is not None else _zeros(u.primal)
                            for u in unpacked])
    if outputs is None:     # no input elements: evaluate once for the output shapes
        is_outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs")
    res, start = [[] for _ in outputs], 0
    for inp in inputs:
        n = inp.numel()
        for i, out in enumerate(outputs):
            shape = tuple(out.shape) + tuple(inp.shape)
            if n == 0 or out.numel() == 0:
                xp = get_array_module(out._array)
                res[i].append(Tensor._wrap(xp.zeros(shape, dtype=out._array.dtype)))
                continue
            cols = [columns[c][i] for c in range(start, start + n)]
            stacked = _Stack.apply(*cols)
            res[i].append(stacked.permute(*range(1, stacked.ndim), 0).reshape(shape))
        start += n
    return _tuple_postprocess(res, (is_outputs_tuple, is_inputs_tuple))


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
             strategy="reverse-mode"):
    """Jacobian of ``func`` at ``inputs``, one reverse pass per output element.

    Entry ``[i][j]`` has shape ``output_i.shape + input_j.shape``; the tuple levels are dropped
    where ``func`` returns a single Tensor or ``inputs`` is a single Tensor, as in torch.
    ``vectorize`` only selects the algorithm in torch; the values are the same here.
    ``strategy="forward-mode"`` (which requires ``vectorize=True``) pushes one tangent per
    input element through ``forward_ad``.

    Example:
        >>> import ember
        >>> jacobian(lambda x: x ** 2, ember.tensor([1.0, 2.0]))
        tensor([[2., 0.],
                [0., 4.]])
    """
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(
            'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
            'function has more outputs than inputs, "forward-mode" tends to be more performant. '
            'Otherwise, prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(
                'torch.autograd.functional.jacobian: `create_graph=True` and `strategy="forward-mo'
                'de"` are not supported together (yet). Please either set `create_graph=False` or '
                '`strategy="reverse-mode"`.')
        return _jacfwd(func, inputs, strict, vectorize)
    Tensor = _tensor_cls()
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _grad_preprocess(inputs, create_graph)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function",
                                              "jacobian")
        _check_requires_grad(outputs, "outputs", strict)
        if vectorize and strict:
            raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and "
                               "`vectorized=True` are not supported together. Please either set "
                               "`strict=False` or `vectorize=False`.")
        jacobian_res = []
        for i, out in enumerate(outputs):
            rows = [[] for _ in inputs]
            n = out.numel()
            xp = get_array_module(out._array)
            for j in range(n):
                onehot = xp.zeros(n, dtype=out._array.dtype)
                onehot[j] = 1
                go = Tensor._wrap(onehot.reshape(out.shape))
                vj = (_autograd_grad((out,), inputs, (go,), retain_graph=True,
                                     create_graph=create_graph, allow_unused=True)
                      if out.requires_grad else (None,) * len(inputs))
                for k, (g, inp) in enumerate(zip(vj, inputs)):
                    if g is None:
                        if strict:
                            raise RuntimeError("Output %d of the user-provided function is "
                                               "independent of input %d. This is not allowed in "
                                               "strict mode." % (i, k))
                        g = _zeros(inp)
                    elif strict and create_graph and not g.requires_grad:
                        raise RuntimeError("The jacobian of the user-provided function is "
                                           "independent of input %d. This is not allowed in "
                                           "strict mode when create_graph=True." % i)
                    rows[k].append(g)
            jac_i = []
            for k, inp in enumerate(inputs):
                shape = tuple(out.shape) + tuple(inp.shape)
                if n == 0:
                    xp = get_array_module(inp._array)
                    jac_i.append(Tensor._wrap(xp.zeros(shape, dtype=inp._array.dtype)))
                else:
                    jac_i.append(_Stack.apply(*rows[k]).reshape(shape))
            jacobian_res.append(tuple(jac_i))
    jacobian_res = tuple(_grad_postprocess(j, create_graph) for j in jacobian_res)
    return _tuple_postprocess(jacobian_res, (is_outputs_tuple, is_inputs_tuple))


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy="reverse-mode"):
    """Hessian of the scalar function ``func`` at ``inputs`` (the jacobian of its gradient).

    Entry ``[i][j]`` has shape ``input_i.shape + input_j.shape``.

    Example:
        >>> import ember
        >>> hessian(lambda x: (x ** 3).sum(), ember.tensor([1.0, 2.0]))
        tensor([[ 6.,  0.],
                [ 0., 12.]])
    """
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def ensure_single_output_function(*inp):
        out = func(*inp)
        is_out_tuple, t_out = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(t_out, "outputs", strict)
        if is_out_tuple or not isinstance(out, _tensor_cls()):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.numel() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should "
                               "contain a single element")
        return out.squeeze()

    def jac_func(*inp):
        if outer_jacobian_strategy == "forward-mode":
            inp = tuple(t.requires_grad_(True) for t in inp)
        jac = jacobian(ensure_single_output_function, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        return jac

    res = jacobian(jac_func, inputs, create_graph=create_graph, strict=strict,
                   vectorize=vectorize, strategy=outer_jacobian_strategy)
    return _tuple_postprocess(res, (is_inputs_tuple, is_inputs_tuple))


def _second_order(func, inputs, v, create_graph, strict, fn_name):
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", fn_name)
        inputs = _grad_preprocess(inputs, create_graph)
        v = _prepare_v(v, inputs, is_inputs_tuple, fn_name, _INPUT)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function",
                                              fn_name)
        _check_requires_grad(outputs, "outputs", strict)
        if is_outputs_tuple or not isinstance(outputs[0], _tensor_cls()):
            raise RuntimeError("The function given to %s should return a single Tensor" % fn_name)
        if outputs[0].numel() != 1:
            raise RuntimeError("The Tensor returned by the function given to %s should contain a "
                               "single element" % fn_name)
        jac = _autograd_grad(outputs, inputs, create_graph=True, allow_unused=True)
        _check_requires_grad(jac, "jacobian", strict)
    return is_inputs_tuple, inputs, v, outputs, jac


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """Vector-Hessian product ``v^T H`` of the scalar function ``func`` at ``inputs``.

    Returns:
        ``(func_output, vhp)``, the second shaped like ``inputs``.
    """
    is_inputs_tuple, inputs, v, outputs, jac = _second_order(func, inputs, v, create_graph,
                                                             strict, "vhp")
    with enable_grad():
        grad_res = _grad(jac, inputs, v, create_graph=create_graph)
        res = _fill_in_zeros(grad_res, inputs, strict, create_graph, "double_back")
    outputs = _grad_postprocess(outputs, create_graph)
    res = _grad_postprocess(res, create_graph)
    return _tuple_postprocess(outputs, False), _tuple_postprocess(res, is_inputs_tuple)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """Hessian-vector product ``H v`` of the scalar function ``func`` at ``inputs``.

    Computed with the double-backward trick, as torch does.

    Returns:
        ``(func_output, hvp)``, the second shaped like ``inputs``.
    """
    is_inputs_tuple, inputs, v, outputs, jac = _second_order(func, inputs, v, create_graph,
                                                             strict, "hvp")
    with enable_grad():
        grad_jac = tuple(_zeros(inp, requires_grad=True) for inp in inputs)
        double_back = _grad(jac, inputs, grad_jac, create_graph=True)
        _check_requires_grad(jac, "hessian", strict)
        grad_res = _grad(double_back, grad_jac, v, create_graph=create_graph)
        res = _fill_in_zeros(grad_res, inputs, strict, create_graph, "double_back_trick")
    outputs = _grad_postprocess(outputs, create_graph)
    res = _grad_postprocess(res, create_graph)
    return _tuple_postprocess(outputs, False), _tuple_postprocess(res, is_inputs_tuple)
