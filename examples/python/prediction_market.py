# v0.1.0
# { "Depends": "py-genlayer:latest" }
from genlayer import *


# A prediction on a page's content: an LLM reads the page and judges whether the predicted
# outcome happened. Validators read the page and ask the LLM themselves; they accept the
# leader's verdict only when theirs is the same (a judgement made by run_nondet's validator).
class PredictionMarket(gl.Contract):
    prediction: str
    resolution_url: str
    resolved: bool
    outcome: bool

    def __init__(self, prediction: str, resolution_url: str):
        self.prediction = prediction
        self.resolution_url = resolution_url
        self.resolved = False
        self.outcome = False

    @gl.public.view
    def status(self) -> str:
        if not self.resolved:
            return "open: " + self.prediction
        return ("happened: " if self.outcome else "did not happen: ") + self.prediction

    @gl.public.write
    def resolve(self) -> bool:
        if self.resolved:
            raise gl.vm.UserError("already resolved")
        prediction, url = self.prediction, self.resolution_url

        def judge() -> bool:
            page = gl.nondet.web.get(url).body.decode("utf-8", errors="replace")
            verdict = gl.nondet.exec_prompt(
                "Page:\n" + page + "\n\nPrediction: " + prediction +
                '\nDid the prediction happen, by the page? Answer as JSON {"happened": true|false}.',
                response_format="json")
            return isinstance(verdict, dict) and verdict.get("happened") is True

        def agrees(leader_verdict: bool) -> bool:
            return leader_verdict == judge()

        self.outcome = gl.vm.run_nondet(judge, agrees)
        self.resolved = True
        return self.outcome
