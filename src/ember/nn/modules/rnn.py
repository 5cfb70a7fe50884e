"""Recurrent layers: RNN, LSTM, GRU (multi-layer, bidirectional) and their Cells.

Parameter names, shapes, gate order (LSTM: i, f, g, o; GRU: r, z, n), LSTM projections
(``proj_size``, ``weight_hr_l{k}``) and initialisation U(-1/sqrt(hidden_size),
1/sqrt(hidden_size)) are torch's, so state_dicts move across.
"""
import math
import numbers
import warnings

from ... import ops
from ...dtypes import float32
from ...autograd.grad_mode import is_grad_enabled, state as _grad_state
from ...ops.creation import empty
from ...ops.rnn import LSTMLayer as _LSTMLayer, UnsafeSplit as _UnsafeSplit
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


# The steps are torch's CPU cells (aten/src/ATen/native/RNN.cpp), op for op, so the graph is
# torch's node for node; ``gi`` is the step's input projection (bias included).
def _rnn_step(mode, gi, h, w_hh, b_hh):
    gates = F.linear(h, w_hh, b_hh) + gi
    return ops.tanh(gates) if mode == "RNN_TANH" else ops.relu(gates)


def _lstm_step(gi, state, w_hh, b_hh):
    h, c = state
    i, f, g, o = _UnsafeSplit.apply(F.linear(h, w_hh, b_hh) + gi, 4, 1)
    c = ops.sigmoid(f) * c + ops.sigmoid(i) * ops.tanh(g)
    return ops.sigmoid(o) * ops.tanh(c), c


def _fusable(input, *tensors):
    """Whether torch takes its fused (mkldnn) LSTM: float32 throughout, a non-empty input."""
    return input.dtype == float32 and input.numel() != 0 and \
        all(t is None or t.dtype == float32 for t in tensors)


_proj_warned = []


def _warn_proj_once():
    """torch's warning (once per process) where its fused LSTM turns down projections."""
    if not _proj_warned:
        _proj_warned.append(True)
        warnings.warn("LSTM with projections is not supported with oneDNN. Using default "
                      "implementation.", UserWarning, stacklevel=4)


def _gru_step(gi, h, w_hh, b_hh):
    i_r, i_z, i_n = _UnsafeSplit.apply(gi, 3, 1)
    h_r, h_z, h_n = _UnsafeSplit.apply(F.linear(h, w_hh, b_hh), 3, 1)
    r = ops.sigmoid(h_r + i_r)
    z = ops.sigmoid(h_z + i_z)
    n = ops.tanh(i_n + h_n * r)
    return (h - n) * z + n


def _step(mode, gi, state, w_hh, b_hh):
    if mode == "LSTM":
        return _lstm_step(gi, state, w_hh, b_hh)
    if mode == "GRU":
        return _gru_step(gi, state, w_hh, b_hh)
    return _rnn_step(mode, gi, state, w_hh, b_hh)


def _no_proj(kwargs):
    """torch's error for ``proj_size`` (any value) given to RNN or GRU."""
    if "proj_size" in kwargs:
        raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")


class RNNBase(Module):
    """Shared machinery of RNN, LSTM and GRU."""

    __constants__ = ["mode", "input_size", "hidden_size", "num_layers", "bias", "batch_first",
                     "dropout", "bidirectional", "proj_size"]

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, proj_size=0, device=None,
                 dtype=None):
        super().__init__()
        if not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1 \
                or isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so "
                          "non-zero dropout expects num_layers greater than 1, but got "
                          "dropout=%s and num_layers=%s" % (dropout, num_layers), stacklevel=2)
        if not isinstance(bias, bool):
            raise TypeError("bias should be of type bool, got: %s" % type(bias).__name__)
        if not isinstance(batch_first, bool):
            raise TypeError("batch_first should be of type bool, got: %s"
                            % type(batch_first).__name__)
        if not isinstance(input_size, int):
            raise TypeError("input_size should be of type int, got: %s"
                            % type(input_size).__name__)
        if input_size <= 0:
            raise ValueError("input_size must be greater than zero")
        if not isinstance(hidden_size, int):
            raise TypeError("hidden_size should be of type int, got: %s"
                            % type(hidden_size).__name__)
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable "
                             "projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        self.mode, self.input_size, self.hidden_size = mode, input_size, hidden_size
        self.num_layers, self.bias, self.batch_first = num_layers, bias, batch_first
        self.dropout, self.bidirectional, self.proj_size = float(dropout), bidirectional, proj_size
        gate = _GATES[mode] * hidden_size
        real_hidden = proj_size or hidden_size    # the size of h (and of each output direction)
        dirs = 2 if bidirectional else 1
        self._flat_weights_names = []
        self._all_weights = []      # (torch's: the parameter names per layer and direction)
        for layer in range(num_layers):
            for d in range(dirs):
                suffix = "_reverse" if d == 1 else ""
                in_size = input_size if layer == 0 else real_hidden * dirs
                names = ["weight_ih_l%d%s", "weight_hh_l%d%s"]
                shapes = [(gate, in_size), (gate, real_hidden)]
                if bias:
                    names += ["bias_ih_l%d%s", "bias_hh_l%d%s"]
                    shapes += [(gate,), (gate,)]
                if proj_size:
                    names.append("weight_hr_l%d%s")
                    shapes.append((proj_size, hidden_size))
                names = [name % (layer, suffix) for name in names]
                for name, shape in zip(names, shapes):
                    setattr(self, name, Parameter(empty(shape, dtype=dtype)))
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size)
        for w in self.parameters():
            init.uniform_(w, -stdv, stdv)

    @property
    def all_weights(self):
        names = self._flat_weights_names
        per = 2 + 2 * bool(self.bias) + bool(self.proj_size)
        return [[getattr(self, n) for n in names[i:i + per]] for i in range(0, len(names), per)]

    def _weights(self, layer, d):
        suffix = "_reverse" if d == 1 else ""
        get = lambda n: getattr(self, n % (layer, suffix), None)  # noqa: E731
        return get("weight_ih_l%d%s"), get("weight_hh_l%d%s"), get("bias_ih_l%d%s"), \
            get("bias_hh_l%d%s"), get("weight_hr_l%d%s") if self.proj_size else None

    def _check_input(self, input):
        if input.dim() not in (2, 3):
            raise ValueError("%s: Expected input to be 2D or 3D, got %dD tensor instead"
                             % (type(self).__name__, input.dim()))

    @property
    def _flat_weights(self):
        return [getattr(self, n) for n in self._flat_weights_names]

    def _check_input_args(self, input, expected_dim):
        """torch's ``check_input``: the dtype, the number of dimensions, then the size."""
        w_dtype = getattr(self, self._flat_weights_names[0]).dtype
        if input.dtype != w_dtype and not _grad_state.autocast:     # (torch: any autocast)
            raise ValueError("RNN input dtype (%s) does not match weight dtype (%s). Convert "
                             "input: input.to(%s), or convert model: model.to(%s)"
                             % (input.dtype, w_dtype, w_dtype, input.dtype))
        if input.dim() != expected_dim:
            raise RuntimeError("input must have %d dimensions, got %d"
                               % (expected_dim, input.dim()))
        if input.shape[-1] != self.input_size:
            raise RuntimeError("input.size(-1) must be equal to input_size. Expected %d, got %d"
                               % (self.input_size, input.shape[-1]))

    def _check_hidden(self, hx, expected, what="hidden"):
        if tuple(hx.shape) != expected:
            raise RuntimeError("Expected %s size %s, got %s"
                               % (what, expected, list(hx.shape)))

    def _check_hx_dims(self, hx, dim, lstm):
        kind = "batched 3-D" if dim == 3 else "unbatched 2-D"
        # NOTE: as torch, hx[0] and hx[1] are read by indexing (a Tensor hx for an LSTM fails
        # there, with the indexing error).
        if (hx[0].dim() != dim or hx[1].dim() != dim) if lstm else hx.dim() != dim:
            what = "hx and cx" if lstm else "hx"
            got = "(%d-D, %d-D) tensors" % (hx[0].dim(), hx[1].dim()) if lstm \
                else "%d-D tensor" % hx.dim()
            raise RuntimeError("For %s input, %s should also be %d-D but got %s"
                               % (kind, what, dim, got))

    def flatten_parameters(self):
        """A no-op: the weights need no flattening on this backend (as torch on the CPU)."""

    def _packed_direction(self, data, sizes, state, w_ih, w_hh, b_ih, b_hh, w_hr, reverse):
        """One layer and direction over packed ``data``: (output rows, final state)."""
        lstm = self.mode == "LSTM"
        gi_all = F.linear(data, w_ih, b_ih)
        offsets = [0]
        for bs in sizes:
            offsets.append(offsets[-1] + bs)
        outs = [None] * len(sizes)
        h0 = state
        if reverse:
            state = tuple(s[:sizes[-1]] for s in h0) if lstm else h0[:sizes[-1]]
            order = range(len(sizes) - 1, -1, -1)
        else:
            order = range(len(sizes))
        done = []
        for t in order:
            bs = sizes[t]
            rows = (state[0] if lstm else state).shape[0]
            if bs < rows:     # the shorter sequences end here: keep their last state
                done.append(tuple(s[bs:] for s in state) if lstm else state[bs:])
                state = tuple(s[:bs] for s in state) if lstm else state[:bs]
            elif bs > rows:   # (reverse) longer sequences start here from their h0
                state = tuple(ops.cat([s, s0[rows:bs]], 0) for s, s0 in zip(state, h0)) \
                    if lstm else ops.cat([state, h0[rows:bs]], 0)
            state = _step(self.mode, gi_all[offsets[t]:offsets[t + 1]], state, w_hh, b_hh)
            if w_hr is not None:
                state = (F.linear(state[0], w_hr), state[1])
            outs[t] = state[0] if lstm else state
        if done:
            if lstm:
                state = tuple(ops.cat([s] + [d[i] for d in reversed(done)], 0)
                              for i, s in enumerate(state))
            else:
                state = ops.cat([state] + list(reversed(done)), 0)
        return ops.cat(outs, 0), state

    def _forward_packed(self, input, hx):
        lstm = self.mode == "LSTM"
        data, batch_sizes, sorted_indices, unsorted_indices = input
        sizes = [int(b) for b in batch_sizes.tolist()]
        dirs = 2 if self.bidirectional else 1
        n = sizes[0]
        expected = (self.num_layers * dirs, n, self.proj_size or self.hidden_size)
        cell = (self.num_layers * dirs, n, self.hidden_size)
        if hx is None:
            h0 = ops.zeros(expected, dtype=data.dtype, device=data.device)
            hx = (h0, ops.zeros(cell, dtype=data.dtype, device=data.device)) if lstm else h0
        elif sorted_indices is not None:
            hx = tuple(h.index_select(1, sorted_indices) for h in hx) if lstm \
                else hx.index_select(1, sorted_indices)
        if not lstm:    # (as torch: its LSTM leaves a packed input to the fused kernel)
            self._check_input_args(data, 2)
        elif data.shape[-1] != self.input_size:
            raise RuntimeError("input.size(-1) must be equal to input_size. Expected %d, got %d"
                               % (self.input_size, data.shape[-1]))
        if lstm:
            self._check_hidden(hx[0], expected, "hidden[0]")
            self._check_hidden(hx[1], cell, "hidden[1]")
            h_list, c_list = ops.unbind(hx[0], 0), ops.unbind(hx[1], 0)
        else:
            self._check_hidden(hx, expected)
            h_list = ops.unbind(hx, 0)
        layer_in = data
        h_out, c_out = [], []
        for layer in range(self.num_layers):
            outs = []
            for d in range(dirs):
                k = layer * dirs + d
                state = (h_list[k], c_list[k]) if lstm else h_list[k]
                out, state = self._packed_direction(layer_in, sizes, state,
                                                    *self._weights(layer, d), d == 1)
                outs.append(out)
                h_out.append(state[0] if lstm else state)
                if lstm:
                    c_out.append(state[1])
            layer_in = outs[0] if dirs == 1 else ops.cat(outs, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                layer_in = F.dropout(layer_in, self.dropout, True)
        h_n = ops.stack(h_out, 0)
        hidden = (h_n, ops.stack(c_out, 0)) if lstm else h_n
        if unsorted_indices is not None:
            hidden = tuple(h.index_select(1, unsorted_indices) for h in hidden) if lstm \
                else hidden.index_select(1, unsorted_indices)
        return type(input)(layer_in, batch_sizes, sorted_indices, unsorted_indices), hidden

    def forward(self, input, hx=None):
        if isinstance(input, tuple) and hasattr(input, "batch_sizes"):   # a PackedSequence
            return self._forward_packed(input, hx)
        self._check_input(input)
        lstm = self.mode == "LSTM"
        unbatched = input.dim() == 2
        if hx is not None:
            self._check_hx_dims(hx, input.dim(), lstm)
        if unbatched:
            input = input.unsqueeze(1)
            if hx is not None:
                hx = tuple(h.unsqueeze(1) for h in hx) if lstm else hx.unsqueeze(1)
        elif self.batch_first:
            input = input.transpose(0, 1)
        dirs = 2 if self.bidirectional else 1
        n = input.shape[1]
        expected = (self.num_layers * dirs, n, self.proj_size or self.hidden_size)
        cell = (self.num_layers * dirs, n, self.hidden_size)
        if hx is None:
            h0 = ops.zeros(expected, dtype=input.dtype, device=input.device)
            hx = (h0, ops.zeros(cell, dtype=input.dtype, device=input.device) if self.proj_size
                  else h0) if lstm else h0
        self._check_input_args(input, 3)
        # NOTE: as torch on the CPU: float32 LSTMs without projections run one fused node per
        # layer and direction (its mkldnn layer, reading hx by select); everything else runs
        # its cells step by step (reading hx by unbind).
        fused = lstm and _fusable(
            input, hx[0], hx[1], *[getattr(self, w) for w in self._flat_weights_names])
        if fused and self.proj_size:
            fused = False
            _warn_proj_once()
        if lstm:
            self._check_hidden(hx[0], expected, "hidden[0]")
            self._check_hidden(hx[1], cell, "hidden[1]")
            if fused:
                h_list = [hx[0].select(0, k) for k in range(hx[0].shape[0])]
                c_list = [hx[1].select(0, k) for k in range(hx[1].shape[0])]
            else:
                h_list, c_list = ops.unbind(hx[0], 0), ops.unbind(hx[1], 0)
        else:
            self._check_hidden(hx, expected)
            h_list = ops.unbind(hx, 0)
        layer_in = input
        h_out, c_out = [], []
        for layer in range(self.num_layers):
            outs = []
            for d in range(dirs):
                w_ih, w_hh, b_ih, b_hh, w_hr = self._weights(layer, d)
                k = layer * dirs + d
                if fused:
                    if b_ih is None:    # (torch passes zeros, which take no gradient)
                        b_ih = b_hh = ops.zeros(w_ih.shape[0], dtype=w_ih.dtype, device=w_ih.device)
                    out, h_last, c_last = _LSTMLayer.apply(
                        layer_in, w_ih, w_hh, b_ih, b_hh, h_list[k], c_list[k], d == 1,
                        is_grad_enabled())
                    outs.append(out)
                    h_out.append(h_last)
                    c_out.append(c_last)
                    continue
                gi_all = ops.unbind(F.linear(layer_in, w_ih, b_ih), 0)
                seq = len(gi_all)
                if seq == 0:
                    raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
                state = (h_list[k], c_list[k]) if lstm else h_list[k]
                steps = [None] * seq
                order = range(seq - 1, -1, -1) if d == 1 else range(seq)
                for t in order:
                    state = _step(self.mode, gi_all[t], state, w_hh, b_hh)
                    if w_hr is not None:
                        state = (F.linear(state[0], w_hr), state[1])
                    steps[t] = state[0] if lstm else state
                outs.append(ops.stack(steps, 0))
                if lstm:
                    h_out.append(state[0])
                    c_out.append(state[1])
                else:
                    h_out.append(state)
            layer_in = outs[0] if dirs == 1 else ops.cat(outs, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                layer_in = F.dropout(layer_in, self.dropout, True)
        output = layer_in
        h_n = ops.stack(h_out, 0)
        hidden = (h_n, ops.stack(c_out, 0)) if lstm else h_n
        if unbatched:
            output = output.squeeze(1)
            hidden = tuple(h.squeeze(1) for h in hidden) if lstm else hidden.squeeze(1)
        elif self.batch_first:
            # NOTE: torch's RNN/GRU kernels transpose their fresh output in place
            # (TransposeBackward1); its LSTM returns a transposed view (TransposeBackward0).
            output = output.transpose(0, 1) if lstm else output.transpose_(0, 1)
        return output, hidden

    def extra_repr(self):
        s = "{}, {}".format(self.input_size, self.hidden_size)
        if self.proj_size != 0:
            s += ", proj_size={}".format(self.proj_size)
        if self.num_layers != 1:
            s += ", num_layers={}".format(self.num_layers)
        if self.bias is not True:
            s += ", bias={}".format(self.bias)
        if self.batch_first is not False:
            s += ", batch_first={}".format(self.batch_first)
        if self.dropout != 0:
            s += ", dropout={}".format(self.dropout)
        if self.bidirectional is not False:
            s += ", bidirectional={}".format(self.bidirectional)
        return s


class RNN(RNNBase):
    """Elman RNN: ``h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)`` (or relu).

    Shape:
        Input ``(L, N, H_in)`` (``(N, L, H_in)`` with ``batch_first``) or ``(L, H_in)``;
        returns ``output (L, N, D * H)`` and ``h_n (D * num_layers, N, H)``.
    """

    def __init__(self, input_size, hidden_size, num_layers=1, nonlinearity="tanh", bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, device=None, dtype=None,
                 **kwargs):
        _no_proj(kwargs)
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError("Unknown nonlinearity '%s'. Select from 'tanh' or 'relu'."
                             % nonlinearity)
        self.nonlinearity = nonlinearity
        mode = "RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU"
        super().__init__(mode, input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, dtype=dtype, **kwargs)


class LSTM(RNNBase):
    """Long short-term memory; gates in torch's order (input, forget, cell, output).

    With ``proj_size > 0`` each layer and direction also has ``weight_hr_l{k}`` (P, H) and
    ``h_t = W_hr (o_t * tanh(c_t))``, so ``h`` and the output have size P (``c`` keeps H).

    Shape:
        Input ``(L, N, H_in)`` (``(N, L, H_in)`` with ``batch_first``) or ``(L, H_in)``;
        returns ``output (L, N, D * P)``, ``(h_n (D * num_layers, N, P), c_n (D * num_layers,
        N, H))``, where ``P = proj_size or hidden_size``.
    """

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first,
                         dropout, bidirectional, proj_size, dtype=dtype)


class GRU(RNNBase):
    """Gated recurrent unit; gates in torch's order (reset, update, new)."""

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, device=None, dtype=None, **kwargs):
        _no_proj(kwargs)
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first,
                         dropout, bidirectional, dtype=dtype, **kwargs)


class RNNCellBase(Module):
    """Shared parameters of the single-step cells."""

    __constants__ = ["input_size", "hidden_size", "bias"]

    def __init__(self, input_size, hidden_size, bias, num_chunks, dtype=None):
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        self.weight_ih = Parameter(empty((num_chunks * hidden_size, input_size), dtype=dtype))
        self.weight_hh = Parameter(empty((num_chunks * hidden_size, hidden_size), dtype=dtype))
        if bias:
            self.bias_ih = Parameter(empty(num_chunks * hidden_size, dtype=dtype))
            self.bias_hh = Parameter(empty(num_chunks * hidden_size, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for w in self.parameters():
            init.uniform_(w, -stdv, stdv)

    def extra_repr(self):
        s = "{}, {}".format(self.input_size, self.hidden_size)
        if self.bias is not True:
            s += ", bias={}".format(self.bias)
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += ", nonlinearity={}".format(self.nonlinearity)
        return s

    def _prepare(self, input, hx, n_states):
        name = self._cell_name
        if input.dim() not in (1, 2):
            raise ValueError("%s: Expected input to be 1D or 2D, got %dD instead"
                             % (name, input.dim()))
        if hx is not None and n_states == 2:
            for idx, value in enumerate(hx):
                if value.dim() not in (1, 2):
                    raise ValueError("%s: Expected hx[%d] to be 1D or 2D, got %dD instead"
                                     % (name, idx, value.dim()))
        elif hx is not None and hx.dim() not in (1, 2):
            raise ValueError("%s: Expected hidden to be 1D or 2D, got %dD instead"
                             % (name, hx.dim()))
        batched = input.dim() == 2
        if not batched:
            input = input.unsqueeze(0)
        if hx is None:
            z = ops.zeros((input.shape[0], self.hidden_size), dtype=input.dtype,
                          device=input.device)
            hx = (z, z) if n_states == 2 else z
        elif not batched:
            hx = (hx[0].unsqueeze(0), hx[1].unsqueeze(0)) if n_states == 2 else hx.unsqueeze(0)
        # the checks of torch's fused cell (_VF.lstm_cell / gru_cell / rnn_*_cell)
        if n_states == 2 and not isinstance(hx, (tuple, list)):
            raise TypeError("lstm_cell(): argument 'hx' (position 2) must be tuple of Tensors, "
                            "not %s" % type(hx).__name__)
        if n_states == 2 and len(hx) != 2:
            raise RuntimeError("lstm_cell expects two hidden states")
        if input.shape[1] != self.weight_ih.shape[1]:
            raise RuntimeError("input has inconsistent input_size: got %d expected %d"
                               % (input.shape[1], self.weight_ih.shape[1]))
        for k, h in enumerate(hx if n_states == 2 else (hx,)):
            if input.shape[0] != h.shape[0]:
                raise RuntimeError("Input batch size %d doesn't match hidden%d batch size %d"
                                   % (input.shape[0], k, h.shape[0]))
            if h.shape[1] != self.weight_hh.shape[1]:
                raise RuntimeError("hidden%d has inconsistent hidden_size: got %d, expected %d"
                                   % (k, h.shape[1], self.weight_hh.shape[1]))
        return input, hx, batched


class RNNCell(RNNCellBase):
    """One Elman RNN step: ``h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)`` (or relu)."""

    __constants__ = ["input_size", "hidden_size", "bias", "nonlinearity"]

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None,
                 dtype=None):
        super().__init__(input_size, hidden_size, bias, 1, dtype)
        self.nonlinearity = nonlinearity

    _cell_name = "RNNCell"

    def forward(self, input, hx=None):
        input, hx, batched = self._prepare(input, hx, 1)
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError("Unknown nonlinearity: %s" % self.nonlinearity)
        mode = "RNN_TANH" if self.nonlinearity == "tanh" else "RNN_RELU"
        h = _rnn_step(mode, F.linear(input, self.weight_ih, self.bias_ih), hx, self.weight_hh,
                      self.bias_hh)
        return h if batched else h.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step; returns ``(h', c')``."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 4, dtype)

    _cell_name = "LSTMCell"

    def forward(self, input, hx=None):
        input, hx, batched = self._prepare(input, hx, 2)
        h, c = _lstm_step(F.linear(input, self.weight_ih, self.bias_ih), hx, self.weight_hh,
                          self.bias_hh)
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """One GRU step."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 3, dtype)

    _cell_name = "GRUCell"

    def forward(self, input, hx=None):
        input, hx, batched = self._prepare(input, hx, 1)
        h = _gru_step(F.linear(input, self.weight_ih, self.bias_ih), hx, self.weight_hh,
                      self.bias_hh)
        return h if batched else h.squeeze(0)
