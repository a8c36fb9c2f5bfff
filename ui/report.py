"""The self-contained HTML report of a decision record: the building blocks, the choice, the charts, the command.

One file, no network access needed to open it: plotly.js is embedded once (``include_plotlyjs=True`` on the first
chart) and every later chart reuses it. All text from the record is HTML-escaped.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence

import pandas as pd
import plotly.graph_objects as go

from engine.decision_record import DecisionRecord
from ui.figures.theme import COLORS, FONT_FAMILY, fmt

_CSS = f"""
body {{ font-family: {FONT_FAMILY}; color: {COLORS["text"]}; max-width: 1100px; margin: 2rem auto; padding: 0 1rem;
       line-height: 1.5; font-size: 17px; }}
h1 {{ color: {COLORS["primary"]}; }} h2 {{ border-bottom: 2px solid #e3e6e5; padding-bottom: .2rem; margin-top: 2rem; }}
table {{ border-collapse: collapse; width: 100%; margin: .5rem 0 1rem; font-size: 15px; }}
th, td {{ border: 1px solid #d9dedd; padding: .35rem .55rem; text-align: left; vertical-align: top; }}
th {{ background: #eef2f1; width: 28%; }}
code, pre {{ background: #f3f5f4; padding: .15rem .35rem; border-radius: 4px; }}
pre {{ padding: .8rem; overflow-x: auto; white-space: pre-wrap; }}
.warn {{ background: #fff4e5; border-left: 4px solid {COLORS["classic_dp"]}; padding: .6rem .9rem; }}
.note {{ color: #5a666c; font-size: 14px; }}
"""


def _e(value: object) -> str:
    return html.escape(str(value))


def _rows(pairs: Sequence[tuple[str, object]]) -> str:
    return "".join(f"<tr><th>{_e(k)}</th><td>{v if isinstance(v, _Raw) else _e(v)}</td></tr>" for k, v in pairs)


class _Raw(str):
    """Already-escaped HTML."""


def _list(items: Sequence[str]) -> _Raw:
    return _Raw("<ul>" + "".join(f"<li>{_e(i)}</li>" for i in items) + "</ul>") if items else _Raw("none")


def _table(frame: pd.DataFrame, max_rows: int = 200) -> str:
    shown = frame.head(max_rows)
    body = shown.to_html(index=False, border=0, float_format=lambda v: f"{v:.6g}", na_rep="—", escape=True)
    more = f"<p class='note'>First {max_rows} of {len(frame)} rows; the CSV has all.</p>" if len(frame) > max_rows else ""
    return body + more


def _workshop_section(record: DecisionRecord, frame: pd.DataFrame | None) -> list[str]:
    """The workshop's comparison, the chosen candidate and the group's rationale (nothing without pinned ones)."""
    from engine.workshop import SIMULATION_LABEL, comparison_frame, comparison_rows

    w = record.workshop
    if w is None or not w.pinned:
        return []
    if frame is None:
        frame = comparison_frame(comparison_rows(w.pinned, chosen=w.chosen))
    choice = w.choice
    released = " — the candidate this record releases" if record.chosen_is_released else ""
    parts = ["<h2>Workshop: the candidates compared</h2>",
             f"<p>{len(w.pinned)} candidate(s) pinned. Chosen: <b>{_e(choice.label) if choice else 'none'}</b>"
             f"{released}.</p>"]
    replay = record.evaluate_command()
    if replay is not None:
        parts.append("<p>Its evidence is re-measured from this record, to the last digit (a seeded simulation), by:</p>"
                     f"<pre>{_e(replay)}</pre>")
    if any(c.seeded for c in w.pinned):
        parts.append(f"<p class='warn'>Evidence marked “{_e(SIMULATION_LABEL)}” was measured with a fixed seed: it "
                     "describes a simulation, not a private release.</p>")
    parts.append(frame.reset_index().to_html(index=False, border=0, escape=True))
    if w.rationale.strip() and w.rationale.strip() != record.rationale.strip():  # older records may hold two texts
        parts.append("<h3>Why the group chose it</h3>")
        parts.append(f"<p>{_e(w.rationale)}</p>")
    return parts


def html_report(
    record: DecisionRecord,
    figures: Sequence[tuple[str, go.Figure]] = (),
    tables: Sequence[tuple[str, pd.DataFrame]] = (),
    workshop: pd.DataFrame | None = None,
) -> str:
    """Render ``record`` (plus charts and tables) as one standalone HTML document.

    ``workshop`` is the comparison of the record's pinned candidates (``engine.workshop.comparison_frame``) computed
    with the data (per-record losses at the nearest distinct row); without it the record's own is shown."""
    spec = record.specification
    c = record.candidate
    release = record.release
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>{_e(record.title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{_e(record.title)}</h1>",
        f"<p class='note'>Decision record schema {_e(record.schema)} v{record.schema_version} · created "
        f"{_e(record.created)} · Privacy Parameter Studio engine {_e(record.software.engine)}</p>",
        "<h2>The guarantee</h2>",
        _list(record.guarantee),
    ]
    if record.seeds.release is not None:
        parts.append(
            f"<p class='warn'>This configuration uses the fixed seed {record.seeds.release}: anyone with the seed can "
            "regenerate the noise, so its output is NOT private. Release with fresh randomness (no seed).</p>"
        )
    parts += [
        "<h2>Building blocks of the privacy specification</h2>",
        "<table>",
        _rows(
            [
                ("Protection domain (what can be protected)", spec.protection_domain),
                ("Scope of protection (invariants)", _Raw(_e(spec.scope) + _list(spec.invariants))),
                ("Protection unit (who)", spec.protection_unit),
                ("Neighbouring relation", spec.neighbouring_relation),
                ("Target distance B in the data's units", spec.b_in_data_units or "—"),
                ("Standard of protection (how measured)", spec.standard),
                ("Intensity of protection (how much)",
                 f"ε = {spec.epsilon:.6g}, δ = {spec.delta:.6g}" if spec.epsilon is not None else "no (ε, δ) statement"),
                ("Derived conversions", _list(spec.conversions)),
                ("Assumptions", _list(spec.assumptions)),
                ("Out of scope", _list(spec.out_of_scope)),
            ]
        ),
        "</table>",
        "<h2>Accuracy targets and the chosen point</h2>",
        "<table>",
        _rows(
            [
                ("Chosen candidate (B, ε, δ)", f"B = {c.b:.6g}, ε = {c.epsilon:.6g}, δ = {c.delta:.6g}"),
                ("Accuracy targets γ", ", ".join(f"{g:g}" for g in record.targets.gammas)),
                ("δ rule", "default 1/(n+1)" if record.targets.delta_rule == "1/(n+1)" else "chosen by the designer"),
            ]
        ),
        "</table>",
    ]
    for report in record.targets.feasibility:
        parts.append(_list(report.describe()))
    parts += [
        "<h2>Configuration and mechanism</h2>",
        f"<p>Mechanism: <b>{_e(release.build_mechanism().LABEL)}</b> (<code>{_e(release.kind)}</code>). Program: "
        f"<code>{_e(record.program.kind)}</code>.</p>",
        *(["<h3>What the program's score assumes</h3>", _list(record.program_assumptions)]
          if record.program_assumptions else []),
        f"<pre>{_e(json.dumps(release.to_dict(), indent=2, ensure_ascii=False))}</pre>",
        "<h3>Make the release</h3>",
        "<p>The data holder runs, next to the exported decision record:</p>",
        f"<pre>{_e(record.command)}</pre>",
        "<h2>Rationale</h2>",
        f"<p>{_e(record.rationale) if record.rationale.strip() else '<i>No rationale was written.</i>'}</p>",
        *_workshop_section(record, workshop),
        "<h2>Data</h2>",
        "<table>",
        _rows(
            [
                ("Dataset", f"{record.data.title}" + (" (synthetic)" if record.data.synthetic else "")),
                ("Size", f"n = {record.data.n:,} records, d = {record.data.d} features"),
                ("Features", ", ".join(record.data.features)),
                ("Target", record.data.target or "—"),
                ("Columns in the table", ", ".join(record.data.columns)),
                ("Fingerprint (SHA-256 of used columns and spec)", _Raw(f"<code>{_e(record.data.sha256)}</code>")),
                ("File SHA-256", record.data.file_sha256 or "—"),
            ]
        ),
        "</table>",
        "<h2>Seeds and software</h2>",
        "<table>",
        _rows(
            [
                ("Release seed", "none (fresh OS randomness)" if record.seeds.release is None else record.seeds.release),
                ("Sweep seed", "—" if record.seeds.sweep is None else record.seeds.sweep),
                ("Python", record.software.python),
                *[(name, version) for name, version in sorted(record.software.packages.items())],
            ]
        ),
        "</table>",
    ]
    if figures:
        parts.append("<h2>Charts</h2>")
        for i, (title, fig) in enumerate(figures):
            parts.append(f"<h3>{_e(title)}</h3>")
            parts.append(fig.to_html(full_html=False, include_plotlyjs=(i == 0), config={"displaylogo": False}))
    for title, frame in tables:
        parts.append(f"<h2>{_e(title)}</h2>")
        parts.append(_table(frame))
    parts.append(
        f"<p class='note'>Numbers are rounded for reading (e.g. B = {fmt(c.b)}); the JSON decision record holds "
        "exact values.</p></body></html>"
    )
    return "".join(parts)
