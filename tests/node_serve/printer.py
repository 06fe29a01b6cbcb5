# v0.1.0
# { "Depends": "py-genlayer:latest" }
from genlayer import *
import sys


# Prints on both streams: what `genlayer receipt --stdout` / `--stderr` show
# (tests/interop/cli_interop.mjs).
class Printer(gl.Contract):
    def __init__(self):
        pass

    @gl.public.write
    def shout(self, text: str) -> None:
        print("out:", text)
        print("err:", text, file=sys.stderr)
