"""The chosen candidate as a runnable Jupyter notebook and a plain Python script (issue 36 §4).

From a :class:`~engine.decision_record.DecisionRecord`, :func:`notebook_json` writes a notebook (nbformat 4) and
:func:`script_text` the same code as one script. Both reproduce the analysis and the release with the engine's
Python API, and check every number against the record as they go:

1. **the guarantee, printed first** — built from the record's release configuration before any data is read, and
   checked against the record's statement;
2. the data: the demo by name, or the data holder's file (``DATA_FILE``); prepared with the record's data spec, with
   n, d and the feature names checked, and the keyed fingerprint compared (it matches under the same fingerprint key);
3. Theorem 1's verdicts for the record's accuracy targets at the candidate (B, ε, δ), checked;
4. the release itself (:func:`engine.release.run_release`, with the sampler ``privatize --config`` uses), written to
   ``private.csv``, with its guarantee checked and its sampler named — fresh randomness from the operating system
   unless the record holds a seed (then it says: simulation, not private).

The last cell prints the reproduced numbers as one JSON line (``REPRODUCED …``). A check that fails stops the run
with the difference named.
"""

from __future__ import annotations

import json
from typing import Any

from engine import __version__

__all__ = ["notebook_cells", "notebook_json", "script_text"]


def _expected(record: Any) -> dict[str, Any]:
    return {
        "guarantee": list(record.guarantee),
        "n": int(record.data.n),
        "d": int(record.data.d),
        "features": list(record.data.features),
        "sha256": record.data.sha256,
        "feasibility": [r.to_dict() for r in record.targets.feasibility],
    }


def notebook_cells(record: Any, *, data_file: str = "YOUR_DATA.csv") -> list[tuple[str, str]]:
    """The notebook's cells as ``(kind, source)``, kind ``"markdown"`` or ``"code"``."""
    release = record.release.to_json(indent=2, ensure_ascii=False)
    candidate = record.candidate.to_json(ensure_ascii=False)
    expected = json.dumps(_expected(record), indent=1, ensure_ascii=False)
    demo = record.data.source == "demo"
    load = (f"frame = load_demo({record.data.dataset!r}).frame  # the built-in demo the record was made on"
            if demo else
            f"DATA_FILE = {data_file!r}  # the data holder's file: the same table the record was made on\n"
            "frame = load_table(DATA_FILE)")
    seeded = record.release.seed is not None
    return [
        ("markdown", f"# {record.title}\n\nReproduces the decision record made {record.created} (Privacy Parameter "
                     f"Studio {__version__}): the guarantee first, then the data check, Theorem 1's verdicts for the "
                     "accuracy targets and the release itself, each checked against the record. Requires the "
                     "Studio installed (`pip install privacy-parameter-studio`)."),
        ("code", "import json\nimport math\n\n"
                 "from engine.data.demos import load_demo\n"
                 "from engine.data.preparation import load_table, prepare\n"
                 "from engine.guarantee import Guarantee\n"
                 "from engine.release import ReleaseConfig, release_frame, release_summary, run_release\n"
                 "from engine.theory.feasibility import feasibility_report\n\n"
                 f"RELEASE = json.loads(r'''{release}''')\n"
                 f"CANDIDATE = json.loads(r'''{candidate}''')\n"
                 f"EXPECTED = json.loads(r'''{expected}''')\n\n\n"
                 "def check(name, got, want):\n"
                 "    \"\"\"Stop with the difference when a reproduced number differs from the record's.\"\"\"\n"
                 "    same = (math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-12)\n"
                 "            if isinstance(got, float) and isinstance(want, (int, float)) else None)\n"
                 "    if isinstance(got, dict) and isinstance(want, dict) and got.keys() == want.keys():\n"
                 "        return all(check(f'{name}.{k}', got[k], want[k]) for k in got)\n"
                 "    if isinstance(got, (list, tuple)) and isinstance(want, (list, tuple)) and len(got) == len(want):\n"
                 "        return all(check(f'{name}[{i}]', g, w) for i, (g, w) in enumerate(zip(got, want)))\n"
                 "    if not (same if same is not None else got == want):\n"
                 "        raise AssertionError(f'{name}: reproduced {got!r}, the record says {want!r}')\n"
                 "    return True\n\n\n"
                 "config = ReleaseConfig.from_dict(RELEASE)\n"
                 "guarantee = config.build_mechanism().guarantee()\n"
                 "print('\\n'.join(guarantee.describe()))\n"
                 "check('guarantee', list(guarantee.describe()), EXPECTED['guarantee'])"),
        ("markdown", "## The data\n\nPrepared with the record's data spec (features, target, normalisation); the "
                     "fingerprint is keyed (HMAC under the data holder's key), so it matches only under the same "
                     "key."),
        ("code", f"{load}\n"
                 "prepared = prepare(frame, config.data)\n"
                 "check('n', prepared.n, EXPECTED['n'])\n"
                 "check('d', prepared.d, EXPECTED['d'])\n"
                 "check('features', list(prepared.feature_names), EXPECTED['features'])\n"
                 "same_key = prepared.fingerprint == EXPECTED['sha256']\n"
                 "print(f'n = {prepared.n:,}, d = {prepared.d}; fingerprint '\n"
                 "      + ('matches the record' if same_key else 'differs: another fingerprint key or other data'))"),
        ("markdown", "## Theorem 1 at the candidate\n\nFor each accuracy target γ: is γ-accurate targeting ruled out "
                     "at the candidate (B, ε, δ)?"),
        ("code", "candidate = Guarantee.from_dict(CANDIDATE)\n"
                 "reports = [feasibility_report(r['gamma'], candidate.epsilon, candidate.delta)\n"
                 "           for r in EXPECTED['feasibility']]\n"
                 "for report in reports:\n"
                 "    print(report.to_dict())\n"
                 "check('feasibility', [r.to_dict() for r in reports], EXPECTED['feasibility'])"),
        ("markdown", "## The release\n\n" + (
            "**The record holds a seed: this release is reproducible and therefore a simulation — NOT private.** "
            "Remove the seed from the configuration for a real release." if seeded else
            "Fresh randomness from the operating system (no seed): this is a real release. Run it once; every "
            "further run is another release and spends its budget again.")),
        ("code", "prepared, release = run_release(frame, config)  # the sampler privatize --config uses\n"
                 "release_frame(prepared, release).to_csv('private.csv', index=False)\n"
                 "summary = release_summary(prepared, release, config)\n"
                 "# the release states the record's guarantee, then which sampler drew its noise\n"
                 "stated = summary['guarantee']['describe']\n"
                 "check('release guarantee', stated[:len(EXPECTED['guarantee'])], EXPECTED['guarantee'])\n"
                 "print(summary['guarantee']['headline'])\n"
                 "print(summary['sampler']['note'])\n"
                 "print('noise sd per coordinate:', summary['noise_sd_per_coordinate'], '— written to private.csv')\n"
                 "REPRODUCED = {'guarantee': stated[:len(EXPECTED['guarantee'])], 'n': prepared.n, 'd': prepared.d,\n"
                 "              'features': list(prepared.feature_names), 'fingerprint_matches': same_key,\n"
                 "              'feasibility': [r.to_dict() for r in reports], 'seeded': summary['seeded'],\n"
                 "              'sampler': summary['sampler']['name']}\n"
                 "print('REPRODUCED', json.dumps(REPRODUCED))"),
    ]


def notebook_json(record: Any, *, data_file: str = "YOUR_DATA.csv") -> str:
    """The notebook (nbformat 4.5 JSON) for ``record``."""
    cells = []
    for i, (kind, source) in enumerate(notebook_cells(record, data_file=data_file)):
        cell: dict[str, Any] = {"cell_type": kind, "id": f"cell-{i}", "metadata": {},
                                "source": source.splitlines(keepends=True)}
        if kind == "code":
            cell.update(execution_count=None, outputs=[])
        cells.append(cell)
    document = {
        "cells": cells,
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
                     "language_info": {"name": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return json.dumps(document, indent=1, ensure_ascii=False) + "\n"


def script_text(record: Any, *, data_file: str = "YOUR_DATA.csv") -> str:
    """The same code as one Python script (markdown cells as comments)."""
    parts = [f'"""{record.title}: reproduces the decision record with the Studio\'s engine (run: python '
             'reproduce.py)."""\n']
    for kind, source in notebook_cells(record, data_file=data_file):
        if kind == "markdown":
            parts.append("\n".join("# " + line if line else "#" for line in source.splitlines()))
        else:
            parts.append(source)
    return "\n\n".join(parts) + "\n"
