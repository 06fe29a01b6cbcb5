# v0.1.0
# { "Depends": "py-genlayer:latest" }
from genlayer import *


# One string in storage: read it, replace it.
class Storage(gl.Contract):
    storage: str

    def __init__(self, initial_storage: str):
        self.storage = initial_storage

    @gl.public.view
    def get_storage(self) -> str:
        return self.storage

    @gl.public.write
    def update_storage(self, new_storage: str) -> None:
        self.storage = new_storage
