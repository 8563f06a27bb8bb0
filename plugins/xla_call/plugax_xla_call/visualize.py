"""`visualize_array_sharding` / `visualize_sharding`: JAX's picture of which
device holds which block of a 1- or 2-D array, character for character.

Why a layout engine of our own: JAX draws the picture with `rich` (a table of
padded, centred cells, one per block, sized to the block's share of the
array), and users compare what the two print. plugax does not depend on rich,
so this module computes the same cells as JAX (jax/_src/debugging.py) and lays
them out as rich's `Table` does (column measuring, the shrinking of columns
wider than the console, word wrapping with an ellipsis, vertical padding). It
covers only what JAX's table uses: no header, padding 0, square box (ASCII on
a console that cannot print it), or no box and coloured cells with
`use_color` on a terminal. The tests compare with pictures JAX printed.
"""
from __future__ import annotations

import os
import re
import sys
from typing import Any, Callable, NamedTuple, Sequence

import numpy as np

__all__ = ["visualize_array_sharding", "visualize_sharding", "sharding_picture"]


class _Cell(NamedTuple):
    text: str
    top: int
    right: int
    bottom: int
    left: int
    color: str | None = None      # "#RRGGBB" background, when coloured


# --- which block is where (JAX's computation) --------------------------------------

def _chunk(size: int, sl: slice) -> int:
    if sl.start is None and sl.stop is None:
        return 0
    return sl.start // (sl.stop - sl.start)


def _blocks(shape: tuple, sharding: Any) -> tuple[dict, dict, dict]:
    """(row, col) -> device ids, height fraction (None in 1-D), width fraction."""
    devices, heights, widths = {}, {}, {}
    for dev, idx in sharding.devices_indices_map(shape).items():
        idx = tuple(slice(i, i + 1) if isinstance(i, int) else i for i in idx)
        key = tuple(_chunk(n, sl) for n, sl in zip(shape, idx))
        sizes = [(sl.stop - sl.start) if sl.stop is not None else n
                 for n, sl in zip(shape, idx)]
        if len(shape) == 2:
            heights[key], widths[key] = sizes[0] / shape[0], sizes[1] / shape[1]
        else:
            key = (0, *key)
            heights[key], widths[key] = None, sizes[0] / shape[0]
        devices.setdefault(key, set()).add(dev.id)
    return devices, heights, widths


def _cells(shape: tuple, sharding: Any, color: bool, scale: float, min_width: int,
           max_width: int, color_map: Callable | None) -> list[list[_Cell]]:
    """The table JAX builds: one padded label per block, the padding sized so that
    the cell's width and height follow the block's share of the array."""
    devices, heights, widths = _blocks(shape, sharding)
    rows = max(k[0] for k in devices) + 1
    cols = max(k[1] for k in devices) + 1
    base_height = int(10 * scale)
    base_width = int(base_height * (shape[1] if len(shape) == 2 else 1) / shape[0])
    kind = next(iter(sharding.device_set)).platform.upper()
    colors = _color_iter(color_map or _tab20b, rows, cols) if color else None
    table = []
    for i in range(rows):
        row = []
        for j in range(cols):
            text = f"{kind} " + ",".join(str(d) for d in sorted(devices[i, j]))
            width = int(widths[i, j] * base_width * 2.5)
            height = 1 if heights[i, j] is None else int(heights[i, j] * base_height)
            width = min(max(width, min_width), max_width)
            left, rem = divmod(width - len(text) - 2, 2)
            right = left + rem
            top, rem = divmod(height - 2, 2)
            bottom = top + rem
            fill = None
            if color:
                fill = _hex(next(colors)[:3])
                top, right, bottom, left = top + 1, right + 1, bottom + 1, left + 1
            row.append(_Cell(text, max(top, 0), max(right, 0), max(bottom, 0), max(left, 0),
                             fill))
        table.append(row)
    return table


# --- rich's Table, for these cells ----------------------------------------------------

def _measure_text(text: str, width: int) -> tuple[int, int]:
    """rich's Measurement of a str: (longest word, whole text), at most `width`."""
    if width < 1:
        return 0, 0
    words = text.split()
    lo = min(max(map(len, words)) if words else len(text), width)
    hi = min(len(text), width)
    return (0, 0) if hi < 1 else (min(lo, hi), hi)


def _measure_cell(cell: _Cell, width: int) -> tuple[int, int]:
    """rich's Measurement of Padding(text): the text's plus the side padding; a
    cell whose padding alone fills the width measures the width."""
    if width < 1:
        return 0, 0
    extra = cell.left + cell.right
    if width - extra < 1:
        return width, width
    lo, hi = _measure_text(cell.text, width)
    return min(lo + extra, width), min(hi + extra, width)


def _ratio_reduce(total: int, ratios: list, maximums: list, values: list) -> list:
    """rich's _ratio.ratio_reduce: take `total` off `values`, in proportion."""
    ratios = [r if m else 0 for r, m in zip(ratios, maximums)]
    total_ratio = sum(ratios)
    if not total_ratio:
        return list(values)
    out = []
    for r, m, v in zip(ratios, maximums, values):
        if r and total_ratio > 0:
            d = min(m, round(r * total / total_ratio))
            out.append(v - d)
            total -= d
            total_ratio -= r
        else:
            out.append(v)
    return out


def _collapse(widths: list, max_width: int) -> list:
    """rich's Table._collapse_widths: shrink the widest columns first."""
    excess = sum(widths) - max_width
    while sum(widths) and excess > 0:
        widest = max(widths)
        second = max((w for w in widths if w != widest), default=0)
        if not widest - second:
            break
        ratios = [1 if w == widest else 0 for w in widths]
        widths = _ratio_reduce(excess, ratios, [min(excess, widest - second)] * len(widths),
                               widths)
        excess = sum(widths) - max_width
    return widths


def _column(cells: list, width: int) -> tuple[int, int]:
    if width < 1:
        return 0, 0
    ms = [_measure_cell(c, width) for c in cells]
    return min(max(m[0] for m in ms), width), min(max(m[1] for m in ms), width)


def _column_widths(table: list, max_width: int) -> list:
    """rich's Table._calculate_column_widths (no expansion, no fixed widths)."""
    columns = [list(col) for col in zip(*table)]
    widths = [_column(col, max_width)[1] or 1 for col in columns]
    if sum(widths) > max_width:
        widths = _collapse(widths, max_width)
        if sum(widths) > max_width:
            excess = sum(widths) - max_width
            widths = _ratio_reduce(excess, [1] * len(widths), widths, widths)
        widths = [_column(col, w)[1] or 0 for col, w in zip(columns, widths)]
    return widths


def _truncate(line: str, width: int, pad: bool) -> str:
    if len(line) > width:
        return line[:max(width - 1, 0)] + "…"
    return line + " " * (width - len(line)) if pad else line


def _wrap(text: str, width: int) -> list[str]:
    """rich's Text.wrap with justify="left", overflow="ellipsis": break between
    words, a word too long for a line keeps a line of its own and ends in '…'."""
    breaks, offset = [], 0
    for m in re.finditer(r"\s*\S+\s*", text):
        start, word = m.start(), m.group()
        if width - offset >= len(word.rstrip()):
            offset += len(word)
        elif len(word.rstrip()) > width:
            if start:
                breaks.append(start)
            offset = len(word)
        elif offset and start:
            breaks.append(start)
            offset = len(word)
    lines = [text[a:b] for a, b in zip([0] + breaks, breaks + [len(text)])]
    out = []
    for line in lines:
        if len(line) > width:          # rstrip_end: drop trailing blanks past the width
            excess = len(line) - width
            blanks = len(line) - len(line.rstrip())
            line = line[:len(line) - min(blanks, excess)]
        out.append(_truncate(_truncate(line, width, pad=True), width, pad=False))
    return out


def _fit(line: str, width: int) -> str:
    return line[:width] + " " * (width - len(line))


def _render_cell(cell: _Cell, width: int) -> list[tuple[tuple, str]]:
    """rich's Padding(Align(text, "center")) in a column `width` wide: per line,
    the cell's own pieces (left padding, text, right padding: coloured when the
    cell is) and the column's blank tail, `width` wide in all."""
    if width < 1:
        return []
    own = min(_measure_text(cell.text, width)[1] + cell.left + cell.right, width)
    inner = own - cell.left - cell.right
    body = []
    if inner >= 1:
        lines = _wrap(cell.text, _measure_text(cell.text, inner)[1])
        shape = max(len(ln) for ln in lines)
        excess = inner - shape
        lines = [_fit(ln, shape) for ln in lines]
        if excess > 0:
            lines = [" " * (excess // 2) + ln + " " * (excess - excess // 2) for ln in lines]
        body = [_fit(ln, inner) for ln in lines]
    tail = " " * (width - own)
    blank = ((" " * own,), tail)
    return ([blank] * cell.top + [((" " * cell.left, ln, " " * cell.right), tail)
                                  for ln in body] + [blank] * cell.bottom)


_BOXES = {True: "┌─┬┐│├┼┤└┴┘", False: "+--+||+|+-+"}


def _draw(table: list, max_width: int, boxed: bool, unicode: bool) -> list[str]:
    widths = _column_widths(table, max_width - (len(table[0]) + 1 if boxed else 0))
    tl, h, tm, tr, v, ml, mm, mr, bl, bm, br = _BOXES[unicode]
    rule = lambda a, m, b: a + m.join(h * w for w in widths) + b   # noqa: E731
    out = [rule(tl, tm, tr)] if boxed else []
    for r, row in enumerate(table):
        cells = [_render_cell(c, w) for c, w in zip(row, widths)]
        height = max(1, max(len(c) for c in cells))
        cells = [c + [((), " " * w)] * (height - len(c)) for c, w in zip(cells, widths)]
        for k in range(height):
            parts = [_paint(c[k], cell.color) for c, cell in zip(cells, row)]
            out.append(v + v.join(parts) + v if boxed else "".join(parts))
        if boxed:
            out.append(rule(ml, mm, mr) if r < len(table) - 1 else rule(bl, bm, br))
    # the console crops what is wider than it (only borders can be: coloured
    # cells without them always fit)
    return [ln[:max_width] for ln in out] if boxed else out


# --- colours (use_color on a terminal) ----------------------------------------------

# matplotlib's "tab20b", JAX's default colour map
_TAB20B = ["#393B79", "#5254A3", "#6B6ECF", "#9C9EDE", "#637939", "#8CA252", "#B5CF6B",
           "#CEDB9C", "#8C6D31", "#BD9E39", "#E7BA52", "#E7CB94", "#843C39", "#AD494A",
           "#D6616B", "#E7969C", "#7B4173", "#A55194", "#CE6DBD", "#DE9ED6"]


def _tab20b(v: float) -> tuple:
    c = _TAB20B[min(int(v * 20), 19)]
    return tuple(int(c[k:k + 2], 16) / 255 for k in (1, 3, 5)) + (1.0,)


def _color_iter(color_map: Callable, rows: int, cols: int):
    n = rows * cols
    values = np.linspace(0, 1, n)
    idx = 0
    for _ in range(n):
        yield color_map(values[idx])
        idx = (idx + n // 2 + bool(n % 2 == 0)) % n


def _hex(rgb: Sequence[float]) -> str:
    r, g, b = (int(a * 255) for a in rgb)
    return f"#{r:02X}{g:02X}{b:02X}"


def _paint(line: tuple, fill: str | None) -> str:
    """A cell's line; coloured as rich's truecolor output: each piece of the cell
    in its own escape sequence (text black or white, whichever reads on the
    fill), the column's blank tail plain."""
    parts, tail = line
    if fill is None:
        return "".join(parts) + tail
    r, g, b = (int(fill[k:k + 2], 16) for k in (1, 3, 5))
    ink = "0;0;0" if r * 0.299 + g * 0.587 + b * 0.114 > 186 else "255;255;255"
    return "".join(f"\x1b[38;2;{ink};48;2;{r};{g};{b}m{p}\x1b[0m" for p in parts if p) + tail


def _terminal_colors(stream: Any) -> bool:
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and os.environ.get("TERM", "") not in ("dumb", "unknown")


def _unicode(stream: Any) -> bool:
    encoding = getattr(stream, "encoding", None) or "utf-8"
    return encoding.lower().startswith("utf")


# --- the public functions --------------------------------------------------------------

def sharding_picture(shape: Sequence[int], sharding: Any, *, use_color: bool = False,
                     scale: float = 1.0, min_width: int = 9, max_width: int = 80,
                     color_map: Callable | None = None, unicode: bool = True) -> str:
    """The text `visualize_sharding` prints (with escape sequences when
    `use_color`)."""
    shape = tuple(int(n) for n in shape)
    if len(shape) > 2 or len(shape) < 1:
        raise ValueError("`visualize_sharding` only works for shapes with 1 and 2 dimensions.")
    table = _cells(shape, sharding, use_color, scale, min_width, max_width, color_map)
    return "\n".join(_draw(table, max_width, not use_color, unicode)) + "\n"


def visualize_sharding(shape: Sequence[int], sharding: Any, *, use_color: bool = True,
                       scale: float = 1.0, min_width: int = 9, max_width: int = 80,
                       color_map: Callable | None = None) -> None:
    """Print which devices hold which block of an array of `shape` under `sharding`
    (JAX's picture; colours only on a terminal, as rich gives JAX)."""
    out = sys.stdout
    print(sharding_picture(shape, sharding, use_color=use_color and _terminal_colors(out),
                           scale=scale, min_width=min_width, max_width=max_width,
                           color_map=color_map, unicode=_unicode(out)), end="", file=out)


def visualize_array_sharding(arr: Any, **kwargs: Any) -> None:
    """Print which devices hold which block of the 1- or 2-D Array `arr`."""
    from .sharding import sharding_of
    visualize_sharding(arr.shape, sharding_of(arr), **kwargs)
