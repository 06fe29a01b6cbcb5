# v0.1.0
# { "Depends": "py-genlayer:latest" }
import re

from genlayer import *


# Reads a number off a web page. Every validator fetches the page too and agrees only if it
# reads exactly the leader's number (strict_eq).
class PriceFeed(gl.Contract):
    url: str
    price: u256

    def __init__(self, url: str):
        self.url = url
        self.price = 0

    @gl.public.view
    def get_price(self) -> u256:
        return self.price

    @gl.public.write
    def refresh(self) -> u256:
        url = self.url  # storage is read here, outside the non-deterministic block

        def read_price() -> int:
            page = gl.nondet.web.get(url)
            if page.status != 200:
                raise gl.vm.UserError(f"{url} answered {page.status}")
            found = re.search(r"price is (\d+)", page.body.decode("utf-8", errors="replace"))
            if found is None:
                raise gl.vm.UserError("no price on the page")
            return int(found.group(1))

        self.price = gl.eq_principle.strict_eq(read_price)
        return self.price
