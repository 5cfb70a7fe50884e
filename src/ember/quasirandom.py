"""``torch.quasirandom``: the Sobol engine (Joe and Kuo's direction numbers, as torch's)."""
import numpy as np

import ember as torch

__all__ = ["SobolEngine"]


def _direction_numbers(dimension, maxbit):
    """torch's ``_sobol_engine_initialize_state_``: scipy holds the same D(6) table and rule."""
    from scipy.stats import _sobol
    _sobol.get_poly_vinit("poly", np.uint64)     # (loads scipy's table once)
    v = np.zeros((dimension, maxbit), dtype=np.uint64)
    _sobol._initialize_v(v, dimension, maxbit)
    return v.astype(np.int64)


def _xor_steps(quasi, n, state, num_generated):
    """The ``n`` states after ``quasi``, one per row: each step XORs in the direction number
    at the rightmost zero bit of the running count (torch's ``_sobol_engine_draw``)."""
    counts = np.arange(num_generated, num_generated + n, dtype=np.int64)
    low_zero = counts ^ (counts + 1)              # (the rightmost zero bit and those below)
    cols = np.log2(low_zero + 1).astype(np.int64) - 1
    return np.bitwise_xor.accumulate(state[:, cols].T, axis=0) ^ quasi


class SobolEngine:
    r"""An engine for (scrambled) Sobol sequences in up to 21201 dimensions, as
    ``torch.quasirandom.SobolEngine``: the same points, and with ``scramble=True`` the same
    scrambling drawn from ember's (torch's) random stream.

    Args:
        dimension (int): the dimensionality of the sequence.
        scramble (bool): scramble the points (Owen's linear matrix scrambling and a shift).
        seed (int, optional): seed of the scrambling generator (the default generator if None).

    Example:
        >>> import ember
        >>> ember.quasirandom.SobolEngine(dimension=3).draw(3)
        tensor([[0.0000, 0.0000, 0.0000],
                [0.5000, 0.5000, 0.5000],
                [0.7500, 0.2500, 0.2500]])
    """

    MAXBIT = 30
    MAXDIM = 21201

    def __init__(self, dimension, scramble=False, seed=None):
        if dimension > self.MAXDIM or dimension < 1:
            raise ValueError("Supported range of dimensionality "
                             f"for SobolEngine is [1, {self.MAXDIM}]")
        self.seed = seed
        self.scramble = scramble
        self.dimension = dimension
        self.sobolstate = torch.from_numpy(_direction_numbers(dimension, self.MAXBIT))
        if not self.scramble:
            self.shift = torch.zeros(self.dimension, dtype=torch.long)
        else:
            self._scramble()
        self.quasi = self.shift.clone(memory_format=torch.contiguous_format)
        self._first_point = (self.quasi / 2**self.MAXBIT).reshape(1, -1)
        self.num_generated = 0

    def _draw(self, n, num_generated, dtype):
        """``n`` points after ``self.quasi`` (which moves on), in ``dtype``."""
        if not dtype.is_floating_point or dtype.itemsize < 4:
            raise NotImplementedError('"_sobol_engine_draw" not implemented for \'%s\''
                                      % dtype._legacy[:-len("Tensor")])
        steps = _xor_steps(self.quasi.numpy(), n, self.sobolstate.numpy(), num_generated)
        if n:
            self.quasi = torch.from_numpy(steps[-1].copy())
        points = steps.astype(dtype.np) * dtype.np.type(1.0 / (1 << self.MAXBIT))
        return torch.from_numpy(points.reshape(n, self.dimension))

    def draw(self, n=1, out=None, dtype=None):
        r"""The next ``n`` points of the sequence, shape ``(n, dimension)``.

        Args:
            n (int): the number of points. Default: 1.
            out (Tensor, optional): the output tensor.
            dtype (ember.dtype, optional): the result's dtype (the default dtype if None).
        """
        if dtype is None:
            dtype = torch.get_default_dtype()
        if self.num_generated == 0:
            if n == 1:
                result = self._first_point.to(dtype)
            else:
                if n < 1:
                    raise RuntimeError("Trying to create tensor with negative dimension %d: "
                                       "[%d, %d]" % (n - 1, n - 1, self.dimension))
                result = self._draw(n - 1, self.num_generated, dtype)
                result = torch.cat((self._first_point.to(dtype), result), dim=-2)
        else:
            if n < 0:
                raise RuntimeError("Trying to create tensor with negative dimension %d: "
                                   "[%d, %d]" % (n, n, self.dimension))
            result = self._draw(n, self.num_generated - 1, dtype)
        self.num_generated += n
        if out is not None:
            out.resize_as_(result).copy_(result)
            return out
        return result

    def draw_base2(self, m, out=None, dtype=None):
        r"""The next ``2**m`` points of the sequence (the total drawn must stay a power of 2).

        Args:
            m (int): the base-2 exponent of the number of points.
            out (Tensor, optional): the output tensor.
            dtype (ember.dtype, optional): the result's dtype (the default dtype if None).
        """
        n = 2**m
        total_n = self.num_generated + n
        if not (total_n & (total_n - 1) == 0):
            raise ValueError(
                "The balance properties of Sobol' points require "
                f"n to be a power of 2. {self.num_generated} points have been "
                f"previously generated, then: n={self.num_generated}+2**{m}={total_n}. "
                "If you still want to do this, please use "
                "'SobolEngine.draw()' instead.")
        return self.draw(n=n, out=out, dtype=dtype)

    def reset(self):
        r"""Back to the first point."""
        self.quasi.copy_(self.shift)
        self.num_generated = 0
        return self

    def fast_forward(self, n):
        r"""Skip ``n`` points, as drawing them would.

        Args:
            n (int): the number of points to skip.
        """
        first = self.num_generated == 0
        steps = n - 1 if first else n
        if steps > 0:
            start = self.num_generated if first else self.num_generated - 1
            last = _xor_steps(self.quasi.numpy(), steps, self.sobolstate.numpy(), start)[-1]
            self.quasi.copy_(torch.from_numpy(last.copy()))
        self.num_generated += n
        return self

    def _scramble(self):
        g = None
        if self.seed is not None:
            g = torch.Generator()
            g.manual_seed(self.seed)
        shift_ints = torch.randint(2, (self.dimension, self.MAXBIT), generator=g)
        self.shift = torch.mv(shift_ints, torch.pow(2, torch.arange(0, self.MAXBIT)))
        ltm = torch.randint(2, (self.dimension, self.MAXBIT, self.MAXBIT), generator=g).tril()
        ltm = ltm.numpy().copy()
        idx = np.arange(self.MAXBIT)
        ltm[:, idx, idx] = 1
        # (torch's _sobol_engine_scramble_: bit MAXBIT-1-p of the new number is the parity of
        # row p of the lower-triangular matrix, read as bits, AND the direction number)
        rows = ltm @ (1 << np.arange(self.MAXBIT - 1, -1, -1, dtype=np.int64))   # (dim, p)
        v = self.sobolstate.numpy()
        anded = rows[:, None, :] & v[:, :, None]                                  # (dim, j, p)
        parity = np.zeros(anded.shape, dtype=np.int64)
        for k in range(self.MAXBIT):
            parity ^= (anded >> k) & 1
        weights = 1 << np.arange(self.MAXBIT - 1, -1, -1, dtype=np.int64)
        self.sobolstate = torch.from_numpy((parity * weights).sum(-1))

    def __repr__(self):
        fmt_string = [f"dimension={self.dimension}"]
        if self.scramble:
            fmt_string += ["scramble=True"]
        if self.seed is not None:
            fmt_string += [f"seed={self.seed}"]
        return self.__class__.__name__ + "(" + ", ".join(fmt_string) + ")"
