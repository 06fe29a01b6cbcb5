"""Checked-in expectations (tests/conformance/golden/*.txt).

A golden line is `name = <hex>  # <where the expectation comes from>`. The values are the
suite's own spec-derived expectations (never an executor's output), so a golden change is a
change of what the suite believes the spec says, visible in review. A test compares its freshly
computed expectation with the golden first (the expectation code has not drifted), then the
executor's output with the expectation. With GENVM_CONFORMANCE_UPDATE=1 the expectations are
written instead of compared.
"""

import os
import threading

HEADER = ("# Spec-derived expectations of tests/conformance (hex). Regenerate with:\n"
          "#   GENVM_CONFORMANCE_UPDATE=1 python3 tests/conformance/run.py --genvm build/tools/genvm/genvm\n"
          "# (the values come from the suite's expectation code, not from the executor's output)\n")
DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "golden")
_lock = threading.Lock()
_pending = {}  # file -> {name: (hex, source)}


def updating():
    return os.environ.get("GENVM_CONFORMANCE_UPDATE") == "1"


def _load(path):
    entries = {}
    if not os.path.exists(path):
        return entries
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            name, _, rest = line.partition(" = ")
            value, _, source = rest.partition("  # ")
            entries[name.strip()] = (value.strip(), source.strip())
    return entries


def check(file, name, value, source):
    """None when `value` (bytes) matches golden `file`:`name`, else a message. Records it when updating."""
    hexed = bytes(value).hex()
    if updating():
        with _lock:
            _pending.setdefault(file, {})[name] = (hexed, source)
        return None
    entries = _load(os.path.join(DIR, file + ".txt"))
    if name not in entries:
        return (f"golden {file}.txt has no entry {name!r}; regenerate with GENVM_CONFORMANCE_UPDATE=1 "
                f"python3 tests/conformance/run.py")
    if entries[name][0] != hexed:
        return (f"the suite's expectation for {name!r} changed: golden {file}.txt has {entries[name][0]}, "
                f"the expectation code now computes {hexed} (review, then regenerate)")
    return None


def write_pending():
    """Writes every golden file touched while updating (entries of tests not run are kept)."""
    with _lock:
        for file, new in _pending.items():
            path = os.path.join(DIR, file + ".txt")
            entries = _load(path)
            entries.update(new)
            os.makedirs(DIR, exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(HEADER)
                for name in sorted(entries):
                    value, source = entries[name]
                    f.write(f"{name} = {value}  # {source}\n")
        _pending.clear()
