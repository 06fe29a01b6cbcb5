# v0.1.0
# { "Depends": "py-genlayer:latest" }
from genlayer import *


class Transfer(gl.Event):
    pass


# A ledger of balances per address: anyone deposits to their own balance and moves it to others.
class UserBalances(gl.Contract):
    balances: TreeMap[Address, u256]
    total: u256

    def __init__(self):
        self.total = 0

    @gl.public.view
    def balance_of(self, who: Address) -> u256:
        return self.balances.get(who, 0)

    @gl.public.view
    def total_supply(self) -> u256:
        return self.total

    @gl.public.write
    def deposit(self, amount: u256) -> None:
        me = gl.message.sender_address
        self.balances[me] = self.balances.get(me, 0) + amount
        self.total += amount

    @gl.public.write
    def transfer(self, to: Address, amount: u256) -> None:
        me = gl.message.sender_address
        have = self.balances.get(me, 0)
        if have < amount:
            raise gl.vm.UserError(f"insufficient funds: {have} < {amount}")
        self.balances[me] = have - amount
        self.balances[to] = self.balances.get(to, 0) + amount
        Transfer(me, to, amount=amount).emit()
