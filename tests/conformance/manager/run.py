#!/usr/bin/env python3
"""Runs the manager conformance suite (test_manager.py) against a build tree.

    python3 tests/conformance/manager/run.py --build-dir build [-k PATTERN] [-v]

Exit 0 when every case passes (cases whose binaries are not built are skipped, each naming
what is missing), 1 otherwise.
"""

import argparse
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build-dir", required=True, help="the CMake build directory")
    p.add_argument("-k", dest="pattern", action="append", help="only tests whose name contains this")
    p.add_argument("-v", dest="verbose", action="store_true")
    args = p.parse_args()
    os.environ["GENVM_BUILD_DIR"] = os.path.abspath(args.build_dir)
    sys.path.insert(0, HERE)
    loader = unittest.TestLoader()
    if args.pattern:
        loader.testNamePatterns = [f"*{k}*" for k in args.pattern]
    suite = loader.discover(HERE, pattern="test_*.py", top_level_dir=HERE)
    result = unittest.TextTestRunner(verbosity=2 if args.verbose else 1).run(suite)
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
