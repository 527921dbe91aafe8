"""Figures taken straight from a Kineto (PyTorch profiler) JSON trace, for
the tests that hold gprof-dl's against them: the numbers read exactly, times
in integer nanoseconds as the importer rounds them, and unions of intervals."""
import decimal
import gzip
import json


def load(path):
    """The trace's document, its numbers as Decimal (no binary rounding)."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f, parse_float=decimal.Decimal)


def ns(us):
    """Kineto's microseconds in integer nanoseconds, rounded half to even."""
    return int((decimal.Decimal(us) * 1000).to_integral_value(rounding=decimal.ROUND_HALF_EVEN))


def merge(iv):
    """[start, end) intervals merged: a sorted list of disjoint [start, end]."""
    out = []
    for a, b in sorted(iv):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out


def clipped(iv, window):
    """The measure of the union of iv inside the union of window."""
    total = 0
    win = merge(window)
    for a, b in merge(iv):
        for s, t in win:
            total += max(0, min(b, t) - max(a, s))
    return total
