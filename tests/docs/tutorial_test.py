#!/usr/bin/env python3
"""Runs docs/TUTORIAL.md as a reader would and checks the outputs it shows.

    python3 tests/docs/tutorial_test.py BUILD_DIR [TUTORIAL.md]

In a fresh temporary folder, with BUILD_DIR/bin first on PATH:
- a fenced block right after `<!-- file: NAME -->` is written to NAME;
- in a ```console block, each line starting with `$ ` is a command (run with sh, in order, in
  that folder), and the lines up to the next command are what it prints on stdout. Each shown
  line must match the printed line at the same place: exactly, except that a shown hex run of
  16 characters followed by `…`, or of 64 characters, stands for any hex of that length
  (hashes of runs whose non-deterministic blocks read the clock). A block whose first line is
  `$ ...` with no output shown only has to succeed.
Commands whose output is not shown and whose exit status the text names say it themselves
(`...; echo "exit $?"`). Exit status 1 when any check failed, naming the command and the line.
"""
import os
import re
import subprocess
import sys
import tempfile

HEX16 = re.compile(r"[0-9a-f]{16}…")
HEX64 = re.compile(r"\b[0-9a-f]{64}\b")


def parse(text):
    """[(kind, payload)] in document order: ('file', (name, body)) or ('cmd', (command, [lines]))."""
    steps = []
    lines = text.split("\n")
    i = 0
    pending_file = None
    while i < len(lines):
        line = lines[i]
        m = re.match(r"<!-- file: (\S+) -->", line.strip())
        if m:
            pending_file = m.group(1)
            i += 1
            continue
        fence = re.match(r"^```(\w*)", line)
        if not fence:
            i += 1
            continue
        lang = fence.group(1)
        j = i + 1
        body = []
        while j < len(lines) and not lines[j].startswith("```"):
            body.append(lines[j])
            j += 1
        if pending_file:
            steps.append(("file", (pending_file, "\n".join(body) + "\n")))
            pending_file = None
        elif lang == "console":
            cmd = None
            out = []
            for b in body:
                if b.startswith("$ "):
                    if cmd is not None:
                        steps.append(("cmd", (cmd, out)))
                    cmd, out = b[2:], []
                elif cmd is not None:
                    out.append(b)
            if cmd is not None:
                steps.append(("cmd", (cmd, out)))
        i = j + 1
    return steps


def pattern_of(shown):
    parts = []
    pos = 0
    for m in re.finditer(r"[0-9a-f]{16}…|\b[0-9a-f]{64}\b", shown):
        parts.append(re.escape(shown[pos:m.start()]))
        parts.append("[0-9a-f]{16}…" if m.group(0).endswith("…") else "[0-9a-f]{64}")
        pos = m.end()
    parts.append(re.escape(shown[pos:]))
    return re.compile("^" + "".join(parts) + "$")


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    build = os.path.abspath(sys.argv[1])
    here = os.path.dirname(os.path.abspath(__file__))
    doc = sys.argv[2] if len(sys.argv) > 2 else os.path.join(here, "..", "..", "docs", "TUTORIAL.md")
    steps = parse(open(doc, encoding="utf-8").read())
    if not any(k == "cmd" for k, _ in steps):
        print(f"FAIL: no commands found in {doc}")
        return 1
    env = dict(os.environ)
    env["PATH"] = os.path.join(build, "bin") + os.pathsep + env.get("PATH", "")
    env["LC_ALL"] = "C.UTF-8"
    failures = 0
    with tempfile.TemporaryDirectory(prefix="genvm-tutorial-") as work:
        for kind, payload in steps:
            if kind == "file":
                name, body = payload
                with open(os.path.join(work, name), "w", encoding="utf-8") as f:
                    f.write(body)
                print(f"ok: wrote {name}")
                continue
            cmd, shown = payload
            p = subprocess.run(["sh", "-c", cmd], cwd=work, env=env, capture_output=True, text=True, timeout=120)
            printed = p.stdout.rstrip("\n").split("\n") if p.stdout.strip() else []
            while shown and shown[-1] == "":
                shown = shown[:-1]
            problem = None
            if not shown and p.returncode != 0:
                problem = f"exit {p.returncode}: {p.stderr.strip()[:300]}"
            elif len(printed) != len(shown):
                problem = f"printed {len(printed)} lines, the tutorial shows {len(shown)}"
            else:
                for k, (want, have) in enumerate(zip(shown, printed)):
                    if not pattern_of(want).match(have):
                        problem = f"line {k + 1}: shown {want!r}, printed {have!r}"
                        break
            if problem:
                failures += 1
                print(f"FAIL: $ {cmd}\n  {problem}")
                if printed:
                    print("  printed:\n    " + "\n    ".join(printed[:40]))
                if p.stderr.strip():
                    print("  stderr: " + p.stderr.strip()[:500])
            else:
                print(f"ok: $ {cmd}")
    print(f"{failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
