"""What every page shares: the sidebar, the way errors are shown, and the plain-language help texts.

* :func:`render_sidebar` — loaded dataset, current candidate (B, ε, δ), seeded/not-private badge, share link.
* :func:`user_errors` — ``with user_errors() as outcome: ...`` shows an :class:`EngineError` as ``st.error`` (its
  message verbatim) and sets ``outcome.failed``; anything else is a bug and keeps its traceback.
* :func:`field_error` — a validation message drawn right under the control that fixes it.
* :data:`HELP` — help text for every recurring control, so the same concept is explained the same way everywhere.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pandas as pd
import streamlit as st

from engine.errors import EngineError
from engine.rng import SEEDED_WARNING
from ui import session_store
from ui.figures.theme import fmt, fmt_param
from ui.links import link_omissions, scenario_params
from ui.state import StudioState

#: Characters Streamlit's Markdown gives a meaning to anywhere in a line: emphasis, code, links and images, raw
#: HTML, strikethrough, tables, headings, LaTeX (``$``), emoji / ``:material/…:`` icons / ``:red[…]`` directives
#: (``:``), entities (``&``), e-mail autolinks (``@``). ``www.`` and list/quote markers at the start are handled apart.
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>~$:|#!@&])")
_LINE_START = re.compile(r"^(\s*)(\d*)([-+=.)])")
#: Where GitHub-flavoured autolinks start: a scheme before ":", "www" before ".", and "@" of an e-mail address.
#: Streamlit finds them in the text AFTER backslash escapes are resolved, so escaping cannot stop them; an invisible
#: word joiner (U+2060) inside the pattern does.
_AUTOLINK = re.compile(r"(?i)\b(https?|ftp|mailto|xmpp)(?=:)|\b(www)(?=\.)|(?=@)")
WORD_JOINER = "\u2060"


def plain(text: object) -> str:
    """``text`` escaped so that ``st.markdown`` (and every label, caption, error box …) shows it literally.

    User text — column names, file names, dataset titles, record titles and rationales, engine messages quoting
    them — must never be rendered as Markdown: ``![px](http://127.0.0.1:9/t.png)`` as a column name would make the
    browser fetch that address, and ``**Approved by**`` in a record title would show as bold. Every Markdown
    metacharacter gets a backslash (CommonMark shows an escaped punctuation character literally) and line breaks
    become spaces (a newline could start a heading or a list). Addresses (``http://…``, ``www.…``, ``a@b.c``) would
    still become clickable links — Streamlit's autolinks are found after escapes are resolved — so an invisible word
    joiner (:data:`WORD_JOINER`) goes after the scheme, after ``www`` and before ``@``.

    >>> print(plain("**Approved by** ![px](http://x/t.png)").replace(WORD_JOINER, "⁀"))
    \\*\\*Approved by\\*\\* \\!\\[px\\](http⁀\\://x/t.png)
    >>> print(plain("www.x.org pay@x.org").replace(WORD_JOINER, "⁀"))
    www⁀.x.org pay⁀\\@x.org
    """
    text = " ".join(str(text).splitlines())
    text = _AUTOLINK.sub(lambda m: (m.group(1) or m.group(2) or "") + WORD_JOINER, text)
    text = _MARKDOWN_SPECIAL.sub(r"\\\1", text)
    return _LINE_START.sub(r"\1\2\\\3", text)  # a list or heading marker at the start


#: Plain-language help, one entry per recurring control. Pages append data-specific sentences (e.g. B in units).
HELP: dict[str, str] = {
    "b": (
        "Target distance B: people whose (prepared) features differ by less than B can't be told apart — an "
        "observer of the release cannot distinguish them beyond the (ε, δ) limit. People further apart than B "
        "can be told apart more easily: that is what keeps the data useful. B = 2 protects everyone equally "
        "(classic differential privacy)."
    ),
    "epsilon": (
        "Privacy loss ε: how much one person's data may change what the release looks like. An attacker who "
        "knows everyone else cannot change their odds about you by more than a factor e^ε. Smaller is more private."
    ),
    "delta": (
        "δ: the small probability with which the ε limit may fail. The default 1/(n+1) is below one over the "
        "number of people, so the guarantee cannot be met by releasing one whole record at random."
    ),
    "gamma": (
        "Targeting accuracy γ: the share of people the program must still classify exactly as it would on the "
        "original data (e.g. 0.99 = 99 % of eligibility decisions unchanged). Theorem 1 says which (B, ε) can "
        "possibly reach it."
    ),
    "seed": (
        "Random seed. Leave empty for a real release (fresh randomness from the operating system). A fixed seed "
        "makes the noise reproducible — useful for simulations, but anyone with the seed can undo it."
    ),
    "normalization": (
        "Targeted DP measures distances between people on the prepared scale, where every row lies in the unit "
        "ball (length ≤ 1). 'scaled' (suggested for an upload) standardises columns, divides every row by 2√m — m "
        "features, a text feature counted once: each adds about 1 to a row's squared length — so a typical row has "
        "length ½, and shrinks only the few rows still longer than 1; 'clip' standardises and shrinks every row longer "
        "than 1, which is nearly every row once there are two features (or one number and one text feature), so "
        "the rows' lengths are lost; 'maxnorm' divides every row by the largest row length (the paper's case "
        "studies); 'bounds' scales with public bounds you enter."
    ),
    "standardize": (
        "Centre each column and divide by its standard deviation before scaling rows. Means and standard "
        "deviations computed from the data are themselves not private — enter public bounds to avoid that."
    ),
    "features": "Columns the privatized release will contain (numeric). The program is trained on these.",
    "target": "The outcome the program predicts (e.g. consumption, repayment). Kept out of the features.",
    "roles": "Program-specific columns: e.g. the loan amount and interest a lending program needs to score profit.",
    "upload": "CSV or Parquet. The file stays in this browser session's memory only: it is never written to disk, "
    "never put in a shared link and never copied into a decision record.",
    "share": "Show a link that opens this page with the same dataset, parameters and chosen point (never your "
    "data, and never this session's private key).",
    "rationale": "Why this configuration: the accuracy the program needs, who must be protected from whom, and "
    "which tradeoffs you accepted. It goes verbatim into the decision record.",
}

DATA_DEPENDENT_NOTE = (
    "Scaling computed from the data (means, standard deviations, the largest row norm) is itself not private. For "
    "a real release use 'bounds' with public bounds (from a codebook or a previous census), or accept and "
    "document this leak."
)


#: Engine modules the later pages need (scikit-learn, attacks, sweeps). Importing them takes seconds on a busy
#: machine, so :func:`warm_up` imports them in the background while the user reads the first page.
WARM_MODULES: tuple[str, ...] = (
    "engine.mechanisms",
    "engine.release",
    "engine.evaluation.programs",
    "engine.attacks.singling_out",
    "engine.attacks.attribute_inference",
    "engine.attacks.distinguishing",
    "engine.sweeps",
    "engine.per_record",
    "engine.decision_record",
    "engine.release_analysis",
    "engine.recommend",
    "engine.public_info.results",
    "engine.export_csv",
    "sklearn.metrics",
    "ui.figures.data",
    "ui.figures.feasibility",
    "ui.figures.mechanisms",
    "ui.figures.tradeoffs",
    "ui.figures.per_record",
    "ui.figures.public_info",
    "ui.figures.workshop",
)
#: plotly's trace types the figures draw (plotly imports each on first use).
WARM_TRACES: tuple[str, ...] = ("Scatter", "Scattergl", "Bar", "Histogram", "Box", "Heatmap")
_warm_started = threading.Event()
_frozen = threading.Event()
_warm_thread: list[threading.Thread] = []
#: Longest a script run waits for the warm-up (it only ever waits for imports the page would do itself).
WARM_UP_WAIT_SECONDS = 120.0
#: The warm-up starts this long after the first page's run has ended (:func:`warm_up`).
WARM_UP_DELAY_SECONDS = 1.0


def warm_up() -> None:
    """Import :data:`WARM_MODULES` (and plotly's :data:`WARM_TRACES`, and load the attacks' compiled kernels) once per
    server process, in a daemon thread started :data:`WARM_UP_DELAY_SECONDS` later (idempotent, never raises), then
    freeze what they made (:func:`freeze_imported_objects`): what the pages load later is then small, and
    Streamlit's full collection after every run stays cheap."""
    if _warm_started.is_set():
        return
    _warm_started.set()

    def run() -> None:
        for name in WARM_MODULES:
            try:
                importlib.import_module(name)
            except Exception:  # noqa: BLE001 - a page importing it later reports the real error
                return
        try:
            import plotly.graph_objects as go

            from engine.attacks.precompile import compile_kernels

            for trace in WARM_TRACES:
                getattr(go, trace)
            compile_kernels()  # numba and the attacks' compiled scans, from the cache scripts/studio.sh fills
        except Exception:  # noqa: BLE001 - the first attack or figure would meet the same error and report it
            return
        freeze_imported_objects()

    # Started a second after the first page's run: the browser is still drawing that page then, and on two cores
    # the warm-up's imports would compete with it (first paint 2.33 → 2.17 s, median of 5, with the delay).
    thread = threading.Timer(WARM_UP_DELAY_SECONDS, run)
    thread.name, thread.daemon = "studio-warm-up", True
    _warm_thread.append(thread)
    thread.start()


def freeze_imported_objects() -> None:
    """Move every object alive now — after the warm-up, essentially the imported modules — out of the garbage
    collector's reach (``gc.freeze``), once per process.

    Streamlit runs a full collection after every script run (``runner.postScriptGC``) to keep memory down. With
    pandas, scipy, scikit-learn and plotly loaded, a full collection walks about 160,000 objects: about 100 ms of
    CPU after each click, on the 2-core machine. Frozen objects are never walked again, so the collection after a
    run only looks at what the sessions created since, and still frees their cycles. Objects frozen here are
    still freed by reference counting when they go; only a reference cycle among them would outlive its use."""
    if _frozen.is_set():
        return
    _frozen.set()
    gc.freeze()


def wait_for_warm_up() -> None:
    """Let a running warm-up finish before a page runs. Two threads importing the same packages at once can
    deadlock on Python's per-module import locks, which Python resolves by handing one of them a partially
    initialised module ("cannot import name 'euclidean' from partially initialized module
    'scipy.spatial.distance'", seen when a page's lazy import met the warm-up); the page would import the same
    modules anyway, so waiting costs it nothing."""
    for thread in _warm_thread:
        if thread is not threading.current_thread() and thread.is_alive():
            thread.join(WARM_UP_WAIT_SECONDS)


class PageStop(Exception):  # noqa: N818 - a control-flow signal, not an error
    """Raised by :func:`stop_page`; ``app.py`` catches it after the page."""


def stop_page() -> None:
    """End the page here, like ``st.stop()``, but let ``app.py`` still draw the sidebar and write the address bar
    (after ``st.stop()`` Streamlit drops every later element, so the sidebar and the session key in the address
    would be lost on pages that stop early)."""
    raise PageStop


@dataclass
class Outcome:
    """Set by :func:`user_errors`: whether the block failed, and the error."""

    failed: bool = False
    error: EngineError | None = None


@contextlib.contextmanager
def user_errors(container: Any = None, *, prefix: str = "") -> Iterator[Outcome]:
    """Show an :class:`EngineError` raised in the block as an error box instead of a traceback."""
    outcome = Outcome()
    try:
        yield outcome
    except EngineError as exc:
        outcome.failed = True
        outcome.error = exc
        (container or st).error(f"{prefix}{plain(exc)}", icon=":material/error:")


def field_error(message: str | None, container: Any = None) -> None:
    """Draw ``message`` (if any) right below the control that fixes it."""
    if message:
        (container or st).error(plain(message), icon=":material/error:")


def show_notices(state: StudioState) -> None:
    """Show (once) the messages queued in ``state.notices`` — e.g. what a shared link could not restore."""
    while state.notices:
        st.warning(plain(state.notices.pop(0)), icon=":material/info:")


def seed_badge(seed: int | None) -> str:
    """Markdown badge: a seeded run is reproducible and therefore not private."""
    if seed is None:
        return ":green-badge[:material/shield: fresh randomness]"
    return f":orange-badge[:material/warning: seed {seed} — not private]"


def candidate_text(state: StudioState) -> str:
    """"B = 0.4 · ε = 1 · δ = 1e-04" for the current (or default) candidate."""
    c = state.candidate_or_default()
    return f"B = {fmt_param(c.b)} · ε = {fmt_param(c.epsilon)} · δ = {fmt(c.delta)}"


def share_link(state: StudioState, page: str | None = None) -> str:
    """The address that opens this scenario (and page) for someone else: the app's URL plus the query."""
    query = "&".join(f"{k}={_quote(v)}" for k, v in scenario_params(state, page).items())
    base = (st.context.url or "").rstrip("/")
    if page and base.endswith("/" + page):
        base = base[: -len(page) - 1]  # the app's root: app.py opens the page named in the link
    return f"{base}/?{query}"


def render_sidebar(state: StudioState, container: Any = None, *, page: str | None = None) -> None:
    """The sidebar shown on every page (drawn by ``app.py`` after the page, so it shows the page's changes)."""
    box = container if container is not None else st.sidebar
    with box:
        st.markdown("**Dataset**")
        if state.n is not None and state.data_fingerprint is not None:
            label = ":violet-badge[synthetic]" if state.synthetic and state.source == "demo" else ""
            st.markdown(f"{plain(state.dataset_label())} {label}")
            st.caption(f"n = {state.n:,} people · d = {state.d} features")
        elif state.source == "upload" and state.upload_bytes is None and state.upload_fingerprint:
            st.caption("Waiting for the uploaded file named in the link (upload it on the Data page).")
        else:
            st.caption(f"{plain(state.dataset_label())} (not loaded yet)")
        st.markdown("**Candidate**" + ("" if state.candidate is not None else " (default: Example 1)"))
        st.markdown(candidate_text(state))
        st.markdown(seed_badge(state.seed), help=SEEDED_WARNING if state.seed is not None else HELP["seed"])
        # The link is drawn when asked for, not hidden in an expander: its code block loads the frontend's syntax
        # highlighter, about 0.2 CPU s of the Start page's first paint and 0.4 s of the Data page's in Chromium.
        if st.toggle("Share this scenario", key="sidebar.share", help=HELP["share"]):
            st.caption(
                "This link opens the same view for workshop participants: this page, the dataset name (or the "
                "uploaded file's fingerprint — never its content), every parameter and the chosen point. Share this "
                "link, not the address bar: the address holds this session's private key ('sid'), which brings "
                "back your data and results after a reload in this browser."
            )
            st.code(share_link(state, page), language=None, wrap_lines=True)
            left_out = link_omissions(state)
            if left_out:
                st.caption("Left out of this link and of the address bar (no value of your file goes into a "
                           "link): " + "; ".join(left_out) + ".")
        held = session_store.stats()
        st.caption(f"Reload-safe: this server keeps each session's work in memory for {session_store.TTL / 3600:g} h "
                   f"after its last use ({held['sessions']} of {held['max_sessions']} sessions, "
                   f"{held['bytes'] / 2**20:.0f} of {held['max_bytes'] / 2**20:.0f} MiB of uploads held; never on "
                   "disk). Export a decision record to keep it longer.")


def b_in_data_units(prepared: Any, b: float) -> str:
    """What B means in this data's units (``PreparedData.describe_b``, Markdown-escaped), or "" for an invalid B."""
    try:
        return plain(prepared.describe_b(float(b)))  # names the data's columns: user text
    except (EngineError, TypeError, ValueError):
        return ""


def _quote(value: str) -> str:
    from urllib.parse import quote

    return quote(value, safe=",:")


# ------------------------------------------------------------------------------------------------ result tables
def program_table(program: Any, baseline: Any) -> pd.DataFrame:
    """Program metrics of the first release (the one the attacks run on; the headline above it is the mean over
    the page's releases), the non-private program and every rule that uses no data (display only)."""
    from engine.evaluation.programs import METRICS

    shown = [m for m in program.metrics if m in METRICS]
    columns: dict[str, list] = {
        "metric": [METRICS[m].label for m in shown],
        "private release (first of the run's releases)": [program.metrics[m] for m in shown],
        "non-private": [baseline.metrics.get(m, float("nan")) for m in shown],
    }
    for rule, metrics in program.baselines.items():
        columns[rule] = [metrics.get(m, float("nan")) for m in shown]
    columns["better when"] = ["higher" if METRICS[m].higher_is_better else "lower" for m in shown]
    return pd.DataFrame(columns)


def distinguishing_basis(result: Any) -> str:
    """'exact' or 'bound': whether a distinguishing score is the mechanism's exact trade-off or a bound derived
    from its guarantee (``DistinguishingResult.basis``)."""
    return str(getattr(result, "basis", "exact"))


def distinguishing_note(result: Any) -> str:
    """The engine's sentence saying what the distinguishing score is (``DistinguishingResult.basis_text``)."""
    return str(getattr(result, "basis_text", "Exact: the data themselves are told apart without error."))


#: Display format of small numbers (δ) in tables: three significant digits (sprintf's %g), e.g. 3.21e-05.
SMALL_NUMBER_FORMAT = "%.3g"

#: Readable headers of the sweep and frontier tables' columns (the downloads keep the engine's names).
_COLUMN_LABELS = {
    "mechanism": "Mechanism",
    "reference": "Reference",
    "b": "B",
    "epsilon": "ε",
    "delta": "δ",
    "implied_epsilon": "ε′ for any two records (classic DP implied)",
    "implied_classic_dp_epsilon": "ε′ for any two records (classic DP implied)",
    "runs": "Releases",
    "repetitions": "Releases",
    "no_better_than": "No better than (a rule that uses no data)",
    "decision_agreement_mean": "Decision agreement (mean)",
    "decision_agreement_lo": "Decision agreement, 95 % interval: low",
    "decision_agreement_hi": "Decision agreement, 95 % interval: high",
}


#: The sweep's kinds of grid point, as the results table names them.
_REFERENCE_LABELS = {"non-private": "non-private (the data themselves)", "tdp": "targeted DP",
                     "classic-dp": "classic DP (B = 2)"}


def readable_table(table: pd.DataFrame, *, metric: str | None = None, metric_label: str | None = None,
                   protection_labels: dict[str, str] | None = None) -> tuple[pd.DataFrame, dict[str, Any]]:
    """``table`` for display — missing values as empty cells instead of "None" — and the ``column_config`` that
    gives its columns readable headers (``metric`` is the program metric whose ``_mean``/``_lo``/``_hi`` columns
    are labelled with ``metric_label``; the frontier's ``mean``/``ci_low``/``ci_high`` too; ``protection_labels``
    maps a protection column to its label)."""
    from engine.evaluation.metrics import METRICS

    labels = dict(_COLUMN_LABELS)
    name = metric_label or (METRICS[metric].label if metric in METRICS else metric) or "metric"
    for prefix in ([metric] if metric else []):
        labels.update({f"{prefix}_mean": f"{name} (mean)", f"{prefix}_lo": f"{name}, 95 % interval: low",
                       f"{prefix}_hi": f"{name}, 95 % interval: high"})
    labels.update({"mean": f"{name} (mean)", "ci_low": f"{name}, 95 % interval: low",
                   "ci_high": f"{name}, 95 % interval: high"})
    for column, label in (protection_labels or {}).items():
        labels[f"{column}_mean"] = f"{label} (mean)"
    shown = table.copy()
    if "mechanism" in shown:  # the mechanisms' names, not their codes ("none": the data themselves)
        from engine.mechanisms import MECHANISMS

        shown["mechanism"] = shown["mechanism"].map(
            lambda kind: MECHANISMS[kind].LABEL if kind in MECHANISMS else ("—" if kind == "none" else kind))
    if "reference" in shown:
        shown["reference"] = shown["reference"].map(lambda code: _REFERENCE_LABELS.get(code, code))
    for column in shown.columns:
        values = shown[column]
        if pd.api.types.is_numeric_dtype(values) or pd.api.types.is_bool_dtype(values):
            continue
        present = values.dropna()
        if len(present) and all(isinstance(v, int | float) and not isinstance(v, bool) for v in present):
            shown[column] = pd.to_numeric(values)  # numbers with gaps (None): a numeric column, gaps empty
        else:
            shown[column] = values.astype(object).where(values.notna(), "")  # one type per column (Arrow)
    headers: dict[str, Any] = {c: labels[c] for c in shown.columns if c in labels}
    if "delta" in headers:  # δ is small: three significant digits, as the text writes it (not 0.00003)
        headers["delta"] = st.column_config.NumberColumn(headers["delta"], format=SMALL_NUMBER_FORMAT)
    return shown, headers


def comparison_table(points: Any, utility_label: str) -> pd.DataFrame:
    """The honest comparison's table from analysed mechanisms (display only)."""
    rows = []
    for p in points:
        first = p.first
        program = first.program
        rows.append({
            "mechanism": type(p.mechanism).LABEL,
            "guarantee": p.mechanism.guarantee().headline(),
            "noise sd per coordinate": first.noise_sd,
            utility_label: p.interval(program.headline_metric)[0] if program is not None else None,
            "decision agreement": p.decision_agreement[0] if program is not None else None,
            "singling-out": None if first.singling_out is None else first.singling_out.protection,
            "attribute inference": None if first.attribute_inference is None else first.attribute_inference.protection,
            "distinguishing": None if first.distinguishing is None else first.distinguishing.protection,
            "distinguishing is": None if first.distinguishing is None else distinguishing_basis(first.distinguishing),
        })
    return pd.DataFrame(rows)


def gamma_verdicts(gammas: Any, lo: float, hi: float, candidate: Any, mean: float | None = None,
                   no_data: Any = None) -> list[tuple[str, str]]:
    """(level, text) per γ target: the engine's :func:`engine.analysis.gamma_check` at ``candidate`` = (B, ε, δ),
    with ``no_data`` the agreement of each rule that uses no data (a target one of them meets is flagged)."""
    from engine.analysis import gamma_check

    b, epsilon, delta = candidate
    mid = (lo + hi) / 2 if mean is None else mean
    out = []
    for g in gammas:
        check = gamma_check(float(g), (mid, lo, hi), b=b, epsilon=epsilon, delta=delta, no_data=no_data)
        out.append(("ok" if check.status == "met" and check.allowed_by_theorem else "warn", check.text))
    return out
