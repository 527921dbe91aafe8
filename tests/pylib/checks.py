"""What the Python end-to-end harnesses (tests/python, tests/gpu) check with.

A failed check() is recorded in FAILED and the case goes on, so that one run
shows every difference; must() stops the case where what follows depends on
it. The harness reports FAILED at the end."""


class Failure(Exception):
    pass


class Skip(Exception):
    pass


FAILED = []


def check(cond, msg):
    if not cond:
        FAILED.append(msg)
    return bool(cond)


def must(cond, msg):
    if not cond:
        raise Failure(msg)


def short(v, limit=1500):
    r = repr(v)
    return r if len(r) <= limit else r[:limit] + f"... ({len(r)} characters)"


def eq(actual, expected, what):
    return check(actual == expected, f"{what}: expected {short(expected)}, got {short(actual)}")


def near(actual, expected, rel, what):
    return check(isinstance(actual, (int, float)) and expected > 0 and abs(actual - expected) <= rel * expected,
                 f"{what}: {actual!r} is not within {rel:.1%} of {expected!r}")


def text(b):
    return b.decode(errors="replace")


SKIP = 77  # ctest's SKIP_RETURN_CODE in both harnesses


def run_case(name, fn, make_ctx, prefix, label=""):
    """Runs one case in a fresh temporary directory: 0 pass, 1 fail, SKIP skip,
    with one line saying which (and every failed check)."""
    import subprocess
    import tempfile
    import traceback
    suffix = f" ({label})" if label else ""
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        try:
            fn(make_ctx(tmp))
        except Skip as e:
            print(f"SKIP {name}: {e}")
            return SKIP
        except Failure as e:
            FAILED.append(f"{e} (the case stopped here)")
        except (KeyError, TypeError, ValueError, IndexError, subprocess.TimeoutExpired):
            FAILED.append(f"the case stopped on an exception:\n{traceback.format_exc()}")
    if FAILED:
        print(f"FAIL {name}{suffix}:")
        for f in FAILED:
            print("  - " + f)
        return 1
    print(f"PASS {name}{suffix}")
    return 0
