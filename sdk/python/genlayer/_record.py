"""Small value classes for the SDK's own records (the startup message, a web response, ...) and
dataclass questions about a contract's classes, without importing `dataclasses` at start-up.

`dataclasses` imports inspect, and through it dis, ast, tokenize, enum and re: about a third of
`import genlayer` on python.wasm. A contract that defines a dataclass has imported it already,
so the helpers below import it only for a class that is one (then the import costs nothing).
"""

__all__ = ["Record", "is_dataclass", "dataclass_field_names"]


class Record:
    """A class with the fields named by `_fields`: __init__ by position or keyword, every field
    required; __repr__; __eq__ on the fields. calldata encodes one as the map of its fields (as
    it does a dataclass). `_frozen = True`: fields cannot be set after __init__, and it hashes."""

    __slots__ = ()
    _fields: tuple = ()
    _frozen = False

    def __init__(self, *args, **kwargs):
        name = type(self).__name__
        if len(args) > len(self._fields):
            raise TypeError(f"{name}() takes {len(self._fields)} fields, got {len(args)} positional")
        values = dict(zip(self._fields, args))
        for key, value in kwargs.items():
            if key not in self._fields:
                raise TypeError(f"{name}() has no field {key!r}")
            if key in values:
                raise TypeError(f"{name}() got field {key!r} twice")
            values[key] = value
        missing = [f for f in self._fields if f not in values]
        if missing:
            raise TypeError(f"{name}() is missing field {missing[0]!r}")
        for key in self._fields:
            object.__setattr__(self, key, values[key])

    def __setattr__(self, key, value):
        if self._frozen:
            raise AttributeError(f"{type(self).__name__} is frozen")
        object.__setattr__(self, key, value)

    def _values(self) -> tuple:
        return tuple(getattr(self, f) for f in self._fields)

    def __repr__(self):
        return f"{type(self).__name__}(" + ", ".join(f"{f}={getattr(self, f)!r}" for f in self._fields) + ")"

    def __eq__(self, other):
        if type(other) is not type(self):
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self):
        if not self._frozen:
            raise TypeError(f"unhashable type: {type(self).__name__!r}")
        return hash(self._values())


def is_dataclass(obj) -> bool:
    """dataclasses.is_dataclass(obj), without importing dataclasses."""
    cls = obj if isinstance(obj, type) else type(obj)
    return hasattr(cls, "__dataclass_fields__")


def dataclass_field_names(obj) -> list:
    """[f.name for f in dataclasses.fields(obj)] of a dataclass (type or instance)."""
    import dataclasses
    return [f.name for f in dataclasses.fields(obj)]
