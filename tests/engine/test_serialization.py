"""Serialisation of frozen configuration dataclasses (engine.serialization): lossless JSON round trips."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.errors import InvalidParameterError
from engine.serialization import Serializable
from engine.validation import check_integer


@dataclass(frozen=True)
class _Inner(Serializable):
    KIND = "inner"
    a: float
    tags: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Outer(Serializable):
    name: str
    k: int
    mode: Literal["fast", "reference"]
    inner: _Inner
    maybe: float | None = None
    weights: dict[str, float] | None = None

    def __post_init__(self) -> None:
        check_integer("k", self.k, 1, None)


@given(
    name=st.text(max_size=20),
    k=st.integers(1, 10**12),
    mode=st.sampled_from(["fast", "reference"]),
    a=st.floats(allow_nan=False, allow_infinity=False),
    tags=st.lists(st.text(max_size=5), max_size=3),
    maybe=st.none() | st.floats(allow_nan=False, allow_infinity=False),
)
def test_serialisation_round_trip_is_lossless(name, k, mode, a, tags, maybe):
    obj = _Outer(name, k, mode, _Inner(a, tuple(tags)), maybe, {"x": 1.5})
    back = _Outer.from_json(obj.to_json())
    assert back == obj
    assert type(back.inner.tags) is tuple


def test_deserialisation_rejects_bad_input_with_clear_messages():
    good = _Outer("n", 2, "fast", _Inner(1.0)).to_dict()
    with pytest.raises(InvalidParameterError, match="unknown field"):
        _Outer.from_dict({**good, "surprise": 1})
    with pytest.raises(InvalidParameterError, match="missing the required field 'k'"):
        _Outer.from_dict({k: v for k, v in good.items() if k != "k"})
    with pytest.raises(InvalidParameterError, match=r"mode must be one of \['fast', 'reference'\]"):
        _Outer.from_dict({**good, "mode": "turbo"})
    with pytest.raises(InvalidParameterError, match="k must be a whole number in"):
        _Outer.from_dict({**good, "k": 0})  # __post_init__ runs again on import
    with pytest.raises(InvalidParameterError, match="not valid JSON"):
        _Outer.from_json("{nope")



@dataclass(frozen=True)
class _HasKindField(Serializable):
    kind: str = "targeting"  # a field that happens to be called "kind" (no KIND tag)
    q: float = 0.29


@dataclass(frozen=True)
class _Holder(Serializable):
    program: _HasKindField | None = None


def test_optional_dataclass_with_its_own_kind_field_round_trips():
    obj = _Holder(program=_HasKindField("lending", 0.3))
    assert _Holder.from_json(obj.to_json()) == obj
    assert _Holder.from_json(_Holder().to_json()) == _Holder()
