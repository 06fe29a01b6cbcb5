#!/usr/bin/env python3
"""Runs the real-program benchmarks (bench/realworld/build.sh WORKDIR builds them) natively and
in every wasm engine given, interleaved (round r runs every program in every engine before
round r+1 starts, so load drifts hit all alike), and prints the minimum CPU time of the child
(user+sys, from getrusage(RUSAGE_CHILDREN) deltas) of RUNS runs, with the ratio to native and
the geometric mean of the ratios. Every run's output must hold the program's expected checksum
line: a wrong build or a wrong engine fails loudly (exit 1).

Engines: native; ours (genvm-wasm run, fuel off and on; with --engine jit as two more columns
when `genvm-wasm` accepts --engine); base (--baseline: an earlier build's interpreter); wasm3 and iwasm (WAMR fast-interp) when pointed at your
builds; node (bench/wasm/run_wasi.mjs). Note that node's CPU time includes its compiler and
GC threads.
"""
import argparse
import math
import os
import re
import resource
import shlex
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

# The lines each program must print with its default arguments: the checksum of our drivers
# (bench/realworld/*/); for CoreMark the CRCs of its 2K performance run (the values it validates
# itself; it still says "Errors detected" because a run under its 10 s rule counts as one) and the
# final CRC of build.sh's iteration count.
EXPECTED = {
    'lua': ('lua checksum 4369949e0ee827d0',),
    'quickjs': ('quickjs checksum 00000000dde43515',),
    'sqlite3': ('sqlite3 checksum d92c4460569f60fc',),
    'zlib': ('zlib checksum 4af6c6391f3c79c3',),
    'bzip2': ('bzip2 checksum 23a2bbfda7717557',),
    'coremark': ('seedcrc          : 0xe9f5', '[0]crclist       : 0xe714', '[0]crcmatrix     : 0x1fd7',
                 '[0]crcstate      : 0x8e3a', '[0]crcfinal      : 0xcc42'),
}
FUEL = 10**15


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('workdir', help='the WORKDIR given to bench/realworld/build.sh')
    p.add_argument('-n', '--runs', type=int, default=5, help='runs per program and engine (min is reported; default 5)')
    p.add_argument('--genvm-wasm', help='our engine CLI (default: build/tools/genvm-wasm/genvm-wasm)')
    p.add_argument('--baseline', metavar="'[NAME=]GENVM_WASM [ARG...]'", action='append', default=[],
                   help="another build's genvm-wasm (adds it as column NAME, its interpreter unless ARGs say --engine jit; default "
                        "'base', then 'base2', ...: an earlier commit or a variant, to compare our "
                        "interpreter against; repeatable; ARGs go after the program, e.g. "
                        "--fuse-off FAMILY). With any, a second table gives every column of ours "
                        "and of the baselines over the first baseline, to 3 decimals. A copy of one "
                        "binary under another name measures the noise floor: two files of the "
                        "same bytes differed by up to 4.7 %% per program at min of 3")
    p.add_argument('--wasm3', help='a wasm3 binary (adds its column)')
    p.add_argument('--iwasm', help="WAMR's iwasm built with fast-interp (adds its column)")
    p.add_argument('--node', default='node', help="node binary (default: node; '' to skip)")
    p.add_argument('--programs', help='comma-separated subset (default: every one built)')
    p.add_argument('--engines', help='comma-separated subset of the engine columns')
    p.add_argument('--markdown', action='store_true', help='print the table as Markdown')
    p.add_argument('--timeout', type=float, default=900, help='seconds per run before it counts as failed')
    a = p.parse_args()
    if a.runs < 1:
        p.error('--runs must be at least 1')
    return a


def engine_columns(a):
    """(name, argv prefix, argv suffix) per column; the program path goes between."""
    cols = [('native', None, [])]
    gw = a.genvm_wasm or os.path.join(REPO, 'build/tools/genvm-wasm/genvm-wasm')
    if os.access(gw, os.X_OK):
        usage = subprocess.run([gw, '--help'], capture_output=True, text=True)
        cols += [('ours', [gw, 'run'], []), ('ours+fuel', [gw, 'run'], ['--fuel', str(FUEL)])]
        if '--engine' in usage.stdout + usage.stderr:
            cols += [('jit', [gw, 'run'], ['--engine', 'jit']),
                     ('jit+fuel', [gw, 'run'], ['--engine', 'jit', '--fuel', str(FUEL)])]
    else:
        print(f'note: no genvm-wasm at {gw}: our columns are skipped', file=sys.stderr)
    a.baseline_names = []
    for k, spec in enumerate(a.baseline):
        words = shlex.split(spec)
        if not words:
            sys.exit('run.py: error: --baseline needs a genvm-wasm path')
        # NAME= is a prefix of the first word only when NAME is a plain column name, so a
        # path that holds '=' (a/b=c/genvm-wasm) is still a path.
        m = re.fullmatch(r'([A-Za-z_][A-Za-z0-9_+.-]*)=(.+)', words[0])
        name, path, extra = (m.group(1), m.group(2), words[1:]) if m else ('', words[0], words[1:])
        name = name or ('base' if k == 0 else f'base{k + 1}')
        if not os.access(path, os.X_OK):
            sys.exit(f'run.py: error: --baseline {path} is not an executable')
        if name in {c[0] for c in cols}:
            sys.exit(f'run.py: error: --baseline column name {name!r} is taken')
        cols.append((name, [path, 'run'], extra))
        a.baseline_names.append(name)
    if a.wasm3:
        cols.append(('wasm3', [a.wasm3, '--stack-size', str(8 << 20)], []))
    if a.iwasm:
        cols.append(('iwasm', [a.iwasm, f'--stack-size={8 << 20}'], []))
    if a.node:
        cols.append(('node', [a.node, '--no-concurrent-marking', os.path.join(REPO, 'bench/wasm/run_wasi.mjs')], []))
    if a.engines:
        wanted = set(a.engines.split(',')) | {'native'}
        unknown = wanted - {c[0] for c in cols}
        if unknown:
            sys.exit(f'run.py: error: engine(s) not available: {", ".join(sorted(unknown))}')
        cols = [c for c in cols if c[0] in wanted]
    return cols


def command(col, binary_dir, prog):
    name, prefix, suffix = col
    if prefix is None:
        return [os.path.join(binary_dir, prog + '.native')]
    return prefix + [os.path.join(binary_dir, prog + '.wasm')] + suffix


def cpu_run(argv, timeout):
    """Runs argv; returns (child CPU seconds, stdout, error or None)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, '', f'timed out after {timeout:.0f} s'
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or [''])[-1]
        return cpu, proc.stdout, f'exit {proc.returncode}: {last}'
    return cpu, proc.stdout, None


def print_table(programs, cols, best, failed, runs, load_seen, markdown, out):
    """The table of minimum seconds and ratios to native, with the geometric mean."""
    names = [c[0] for c in cols]
    rows = []
    ratios = {n: [] for n in names}
    for prog in programs:
        base = best.get((prog, 'native'))
        cells = [prog]
        for n in names:
            t = best.get((prog, n))
            if (prog, n) in failed:
                cells.append('FAIL')
            elif n == 'native':
                cells.append(f'{t:.2f}')
            elif base:
                ratios[n].append(t / base)
                cells.append(f'{t:.2f} ({t / base:.1f}x)')
            else:
                cells.append(f'{t:.2f}')
        rows.append(cells)
    geo = ['geomean']
    for n in names:
        rs = ratios[n]
        geo.append('1.0x' if n == 'native' else (f'{math.exp(sum(map(math.log, rs)) / len(rs)):.1f}x' if rs else '-'))
    rows.append(geo)
    header = ['program'] + [n + (' s' if n == 'native' else ' s (x native)') for n in names]
    print(f'CPU seconds, min of {runs}; 1-minute load average at the start and after each round: '
          f'{min(load_seen):.1f} to {max(load_seen):.1f}' + (' (above 3: provisional)' if max(load_seen) > 3 else ''),
          file=out)
    if markdown:
        print('| ' + ' | '.join(header) + ' |', file=out)
        print('|' + '|'.join('---' for _ in header) + '|', file=out)
        for row in rows:
            print('| ' + ' | '.join(row) + ' |', file=out)
    else:
        widths = [max(len(str(row[i])) for row in rows + [header]) for i in range(len(header))]
        for row in [header] + rows:
            print('  '.join(str(c).rjust(w) if i else str(c).ljust(w) for i, (c, w) in enumerate(zip(row, widths))),
                  file=out)
    out.flush()


def print_relative(programs, cols, best, reference, out):
    """Every column of ours and of the baselines (interpreter or JIT, fuel off or on) over the
    reference column, per program and as a geometric mean: the small differences an engine
    change makes need 3 decimals."""
    peers = {'native', 'wasm3', 'iwasm', 'node', reference}
    names = [c[0] for c in cols if c[0] not in peers]
    if not names:
        return
    print(f'time over {reference!r} (lower is faster):', file=out)
    print('  '.join([f'{"program":10}'] + [f'{n:>10}' for n in names]), file=out)
    logs = {n: [] for n in names}
    for prog in programs:
        ref = best.get((prog, reference))
        cells = [f'{prog:10}']
        for n in names:
            t = best.get((prog, n))
            if ref and t:
                logs[n].append(math.log(t / ref))
                cells.append(f'{t / ref:10.3f}')
            else:
                cells.append(f'{"-":>10}')
        print('  '.join(cells), file=out)
    print('  '.join([f'{"geomean":10}'] + [f'{math.exp(sum(v) / len(v)):10.3f}' if v else f'{"-":>10}'
                                            for v in logs.values()]), file=out)
    out.flush()


def main():
    a = parse_args()
    binary_dir = os.path.join(a.workdir, 'bin')
    built = [p for p in EXPECTED if os.path.exists(os.path.join(binary_dir, p + '.native'))
             and os.path.exists(os.path.join(binary_dir, p + '.wasm'))]
    programs = a.programs.split(',') if a.programs else built
    missing = [p for p in programs if p not in built]
    if missing or not programs:
        sys.exit(f'run.py: error: not built in {binary_dir}: {", ".join(missing) or "anything"} '
                 '(run bench/realworld/build.sh WORKDIR)')
    cols = engine_columns(a)
    print('command: ' + ' '.join(shlex.quote(x) for x in sys.argv))
    for col in cols:
        print(f'  {col[0]:10} ' + ' '.join(shlex.quote(x) for x in command(col, binary_dir, 'PROG')))
    load_seen = [os.getloadavg()[0]]
    started = time.time()
    best = {}      # (prog, engine) -> min seconds
    failed = {}    # (prog, engine) -> reason
    for r in range(a.runs):
        for prog in programs:
            for col in cols:
                key = (prog, col[0])
                if key in failed:
                    continue
                cpu, out, err = cpu_run(command(col, binary_dir, prog), a.timeout)
                if err is None and not all(line in out for line in EXPECTED[prog]):
                    err = 'wrong output: ' + (out.strip().splitlines() or ['(none)'])[-1]
                if err:
                    failed[key] = err
                    print(f'FAIL {prog} in {col[0]}: {err}', file=sys.stderr)
                    continue
                best[key] = min(best.get(key, math.inf), cpu)
        load_seen.append(os.getloadavg()[0])
        print(f'round {r + 1}/{a.runs} done ({time.time() - started:.0f} s, load {load_seen[-1]:.1f})',
              file=sys.stderr, flush=True)
        if r + 1 < a.runs:  # the table so far, so a run cut short still leaves figures
            print_table(programs, cols, best, failed, r + 1, load_seen, a.markdown, sys.stderr)
    print_table(programs, cols, best, failed, a.runs, load_seen, a.markdown, sys.stdout)
    if a.baseline:
        print_relative(programs, cols, best, a.baseline_names[0], sys.stdout)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
