"""``Compare``: many Measurements as one table per label (rows: sub_label or stmt, grouped by
thread count; columns: description)."""
import collections
import enum
import math
from typing import List, Optional

from . import common

__all__ = ["Colorize", "Compare"]

BEST, GOOD, BAD, VERY_BAD = "\033[92m", "\033[34m", "\033[2m\033[91m", "\033[31m"
BOLD, TERMINATE = "\033[1m", "\033[0m"


class Colorize(enum.Enum):
    NONE = "none"
    COLUMNWISE = "columnwise"
    ROWWISE = "rowwise"


def _color(segment: str, value: float, best: float) -> str:
    if value <= best * 1.01 or value <= best + 100e-9:
        return BEST + BOLD + segment + TERMINATE * 2
    if value <= best * 1.1:
        return GOOD + BOLD + segment + TERMINATE * 2
    if value >= best * 5:
        return VERY_BAD + BOLD + segment + TERMINATE * 2
    if value >= best * 2:
        return BAD + segment + TERMINATE * 2
    return segment


class _Table:
    def __init__(self, results, colorize, trim, highlight) -> None:
        self.results, self.colorize, self.trim = results, colorize, trim
        self.highlight = highlight
        self.label = results[0].label
        self.unit, self.scale = common.select_unit(min(r.median for r in results))
        rows = common.ordered_unique((r.num_threads, r.env, r.as_row_name) for r in results)
        self.rows = sorted(rows, key=lambda k: k[:2])
        self.cols = common.ordered_unique(r.description for r in results)
        self.grid: List[List[Optional[common.Measurement]]] = [[None] * len(self.cols)
                                                               for _ in self.rows]
        for r in results:
            self.grid[self.rows.index((r.num_threads, r.env, r.as_row_name))][
                self.cols.index(r.description)] = r

    def _templates(self):
        out = []
        for j in range(len(self.cols)):
            ms = [row[j] for row in self.grid if row[j] is not None]
            lead = [math.ceil(math.log10(m.median / self.scale)) for m in ms]
            warn = self.highlight and any(m.has_warnings for m in ms)
            dec = min(max(m.significant_figures - d, 0) for d, m in zip(lead, ms)) \
                if self.trim else 1
            length = max(lead) + dec + (1 if dec else 0)
            out.append((f"{{:>{length}.{dec}f}}{{:>{7 if warn else 0}}}", warn))
        return out

    def render(self) -> str:
        templates = self._templates()
        envs = {r.env for r in self.results}
        render_env = len(envs) > 1
        env_len = max(len(e) for e in envs) if render_env else 0
        strings = [[""] + [str(c) if c is not None else "" for c in self.cols]]
        prior_env = ""
        for (threads, env, name), row in zip(self.rows, self.grid):
            first = next(m for m in row if m is not None)
            shown = f"({first.env})" if render_env and env != prior_env else ""
            cells = ["  " + shown.ljust(env_len + 4) + name]
            for m, (tpl, warn) in zip(row, templates):
                if m is None:
                    cells.append(" " * len(tpl.format(1.0, "")))
                    continue
                value = m.median / self.scale
                if self.trim:
                    value = common.trim_sigfig(value, m.significant_figures)
                spread = f" (! {m.iqr / m.median * 100:.0f}%)" if warn and m.has_warnings else ""
                cells.append(tpl.format(value, spread))
            strings.append(cells)
            prior_env = env
        widths = [max(len(s[i]) for s in strings) for i in range(len(strings[0]))]
        lines = ["  |  ".join(s.center(w) for s, w in zip(strings[0], widths))]
        width, prior_threads = len(lines[0]), -1
        for (threads, _, _), row, cells in zip(self.rows, self.grid, strings[1:]):
            if threads != prior_threads:
                lines.append(f"{threads} threads: ".ljust(width, "-"))
                prior_threads = threads
            out = [cells[0].ljust(widths[0])]
            for j, (cell, w, m) in enumerate(zip(cells[1:], widths[1:], row)):
                cell = cell.center(w)
                best = None
                if self.colorize == Colorize.ROWWISE:
                    best = min(r.median for r in row if r is not None)
                elif self.colorize == Colorize.COLUMNWISE:
                    group = [g[j].median for k, g in zip(self.rows, self.grid)   # type: ignore
                             if k[0] == threads and g[j] is not None]
                    best = min(group) if group else None
                if self.colorize != Colorize.NONE and m is not None and best is not None:
                    cell = _color(cell, m.median, best)
                out.append(cell)
            lines.append("  |  ".join(out))
        warn = self.highlight and any(r.has_warnings for r in self.results)
        title = (" " + (self.label or "") + " ").center(width - 2, "-")
        note = ("(! XX%) Measurement has high variance, where XX is the IQR / median * 100.\n"
                if warn else "")
        return (f"[{title}]\n" + "\n".join(lines) + "\n\nTimes are in "
                f"{common.unit_to_english(self.unit)}s ({self.unit}).\n{note}")


class Compare:
    """A table of ``results`` (Measurements): ``print()`` it or ``str()`` it."""

    def __init__(self, results) -> None:
        self._results: List[common.Measurement] = []
        self.extend_results(results)
        self._trim_significant_figures = False
        self._colorize = Colorize.NONE
        self._highlight_warnings = False

    def __str__(self) -> str:
        return "\n".join(self._render())

    def extend_results(self, results) -> None:
        """Add Measurements."""
        for r in results:
            if not isinstance(r, common.Measurement):
                raise ValueError(f"Expected an instance of `Measurement`, got {type(r)} instead.")
        self._results.extend(results)

    def trim_significant_figures(self) -> None:
        self._trim_significant_figures = True

    def colorize(self, rowwise: bool = False) -> None:
        self._colorize = Colorize.ROWWISE if rowwise else Colorize.COLUMNWISE

    def highlight_warnings(self) -> None:
        self._highlight_warnings = True

    def print(self) -> None:
        print(str(self))

    def _render(self) -> List[str]:
        groups = collections.defaultdict(list)
        for r in common.Measurement.merge(self._results):
            groups[r.label].append(r)
        return [_Table(g, self._colorize, self._trim_significant_figures,
                       self._highlight_warnings).render() for g in groups.values()]
