"""A vectorised tokenizer for the text formats (METIS graphs, Matrix Market).

The file is scanned with NumPy in chunks of whole lines, so that temporaries stay small and no
Python code runs per line or per token. Definitions shared by both formats:

- lines end with ``\\n``; every byte from 0x01 to 0x20 (space, tab, ``\\r`` of CRLF files, other
  control characters) is white space; a NUL byte is an error naming its line;
- a token is a run of non-blank bytes;
- a comment line is a line whose first token starts with ``%``; its tokens are dropped;
- with ``trailing_comments`` (the METIS graph and mesh formats, whose METIS 5.1 readers stop a
  line at the first thing that is not an integer), a ``%`` on any other line also starts a
  comment running to the line end: the line keeps the tokens before it, and the text of a
  token up to the ``%`` (``2%x`` reads 2);
- an integer token is an optional ``+``/``-`` followed by decimal digits whose value, leading
  zeros aside, has at most 18 digits (so it fits in int64). Other tokens are listed in
  ``Tokens.bad`` (their value reads 0), so a format can reject them or read them some other way
  (Matrix Market reals).

Chunks end at a line end, or, inside a line longer than a chunk, at a blank byte; memory grows
with the tokens and the lines that hold them, not with blank bytes or blank lines. A token
longer than a chunk (1 MiB) outside a comment line is an error.

Integers of up to 8 digits are parsed eight bytes at a time (SWAR: one unaligned 64-bit load per
token and three multiply-shift steps); longer and signed ones column by column.
"""

from __future__ import annotations

import os
import re
from collections import deque
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from gpmetis.backend import sorted_unique
from gpmetis.errors import InputError

CHUNK = 1 << 20  # bytes per chunk; a chunk is extended to the end of its last line
THREADS = min(8, os.cpu_count() or 1)  # NumPy releases the GIL inside each operation
SERIAL_CHUNKS = 2  # a file of at most this many chunks is scanned without threads
_MAX_DIGITS = 18  # every integer of at most 18 digits fits in int64
_MAX_GAP = 8  # longest run of blank bytes between tokens read without a newline search
_FLOAT_BATCH = 1 << 16  # tokens per float conversion step
_MAX_FLOAT_CHARS = 64
_INT32_MAX = np.iinfo(np.int32).max

SWAR_ZEROS = np.uint64(0x3030303030303030)  # eight '0' characters
_M1 = np.uint64(0x00FF00FF00FF00FF)
_M2 = np.uint64(0x0000FFFF0000FFFF)
_PAIRS = np.uint64(10 * 256 + 1)  # times a word: 10 * each byte + the next, in its high byte
_QUADS = np.uint64(100 * 65536 + 1)
_OCTETS = np.uint64(10000 * 2**32 + 1)
_SHIFT = np.array([64 - 8 * k for k in range(8)] + [0], np.uint64)  # by token length
_PERCENT, _PLUS, _MINUS, _NEWLINE, _ZERO = ord("%"), ord("+"), ord("-"), ord("\n"), ord("0")
# what a chunk starts in: a new line (or one holding only blanks so far), the rest of a line
# that already holds tokens, the rest of a comment line
_FRESH, _DATA, _COMMENT = 0, 1, 2


@dataclass
class Tokens:
    """The tokens of a text file, comment lines removed.

    ``values[t]`` is the value of token t (int32 when every integer fits, else int64). The file
    has ``nlines`` lines; ``rows`` lists, in order, the 0-based lines that hold tokens (int32
    when the file is under 2 GiB, else int64) and ``row_cnt`` (int32) how many each holds: the
    tokens of ``rows[r]`` are ``values[row_tok[r]:row_tok[r + 1]]``. ``comment_lines`` holds the
    sorted 0-based comment lines. ``bad`` lists the tokens that are not integers, in order, with
    the byte offsets ``bad_start``/``bad_end`` of their text in ``data``.
    """

    path: str
    data: np.ndarray
    values: np.ndarray
    nlines: int
    rows: np.ndarray
    row_cnt: np.ndarray
    comment_lines: np.ndarray
    bad: np.ndarray
    bad_start: np.ndarray
    bad_end: np.ndarray
    _row_tok: np.ndarray | None = None

    @property
    def row_tok(self) -> np.ndarray:
        """int64 array of len(rows) + 1 entries: the index of the first token of each row."""
        if self._row_tok is None:
            self._row_tok = np.zeros(len(self.rows) + 1, np.int64)
            np.cumsum(self.row_cnt, out=self._row_tok[1:])
        return self._row_tok

    def first_token(self, line: int) -> int:
        """Index of the first token at or after (0-based) ``line``: cheap for early lines."""
        r = int(np.searchsorted(self.rows, line))
        if self._row_tok is not None:
            return int(self._row_tok[r])
        return int(self.row_cnt[:r].sum(dtype=np.int64))

    def line_of(self, tok) -> np.ndarray | int:
        """1-based file line of each token index in ``tok`` (an int or an array)."""
        return self.rows[np.searchsorted(self.row_tok, tok, side="right") - 1] + 1

    def text(self, i: int) -> str:
        """The text of the i-th bad token, for messages (shortened when long)."""
        raw = self.data[self.bad_start[i] : min(self.bad_end[i], self.bad_start[i] + 40)]
        return raw.tobytes().decode("utf-8", "replace")

    def bad_floats(self, i: np.ndarray, what: str = "a number") -> np.ndarray:
        """float64 values of the bad tokens ``i`` (indices into ``bad``), which must be finite
        decimal numbers (``1.5``, ``-2e-3``); InputError at the first that is not."""
        out = np.empty(len(i), np.float64)
        for c0 in range(0, len(i), _FLOAT_BATCH):
            sel = i[c0 : c0 + _FLOAT_BATCH]
            text = self._fixed_width(sel)
            try:
                out[c0 : c0 + len(sel)] = text.astype(np.float64)
                ok = np.isfinite(out[c0 : c0 + len(sel)])
            except ValueError:
                ok = None
            if ok is None or not ok.all():
                k = int(np.argmin(ok)) if ok is not None else _first_non_float(text)
                line = int(self.line_of(int(self.bad[sel[k]])))
                found = self.text(int(sel[k]))
                raise InputError(self.path, f"expected {what}, found '{found}'", line)
        return out

    def _fixed_width(self, sel: np.ndarray) -> np.ndarray:
        """The text of bad tokens ``sel`` as a NumPy bytes array (zero padded)."""
        start = self.bad_start[sel]
        return token_text(self.data, start, self.bad_end[sel] - start)

    def require_ints(self, lo: int, hi: int, what: str = "an integer") -> None:
        """Raise InputError at the first token in [lo, hi) that is not an integer."""
        i = int(np.searchsorted(self.bad, lo))
        if i < len(self.bad) and self.bad[i] < hi:
            line = int(self.line_of(int(self.bad[i])))
            text = self.text(i)
            whole = self.data[self.bad_start[i] : self.bad_end[i]].tobytes()
            if re.fullmatch(rb"[+-]?[0-9]+", whole):  # digits all: too many of them
                raise InputError(self.path, f"'{text}' has more than {_MAX_DIGITS} digits "
                                 "(leading zeros aside), more than any count or weight holds",
                                 line)
            raise InputError(self.path, f"expected {what}, found '{text}'", line)


def token_text(b: np.ndarray, start: np.ndarray, length: np.ndarray) -> np.ndarray:
    """The text of tokens b[start:start+length] as a NumPy bytes array (zero padded), for a
    conversion such as ``astype(np.float64)``; one longer than any number is made invalid."""
    width = min(int(length.max(initial=1)), _MAX_FLOAT_CHARS)
    cols = np.arange(width)
    text = b[np.minimum(start[:, None] + cols, len(b) - 1)]
    text[cols >= length[:, None]] = 0
    text[length > width, -1] = ord("?")  # longer than any number we read: never valid
    return text.view(f"S{width}").ravel()


def tokenize(data, path: str, *, trailing_comments: bool = False) -> Tokens:
    """Split ``data`` (bytes, a bytes-like object with ``find`` and ``rfind`` such as an mmap,
    or a uint8 NumPy array, e.g. a view of part of an mmap) into lines and tokens and parse
    the integer tokens (see the module docstring)."""
    b = np.frombuffer(data, np.uint8)
    if isinstance(data, np.ndarray):
        data = _NewlineFinder(b)
    nbytes = len(b)
    pos_t = np.int32 if nbytes < _INT32_MAX else np.int64
    # one unaligned little-endian 64-bit word starting at every byte (no copy)
    win = np.ndarray((max(nbytes - 7, 0),), "<u8", buffer=b, strides=(1,))

    out = _Output(nbytes, path)
    if nbytes <= SERIAL_CHUNKS * CHUNK:  # at most two chunks: scanned here, sooner than the
        # threads' import and start-up
        for lo, hi, state in _chunks(data, b, path, trailing_comments):
            out.add(lo > 0 and b[lo - 1] != _NEWLINE,
                    _scan_chunk(b, win, lo, hi, pos_t, state, trailing_comments))
        return out.finish(b)
    from concurrent.futures import ThreadPoolExecutor  # imported by large files only

    with ThreadPoolExecutor(THREADS) as pool:
        pending: deque = deque()
        for lo, hi, state in _chunks(data, b, path, trailing_comments):
            cont = lo > 0 and b[lo - 1] != _NEWLINE
            pending.append((cont, pool.submit(_scan_chunk, b, win, lo, hi, pos_t, state,
                                              trailing_comments)))
            if len(pending) > 2 * THREADS:
                cont, job = pending.popleft()
                out.add(cont, job.result())
        while pending:
            cont, job = pending.popleft()
            out.add(cont, job.result())
    return out.finish(b)


class _NewlineFinder:
    """``find`` and ``rfind`` of a newline (the one ``sub`` searched here) in a uint8 array, as
    bytes have them: the nearest bytes first, in windows that grow, so that a search near a
    chunk's end reads little."""

    def __init__(self, b: np.ndarray) -> None:
        self.b = b

    def find(self, sub: bytes, start: int, end: int) -> int:
        end, width = min(end, len(self.b)), 256
        while start < end:
            hit = np.flatnonzero(self.b[start:min(start + width, end)] == _NEWLINE)
            if len(hit):
                return start + int(hit[0])
            start, width = start + width, width * 16
        return -1

    def rfind(self, sub: bytes, start: int, end: int) -> int:
        end, width = min(end, len(self.b)), 256
        while start < end:
            low = max(end - width, start)
            hit = np.flatnonzero(self.b[low:end] == _NEWLINE)
            if len(hit):
                return low + int(hit[-1])
            end, width = low, width * 16
        return -1


def _chunks(data, b: np.ndarray, path: str, trailing: bool):
    """(lo, hi, state) of each chunk in file order: about CHUNK bytes, ending after a newline
    (or, in a longer line, before a blank byte; in a comment, anywhere); ``state`` is what the
    chunk starts in; ``trailing``: a '%' after a line's tokens starts a comment."""
    nbytes, lo, state = len(b), 0, _FRESH
    while lo < nbytes:
        target = min(lo + CHUNK, nbytes)
        hi = nbytes if target == nbytes else data.find(b"\n", target - 1, target + CHUNK) + 1
        if hi == 0:  # no newline within a chunk's length: cut the line at a blank byte
            blank = b[target : target + CHUNK] <= 32
            if trailing:  # or before a '%', where a token ends too
                blank |= b[target : target + CHUNK] == _PERCENT
            i = int(np.argmax(blank))
            if blank[i]:
                hi = target + i
            elif _state_at(data, b, lo, target, state, trailing) == _COMMENT:
                hi = target
            else:
                raise InputError(path, f"a token longer than {CHUNK} bytes", _line_at(b, target))
        yield lo, hi, state
        state = _FRESH if b[hi - 1] == _NEWLINE else _state_at(data, b, lo, hi, state, trailing)
        lo = hi


def _state_at(data, b: np.ndarray, lo: int, hi: int, state: int, trailing: bool) -> int:
    """What position ``hi`` is in (a _FRESH or _DATA line, or a _COMMENT), given ``state`` at
    lo; with ``trailing``, any '%' in the line before hi puts it in a comment."""
    newline = data.rfind(b"\n", lo, hi)
    if newline < 0 and state == _COMMENT:
        return state
    seg = b[max(newline + 1, lo) : hi]
    if trailing and (seg == _PERCENT).any():
        return _COMMENT
    if newline < 0 and state == _DATA:
        return state
    i = int(np.argmax(seg > 32))
    if len(seg) == 0 or seg[i] <= 32:
        return _FRESH
    return _COMMENT if seg[i] == _PERCENT else _DATA


def _line_at(b: np.ndarray, pos: int) -> int:
    """1-based line of byte ``pos`` (newlines counted a chunk at a time)."""
    return 1 + sum(
        int(np.count_nonzero(b[i : min(i + CHUNK, pos)] == _NEWLINE))
        for i in range(0, pos, CHUNK)
    )


def _first_non_float(text: np.ndarray) -> int:
    """Index of the first entry of a bytes array that NumPy cannot convert to float."""
    lo, hi = 0, len(text)  # text[:lo] converts; text[:hi] does not
    while hi - lo > 1:
        mid = (lo + hi) // 2
        try:
            text[:mid].astype(np.float64)
            lo = mid
        except ValueError:
            hi = mid
    return lo


class _Chunk(NamedTuple):
    """What one chunk holds: token values, the chunk's lines (0-based within it; the first
    continues the previous chunk's last line when the chunk starts inside a line)."""

    vals: np.ndarray  # int64, comment tokens dropped
    rows: np.ndarray  # int64: lines holding tokens
    cnt: np.ndarray  # int32: tokens on each of those lines
    nlines: int  # newlines, plus one when the chunk ends inside a line
    comment: np.ndarray  # comment lines
    bad: np.ndarray  # indices into vals of the tokens that are not integers
    bad_start: np.ndarray  # their byte offsets in the file
    bad_end: np.ndarray
    wide: bool  # some values may need more than 8 digits
    nul_line: int = -1  # the line of the first NUL byte, if any (then nothing else is set)

    def after_lines(self, k: int) -> _Chunk:
        """The same chunk, preceded by ``k`` lines without tokens."""
        return self._replace(rows=self.rows + k, nlines=self.nlines + k,
                             comment=self.comment + k)


class _Output:
    """Accumulates the per-chunk results, in file order."""

    def __init__(self, nbytes: int, path: str) -> None:
        # at most one token per two bytes: the untouched tail of the buffer is never paged in
        self.values = np.empty(nbytes // 2 + 1, np.int32)
        self.path = path
        self.row_t = np.int32 if nbytes < _INT32_MAX else np.int64  # nlines <= nbytes + 1
        self.ntok = 0
        self.nline = 0
        self.rows: list[np.ndarray] = []
        self.cnt: list[np.ndarray] = []
        self.comments: list[np.ndarray] = []
        self.bad: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []

    def add(self, cont: bool, c: _Chunk) -> None:
        """Append one chunk; ``cont``: its first line continues the last line so far."""
        base = self.nline - cont  # file line of the chunk's first line
        if c.nul_line >= 0:
            raise InputError(self.path, "a NUL byte: not a text file", base + c.nul_line + 1)
        k = len(c.vals)
        if c.wide and self.values.dtype == np.int32 and k:
            if c.vals.min() < -_INT32_MAX - 1 or c.vals.max() > _INT32_MAX:
                wider = np.empty(len(self.values), np.int64)
                wider[: self.ntok] = self.values[: self.ntok]
                self.values = wider
        self.values[self.ntok : self.ntok + k] = c.vals
        if len(c.comment):
            self.comments.append(c.comment + base)
        if len(c.bad):
            self.bad.append((c.bad + self.ntok, c.bad_start, c.bad_end))
        rows, cnt = (c.rows + base).astype(self.row_t), c.cnt
        if len(rows) and self.rows and self.rows[-1][-1] == rows[0]:  # a line across chunks
            self.cnt[-1][-1] += cnt[0]
            rows, cnt = rows[1:], cnt[1:]
        if len(rows):
            self.rows.append(rows)
            self.cnt.append(cnt)
        self.ntok += k
        self.nline = base + c.nlines

    def finish(self, b: np.ndarray) -> Tokens:
        def cat(parts, dtype=np.int64):
            return np.concatenate(parts).astype(dtype, copy=False) if parts else np.zeros(0, dtype)

        return Tokens(
            path=self.path,
            data=b,
            values=self.values[: self.ntok],
            nlines=self.nline,
            rows=cat(self.rows, self.row_t),
            row_cnt=cat(self.cnt, np.int32),
            comment_lines=cat(self.comments),
            bad=cat([x[0] for x in self.bad]),
            bad_start=cat([x[1] for x in self.bad]),
            bad_end=cat([x[2] for x in self.bad]),
        )


def _scan_chunk(b, win, lo: int, hi: int, pos_t, state: int, trailing: bool) -> _Chunk:
    """Tokenize b[lo:hi], which starts in ``state`` and ends at a line end or a blank byte;
    ``trailing``: a '%' after a line's tokens starts a comment."""
    seg = b[lo:hi]
    if seg.min() == 0:
        nul = int(np.argmin(seg))
        return _Chunk(_NONE, _NONE, _NONE32, 0, _NONE, _NONE, _NONE, _NONE, False,
                      int(np.count_nonzero(seg[:nul] == _NEWLINE)))
    if state == _COMMENT:  # the rest of a line in a comment holds no tokens
        newline = seg == _NEWLINE
        i = int(np.argmax(newline))
        if not newline[i]:
            return _Chunk(_NONE, _NONE, _NONE32, 1, _NONE, _NONE, _NONE, _NONE, False)
        if lo + i + 1 == hi:
            return _Chunk(_NONE, _NONE, _NONE32, 1, _NONE, _NONE, _NONE, _NONE, False)
        return _scan_chunk(b, win, lo + i + 1, hi, pos_t, _FRESH, trailing).after_lines(1)
    start, end, nonblank = token_bounds(seg, pos_t)
    length = end - start

    cnt, token_line = _lines(seg, start, end, pos_t)
    nlines = len(cnt)

    vals = _parse_unsigned(b, win, start + lo, length)
    wide = len(start) > 0 and int(length.max()) > 8
    oddbyte = (seg - np.uint8(48)) > 9  # not a digit
    oddbyte &= nonblank
    long_tok = length > _MAX_DIGITS
    if not (oddbyte.any() or long_tok.any()):
        rows = np.flatnonzero(cnt)
        return _Chunk(vals, rows, cnt[rows], nlines, _NONE, _NONE, _NONE, _NONE, wide)

    odd = np.flatnonzero(oddbyte)
    tok = np.searchsorted(start, odd, side="right") - 1  # token of each odd byte
    line = token_line(tok)
    tok_before = np.zeros(len(cnt) + 1, np.int64)  # tokens before each line
    np.cumsum(cnt, out=tok_before[1:])
    at_start = odd == start[tok]
    is_comment = at_start & (seg[odd] == _PERCENT) & (tok == tok_before[line])
    if state == _DATA:  # the first line's first token came before the chunk
        is_comment &= line > 0
    comment = sorted_unique(line[is_comment])
    keep = _outside(comment, tok_before, len(start))
    cnt[comment] = 0
    if trailing:
        cut = _cut_trailing_comments(seg, odd, tok, line, keep, start, end, cnt, tok_before)
        if len(cut):
            length[cut] = end[cut] - start[cut]
            vals[cut] = _parse_unsigned(b, win, start[cut] + lo, length[cut])
            long_tok = length > _MAX_DIGITS
    odd_kept = keep[tok] & (odd < end[tok])
    tok, odd, at_start = tok[odd_kept], odd[odd_kept], at_start[odd_kept]

    # an integer: digits, or a leading '+'/'-' (its only odd byte) and digits
    utok, first, nodd = _unique_first_counts(tok)
    sign = seg[odd[first]]
    signed = (nodd == 1) & at_start[first] & ((sign == _PLUS) | (sign == _MINUS))
    signed &= length[utok] >= 2
    has_odd = np.zeros(len(start), bool)
    has_odd[utok] = True
    plain_long = np.flatnonzero(long_tok & keep & ~has_odd)
    num = np.concatenate([utok[signed], plain_long])
    neg = np.concatenate([sign[signed] == _MINUS, np.zeros(len(plain_long), bool)])
    skip = np.concatenate([np.ones(np.count_nonzero(signed), np.int64),
                           np.zeros(len(plain_long), np.int64)])
    digits_at, ndigits = start[num] + skip, (length[num] - skip).astype(np.int64)
    _skip_leading_zeros(seg, digits_at, ndigits)
    fits = ndigits <= _MAX_DIGITS
    mag = _parse_digits(b, digits_at[fits] + lo, ndigits[fits])
    vals[num[fits]] = np.where(neg[fits], -mag, mag)
    bad_tok = np.zeros(len(start), bool)
    bad_tok[utok[~signed]] = True
    bad_tok[num[~fits]] = True
    bad = np.flatnonzero(bad_tok)
    vals[bad] = 0
    new_index = np.cumsum(keep) - 1  # token numbers once the comment lines are dropped
    rows = np.flatnonzero(cnt)
    return _Chunk(vals[keep], rows, cnt[rows], nlines, comment, new_index[bad], start[bad] + lo,
                  end[bad] + lo, True)


def _cut_trailing_comments(seg, odd, tok, line, keep, start, end, cnt, tok_before) -> np.ndarray:
    """Drop what follows the first '%' of each line of a chunk outside its comment lines: the
    tokens after it leave ``keep`` and ``cnt``, the token holding it ends before it (leaving
    ``keep`` too when nothing is left of it). The cut tokens still kept, whose values must
    be read again."""
    pct = np.flatnonzero((seg[odd] == _PERCENT) & keep[tok])
    if len(pct) == 0:
        return pct
    first = pct[np.concatenate(([True], line[pct[1:]] != line[pct[:-1]]))]  # odd is in order
    t, ln = tok[first], line[first]
    end[t] = odd[first]
    empty = end[t] == start[t]
    drop_from, drop_to = t + ~empty, tok_before[ln + 1]  # an empty cut token goes too
    cnt[ln] -= (drop_to - drop_from).astype(cnt.dtype)
    depth = np.zeros(len(keep) + 1, np.int32)
    np.add.at(depth, drop_from, 1)
    np.add.at(depth, drop_to, -1)
    keep &= np.cumsum(depth[:-1]) == 0
    return t[~empty]


def token_bounds(seg: np.ndarray, pos_t) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(start, end, nonblank) of the tokens of ``seg``: their offsets (of type ``pos_t``; end
    exclusive) and the mask of its bytes above 0x20."""
    nonblank = seg > 32
    edges = np.flatnonzero(nonblank[1:] != nonblank[:-1]).astype(pos_t)
    edges += 1
    if nonblank[0]:
        edges = np.concatenate([np.zeros(1, pos_t), edges])
    if nonblank[-1]:
        edges = np.concatenate([edges, np.full(1, len(seg), pos_t)])
    return edges[0::2], edges[1::2], nonblank


def _skip_leading_zeros(seg: np.ndarray, at: np.ndarray, n: np.ndarray) -> None:
    """Move the digit strings seg[at:at+n] longer than _MAX_DIGITS past their leading zeros
    (in place), so that only significant digits are counted."""
    long = np.flatnonzero(n > _MAX_DIGITS)
    if len(long) == 0:
        return
    stop = at[long] + n[long]
    nonzero = np.append(np.flatnonzero(seg != _ZERO), len(seg))
    first = np.minimum(nonzero[np.searchsorted(nonzero, at[long])], stop)
    at[long], n[long] = first, stop - first


_NONE = np.zeros(0, np.int64)
_NONE32 = np.zeros(0, np.int32)


def _lines(seg, start, end, pos_t):
    """Tokens per line of a chunk (int32) and a function giving the line of given tokens.

    Usually from the few blank bytes before each token: a token starts a line for each newline
    among them. Where some gap is longer than _MAX_GAP bytes, from the newline positions.
    """
    ntok = len(start)
    unfinished = int(seg[-1] != _NEWLINE)  # the last line of a file without a final newline
    gap = np.empty(ntok, pos_t)
    if ntok:
        gap[0] = start[0]
        np.subtract(start[1:], end[:-1], out=gap[1:])
    widest = int(gap.max(initial=0))
    if widest > _MAX_GAP:
        newlines = np.flatnonzero(seg == _NEWLINE).astype(pos_t)
        tok_before = np.empty(len(newlines) + unfinished + 1, np.int64)
        tok_before[0] = 0
        tok_before[1 : len(newlines) + 1] = np.searchsorted(start, newlines)
        tok_before[-1] = ntok
        return np.diff(tok_before).astype(np.int32), lambda t: np.searchsorted(newlines, start[t])
    line = np.zeros(ntok, np.int32)  # newlines before each token, then their running sum
    for j in range(1, widest + 1):  # one pass per byte of the widest gap
        line += (seg[np.maximum(start - j, 0)] == _NEWLINE) & (gap >= j)
    np.cumsum(line, out=line)
    after = end[-1] if ntok else 0  # newlines after the last token
    nlines = (int(line[-1]) if ntok else 0) + int(np.count_nonzero(seg[after:] == _NEWLINE))
    cnt = np.bincount(line, minlength=nlines + unfinished).astype(np.int32)
    return cnt, line.__getitem__


def _outside(comment: np.ndarray, tok_before: np.ndarray, ntok: int) -> np.ndarray:
    """Mask of the tokens that are not on the given comment lines."""
    if len(comment) == 0:
        return np.ones(ntok, bool)
    depth = np.zeros(ntok + 1, np.int8)
    np.add.at(depth, tok_before[comment], 1)
    np.add.at(depth, tok_before[comment + 1], -1)
    return np.cumsum(depth[:-1]) == 0


def _parse_unsigned(b, win, start, length) -> np.ndarray:
    """Values of digit-only tokens (int64); other tokens get arbitrary values."""
    if len(start) == 0 or (length.max() <= 8 and start[-1] <= len(b) - 8):
        return _swar8(win[start], length)
    fast = length <= 8
    fast &= start <= len(b) - 8
    vals = np.zeros(len(start), np.int64)
    vals[fast] = _swar8(win[start[fast]], length[fast])
    slow = np.flatnonzero(~fast)
    vals[slow] = _parse_digits(b, start[slow], length[slow])
    return vals


def _swar8(words: np.ndarray, length: np.ndarray) -> np.ndarray:
    """Parse the 1..8 ASCII digits in the low ``length`` bytes of little-endian words."""
    # borrows of the subtraction only run upwards, into the bytes after the token that the
    # shift then drops; zeros come in below the digits
    d = words - SWAR_ZEROS
    d <<= _SHIFT.take(length)
    return swar8(d)


def swar8(d: np.ndarray) -> np.ndarray:
    """The values (int64) of words holding one decimal digit (0..9) per byte, the most
    significant in the lowest byte: pairs, then quadruples, then all eight combined by one
    multiply and shift each. ``d`` is overwritten."""
    d *= _PAIRS
    d >>= np.uint64(8)
    d &= _M1
    d *= _QUADS
    d >>= np.uint64(16)
    d &= _M2
    d *= _OCTETS
    d >>= np.uint64(32)
    return d.view(np.int64)


def _parse_digits(b: np.ndarray, start: np.ndarray, length: np.ndarray) -> np.ndarray:
    """Value (int64) of the digit strings b[start:start+length], column by column.

    Strings longer than 18 digits give arbitrary values; callers reject them.
    """
    vals = np.zeros(len(start), np.int64)
    if len(start) == 0:
        return vals
    length = np.minimum(length, _MAX_DIGITS)
    for j in range(int(length.max())):
        live = np.flatnonzero(length > j)
        vals[live] = vals[live] * 10 + (b[start[live] + j].astype(np.int64) - 48)
    return vals


def _unique_first_counts(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """np.unique(a, return_index=True, return_counts=True) by a stable sort (NumPy's own
    imports numpy.ma, ~15 ms of a small run's start-up)."""
    order = np.argsort(a, kind="stable")
    ordered = a[order]
    starts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1]))) if len(a) \
        else np.zeros(0, np.int64)
    return ordered[starts], order[starts], np.diff(np.append(starts, len(a)))
