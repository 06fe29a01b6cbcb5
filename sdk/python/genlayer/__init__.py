"""genlayer: the Python SDK for GenVM intelligent contracts.

    from genlayer import *

    class Storage(gl.Contract):
        value: str

        def __init__(self, initial: str):
            self.value = initial

        @gl.public.view
        def get(self) -> str:
            return self.value

        @gl.public.write
        def set(self, value: str) -> None:
            self.value = value

`from genlayer import *` gives `gl` and the storage and value types.
"""

from genlayer import gl
from genlayer.storage import Array, DynArray, TreeMap, allow_storage
from genlayer.types import *  # noqa: F401,F403  (u8..u256, i8..i256, bigint, Address)
from genlayer.types import __all__ as _types_all

__all__ = ["gl", "Array", "DynArray", "TreeMap", "allow_storage"] + [
    n for n in _types_all if n not in ("INT_TYPES", "int_range")]
