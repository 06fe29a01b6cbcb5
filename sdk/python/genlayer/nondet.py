"""The LLM and web modules, for non-deterministic blocks (gl_call ExecPrompt, ExecPromptTemplate,
WebRender, WebRequest). Answers are {"ok": X} or {"error": E} (03-schemas.rst, "Module Result
Encoding"); an error raises NondetException. Outside a non-deterministic block the executor
refuses these calls (SdkError forbidden)."""

import typing

from genlayer import _calls, calldata
from genlayer._record import Record
from genlayer.vm import UserError

__all__ = ["exec_prompt", "exec_prompt_template", "web", "NondetException", "Response"]


class NondetException(UserError):
    """A module refused the request; `message` says why, `error` is the module's value."""

    def __init__(self, message: str, error=None):
        super().__init__(message)
        self.error = error


def _describe(error) -> str:
    if isinstance(error, str):
        return error
    if isinstance(error, dict):
        causes = error.get("causes")
        parts = [", ".join(str(c) for c in causes)] if isinstance(causes, list) else []
        ctx = error.get("ctx")
        if isinstance(ctx, dict) and ctx:
            parts.append("(" + ", ".join(f"{k}: {v}" for k, v in ctx.items()) + ")")
        if parts:
            return " ".join(parts)
    return repr(error)


def _module_call(name: str, body):
    answer = calldata.decode(_calls.send_read(name, body))
    if isinstance(answer, dict) and len(answer) == 1:
        if "ok" in answer:
            return answer["ok"]
        if "error" in answer:
            raise NondetException(f"{name}: {_describe(answer['error'])}", answer["error"])
    raise NondetException(f"{name}: the module answer is not {{ok}} or {{error}}", answer)


def exec_prompt(prompt: str, *, response_format: typing.Literal["text", "json"] = "text",
                images: typing.Sequence[bytes] = ()):
    """Asks the LLM module; text: a str, json: the decoded object. At most 2 images."""
    if response_format not in ("text", "json"):
        raise ValueError("response_format is 'text' or 'json'")
    images = [bytes(i) for i in images]
    return _module_call("ExecPrompt", {"images": images, "prompt": prompt, "response_format": response_format})


def exec_prompt_template(template: str, **fields: str):
    """ExecPromptTemplate: EqComparative (leader_answer, validator_answer, principle) -> bool,
    EqNonComparativeLeader (task, criteria, input) -> str, EqNonComparativeValidator (task,
    criteria, input, output) -> bool."""
    return _module_call("ExecPromptTemplate", dict(fields, template=template))


class Response(Record):
    """An HTTP answer: status (int), headers ({name: bytes}), body (bytes)."""

    _fields = ("status", "headers", "body")
    __slots__ = _fields


class _Web:
    """gl.nondet.web: render a page, or make an HTTP request."""

    @staticmethod
    def render(url: str, *, mode: typing.Literal["text", "html", "screenshot"] = "text",
               wait_after_loaded: typing.Optional[str] = None):
        """text and html: the page as str; screenshot: the PNG bytes."""
        if mode not in ("text", "html", "screenshot"):
            raise ValueError("mode is 'text', 'html' or 'screenshot'")
        ok = _module_call("WebRender", {"mode": mode, "url": url, "wait_after_loaded": wait_after_loaded or "0ms"})
        if mode == "text":
            return ok["text"]
        if mode == "html":
            body = ok["response"]["body"]
            return body.decode("utf-8", errors="replace") if isinstance(body, bytes) else body
        return ok["image"]

    @staticmethod
    def request(url: str, *, method: str = "GET", body: typing.Union[bytes, str, None] = None,
                headers: typing.Optional[typing.Mapping[str, typing.Union[bytes, str]]] = None,
                sign: bool = False) -> Response:
        if isinstance(body, str):
            body = body.encode("utf-8")
        hdrs = {k: v.encode("utf-8") if isinstance(v, str) else bytes(v) for k, v in (headers or {}).items()}
        ok = _module_call("WebRequest", {"body": body, "headers": hdrs, "method": method, "sign": sign, "url": url})
        return Response(status=ok["status"], headers=ok["headers"], body=ok["body"])

    @classmethod
    def get(cls, url: str, *, headers=None) -> Response:
        return cls.request(url, method="GET", headers=headers)

    @classmethod
    def post(cls, url: str, *, body=None, headers=None) -> Response:
        return cls.request(url, method="POST", body=body, headers=headers)

    @classmethod
    def delete(cls, url: str, *, body=None, headers=None) -> Response:
        return cls.request(url, method="DELETE", body=body, headers=headers)

    @classmethod
    def head(cls, url: str, *, headers=None) -> Response:
        return cls.request(url, method="HEAD", headers=headers)

    @classmethod
    def patch(cls, url: str, *, body=None, headers=None) -> Response:
        return cls.request(url, method="PATCH", body=body, headers=headers)


web = _Web()


def as_text(value) -> str:
    """A value as the text the equivalence templates compare."""
    if isinstance(value, str):
        return value
    import json  # only here: most contracts never compare texts
    try:
        return json.dumps(value, sort_keys=True, ensure_ascii=False)
    except TypeError:
        return repr(value)
