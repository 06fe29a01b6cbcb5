# v0.1.0
# { "Depends": "py-genlayer:latest" }
from genlayer import *


# An LLM answers a question; validators ask the LLM too and accept the leader's answer when the
# two answers are equivalent under the principle (prompt_comparative).
class WizardOfCoin(gl.Contract):
    question: str
    answer: str

    def __init__(self):
        self.question = ""
        self.answer = ""

    @gl.public.view
    def get_answer(self) -> str:
        return self.answer

    @gl.public.write
    def ask(self, question: str) -> str:
        def answer() -> str:
            return gl.nondet.exec_prompt("Answer in one short sentence: " + question)

        self.answer = gl.eq_principle.prompt_comparative(answer, "the answers state the same fact")
        self.question = question
        return self.answer
