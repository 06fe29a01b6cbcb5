#!/usr/bin/env python3
"""Packs the Python runners as runner archives (spec 04-runners.rst) into a runner directory.

    pack_runners.py --dist DIST --det-wasm PYTHON_DET.wasm --genvm-wasm GENVM_WASM --sdk SDK_DIR
                    [--lib PKG_DIR]... --out RUNNERS_DIR

Two runners, each a stored ZIP installed as RUNNERS_DIR/<name>/<h[0:2]>/<h[2:]>.zip under the
GVM32 of its SHA-256, and RUNNERS_DIR/latest.json naming the hash of each:

  cpython      python.wasm (non-deterministic blocks), python-det.wasm (its float instructions
               rewritten onto softfloat.wasm, for deterministic code) and the standard library
               lib/python3.13/ mapped at /lib/ (CPython's prefix is /). Ends in StartWasm.
  py-genlayer  what a contract's header Depends on: the contract's own file at /contract.py,
               the SDK (sdk/python/genlayer/, another component's; copied as it is) at
               /py/libs/genlayer/, PYTHONPATH=/py/libs, argv `py -u -B -m genlayer
               /contract.py`, then Depends on cpython. Each --lib package folder (cloudpickle,
               Debian's python3-cloudpickle) goes beside genlayer/ under py/. Every .py of them
               ships with its __pycache__/<name>.cpython-313.pyc (below).

The runner's file system is read-only and argv has -B, so CPython would compile the SDK on every
run (about half of `import genlayer`). Its .pyc are made here by python.wasm itself (the same
CPython that reads them; run on genvm-wasm), as unchecked-hash pycs named by their guest path
(/py/libs/...): their bytes depend on the sources alone, never on mtimes or the build machine.

The archives' bytes depend only on their files: entries sorted by name, stored, timestamps
fixed at 1980-01-01, no extra fields, so the ids are reproducible.
"""
import argparse
import base64
import hashlib
import io
import json
import os
import subprocess
import sys
import tempfile
import zipfile

ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"  # GVM32 (spec 06-gvm32.rst)


def gvm32(data: bytes) -> str:
    out, value, bits = [], 0, 0
    for byte in data:
        value = ((value << 8) | byte) & 0xFFFF
        bits += 8
        while bits >= 5:
            bits -= 5
            out.append(ALPHABET[(value >> bits) & 0x1F])
    if bits:
        out.append(ALPHABET[(value << (5 - bits)) & 0x1F])
    return "".join(out)


def stored_zip(files: dict) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_STORED) as z:
        for name in sorted(files):
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_STORED
            info.external_attr = 0o644 << 16
            info.create_system = 3
            z.writestr(info, files[name])
    return buf.getvalue()


def tree(root: str, prefix: str) -> dict:
    """Every file under `root` as prefix + its relative path (no __pycache__ of sources we copy)."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for f in sorted(filenames):
            path = os.path.join(dirpath, f)
            rel = os.path.relpath(path, root).replace(os.sep, "/")
            with open(path, "rb") as fh:
                out[prefix + rel] = fh.read()
    return out


GUEST_LIBS = "/py/libs"  # where py-genlayer's py/ is mapped (its runner.json)

# Run by python.wasm: each .py under argv[1] as {guest path: base64 of its pyc}, compiled as
# py_compile does (dont_inherit, optimisation level 0) with an unchecked source hash.
_PYC_SCRIPT = r"""
import base64, importlib.util, importlib._bootstrap_external as be, json, os, sys
out = {}
for dirpath, dirnames, filenames in os.walk(sys.argv[1]):
    dirnames.sort()
    for f in sorted(filenames):
        if f.endswith(".py"):
            path = dirpath + "/" + f
            with open(path, "rb") as fh:
                src = fh.read()
            code = compile(src, path, "exec", dont_inherit=True)
            pyc = be._code_to_hash_pyc(code, importlib.util.source_hash(src), checked=False)
            out[path] = base64.b64encode(pyc).decode()
json.dump(out, sys.stdout, sort_keys=True)
"""


def cache_tag(dist: str) -> str:
    """sys.implementation.cache_tag of dist's CPython (cpython-313 for lib/python3.13/)."""
    versions = [d for d in os.listdir(os.path.join(dist, "lib")) if d.startswith("python3.")]
    if len(versions) != 1:
        raise RuntimeError(f"expected one lib/python3.N in {dist}")
    return "cpython-" + versions[0][len("python"):].replace(".", "")


def add_pycs(files: dict, genvm_wasm: str, dist: str) -> None:
    """Adds py/<pkg>/__pycache__/<mod>.cpython-313.pyc beside every py/<pkg>/<mod>.py of `files`,
    compiled by dist's python.wasm on genvm-wasm (its file system is read-only: the pycs come
    back on stdout)."""
    sources = {k: v for k, v in files.items() if k.endswith(".py")}
    with tempfile.TemporaryDirectory() as tmp:
        for name, data in sources.items():
            path = os.path.join(tmp, name[len("py/"):])
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as f:
                f.write(data)
        cmd = [genvm_wasm, "run", os.path.join(dist, "python.wasm"), "-B", "-I", "-c", _PYC_SCRIPT,
               GUEST_LIBS, "--dir", os.path.join(dist, "lib") + ":/lib", "--dir", tmp + ":" + GUEST_LIBS]
        run = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if run.returncode != 0:
        lines = run.stderr.decode(errors="replace").strip().splitlines() or [f"exit code {run.returncode}"]
        raise RuntimeError(f"python.wasm could not compile the SDK: {lines[-1]}")
    pycs = json.loads(run.stdout)
    tag = cache_tag(dist)
    for name in sources:
        guest = GUEST_LIBS + "/" + name[len("py/"):]
        if guest not in pycs:
            raise RuntimeError(f"python.wasm did not compile {guest}")
        folder, base = name.rsplit("/", 1)
        files[f"{folder}/__pycache__/{base[:-3]}.{tag}.pyc"] = base64.b64decode(pycs[guest])


def install(out_dir: str, name: str, files: dict, runner_json: dict) -> str:
    files = dict(files)
    files["runner.json"] = json.dumps(runner_json, indent=1, sort_keys=True).encode()
    blob = stored_zip(files)
    h = gvm32(hashlib.sha256(blob).digest())
    folder = os.path.join(out_dir, name, h[:2])
    os.makedirs(folder, exist_ok=True)
    target = os.path.join(folder, h[2:] + ".zip")
    tmp = target + ".tmp"
    with open(tmp, "wb") as f:
        f.write(blob)
    os.replace(tmp, target)
    return h


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dist", required=True, help="runners/cpython/dist (python.wasm, lib/)")
    ap.add_argument("--det-wasm", required=True, help="python.wasm rewritten onto softfloat.wasm")
    ap.add_argument("--genvm-wasm", required=True, help="genvm-wasm, which runs python.wasm to compile the .pyc")
    ap.add_argument("--sdk", required=True, help="the genlayer package folder (sdk/python/genlayer)")
    ap.add_argument("--lib", action="append", default=[],
                    help="a pure-Python package folder to ship beside the SDK (repeatable)")
    ap.add_argument("--out", required=True, help="the runner directory to install into")
    a = ap.parse_args()

    with open(os.path.join(a.dist, "python.wasm"), "rb") as f:
        python_wasm = f.read()
    with open(a.det_wasm, "rb") as f:
        python_det = f.read()
    cpython_files = {"python.wasm": python_wasm, "python-det.wasm": python_det}
    cpython_files.update(tree(os.path.join(a.dist, "lib"), "lib/"))
    # The archive keeps files only, and CPython finds its exec_prefix by lib-dynload/ (empty:
    # every module is built in); without it each start warns on stderr.
    for version in sorted(d for d in os.listdir(os.path.join(a.dist, "lib")) if d.startswith("python3.")):
        cpython_files.setdefault(f"lib/{version}/lib-dynload/.keep", b"")
    cpython = install(a.out, "cpython", cpython_files, {
        "Seq": [
            {"MapFile": {"file": "lib/", "to": "/lib/"}},
            {"When": {"cond": "det", "action": {"StartWasm": "python-det.wasm"}}},
            {"StartWasm": "python.wasm"},
        ]
    })

    sdk_files = {k: v for k, v in tree(a.sdk, "py/genlayer/").items() if "/__pycache__/" not in k}
    for lib in a.lib:
        name = os.path.basename(os.path.normpath(lib))
        if not os.path.isdir(lib) or name in ("", "genlayer"):
            print(f"pack_runners.py: --lib {lib}: not a package folder", file=sys.stderr)
            return 2
        sdk_files.update({k: v for k, v in tree(lib, f"py/{name}/").items() if "/__pycache__/" not in k})
    try:
        add_pycs(sdk_files, a.genvm_wasm, a.dist)
    except (OSError, RuntimeError, ValueError) as e:
        print(f"pack_runners.py: error: {e}", file=sys.stderr)
        return 1
    py_genlayer = install(a.out, "py-genlayer", sdk_files, {
        "Seq": [
            {"With": {"runner": "contract", "action": {"MapFile": {"file": "file", "to": "/contract.py"}}}},
            {"MapFile": {"file": "py/", "to": "/py/libs/"}},
            {"AddEnv": {"name": "PYTHONPATH", "val": "/py/libs"}},
            {"SetArgs": ["py", "-u", "-B", "-m", "genlayer", "/contract.py"]},
            {"Depends": "cpython:" + cpython},
        ]
    })
    with open(os.path.join(a.out, "latest.json"), "w") as f:
        json.dump({"cpython": cpython, "py-genlayer": py_genlayer}, f, indent=1, sort_keys=True)
    print(f"cpython:{cpython}\npy-genlayer:{py_genlayer}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
