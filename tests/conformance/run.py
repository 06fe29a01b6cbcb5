#!/usr/bin/env python3
"""Runs the executor conformance suite (tests/conformance/test_executor.py).

  python3 tests/conformance/run.py --build-dir build            # binaries from a build tree
  python3 tests/conformance/run.py --genvm PATH --probe PATH     # or named explicitly
  GENVM_CONFORMANCE_UPDATE=1 python3 tests/conformance/run.py --genvm build/tools/genvm/genvm
                                                                # rewrite golden/*.txt
Extra arguments after `--` go to unittest (e.g. `-- -k NondetValidator`).
"""

import argparse
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build-dir", help="build tree holding tools/genvm/genvm and tests/conformance/probe.wasm")
    parser.add_argument("--genvm", help="the executor to test (default: <build-dir>/tools/genvm/genvm)")
    parser.add_argument("--probe", help="the probe contract (default: <build-dir>/tests/conformance/probe.wasm)")
    parser.add_argument("unittest_args", nargs="*", help="passed to unittest after --")
    args = parser.parse_args()
    if args.build_dir:
        os.environ["GENVM_BUILD_DIR"] = os.path.abspath(args.build_dir)
        if not args.probe:
            args.probe = os.path.join(args.build_dir, "tests", "conformance", "probe.wasm")
    if args.genvm:
        os.environ["GENVM_BINARY"] = os.path.abspath(args.genvm)
    if args.probe:
        os.environ["GENVM_CONFORMANCE_PROBE"] = os.path.abspath(args.probe)
    elif not os.environ.get("GENVM_CONFORMANCE_PROBE") and args.genvm:
        # a build tree's layout: <build>/tools/genvm/genvm beside <build>/tests/conformance/probe.wasm
        build = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(args.genvm))))
        os.environ["GENVM_CONFORMANCE_PROBE"] = os.path.join(build, "tests", "conformance", "probe.wasm")
    sys.path.insert(0, HERE)
    argv = [sys.argv[0], "-v", "test_executor", "test_modules", *args.unittest_args]
    os.chdir(HERE)
    program = unittest.main(module=None, argv=argv, exit=False)
    sys.exit(0 if program.result.wasSuccessful() else 1)


if __name__ == "__main__":
    main()
