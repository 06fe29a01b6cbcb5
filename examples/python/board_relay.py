# v0.1.0
# { "Depends": "py-genlayer:latest" }
from genlayer import *


# Calls another contract: reads a message board's post count now (a view call) and posts a
# numbered message to it (a message, run after this transaction is accepted).
class BoardRelay(gl.Contract):
    board: Address
    relayed: u64

    def __init__(self, board: Address):
        self.board = board
        self.relayed = 0

    @gl.public.view
    def board_count(self) -> u64:
        return gl.get_contract_at(self.board).view().count()

    @gl.public.write
    def relay(self, text: str) -> u64:
        board = gl.get_contract_at(self.board)
        seen = board.view().count()
        self.relayed += 1
        board.emit(on="accepted").post(f"relay #{self.relayed} (board had {seen}): {text}")
        return seen
