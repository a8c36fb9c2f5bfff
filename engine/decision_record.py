"""The decision record: a versioned JSON document stating a privacy-parameter choice and everything behind it.

A program designer exports it from the dashboard; a reviewer reads it; a data holder runs it. It states

* every building block of the guarantee, as the DP-specification framework asks (Bailie, Gong, Meng &
  Drechsler; digest ``shared/spec/004-privacy-framework.md``, §7 and §12): the protection domain, the scope of
  protection (invariants), the protection unit and neighbouring relation (including the target distance B), the
  standard of protection and its intensity (ε, δ), plus derived conversions labelled as conversions and what is
  out of scope — never a bare ε (:class:`PrivacySpecification`);
* the accuracy targets and Theorem 1's verdicts for them (:class:`Targets`);
* the release configuration — data spec, mechanism and seed (:class:`engine.release.ReleaseConfig`), the one
  top-level object with both ``data`` and ``mechanism`` keys, so ``python -m engine privatize --config
  record.json`` reads it directly;
* the designer's rationale, the measured tradeoffs (each sweep's table, :class:`TradeoffSummary`), a data
  fingerprint (n, d, column names, hashes — never a value, :class:`DataFingerprint`), the seeds and the software
  versions;
* the dashboard settings needed to restore the session (``studio``: plain JSON values).

Loading (:func:`load_decision_record`) checks the schema name and version first, then rebuilds every nested
configuration through its validating constructor, so a corrupted or hand-edited record is refused with a message
naming the problem — never half-loaded.
"""

from __future__ import annotations

import functools
import json
import math
import platform
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import metadata
from typing import Any, ClassVar, Literal

import numpy as np
import pandas as pd

from engine import __version__
from engine.accounting.tdp import steps
from engine.constraints import Choice, Constraint, Each, Flag, Integer, Real, check_declared
from engine.data.preparation import PreparedData
from engine.errors import InvalidParameterError
from engine.evaluation.programs import ProgramConfig
from engine.guarantee import RELATION_TEXT, Guarantee
from engine.release import ReleaseConfig, cli_command
from engine.serialization import Serializable
from engine.sweeps import SweepConfig, SweepResult
from engine.theory.feasibility import FeasibilityReport, feasibility_report
from engine.validation import check_integer
from engine.workshop import Workshop

#: Name of the document type, written as ``"schema"``.
SCHEMA_ID = "privacy-parameter-studio/decision-record"
#: Version of the layout. Bump it (and keep reading the old one) whenever a field changes meaning or is removed.
SCHEMA_VERSION = 1

#: Packages whose versions are recorded (read from installed metadata; nothing is imported).
SOFTWARE_PACKAGES: tuple[str, ...] = ("numpy", "scipy", "pandas", "scikit-learn", "streamlit", "plotly")

OUT_OF_SCOPE: tuple[str, ...] = (
    "Metadata and paradata privacy (who communicated with whom, and when) is not covered: the guarantee concerns "
    "the content of the released feature values only.",
    "The right to be forgotten (erasure) is not addressed by a privacy guarantee.",
    "Correlated records: the guarantee bounds what the release adds about a person beyond what other people's "
    "records already reveal about them (e.g. household members); it does not bound that marginal disclosure.",
)


# ----------------------------------------------------------------------------------------------------------------
# Parts of the record
# ----------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PrivacySpecification(Serializable):
    """The five building blocks of a DP specification, in words and numbers (spec 004, §7 and §12.1).

    Attributes
    ----------
    protection_domain : str
        What can be protected: the dataset space (columns, n, the map into the unit ball).
    scope : str
        To where protection extends: the invariants the release keeps exactly and the datasets it compares.
    invariants : tuple of str
        Quantities released exactly (public) — the guarantee holds subject to them.
    protection_unit : str
        Who is protected: one person's record.
    neighbouring_relation : str
        Which pairs of datasets are protected, with the target distance B written out.
    b : float
        Target distance B on the prepared scale (2 = every pair of records: classic DP).
    b_in_data_units : str
        What B means in the data's own units.
    standard : str
        How protection is measured (d_Pr): (ε, δ)-indistinguishability, restricted to B-neighbours for TDP.
    epsilon, delta : float
        Intensity of protection in the standard's native parameters. ``epsilon`` is ``None`` when the mechanism
        gives no (ε, δ) statement at all (k-anonymity).
    conversions : tuple of str
        Derived statements, each labelled as a conversion (e.g. the classic DP implied by the switch lemma).
    assumptions : tuple of str
        What the guarantee relies on (secret randomness, data-independent preparation, …).
    out_of_scope : tuple of str
        What the guarantee does not address.
    """

    protection_domain: str
    scope: str
    invariants: tuple[str, ...]
    protection_unit: str
    neighbouring_relation: str
    b: float
    b_in_data_units: str
    standard: str
    epsilon: float | None
    delta: float
    conversions: tuple[str, ...] = ()
    assumptions: tuple[str, ...] = ()
    out_of_scope: tuple[str, ...] = OUT_OF_SCOPE

    PARAMETER_CONSTRAINTS: ClassVar[dict[str, Constraint]] = {
        "b": Real(0, 2, closed="right"),
        "epsilon": Real(0, None, closed="neither", optional=True),
        "delta": Real(0, 1, closed="both"),
    }

    def __post_init__(self) -> None:
        check_declared(self)
        for name in ("protection_domain", "scope", "protection_unit", "neighbouring_relation", "standard"):
            if not isinstance(getattr(self, name), str) or not getattr(self, name).strip():
                raise InvalidParameterError(f"the privacy specification's {name.replace('_', ' ')} must be stated")


@dataclass(frozen=True)
class Targets(Serializable):
    """The accuracy targets, δ and Theorem 1's answers at the chosen ε.

    ``delta_rule`` is ``"1/(n+1)"`` when δ was left at its default, ``"chosen"`` otherwise.
    """

    gammas: tuple[float, ...]
    delta: float
    delta_rule: Literal["1/(n+1)", "chosen"]
    feasibility: tuple[FeasibilityReport, ...] = ()

    PARAMETER_CONSTRAINTS: ClassVar[dict[str, Constraint]] = {
        "gammas": Each(Real(0.5, 1, closed="left"), label="gamma"),
        "delta": Real(0, 1, closed="left"),
        "delta_rule": Choice(("1/(n+1)", "chosen")),
    }

    def __post_init__(self) -> None:
        check_declared(self)
        for report in self.feasibility:
            if not isinstance(report, FeasibilityReport):
                raise InvalidParameterError(
                    f"feasibility must hold Theorem 1 reports (FeasibilityReport); got {type(report).__name__}"
                )


@dataclass(frozen=True)
class DataFingerprint(Serializable):
    """What identifies the data — size, column names and keyed hashes — never a value.

    ``sha256`` is :attr:`PreparedData.fingerprint` (the used columns' content plus the spec) and ``file_sha256``
    the fingerprint of the uploaded file's bytes (None for a demo); both are HMAC-SHA256 under the data holder's
    key (:mod:`engine.fingerprint`), so only the key holder can match them to data.
    """

    source: Literal["demo", "upload"]
    dataset: str | None
    title: str
    synthetic: bool
    n: int
    d: int
    columns: tuple[str, ...]
    features: tuple[str, ...]
    target: str | None
    roles: dict[str, str]
    sha256: str
    file_sha256: str | None = None

    PARAMETER_CONSTRAINTS: ClassVar[dict[str, Constraint]] = {
        "source": Choice(("demo", "upload"), label="data source"),
        "synthetic": Flag(),
        "n": Integer(1),
        "d": Integer(1),
    }

    def __post_init__(self) -> None:
        check_declared(self)
        if len(self.features) != self.d:
            raise InvalidParameterError(f"the data fingerprint lists {len(self.features)} features but d = {self.d}")
        for name in (self.sha256, self.file_sha256):
            if name is not None and (len(name) != 64 or any(c not in "0123456789abcdef" for c in name)):
                raise InvalidParameterError(f"a data hash must be 64 lowercase hex digits; got {name!r}")
        if self.source == "demo" and not self.dataset:
            raise InvalidParameterError("a record made on a demo dataset must name it")


@dataclass(frozen=True)
class TableData(Serializable):
    """A pandas table as JSON: column names, dtypes and rows (NaN stored as null). Lossless for numbers and text."""

    columns: tuple[str, ...]
    dtypes: tuple[str, ...]
    rows: tuple[tuple[int | float | bool | str | None, ...], ...]

    def __post_init__(self) -> None:
        if len(self.columns) != len(self.dtypes):
            raise InvalidParameterError("a stored table needs one dtype per column")
        for i, row in enumerate(self.rows):
            if len(row) != len(self.columns):
                raise InvalidParameterError(
                    f"row {i} of a stored table has {len(row)} values for {len(self.columns)} columns"
                )

    @classmethod
    def from_frame(cls, frame: pd.DataFrame) -> TableData:
        def cell(value: Any) -> Any:
            if isinstance(value, np.generic):
                value = value.item()
            if isinstance(value, float) and not math.isfinite(value):
                return None
            if value is None or (not isinstance(value, (str, bool, int, float)) and pd.isna(value)):
                return None
            return value

        return cls(
            columns=tuple(str(c) for c in frame.columns),
            dtypes=tuple(str(t) for t in frame.dtypes),
            rows=tuple(tuple(cell(v) for v in row) for row in frame.itertuples(index=False, name=None)),
        )

    def to_frame(self) -> pd.DataFrame:
        frame = pd.DataFrame(list(self.rows), columns=list(self.columns))
        for column, dtype in zip(self.columns, self.dtypes, strict=True):
            try:
                if dtype.startswith(("float", "int", "bool", "uint")):
                    frame[column] = frame[column].astype("float64" if frame[column].isna().any() else dtype)
            except (TypeError, ValueError):
                continue
        return frame


@dataclass(frozen=True)
class TradeoffSummary(Serializable):
    """The measured tradeoffs: the sweep's configuration, its full tidy table and where it ran."""

    config: SweepConfig
    table: TableData
    fingerprint: str
    n_released: int
    n_holdout: int
    complete: bool = True
    selected: dict[str, Any] | None = None

    @classmethod
    def from_result(cls, result: SweepResult, *, selected: dict[str, Any] | None = None) -> TradeoffSummary:
        return cls(
            config=result.config, table=TableData.from_frame(result.table), fingerprint=result.fingerprint,
            n_released=int(result.n_released), n_holdout=int(result.n_holdout), complete=bool(result.complete),
            selected=selected,
        )

    def to_result(self) -> SweepResult:
        """The :class:`SweepResult` this summary was made from (timings are not recorded)."""
        return SweepResult(
            config=self.config, table=self.table.to_frame(), fingerprint=self.fingerprint,
            n_released=self.n_released, n_holdout=self.n_holdout, complete=self.complete,
        )


@dataclass(frozen=True)
class Software(Serializable):
    """Versions of the engine, Python and the numerical libraries used."""

    engine: str
    python: str
    packages: dict[str, str]

    @classmethod
    def current(cls) -> Software:
        return cls(engine=__version__, python=platform.python_version(), packages=dict(_installed_versions()))


@functools.cache
def _installed_versions() -> tuple[tuple[str, str], ...]:
    """The installed versions of :data:`SOFTWARE_PACKAGES`, read once per process (reading the metadata took about
    60 ms, and the Export page builds a record at every run)."""
    versions = []
    for name in SOFTWARE_PACKAGES:
        try:
            versions.append((name, metadata.version(name)))
        except metadata.PackageNotFoundError:
            versions.append((name, "not installed"))
    return tuple(versions)


@dataclass(frozen=True)
class Seeds(Serializable):
    """Every seed behind the record. ``release`` None means fresh OS randomness (the only private choice)."""

    release: int | None
    sweep: int | None = None
    program_folds: int | None = None
    warning: str | None = None

    PARAMETER_CONSTRAINTS: ClassVar[dict[str, Constraint]] = {
        name: Integer(0, optional=True, hint="a seed is a whole number ≥ 0 (or null for OS entropy)")
        for name in ("release", "sweep", "program_folds")
    }

    def __post_init__(self) -> None:
        check_declared(self)


# ----------------------------------------------------------------------------------------------------------------
# The record
# ----------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DecisionRecord(Serializable):
    """A privacy-parameter decision, versioned (:data:`SCHEMA_VERSION`), lossless through JSON.

    ``release`` is the only top-level field holding both ``data`` and ``mechanism``, which is how
    ``python -m engine privatize --config record.json`` finds it.
    """

    KIND: ClassVar[str] = "decision-record"

    created: str
    title: str
    specification: PrivacySpecification
    candidate: Guarantee
    targets: Targets
    release: ReleaseConfig
    guarantee: tuple[str, ...]
    data: DataFingerprint
    software: Software
    seeds: Seeds
    program: ProgramConfig = field(default_factory=ProgramConfig)
    rationale: str = ""
    tradeoffs: tuple[TradeoffSummary, ...] = ()
    studio: dict[str, Any] = field(default_factory=dict)
    command: str = ""
    #: Optional (absent in records written before issue 13): the Public-information page's configuration, as
    #: built by :func:`public_information_block` — scope, declared public statistics, per-period and whole-study ε,
    #: the composition caveat and the count-study / count-release configurations.
    public_information: dict[str, Any] | None = None
    #: Optional (absent in records written before issue 12's workshop): every pinned candidate, the one the group
    #: chose and its rationale (:class:`engine.workshop.Workshop`).
    workshop: Workshop | None = None
    #: Optional (absent in records written before issue 34): every value the program's score rests on that is not
    #: read from the data (default loan amounts and rates, the profit convention, the decision rule, the scoring),
    #: in words (:meth:`engine.evaluation.programs.ProgramConfig.assumptions`).
    program_assumptions: tuple[str, ...] | None = None
    schema: str = SCHEMA_ID
    schema_version: int = SCHEMA_VERSION

    def __post_init__(self) -> None:
        if self.schema != SCHEMA_ID:
            raise InvalidParameterError(f"this is not a Studio decision record (schema {self.schema!r})")
        if self.schema_version != SCHEMA_VERSION:
            raise InvalidParameterError(_version_message(self.schema_version))
        if not self.release.data.expands_to(self.data.features):
            raise InvalidParameterError(
                "the record's data fingerprint and its release configuration name different feature columns "
                f"({list(self.data.features)} vs {list(self.release.data.features)}) — the file was edited or "
                "assembled from two sessions; export it again"
            )
        if self.data.source == "demo" and self.release.dataset not in (None, self.data.dataset):
            raise InvalidParameterError(
                f"the record's release names the dataset {self.release.dataset!r} but its data fingerprint "
                f"{self.data.dataset!r} — export it again"
            )
        if not isinstance(self.rationale, str):
            raise InvalidParameterError("the rationale must be text")
        if self.public_information is not None:
            check_public_information(self.public_information)
        if self.workshop is not None and not isinstance(self.workshop, Workshop):
            raise InvalidParameterError("the record's workshop must be the pinned candidates (a Workshop)")
        check_specification(self.specification, self.release)

    def to_json(self, **kwargs: Any) -> str:
        kwargs.setdefault("indent", 2)
        kwargs.setdefault("ensure_ascii", False)
        return super().to_json(**kwargs)

    def release_config_json(self) -> str:
        """The embedded :class:`ReleaseConfig` alone, for ``privatize --config`` from a separate file."""
        return self.release.to_json(indent=2, ensure_ascii=False)

    @property
    def chosen_is_released(self) -> bool:
        """True when the workshop's chosen candidate is what the record releases (its mechanism, on these data)."""
        choice = self.workshop.choice if self.workshop is not None else None
        if choice is None:
            return False
        try:
            return choice.build_mechanism(self.data.d).to_dict() == self.release.mechanism
        except InvalidParameterError:
            return False

    def evaluate_command(self, record_file: str = "decision-record.json") -> str | None:
        """The command that re-measures the chosen candidate's evidence on the data to the last digit — ``python -m
        engine evaluate --config FILE --seed SEED --repetitions N`` — or None when no choice is released or its
        evidence cannot be replayed exactly (measured with fresh randomness, by a sweep or a search, on other data,
        or with another program: :attr:`engine.workshop.Evidence.replayable`)."""
        import shlex

        if not self.chosen_is_released or self.workshop is None or self.workshop.choice is None:
            return None
        evidence = self.workshop.choice.evidence
        if evidence is None or not evidence.replayable or evidence.data != self.data.sha256:
            return None
        if evidence.metric is not None and not evidence.measured_with(self.program):
            return None
        parts = ["python", "-m", "engine", "evaluate", "--config", record_file]
        if self.data.source == "upload":
            parts += ["--input", "YOUR_DATA.csv"]
        parts += ["--seed", str(evidence.seed), "--repetitions", str(evidence.repetitions)]
        return " ".join(shlex.quote(p) for p in parts)


def _stated_numbers(guarantee: Any) -> dict[str, float | None]:
    """B, ε and δ as :func:`privacy_specification` states them for ``guarantee``."""
    is_dp = isinstance(guarantee, Guarantee)
    row = is_dp and getattr(guarantee, "relation", "row") == "row"
    return {
        "b": float(guarantee.b) if row else 2.0,
        "epsilon": float(guarantee.epsilon) if is_dp else None,
        "delta": float(guarantee.delta) if is_dp else 1.0,
    }


def check_specification(specification: PrivacySpecification, release: ReleaseConfig) -> None:
    """Refuse a specification whose B, ε or δ differ from what the release's mechanism guarantees.

    The specification is the record's statement of the privacy claim (what a reviewer reads); the release
    configuration is what ``privatize --config`` runs. A record in which they disagree (e.g. ε = 60 typed into the
    specification of a release at ε = 1) was edited or assembled from two sessions: which one is meant cannot be
    told, so it is refused rather than either part being ignored.
    """
    expected = _stated_numbers(release.build_mechanism().guarantee())
    for name, want in expected.items():
        got = getattr(specification, name)
        same = got is None and want is None or (
            got is not None and want is not None and math.isclose(float(got), want, rel_tol=1e-12, abs_tol=0.0)
        )
        if not same:
            raise InvalidParameterError(
                f"the record's specification states {name} = {got!r} but its release configuration's mechanism "
                f"guarantees {name} = {want!r} — the file was edited or assembled from two sessions; export it again"
            )


def _version_message(version: Any) -> str:
    return (
        f"this decision record uses schema version {version!r}, but this Studio reads version {SCHEMA_VERSION} — "
        "open it with the Studio version that wrote it (see its 'software' section)"
    )


#: Largest record (or configuration) file read, in bytes. A record with a paper-size sweep table is ~1 MB.
MAX_RECORD_BYTES = 10 * 1024 * 1024
#: Deepest nesting of JSON arrays/objects accepted (a real record nests about 6 levels).
MAX_JSON_DEPTH = 64
#: Largest magnitude of a JSON integer accepted (seeds are 63-bit).
MAX_JSON_INT = 2**63


def _reject_constant(name: str) -> Any:
    raise InvalidParameterError(f"contains {name}, which is not a number JSON allows")


def _exact_number(text: str) -> float:
    """A JSON number as a float, refused when it underflows to 0 or overflows (``1e-400`` is not δ = 0)."""
    from engine.limits import exact_float

    try:
        return exact_float(text, "a number")
    except InvalidParameterError:
        becomes = "0" if float(text) == 0 else "infinite"
        raise InvalidParameterError(
            f"holds the number {text[:40]}, which double precision cannot hold (it would become {becomes}); no field "
            "takes such a number"
        ) from None




def parse_json_document(text: str | bytes, what: str = "the decision record") -> Any:
    """Parse an uploaded or hand-edited JSON document defensively; every problem is one clear message.

    Refuses: more than :data:`MAX_RECORD_BYTES`, text that is not UTF-8, invalid JSON, ``NaN``/``Infinity``,
    nesting deeper than :data:`MAX_JSON_DEPTH` (instead of a ``RecursionError``), integers beyond ±2**63 and
    numbers with more digits than Python converts (instead of ``OverflowError``/``ValueError`` later).

    >>> parse_json_document('{"a": [1, 2.5]}')
    {'a': [1, 2.5]}
    >>> parse_json_document("[" * 100 + "]" * 100)
    Traceback (most recent call last):
    ...
    engine.errors.InvalidParameterError: the decision record is nested more than 64 levels deep — it is not a file the Studio wrote; export it again
    """
    size = len(text.encode("utf-8", errors="replace") if isinstance(text, str) else text)
    if size > MAX_RECORD_BYTES:
        raise InvalidParameterError(
            f"{what} is {size / 1e6:.1f} MB; the limit is {MAX_RECORD_BYTES / 1e6:.0f} MB — a Studio export is far "
            "smaller, so this is not one (or it was padded); export it again"
        )
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8-sig")  # a byte-order mark (added by some editors on Windows) is allowed
        except UnicodeDecodeError:
            raise InvalidParameterError(f"{what} is not UTF-8 text — choose the .json file you exported") from None
    text = text.removeprefix("\ufeff")
    try:
        data = json.loads(text, parse_constant=_reject_constant, parse_float=_exact_number)
    except json.JSONDecodeError as exc:
        raise InvalidParameterError(
            f"{what} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}) — the file may be "
            "truncated or edited; export it again"
        ) from None
    except RecursionError:
        raise InvalidParameterError(
            f"{what} is nested more than {MAX_JSON_DEPTH} levels deep — it is not a file the Studio wrote; export "
            "it again"
        ) from None
    except InvalidParameterError as exc:
        raise InvalidParameterError(f"{what} {exc} — export it again") from None
    except ValueError as exc:  # e.g. an integer with more digits than Python converts
        raise InvalidParameterError(f"{what} holds a number Python cannot read ({str(exc)[:80]}) — export it again") from None
    stack: list[tuple[Any, int, str]] = [(data, 1, "")]
    while stack:  # iterative: no recursion on hostile input
        node, depth, where = stack.pop()
        if isinstance(node, (dict, list)) and depth > MAX_JSON_DEPTH:
            raise InvalidParameterError(
                f"{what} is nested more than {MAX_JSON_DEPTH} levels deep — it is not a file the Studio wrote; "
                "export it again"
            )
        if isinstance(node, dict):
            stack.extend((v, depth + 1, f"{where}.{k}" if where else str(k)) for k, v in node.items())
        elif isinstance(node, list):
            stack.extend((v, depth + 1, f"{where}[{i}]") for i, v in enumerate(node))
        elif isinstance(node, int) and not isinstance(node, bool) and abs(node) > MAX_JSON_INT:
            raise InvalidParameterError(
                f"{what} holds the number {str(node)[:12]}… at {where or 'the top level'}, beyond ±2**63 — no field "
                "takes numbers that large; export it again"
            )
    return data


def _field_hints(cls: type) -> dict[str, Any]:
    import dataclasses
    import typing

    hints = typing.get_type_hints(cls)
    return {f.name: hints[f.name] for f in dataclasses.fields(cls) if f.init}


def _missing_fields(tp: Any, value: Any, where: str) -> list[str]:
    """Paths of configuration fields absent from ``value`` (a JSON value meant to build type ``tp``).

    An exported record states every field; a missing one would silently take its default (B = 2, a seed of
    None, …), so import refuses it instead.
    """
    import dataclasses
    import typing

    from engine.mechanisms import MECHANISMS

    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        inner = [a for a in args if a is not type(None)]
        return _missing_fields(inner[0], value, where) if value is not None and len(inner) == 1 else []
    if origin is tuple and args and value is not None and isinstance(value, list):
        item = args[0]
        return [m for i, v in enumerate(value) for m in _missing_fields(item, v, f"{where}[{i}]")]
    if isinstance(tp, type) and dataclasses.is_dataclass(tp) and isinstance(value, dict):
        out = []
        for name, hint in _field_hints(tp).items():
            path = f"{where}.{name}" if where else name
            if name not in value:
                if name not in OPTIONAL_FIELDS.get(tp.__name__, ()) and name not in getattr(
                        tp, "OPTIONAL_FIELDS", ()):
                    out.append(path)
            elif tp is ReleaseConfig and name == "mechanism" and isinstance(value[name], dict):
                cls = MECHANISMS.get(value[name].get("kind"))
                if cls is not None:
                    out.extend(f"{path}.{n}" for n in _field_hints(cls) if n not in value[name])
            else:
                out.extend(_missing_fields(hint, value[name], path))
        return out
    return []


def _refuse_missing(tp: type, data: Any, what: str) -> None:
    missing = _missing_fields(tp, data, "")
    if missing:
        shown = ", ".join(missing[:6]) + (f" and {len(missing) - 6} more" if len(missing) > 6 else "")
        raise InvalidParameterError(
            f"{what} is missing the field(s) {shown}; an exported file states every field and a missing one is "
            "never filled in with a default — export it again"
        )


def _record_from_data(data: Any) -> DecisionRecord:
    from engine.limits import check_privacy_parameters

    if not isinstance(data, dict) or data.get("schema") != SCHEMA_ID:
        raise InvalidParameterError(
            "this file is not a Studio decision record (no 'schema': "
            f"{SCHEMA_ID!r}) — choose a file exported from the Export page"
        )
    version = data.get("schema_version")
    if type(version) is not int or version != SCHEMA_VERSION:  # True and 1.0 are not version 1
        raise InvalidParameterError(_version_message(version))
    _refuse_missing(DecisionRecord, data, "the decision record")
    for part in ("candidate", "specification", "targets"):
        if isinstance(data.get(part), dict):
            check_privacy_parameters(data[part], owner=f"the record's {part}")
    try:
        return DecisionRecord.from_dict(data)
    except InvalidParameterError as exc:
        raise InvalidParameterError(f"the decision record is damaged: {exc}") from None
    except (RecursionError, OverflowError, TypeError) as exc:  # defensive: never a traceback for a hostile file
        raise InvalidParameterError(f"the decision record is damaged ({type(exc).__name__}) — export it again") from None


def load_decision_record(text: str | bytes) -> DecisionRecord:
    """Parse and validate a decision record; every problem becomes an ``InvalidParameterError`` with a clear message.

    Refused, never clamped or defaulted: files over 10 MB, invalid or deeply nested JSON, huge numbers, another
    schema or version (also ``true`` or ``1.0`` for version 1), missing fields (at any depth, including the
    mechanism's), unknown fields, wrong types and out-of-range values (including ε outside [1e-9, 1e4] and
    0 < δ < 1e-300, :mod:`engine.limits`).

    Raises
    ------
    InvalidParameterError
        Not JSON, not a decision record, another schema version, or a field that fails validation.
    """
    return _record_from_data(parse_json_document(text, "the decision record"))


def load_release_config_file(path: str) -> ReleaseConfig:
    """The release configuration in a file: a decision record (validated in full, schema and version) or a
    configuration saved with ``privatize --save-config`` / the Export page (every field required).

    Raises
    ------
    InvalidParameterError
        No such file, too large, or any problem :func:`load_decision_record` refuses.
    """
    import os

    if not os.path.isfile(path):
        raise InvalidParameterError(f"there is no configuration file at {path!r} — check the path")
    size = os.path.getsize(path)
    if size > MAX_RECORD_BYTES:
        raise InvalidParameterError(
            f"the configuration file {path!r} is {size / 1e6:.1f} MB; the limit is {MAX_RECORD_BYTES / 1e6:.0f} MB "
            "— choose the decision record or configuration you exported"
        )
    with open(path, "rb") as handle:
        data = parse_json_document(handle.read(), f"the configuration file {path!r}")
    if isinstance(data, dict) and "schema" in data:
        return _record_from_data(data).release
    if not isinstance(data, dict) or not {"data", "mechanism"} <= set(data):
        raise InvalidParameterError(
            f"the configuration file {path!r} is neither a decision record nor a release configuration (an object "
            "with 'data' and 'mechanism') — choose the file you exported"
        )
    _refuse_missing(ReleaseConfig, data, f"the configuration file {path!r}")
    try:
        return ReleaseConfig.from_dict(data)
    except (RecursionError, OverflowError, TypeError) as exc:
        raise InvalidParameterError(f"the configuration file {path!r} is damaged ({type(exc).__name__})") from None


# ----------------------------------------------------------------------------------------------------------------
# Building a record
# ----------------------------------------------------------------------------------------------------------------


def privacy_specification(
    guarantee: Any, prepared: PreparedData, *, seeded: bool = False, mechanism_label: str = ""
) -> PrivacySpecification:
    """State the five building blocks for ``guarantee`` (a :class:`Guarantee` or the k-anonymity guarantee)."""
    spec = prepared.spec
    norm = spec.normalization
    domain = (
        f"Tables of n = {prepared.n:,} records with the feature columns {', '.join(spec.features)} (d = "
        f"{prepared.d}); each record's features are mapped into the unit L2 ball of R^{prepared.d}: "
        f"{norm.describe()}"
    )
    prep_steps = prepared.preparation_steps()
    if prep_steps:
        domain += " Before that: " + " ".join(prep_steps)
    invariants = ["the number of records n (one released row per record, in the same order)"]
    if not norm.data_independent:
        used = []
        if norm.standardize:
            used.append("the column means and standard deviations")
        if norm.method == "maxnorm":
            used.append("the largest row norm")
        invariants.append(f"{' and '.join(used)} used to prepare the data (computed from the data, not protected)")
    for column, cat in (spec.categorical or {}).items():
        if cat.levels_from_data:
            invariants.append(f"the levels of {column!r}, read from the data (not protected)")
    scope = (
        "Datasets of the same size n that agree on the invariants listed; the guarantee holds subject to them. "
        + prepared.privacy_note()
    )
    relation = getattr(guarantee, "relation", "row")
    is_dp = isinstance(guarantee, Guarantee)
    stated = _stated_numbers(guarantee)  # the numbers check_specification holds a record to
    b = float(stated["b"] or 2.0)
    b_text = prepared.describe_b(b) if is_dp and relation == "row" else ""
    conversions: list[str] = []
    assumptions = [
        "The mechanism's randomness (noise and any random projection matrix) stays secret with the data holder.",
    ]
    if seeded:
        assumptions.append(
            "A fixed seed was used: anyone with the seed can regenerate the noise, so a seeded output is NOT "
            "private. Use the seeded configuration for simulations only; release with fresh randomness."
        )
    if is_dp:
        # The mechanism's own caveats (e.g. "the covariance step buys nothing", "δ comes from the secret
        # projection P") are part of what a reviewer must read.
        assumptions.extend(str(note) for note in guarantee.notes if str(note) not in assumptions)
    if not is_dp:
        return PrivacySpecification(
            protection_domain=domain, scope=scope, invariants=tuple(invariants),
            protection_unit="one person's record (row)",
            neighbouring_relation="none: k-anonymity makes no statement about pairs of datasets",
            b=2.0, b_in_data_units="",
            standard=str(guarantee.headline()),
            epsilon=None, delta=1.0, conversions=(), assumptions=tuple(guarantee.describe()),
        )
    if relation == "row":
        s = steps(2.0, b)
        if s <= 1:
            neighbours = f"classic neighbours: {RELATION_TEXT['row']}; any two records are B = 2 apart at most"
            standard = "approximate differential privacy: (ε, δ)-indistinguishability of neighbouring datasets"
        else:
            neighbours = (
                f"B-neighbours (targeted DP): {RELATION_TEXT['row']}, where the substituted record's prepared row "
                f"moves by at most B = {b:g} in L2 norm"
            )
            standard = (
                "targeted differential privacy (Kohli & Blumenstock): (ε, δ)-indistinguishability of B-neighbouring "
                "datasets; records further apart are protected less, by the switch lemma"
            )
            dp = guarantee.implied_dp()
            conversions.append(
                f"Conversion (switch lemma, s = ⌈2/B⌉ = {s}): implies classic (ε' = {dp.epsilon:.6g}, "
                f"δ' = {dp.delta:.6g})-DP for any two records."
                + (" With δ' = 1 this is vacuous: no classic DP statement follows." if dp.vacuous else "")
            )
    else:
        neighbours = RELATION_TEXT[relation]
        standard = "(ε, δ)-indistinguishability for the element-level neighbouring relation"
    return PrivacySpecification(
        protection_domain=domain, scope=scope, invariants=tuple(invariants),
        protection_unit="one person's record (one row of the table)",
        neighbouring_relation=neighbours, b=b, b_in_data_units=b_text, standard=standard,
        epsilon=stated["epsilon"], delta=float(stated["delta"] or 0.0), conversions=tuple(conversions),
        assumptions=tuple(assumptions),
    )


#: Record fields added after schema version 1 shipped: old records without them load (as None).
OPTIONAL_RECORD_FIELDS = ("public_information", "workshop", "program_assumptions")
#: Fields added after schema version 1 shipped, by the class that holds them: a record written before them loads
#: with their default (None: "not recorded"), never with a made-up value.
OPTIONAL_FIELDS: dict[str, tuple[str, ...]] = {
    "DecisionRecord": OPTIONAL_RECORD_FIELDS,
    "Evidence": ("program", "method"),  # what the evidence was measured with and how (issue 31)
}

PUBLIC_INFORMATION_SCOPE = "DP / ε-TP subject to the invariants Z"


def public_information_block(
    study: Any, *, periods: int, data: str, model: dict[str, Any] | None = None, seed: int | None = None,
    source: str = "demo",
    subcounts: bool = True,
) -> dict[str, Any]:
    """The decision record's public-information block for a count-table study (issue 13).

    ``study`` is an :class:`engine.public_info.results.CountStudyConfig`; ``periods`` the number of periods of the
    table (for the whole-study ε, digest G15); ``subcounts`` whether it has a sub-count (Δ_z depends on it). States the
    scope, the declared public statistics, ε per period and for the whole study (both readings), the composition
    caveat, the Δ_z the releases use with how it was derived, and every (method, ε) CountReleaseConfig.

    Examples
    --------
    >>> from engine.public_info.results import CountStudyConfig
    >>> b = public_information_block(CountStudyConfig(epsilons=(0.5,)), periods=24, data="counties-demo")
    >>> b["scope"], b["epsilon_total"][0]["sequential"], b["sensitivity"]
    ('DP / ε-TP subject to the invariants Z', 12.0, 4.0)
    """
    from engine.accounting.composition import study_budget
    from engine.public_info.guarantee import PUBLIC_STATISTICS, SEQUENTIAL_CAVEAT

    budgets = [study_budget(e, periods) for e in study.epsilons]
    delta_z = study.release_config(study.methods[0], study.epsilons[0]).delta_z(subcounts=subcounts)
    block = {
        "scope": PUBLIC_INFORMATION_SCOPE,
        "public": {p: PUBLIC_STATISTICS[p] for p in study.public},
        "epsilon_per_period": list(study.epsilons),
        "periods": int(periods),
        "epsilon_total": [{"per_period": b.epsilon_per_period, "parallel": b.parallel, "sequential": b.sequential}
                          for b in budgets],
        "composition_caveat": SEQUENTIAL_CAVEAT,
        "sensitivity": delta_z.value,
        "sensitivity_derivation": {"derived": delta_z.derived, "exact": delta_z.exact, "override": delta_z.override,
                                   "reason": delta_z.describe()},
        "subcounts": bool(subcounts),
        "study": study.to_dict(),
        "releases": [c.to_dict() for c in study.release_configs()],
        "data": data,
        "source": source,
        "dependence_model": dict(model or {"kind": "fixed"}),
        "seed": seed,
        "seed_warning": None if seed is None else "seeded output is NOT private",
    }
    check_public_information(block)
    return block


def check_public_information(block: Any) -> Any:
    """Validate a public-information block (its study configuration rebuilds; ε and periods are consistent)."""
    from engine.public_info.results import CountStudyConfig

    if not isinstance(block, dict):
        raise InvalidParameterError(f"public_information must be an object; got {type(block).__name__}")
    missing = [k for k in ("scope", "public", "epsilon_per_period", "periods", "study") if k not in block]
    if missing:
        raise InvalidParameterError(f"public_information is missing {', '.join(missing)} — export it again")
    study = CountStudyConfig.from_dict(block["study"])
    if list(study.epsilons) != list(block["epsilon_per_period"]) or list(study.public) != list(block["public"]):
        raise InvalidParameterError(
            "public_information states ε or public statistics that differ from its study configuration — the file "
            "was edited; export it again"
        )
    check_integer("public_information.periods", block["periods"], 1, None)
    return block


def build_decision_record(
    *,
    prepared: PreparedData,
    source: Literal["demo", "upload"],
    dataset: str | None,
    title: str,
    synthetic: bool,
    columns: tuple[str, ...],
    candidate: Guarantee,
    gammas: tuple[float, ...],
    delta_is_default: bool,
    mechanism: dict[str, Any],
    seed: int | None = None,
    program: ProgramConfig | None = None,
    rationale: str = "",
    sweeps: tuple[SweepResult, ...] = (),
    selected: dict[str, Any] | None = None,
    file_sha256: str | None = None,
    studio: dict[str, Any] | None = None,
    created: str | None = None,
    public_information: dict[str, Any] | None = None,
    workshop: Workshop | None = None,
) -> DecisionRecord:
    """Assemble a :class:`DecisionRecord` from the session's choices (the dashboard's Export page calls this).

    ``mechanism`` is the configured mechanism's ``to_dict()``; its guarantee is what the specification states.
    ``candidate`` is the (B, ε, δ) chosen on the feasibility page (the target the mechanism was set up from).
    ``sweeps`` are the last tradeoff sweep's results, one per mechanism swept; ``selected`` is the grid point the
    designer picked (stored with the first). ``workshop`` holds the pinned candidates, the chosen one and the
    group's rationale (None or an empty workshop: not written); when it has a chosen candidate, ``mechanism`` must be
    that candidate's (the record releases what the group chose, or it is refused).
    """
    release = ReleaseConfig(
        data=prepared.spec, mechanism=mechanism, seed=seed, dataset=dataset if source == "demo" else None
    )
    if workshop is not None and workshop.choice is not None:
        chosen = workshop.choice.build_mechanism(prepared.d).to_dict()
        if chosen != release.mechanism:
            raise InvalidParameterError(
                f"the record would release {release.build_mechanism().LABEL} ({release.mechanism}) while the "
                f"workshop's chosen candidate {workshop.choice.label!r} is {chosen} — a record releases the chosen "
                "candidate; clear the choice to release another configuration"
            )
    for result in sweeps:
        if result.fingerprint and result.fingerprint != prepared.fingerprint:
            raise InvalidParameterError(
                f"the sweep of {result.config.mechanism} was computed on other data (fingerprint "
                f"{result.fingerprint[:12]}…) than the record's ({prepared.fingerprint[:12]}…) — leave it out"
            )
    mech = release.build_mechanism()
    guarantee = mech.guarantee()
    reports = tuple(feasibility_report(g, candidate.epsilon, candidate.delta) for g in gammas)
    fingerprint = DataFingerprint(
        source=source, dataset=dataset if source == "demo" else None, title=title, synthetic=bool(synthetic),
        n=prepared.n, d=prepared.d, columns=tuple(columns), features=tuple(prepared.feature_names),
        target=prepared.spec.target, roles=dict(prepared.spec.roles or {}), sha256=prepared.fingerprint,
        file_sha256=file_sha256,
    )
    record_file = "decision-record.json"
    return DecisionRecord(
        created=created or datetime.now(UTC).replace(microsecond=0).isoformat(),
        title=f"Privacy parameters for {title}",
        specification=privacy_specification(guarantee, prepared, seeded=seed is not None),
        candidate=candidate,
        targets=Targets(
            gammas=tuple(gammas), delta=float(candidate.delta),
            delta_rule="1/(n+1)" if delta_is_default else "chosen", feasibility=reports,
        ),
        release=release,
        guarantee=tuple(guarantee.describe()),
        data=fingerprint,
        software=Software.current(),
        seeds=Seeds(
            release=seed, sweep=int(sweeps[0].config.seed) if sweeps else None,
            program_folds=int(program.cv_seed) if program is not None else None,
            warning=None if seed is None else "seeded output is NOT private",
        ),
        program=program if program is not None else ProgramConfig(),
        rationale=rationale,
        tradeoffs=tuple(
            TradeoffSummary.from_result(result, selected=selected if i == 0 else None) for i, result in enumerate(sweeps)
        ),
        studio=dict(studio or {}),
        command=cli_command(record_file, input_file=None if source == "demo" else "YOUR_DATA.csv"),
        public_information=public_information,
        workshop=workshop if workshop is not None and workshop.pinned else None,
        program_assumptions=(program.assumptions(prepared.spec.roles) if program is not None
                             and prepared.spec.target is not None else None),
    )


__all__ = [
    "SCHEMA_ID",
    "SCHEMA_VERSION",
    "public_information_block",
    "check_public_information",
    "DataFingerprint",
    "DecisionRecord",
    "PrivacySpecification",
    "Seeds",
    "Software",
    "TableData",
    "Targets",
    "TradeoffSummary",
    "MAX_JSON_DEPTH",
    "MAX_RECORD_BYTES",
    "build_decision_record",
    "load_decision_record",
    "load_release_config_file",
    "parse_json_document",
    "privacy_specification",
]
