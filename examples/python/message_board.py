# v0.1.0
# { "Depends": "py-genlayer:latest" }
from genlayer import *


# Posts in order, from anyone (people or contracts: the poster is the message's sender).
class MessageBoard(gl.Contract):
    posts: DynArray[str]
    posters: DynArray[Address]

    def __init__(self):
        pass

    @gl.public.view
    def count(self) -> u64:
        return len(self.posts)

    @gl.public.view
    def read(self, index: u64) -> str:
        if index >= len(self.posts):
            raise gl.vm.UserError(f"no post {index}")
        return f"{self.posters[index].as_hex}: {self.posts[index]}"

    @gl.public.write
    def post(self, text: str) -> None:
        self.posts.append(text)
        self.posters.append(gl.message.sender_address)
