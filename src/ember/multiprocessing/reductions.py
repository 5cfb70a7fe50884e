"""How tensors cross process boundaries (``torch.multiprocessing.reductions``).

A CPU tensor sent through :mod:`ember.multiprocessing` (a ``Queue``, a ``Pipe``, the arguments
of a spawned ``Process``) is first moved to shared memory (``share_memory_()``), then sent as
a duplicate of its memory file's descriptor: the receiver maps the same memory, so in-place
changes on either side are seen by the other, as torch's ``file_descriptor`` strategy.
"""
from multiprocessing.reduction import DupFd, ForkingPickler

from ..backend import _shared
from ..nn.parameter import Parameter
from ..tensor import Tensor

__all__ = ["reduce_tensor", "rebuild_tensor", "init_reductions"]


def rebuild_tensor(cls, df, nbytes, offset, shape, strides, dtype, requires_grad):
    """The tensor of class ``cls`` on the shared memory sent as ``df``."""
    seg = _shared.attach(df.detach(), nbytes)
    t = Tensor._wrap(_shared.view(seg, offset, shape, strides, dtype))
    if cls is Parameter:
        return Parameter(t, requires_grad=requires_grad)
    if cls is not Tensor:
        t = t.as_subclass(cls)
    t.requires_grad = requires_grad
    return t


def reduce_tensor(tensor):
    """Pickle ``tensor`` by reference to its (now shared) memory."""
    if tensor.requires_grad and not tensor.is_leaf:
        raise RuntimeError(
            "Cowardly refusing to serialize non-leaf tensor which requires_grad, "
            "since autograd does not support crossing process boundaries.  "
            "If you just want to transfer the data, call detach() on the tensor "
            "before serializing (e.g., putting it on the queue).")
    if not tensor.is_cpu or type(tensor._array).__module__ != "numpy":
        return tensor.__reduce_ex__(2)      # (other devices: sent by value)
    tensor.share_memory_()
    arr = tensor._array
    fd, nbytes, offset = _shared.locate(arr)
    return (rebuild_tensor, (type(tensor), DupFd(fd), nbytes, offset, arr.shape, arr.strides,
                             arr.dtype.str, tensor.requires_grad))


def init_reductions():
    """Register the tensor reductions with multiprocessing's pickler."""
    for cls in (Tensor, Parameter):
        ForkingPickler.register(cls, reduce_tensor)
