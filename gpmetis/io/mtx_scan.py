"""The fast path of the Matrix Market reader: the entry lines, scanned a chunk of lines at a time
with NumPy (in threads, like ``tokens.tokenize``), indices parsed eight bytes at a time, values
checked eight bytes at a time and parsed only as far as the weights need.

It covers what large matrix files hold: after the banner, comment and blank lines and the size
line, entry lines of exactly 2 (pattern) or 3 values, blank lines between them allowed; indices
of at most 16 digits; values of the form ``[+-]D+[.D+][(e|E)[+-]D+]`` (``[+-]D+`` in an integer
matrix) of at most 24 bytes. A value of another form, or one whose weight is too close to a
rounding tie to decide from its digits, is converted exactly by NumPy, as the general reader
does. Anything else, every error included, gives None, and the caller reads the file with the
general tokenizer, whose messages name the line. Where it gives entries, they are the general
reader's (the tests compare the two).
"""

from __future__ import annotations

from collections import deque
from typing import NamedTuple

import numpy as np

from gpmetis.io.tokens import (
    CHUNK,
    SWAR_ZEROS,
    THREADS,
    swar8,
    token_bounds,
    token_text,
)

MAX_HEADER_LINES = 10_000  # banner, comments and blanks read line by line before the size line
MAX_VALUE_BYTES = 24  # three 64-bit words per value token
WEIGHT_DIGITS = 8  # weights decided from the digits when |a_ij| < 10^8
FINITE_DIGITS = 300  # values below 10^300 are finite without a closer look

_U64 = np.uint64
_ONES = _U64(0x0101010101010101)
_HIGH = _U64(0x8080808080808080)
_LOW7 = _U64(0x7F7F7F7F7F7F7F7F)
_DOTS = _U64(0x2E2E2E2E2E2E2E2E)
_CASE = _U64(0x2020202020202020)
_ES = _U64(0x6565656565656565)
_GE_0 = _U64(0x5050505050505050)  # + byte sets bit 7 from '0' (0x30) up
_GT_9 = _U64(0x4646464646464646)  # + byte sets bit 7 from ':' (0x3A) up
_NOT_DIGIT = _U64(0x7676767676767676)  # + (byte - '0') sets bit 7 above 9
# the low k bytes of a word, k = 0..8
_BYTES_MASK = np.array([(1 << (8 * k)) - 1 for k in range(8)] + [2**64 - 1], np.uint64)
_POW10 = 10 ** np.arange(19, dtype=np.int64)
_TIE_LOW, _TIE_HIGH = 4_999_990, 5_000_010  # 7 digits after the rounding point near one half
_HALF = 5_000_000
_PLUS, _MINUS, _NEWLINE = ord("+"), ord("-"), ord("\n")


class Entries(NamedTuple):
    """1-based row and column indices (int64) of the NNZ entries, and the weights (int64, |a_ij|
    rounded half up, at least 1) when asked for."""

    rows: np.ndarray
    cols: np.ndarray
    weights: np.ndarray | None


class Header(NamedTuple):
    body: int  # offset of the first byte after the size line
    line: int  # 1-based line of the size line
    nrows: int
    ncols: int
    nnz: int


def header(data) -> Header | None:
    """The size line 'M N NNZ' after the banner and any comment and blank lines, when it is
    three plain integers within the first MAX_HEADER_LINES lines."""
    pos = data.find(b"\n") + 1  # after the banner
    for line in range(2, MAX_HEADER_LINES):
        if pos == 0 or pos >= len(data):
            return None
        end = data.find(b"\n", pos)
        if end < 0:
            return None
        fields = bytes(data[pos:end]).split()
        pos = end + 1
        if not fields or fields[0].startswith(b"%"):
            continue
        if len(fields) != 3 or not all(f.isdigit() and len(f) <= 18 for f in fields):
            return None
        return Header(pos, line, *(int(f) for f in fields))
    return None


def scan_entries(data, head: Header, field: str, weights: bool) -> Entries | None:
    """The entries of the lines after the size line (see the module docstring), or None."""
    b = np.frombuffer(data, np.uint8)
    nbytes = len(b)
    if head.body >= nbytes:
        return None
    words = _Words(data, b)
    per_line = 2 if field == "pattern" else 3
    if nbytes - head.body <= CHUNK:  # one chunk: scanned here, without the threads' start-up
        part = _scan(b, words, head.body, nbytes, per_line, field, weights)
        return None if part is None else Entries(*part)
    from concurrent.futures import ThreadPoolExecutor  # imported by large files only

    parts = []
    with ThreadPoolExecutor(THREADS) as pool:
        pending: deque = deque()
        try:
            for lo, hi in _chunks(data, head.body, nbytes):
                pending.append(pool.submit(_scan, b, words, lo, hi, per_line, field, weights))
                if len(pending) > 2 * THREADS:
                    parts.append(pending.popleft().result())
                    if parts[-1] is None:
                        return None
            while pending:
                parts.append(pending.popleft().result())
                if parts[-1] is None:
                    return None
        finally:
            for job in pending:
                job.cancel()
    return Entries(*(np.concatenate([p[k] for p in parts]) if parts[0][k] is not None else None
                     for k in range(3)))


def _chunks(data, lo: int, nbytes: int):
    """(lo, hi) of about CHUNK bytes each, ending after a newline or at the end of the data."""
    while lo < nbytes:
        target = min(lo + CHUNK, nbytes)
        hi = data.find(b"\n", target - 1) + 1 if target < nbytes else nbytes
        hi = hi or nbytes
        yield lo, hi
        lo = hi


class _Words:
    """The little-endian 64-bit word starting at any byte offset of the data; bytes past its
    end read as blanks."""

    def __init__(self, data, b: np.ndarray) -> None:
        n = len(b)
        self.limit = max(n - 7, 0)
        self.main = np.ndarray((self.limit,), "<u8", buffer=data, strides=(1,))
        self.base = max(n - 32, 0)
        tail = np.full(64, 32, np.uint8)
        tail[: n - self.base] = b[self.base :]
        self.tail = np.ndarray((57,), "<u8", buffer=tail, strides=(1,))

    def at(self, pos: np.ndarray) -> np.ndarray:
        if len(pos) == 0 or pos.max() < self.limit:
            return self.main[pos]
        out = np.empty(len(pos), np.uint64)
        main = pos < self.limit
        out[main] = self.main[pos[main]]
        out[~main] = self.tail[pos[~main] - self.base]
        return out


def _scan(b, words: _Words, lo: int, hi: int, per_line: int, field: str, weights: bool):
    """(rows, cols, weights or None) of the entry lines in b[lo:hi], or None."""
    seg = b[lo:hi]
    if seg.min() == 0:  # a NUL byte: the general reader reports it
        return None
    start, end, _ = token_bounds(seg, np.int64)
    ntok = len(start)
    if ntok % per_line or not _one_entry_per_line(seg, start, end, per_line):
        return None
    start += lo
    end += lo
    cols = []
    for c in range(2):
        at, length = start[c::per_line], end[c::per_line] - start[c::per_line]
        value = _digits(words, at, length)
        if value is None:
            return None
        cols.append(value)
    w = None
    if per_line == 3:
        at = start[2::3]
        length = end[2::3] - at
        w = _values(b, words, seg, at, length, field, weights)
        if w is None:
            return None
    return cols[0], cols[1], w if weights else None


def _one_entry_per_line(seg, start, end, per_line: int) -> bool:
    """Whether every line holding tokens holds exactly ``per_line`` of them: the gap after the
    last token of an entry has a newline, the gaps inside an entry none."""
    ntok = len(start)
    if ntok == 0:
        return True
    gap = start[1:] - end[:-1]
    if bool((gap == 1).all()):  # single blank bytes: the byte after each token decides
        newline = seg[end[:-1]] == _NEWLINE
    else:
        breaks = np.flatnonzero(seg == _NEWLINE)
        newline = np.searchsorted(breaks, start[1:]) > np.searchsorted(breaks, end[:-1])
    last = np.zeros(ntok - 1, bool)
    last[per_line - 1 :: per_line] = True
    return bool(np.array_equal(newline, last))


def _digits(words: _Words, at: np.ndarray, length: np.ndarray) -> np.ndarray | None:
    """Values (int64) of tokens of 1 to 16 decimal digits; None when a token is anything else."""
    if len(at) == 0:
        return np.zeros(0, np.int64)
    if int(length.max()) <= 8:
        return _digits8(words.at(at), length)
    if int(length.max()) > 16:
        return None
    long = length > 8
    out = np.empty(len(at), np.int64)
    short = _digits8(words.at(at[~long]), length[~long])
    head_len = length[long] - 8
    head = _digits8(words.at(at[long]), head_len)
    tail = _digits8(words.at(at[long] + head_len), np.full(len(head_len), 8, np.int64))
    if short is None or head is None or tail is None:
        return None
    out[~long] = short
    out[long] = head * _POW10[8] + tail
    return out


def _digits8(w: np.ndarray, length: np.ndarray) -> np.ndarray | None:
    """Values of the ``length`` (1..8) low bytes of the words, None unless all are digits."""
    d = w - SWAR_ZEROS
    d <<= _lead(length)
    if (((d + _NOT_DIGIT) | d) & _HIGH).any():
        return None
    return swar8(d)


def _lead(length: np.ndarray) -> np.ndarray:
    """The left shift that puts a token of ``length`` (1..8) bytes in the high bytes of its
    word, as leading zeros below it."""
    return (_U64(64) - _U64(8) * length.astype(np.uint64)) & _U64(63)


def _first_byte(w: np.ndarray, equal: np.uint64) -> np.ndarray:
    """Index (0..7) of the first byte of each word equal to ``equal``'s bytes, 8 if none."""
    x = w ^ equal
    z = (x - _ONES) & ~x & _HIGH  # exact at the lowest zero byte
    return np.bitwise_count((z & (~z + _U64(1))) - _U64(1)) >> np.uint8(3)


def _digit_count(w: np.ndarray, nbytes: np.ndarray) -> np.ndarray:
    """Digits among the low ``nbytes`` (0..8) bytes of each word."""
    a = w & _LOW7
    digit = ((a + _GE_0) & ~(a + _GT_9) & ~w & _HIGH) & _BYTES_MASK[nbytes]
    return np.bitwise_count(digit)


def _marks(w: list, nwords: int, length, ndots: int, nexps: int):
    """(offset of each token's first '.', of its first 'e' or 'E' (24: none), its digits),
    from its ``nwords`` 8-byte words ``w``; ``ndots``/``nexps``: whether to look for them."""
    n = len(length)
    dot = np.full(n, 24, np.uint8)
    exp = np.full(n, 24, np.uint8)
    ndigit = np.zeros(n, np.int64)
    for k in range(nwords - 1, -1, -1):  # a word without one (8) goes on to the next word's
        inside = np.clip(length - 8 * k, 0, 8)
        ndigit += _digit_count(w[k], inside)
        if ndots:
            found = _first_byte(w[k], _DOTS)
            dot = found + (found == 8) * dot
        if nexps:
            found = _first_byte(w[k] | _CASE, _ES)
            exp = found + (found == 8) * exp
    return dot.astype(np.int64), exp.astype(np.int64), ndigit


def _values(b, words: _Words, seg, at, length, field: str, weights: bool):
    """The weights of the value tokens (ones when not asked for), or None when a token is not a
    finite number (an integer in an integer matrix) or a weight reaches 2^62."""
    n = len(at)
    if n == 0:
        return np.zeros(0, np.int64)
    ndots = int(np.count_nonzero(seg == ord(".")))
    nexps = int(np.count_nonzero((seg | np.uint8(32)) == ord("e")))
    if field == "integer" and (ndots or nexps):
        return None
    fits = length <= MAX_VALUE_BYTES
    nwords = min(3, (int(length.max()) + 7) // 8)  # the words the longest token needs
    w = [words.at(at + 8 * k) if k < nwords else None for k in range(3)]
    first = b[at]
    sign = (first == _PLUS) | (first == _MINUS)
    dot, exp, ndigit = _marks(w, nwords, length, ndots, nexps)
    has_dot, has_exp = dot < length, exp < length
    # at most one '.' and one 'e' in each token: the chunk holds no others (the indices are
    # digits only, blanks are neither)
    if (int(np.count_nonzero(has_dot & fits)) != ndots
            or int(np.count_nonzero(has_exp & fits)) != nexps):
        return _exact(b, at, length, weights)
    s0 = sign.astype(np.int64)
    mant_end = np.where(has_exp, exp, length)
    int_end = np.where(has_dot, dot, mant_end)
    nint = int_end - s0
    nfrac = np.where(has_dot, mant_end - dot - 1, 0)
    exp_sign = np.zeros(n, np.int64)
    if nexps:
        after = b[np.minimum(at + exp + 1, len(b) - 1)]
        exp_sign = (has_exp & ((after == _PLUS) | (after == _MINUS))).astype(np.int64)
    nexp = np.where(has_exp, length - exp - 1 - exp_sign, 0)
    # the form [+-]D+[.D+][eE[+-]D+]: every byte but the sign, '.', 'e' and the exponent's
    # sign is a digit, with digits on both sides of the '.', after the 'e' and before both
    good = fits & (ndigit == length - s0 - has_dot - has_exp - exp_sign) & (nint >= 1)
    good &= ~has_dot | (nfrac >= 1)
    good &= ~has_exp | (nexp >= 1)
    good &= (nexp <= 8) & (~(has_dot & has_exp) | (dot < exp))
    if field == "integer" and not (good & (nint <= 16)).all():
        return None  # the general reader rejects or parses these as integers
    e10 = np.zeros(n, np.int64)
    if nexps:
        pos = np.flatnonzero(has_exp & good)
        e_at = at[pos] + exp[pos] + 1 + exp_sign[pos]
        ev = _digits(words, e_at, nexp[pos])
        if ev is None:  # not reached: the digits were counted above
            return None
        neg = b[at[pos] + exp[pos] + 1] == _MINUS
        e10[pos] = np.where(neg, -ev, ev)
    scale = nint + e10  # |value| < 10^scale
    if not weights:
        return _exact_where(b, at, length, ~(good & (scale <= FINITE_DIGITS)), weights, n)
    # |value| < 1: weight 1; else the integer part (scale <= 8 digits, the '.' moved right by
    # the exponent) and the 7 digits after it decide the weight, unless they are too close to
    # one half for float64's rounding of the value to be beside the point
    shift = scale - nint  # digits of the fraction moved into the integer part (>= 0 here)
    mid = good & (scale >= 1) & (scale <= WEIGHT_DIGITS) & (shift >= 0)
    frac_at = at + dot + 1
    ipart = _run(words, at + s0, nint, mid) * _POW10[np.clip(shift, 0, 18)]
    taken = np.clip(np.minimum(shift, nfrac), 0, 8)
    ipart += _run(words, frac_at, taken, mid) * _POW10[np.clip(shift - taken, 0, 18)]
    rest = np.clip(nfrac - shift, 0, 7)
    frac7 = _run(words, frac_at + np.clip(shift, 0, None), rest, mid) * _POW10[7 - rest]
    tie = (frac7 >= _TIE_LOW) & (frac7 <= _TIE_HIGH)
    out = np.ones(n, np.int64)
    sure = mid & ~tie
    out[sure] = np.maximum(ipart[sure] + (frac7[sure] >= _HALF), 1)
    small = good & (scale <= 0)
    return _exact_where(b, at, length, ~(sure | small), weights, n, out)


def _run(words: _Words, at, count, live) -> np.ndarray:
    """Value of the ``count`` (0..8) digits from byte ``at`` where ``live``, else 0."""
    out = np.zeros(len(at), np.int64)
    sel = np.flatnonzero(live & (count > 0))
    if len(sel):
        d = words.at(at[sel]) - SWAR_ZEROS
        d <<= _lead(count[sel])
        out[sel] = swar8(d)
    return out


def _exact_where(b, at, length, slow, weights: bool, n: int, out=None):
    """``out`` (ones by default) with the tokens marked ``slow`` converted exactly."""
    if out is None:
        out = np.ones(n, np.int64)
    pos = np.flatnonzero(slow)
    if len(pos):
        exact = _exact(b, at[pos], length[pos], weights)
        if exact is None:
            return None
        out[pos] = exact
    return out


def _exact(b, at, length, weights: bool):
    """Weights (or ones) of value tokens converted by NumPy as the general reader converts
    them; None when one is not a finite number or its weight reaches 2^62."""
    out = np.ones(len(at), np.int64)
    for c0 in range(0, len(at), 1 << 16):
        text = token_text(b, at[c0 : c0 + (1 << 16)], length[c0 : c0 + (1 << 16)])
        try:
            value = text.astype(np.float64)
        except ValueError:
            return None
        if not np.isfinite(value).all():
            return None
        if weights:
            w = np.maximum(np.floor(np.abs(value) + 0.5), 1)
            if w.max(initial=1) >= 2.0**62:
                return None
            out[c0 : c0 + len(w)] = w.astype(np.int64)
    return out
