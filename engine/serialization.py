"""Lossless JSON round trip for the engine's frozen configuration dataclasses.

A configuration class inherits :class:`Serializable` and gets ``to_dict``/``from_dict``/``to_json``/``from_json``.
``from_dict`` rebuilds the object through its constructor, so ``__post_init__`` validation runs again on import:
a hand-edited or corrupted file is rejected with the same message a bad widget value would get.

Supported field types: ``bool``, ``int``, ``float``, ``str``, ``None``/``Optional``, ``Literal``, ``Enum``,
``tuple[T, ...]``, ``tuple[A, B]``, ``dict[str, T]`` and nested ``Serializable`` dataclasses (also behind a
``Union`` of dataclasses, disambiguated by a ``"kind"`` key that each class names in ``KIND``).
"""

from __future__ import annotations

import dataclasses
import enum
import json
import math
import types
import typing
from typing import Any, ClassVar, TypeVar

from engine.errors import InvalidParameterError

T = TypeVar("T", bound="Serializable")


class Serializable:
    """Mixin for frozen dataclasses that serialise to JSON and back losslessly."""

    #: Short tag written as ``"kind"`` so a Union-typed field knows which class to rebuild.
    KIND: ClassVar[str] = ""
    #: Read-only properties written by :meth:`to_dict` for readers of the file (e.g. ``"vacuous"``) and ignored
    #: when reading it back: they are recomputed from the fields, so an edited value cannot change the object.
    DERIVED_KEYS: ClassVar[tuple[str, ...]] = ()

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.KIND:
            out["kind"] = self.KIND
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            if not f.init:
                continue
            out[f.name] = _encode(getattr(self, f.name))
        for name in self.DERIVED_KEYS:
            out[name] = _encode(getattr(self, name))
        return out

    @classmethod
    def from_dict(cls: type[T], data: Any) -> T:
        return _decode_dataclass(cls, data, cls.__name__)

    def to_json(self, **kwargs: Any) -> str:
        return json.dumps(self.to_dict(), allow_nan=False, **kwargs)

    def config_key(self) -> str:
        """One text that identifies this configuration: its class and its canonical JSON (the ONE hash of a
        configuration wherever one is cached: the dashboard's caches use it)."""
        return f"{type(self).__module__}.{type(self).__qualname__}:{self.to_json(sort_keys=True)}"

    @classmethod
    def from_json(cls: type[T], text: str) -> T:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InvalidParameterError(
                f"the {cls.__name__} file is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
            ) from None
        return cls.from_dict(data)


def _encode(value: Any) -> Any:
    if isinstance(value, Serializable):
        return value.to_dict()
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (tuple, list)):
        return [_encode(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _encode(v) for k, v in value.items()}
    if isinstance(value, float) and not math.isfinite(value):
        raise InvalidParameterError(f"cannot store the non-finite number {value!r} in a configuration")
    if hasattr(value, "item") and callable(value.item):  # numpy scalar
        return value.item()
    return value


def _decode_dataclass(cls: type, data: Any, where: str) -> Any:
    if not isinstance(data, dict):
        raise InvalidParameterError(f"{where} must be a JSON object; got {type(data).__name__}")
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    extra = set(data) - set(fields) - {"kind"} - set(getattr(cls, "DERIVED_KEYS", ()))
    if extra:
        raise InvalidParameterError(
            f"{where} has unknown field(s) {sorted(extra)}; allowed: {sorted(fields)}"
        )
    kind = getattr(cls, "KIND", "")
    if kind and "kind" in data and data["kind"] != kind:
        raise InvalidParameterError(f"{where} has kind {data['kind']!r}; expected {kind!r}")
    kwargs = {}
    for name, f in fields.items():
        if name not in data:
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise InvalidParameterError(f"{where} is missing the required field {name!r}")
            continue
        kwargs[name] = _decode(hints[name], data[name], f"{where}.{name}")
    return cls(**kwargs)


def _decode(tp: Any, value: Any, where: str) -> Any:
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if tp is Any:
        return value
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        candidates = [a for a in args if a is not type(None)]
        dataclass_options = [a for a in candidates if isinstance(a, type) and dataclasses.is_dataclass(a)]
        if dataclass_options and isinstance(value, dict):
            if len(dataclass_options) == 1:  # e.g. Optional[Config]: no need to discriminate
                return _decode_dataclass(dataclass_options[0], value, where)
            if "kind" in value:
                for a in dataclass_options:
                    if getattr(a, "KIND", None) == value["kind"]:
                        return _decode_dataclass(a, value, where)
                raise InvalidParameterError(f"{where} has unknown kind {value['kind']!r}")
        errors = []
        for a in candidates:
            try:
                return _decode(a, value, where)
            except InvalidParameterError as exc:
                errors.append(str(exc))
        raise InvalidParameterError(errors[0] if errors else f"{where}: cannot decode {value!r}")
    if origin is typing.Literal:
        if value not in args:
            raise InvalidParameterError(f"{where} must be one of {list(args)}; got {value!r}")
        return value
    if origin is tuple:
        if not isinstance(value, list):
            raise InvalidParameterError(f"{where} must be a list; got {type(value).__name__}")
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_decode(args[0], v, f"{where}[{i}]") for i, v in enumerate(value))
        if len(args) != len(value):
            raise InvalidParameterError(f"{where} must have {len(args)} entries; got {len(value)}")
        return tuple(_decode(a, v, f"{where}[{i}]") for i, (a, v) in enumerate(zip(args, value, strict=True)))
    if origin is dict:
        if not isinstance(value, dict):
            raise InvalidParameterError(f"{where} must be a JSON object; got {type(value).__name__}")
        return {k: _decode(args[1], v, f"{where}[{k!r}]") for k, v in value.items()}
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return _decode_dataclass(tp, value, where)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        try:
            return tp(value)
        except ValueError:
            raise InvalidParameterError(
                f"{where} must be one of {[m.value for m in tp]}; got {value!r}"
            ) from None
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise InvalidParameterError(f"{where} must be a number; got {value!r}")
        return float(value)
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise InvalidParameterError(f"{where} must be a whole number; got {value!r}")
        return value
    if tp is bool:
        if not isinstance(value, bool):
            raise InvalidParameterError(f"{where} must be true or false; got {value!r}")
        return value
    if tp is str:
        if not isinstance(value, str):
            raise InvalidParameterError(f"{where} must be text; got {value!r}")
        return value
    if tp is type(None):
        if value is not None:
            raise InvalidParameterError(f"{where} must be null; got {value!r}")
        return None
    raise TypeError(f"unsupported field type {tp!r} at {where}")  # a bug in a config class, not user input
