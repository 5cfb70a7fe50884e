"""save/load: checkpoints in the safetensors format, written and read with NumPy, never pickle.

A file is ``<8-byte little-endian header length><JSON header><raw tensor bytes>``. The header
maps each tensor's name to ``{"dtype", "shape", "data_offsets"}``; its ``__metadata__`` holds
string values only, and ember stores the Python structure around the tensors (nesting, numbers,
strings, optimizer ``param_groups``) there as JSON under the key ``"ember"``. A flat state_dict's
tensors are stored under their own keys, so ``safetensors.torch.load_file`` returns the same
state_dict. Loading validates every byte count before allocating; see ``docs/security.md``.
"""
import io
import json
import math
import os
import struct

import numpy as np

from .tensor import Tensor

__all__ = ["save", "load", "CheckpointError"]

_DTYPES = {"F16": "<f2", "F32": "<f4", "F64": "<f8", "I8": "i1", "I16": "<i2", "I32": "<i4",
           "I64": "<i8", "U8": "u1", "BOOL": "?", "BF16": "<u2"}
_CODES = {np.dtype(v).newbyteorder("="): k for k, v in _DTYPES.items() if k != "BF16"}
_MAX_HEADER = 100 * 1024 * 1024   # the safetensors library's own limit
_MAX_DIMS = 64
_MAX_DEPTH = 64


class CheckpointError(ValueError):
    """A checkpoint file is malformed, truncated, forged or not in the safetensors format."""


def _encode(obj, path, tensors, names, depth):
    """The JSON-able description of ``obj``; tensors are collected into ``tensors``."""
    if depth > _MAX_DEPTH:
        raise ValueError("ember.save: nesting deeper than %d levels" % _MAX_DEPTH)
    if isinstance(obj, np.ndarray):
        obj = Tensor._wrap(obj)
    if isinstance(obj, Tensor):
        name = names.get(id(obj))
        if name is None:
            name = path or "tensor"
            k = 1
            while name in tensors:
                name = "%s#%d" % (path, k)
                k += 1
            names[id(obj)] = name
            tensors[name] = obj
        node = {"T": name}
        if obj.requires_grad:
            node["g"] = True
        if type(obj).__name__ == "Parameter":
            node["P"] = True
        return node
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        obj = float(obj)
        return obj if math.isfinite(obj) else {"f": repr(obj)}
    prefix = path + "." if path else ""
    if isinstance(obj, dict):
        items = []
        for key, value in obj.items():
            if not (key is None or isinstance(key, (bool, int, float, str))):
                raise TypeError("ember.save: dict keys must be str, int, float, bool or None, "
                                "got %s" % type(key).__name__)
            items.append([key, _encode(value, prefix + str(key), tensors, names, depth + 1)])
        return {"d": items}
    if isinstance(obj, (list, tuple)):
        values = [_encode(v, prefix + str(i), tensors, names, depth + 1)
                  for i, v in enumerate(obj)]
        return {"t" if isinstance(obj, tuple) else "l": values}
    raise TypeError("ember.save: cannot store an object of type %s (only tensors, numbers, "
                    "strings, None and dicts/lists/tuples of them; ember never pickles)"
                    % type(obj).__name__)


def save(obj, f, pickle_module=None, pickle_protocol=2, _use_new_zipfile_serialization=True):
    """Save a tensor, a state_dict, or nested dicts/lists/tuples of tensors and numbers.

    The file is a safetensors file: a flat ``{name: tensor}`` state_dict loads in PyTorch with
    ``safetensors.torch.load_file``. ``pickle_module`` and the other torch arguments are
    accepted and ignored: ember never pickles.

    Args:
        obj: what to save.
        f: a path or a binary file object open for writing.

    Example:
        >>> import io, ember
        >>> buf = io.BytesIO()
        >>> ember.save({"w": ember.ones(2), "step": 3}, buf)
        >>> _ = buf.seek(0)
        >>> ember.load(buf)
        {'w': tensor([1., 1.]), 'step': 3}
    """
    tensors = {}
    structure = _encode(obj, "", tensors, {}, 0)
    header = {"__metadata__": {"format": "pt", "ember": json.dumps(structure,
                                                                   allow_nan=False)}}
    offset = 0
    arrays = []
    for name, t in tensors.items():
        arr = t.detach().cpu()._array if t.device.type != "cpu" else t._array
        if not arr.flags.c_contiguous:
            arr = arr.copy(order="C")
        code = _CODES.get(arr.dtype.newbyteorder("="))
        if code is None:
            raise TypeError("ember.save: unsupported dtype %s" % arr.dtype)
        arr = arr.astype(_DTYPES[code], copy=False)
        header[name] = {"dtype": code, "shape": list(arr.shape),
                        "data_offsets": [offset, offset + arr.nbytes]}
        offset += arr.nbytes
        arrays.append(arr)
    blob = json.dumps(header, separators=(",", ":"), allow_nan=False).encode("utf-8")
    blob += b" " * (-len(blob) % 8)
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as fh:
            _write(fh, blob, arrays)
    else:
        _write(f, blob, arrays)


def _write(fh, blob, arrays):
    fh.write(struct.pack("<Q", len(blob)))
    fh.write(blob)
    for arr in arrays:
        fh.write(memoryview(arr.reshape(-1)).cast("B") if arr.size else b"")


def _fail(msg):
    raise CheckpointError("ember.load: " + msg)


def _parse_json(raw, what):
    try:
        return json.loads(raw, parse_constant=lambda c: _fail("%s has a non-finite number %s"
                                                               % (what, c)))
    except RecursionError:
        _fail("%s is nested too deeply" % what)
    except (ValueError, TypeError) as e:
        if isinstance(e, CheckpointError):
            raise
        _fail("%s is not valid JSON (%s)" % (what, e))


def _is_int(x):
    return isinstance(x, int) and not isinstance(x, bool)


def _check_header(header, data_len):
    """Validate every entry; return ``[(name, dtype, shape, begin, end)]`` in offset order."""
    if not isinstance(header, dict):
        _fail("the header is not a JSON object")
    entries = []
    for name, info in header.items():
        if name == "__metadata__":
            continue
        try:
            name.encode("utf-8")
        except UnicodeEncodeError:
            _fail("a tensor name is not valid UTF-8")
        if not isinstance(info, dict) or set(info) != {"dtype", "shape", "data_offsets"}:
            _fail("tensor %r: expected exactly the keys dtype, shape, data_offsets" % name)
        dtype, shape, offsets = info["dtype"], info["shape"], info["data_offsets"]
        if not isinstance(dtype, str) or dtype not in _DTYPES:
            _fail("tensor %r: unknown dtype %r" % (name, dtype))
        if (not isinstance(shape, list) or len(shape) > _MAX_DIMS
                or not all(_is_int(s) and s >= 0 for s in shape)):
            _fail("tensor %r: shape must be a list of at most %d non-negative ints"
                  % (name, _MAX_DIMS))
        if (not isinstance(offsets, list) or len(offsets) != 2
                or not all(_is_int(o) for o in offsets)):
            _fail("tensor %r: data_offsets must be [begin, end]" % name)
        begin, end = offsets
        if not 0 <= begin <= end <= data_len:
            _fail("tensor %r: data_offsets [%d, %d] outside the %d bytes of data"
                  % (name, begin, end, data_len))
        nbytes = math.prod(shape) * np.dtype(_DTYPES[dtype]).itemsize
        if nbytes != end - begin:
            _fail("tensor %r: shape %s of %s needs %d bytes but data_offsets span %d"
                  % (name, shape, dtype, nbytes, end - begin))
        entries.append((name, dtype, tuple(shape), begin, end))
    entries.sort(key=lambda e: (e[3], e[4]))
    position = 0
    for name, _, _, begin, end in entries:
        if begin != position:
            _fail("tensor %r: data_offsets %s %s" % (
                name, [begin, end], "overlap another tensor" if begin < position
                else "leave a gap in the data"))
        position = end
    if position != data_len:
        _fail("the data section has %d bytes, the tensors use %d" % (data_len, position))
    return entries


def _read_tensor(fh, base, dtype, shape, begin, end):
    arr = np.empty(shape, dtype=_DTYPES[dtype])
    if end > begin:
        fh.seek(base + begin)
        got = fh.readinto(memoryview(arr.reshape(-1)).cast("B"))
        if got != end - begin:
            _fail("the file ended inside a tensor")
    if dtype == "BF16":
        # NOTE: NumPy has no bfloat16; widen to float32 (exact: bf16 is float32's top half).
        arr = (arr.astype(np.uint32) << 16).view(np.float32)
    elif arr.dtype.byteorder not in "=|":
        arr = arr.astype(arr.dtype.newbyteorder("="))
    return Tensor._wrap(arr)


def _check_depth(root):
    """Reject a structure nested deeper than ``_MAX_DEPTH`` (iteratively, before decoding)."""
    stack = [(root, 0)]
    while stack:
        node, depth = stack.pop()
        # Each Python level is two JSON levels ({"l": [...]}).
        if depth > 2 * _MAX_DEPTH + 2:
            _fail("the structure is nested deeper than %d levels" % _MAX_DEPTH)
        if isinstance(node, dict):
            stack.extend((v, depth + 1) for v in node.values())
        elif isinstance(node, list):
            stack.extend((v, depth + 1) for v in node)


def _decode(node, tensors, used, depth):
    if node is None or isinstance(node, (bool, int, float, str)):
        return node
    if isinstance(node, dict) and len(node) >= 1:
        if "T" in node:
            name = node["T"]
            if not isinstance(name, str) or name not in tensors:
                _fail("the structure refers to a missing tensor %r" % (name,))
            t = tensors[name]
            if node.get("P"):
                from .nn.parameter import Parameter
                t = Parameter(t, requires_grad=bool(node.get("g")))
            elif node.get("g"):
                if not t.dtype.is_floating_point:
                    _fail("tensor %r requires grad but is not floating point" % name)
                t.requires_grad_(True)
            used.add(name)
            return t
        if len(node) == 1:
            kind, value = next(iter(node.items()))
            if kind == "f" and value in ("inf", "-inf", "nan"):
                return float(value)
            if kind in ("l", "t") and isinstance(value, list):
                items = [_decode(v, tensors, used, depth + 1) for v in value]
                return tuple(items) if kind == "t" else items
            if kind == "d" and isinstance(value, list):
                out = {}
                for item in value:
                    if (not isinstance(item, list) or len(item) != 2
                            or not (item[0] is None or isinstance(item[0], (bool, int, float,
                                                                             str)))):
                        _fail("a dict entry of the structure is malformed")
                    out[item[0]] = _decode(item[1], tensors, used, depth + 1)
                return out
    _fail("the structure has an unknown node %.80r" % (node,))


def _open_size(fh):
    try:
        here = fh.tell()
        size = fh.seek(0, io.SEEK_END) - here
        fh.seek(here)
        return here, size
    except (AttributeError, OSError, io.UnsupportedOperation):
        return None, None


def load(f, map_location=None, pickle_module=None, *, weights_only=True, mmap=None,
         **pickle_load_args):
    """Load what ``ember.save`` wrote, or any safetensors file (returned as ``{name: tensor}``).

    Never unpickles: a file can only produce tensors, numbers, strings, None and
    dicts/lists/tuples. Every malformed, truncated or forged file raises ``CheckpointError``
    (a ``ValueError``) before anything larger than the file is allocated. ``weights_only`` is
    accepted for torch compatibility; ember always loads weights only.

    Args:
        f: a path or a binary file object open for reading.
        map_location: ``None``, ``'cpu'`` or a device for the loaded tensors.

    Returns:
        The saved object.
    """
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            obj = _load(fh)
    else:
        obj = _load(f)
    device = map_location(None, None) if callable(map_location) else map_location
    if isinstance(device, dict):
        device = device.get("cpu", None)
    if device is not None and str(device) != "cpu":
        obj = _to_device(obj, device)
    return obj


def _to_device(obj, device):
    if isinstance(obj, Tensor):
        return obj.to(device)
    if isinstance(obj, dict):
        return {k: _to_device(v, device) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_to_device(v, device) for v in obj)
    return obj


def _load(fh):
    start, size = _open_size(fh)
    if size is None:
        fh = io.BytesIO(fh.read())
        start, size = 0, len(fh.getbuffer())
    if size < 8:
        _fail("the file has %d bytes, too short for a safetensors header" % size)
    (n,) = struct.unpack("<Q", fh.read(8))
    if n > size - 8 or n > _MAX_HEADER:
        _fail("the header declares %d bytes but the file has %d after the length field"
              % (n, size - 8))
    raw = fh.read(n)
    if len(raw) != n:
        _fail("the file ended inside the header")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        _fail("the header is not valid UTF-8 (%s)" % e.reason)
    header = _parse_json(text, "the header")
    entries = _check_header(header, size - 8 - n)
    meta = header.get("__metadata__")
    if meta is not None and (not isinstance(meta, dict)
                             or not all(isinstance(v, str) for v in meta.values())):
        _fail("__metadata__ must map strings to strings")
    structure = None
    if meta and "ember" in meta:
        if len(meta["ember"]) > n:
            _fail("the structure is longer than the header")
        structure = _parse_json(meta["ember"], "the ember structure")
        _check_depth(structure)
    base = start + 8 + n
    tensors = {name: _read_tensor(fh, base, dtype, shape, begin, end)
               for name, dtype, shape, begin, end in entries}
    if structure is None:
        return tensors
    return _decode(structure, tensors, set(), 0)
