"""What the Data page's choices leave out and keep: the columns the suggestion left out (and why), and the rows the
missing-value rules keep (issue 34 §1). Display only: the reasons and counts are the engine's
(``engine.data.profile.suggestion``, ``engine.data.checks.drop_impact``); they quote counts of the data, for the data
holder, not for publication."""

from __future__ import annotations

from typing import Any

from ui.common import plain


def draw_left_out(left_out: dict[str, str], features: list[str], container: Any) -> None:
    """The columns the suggestion left out and are still not features, each with the reason and how to add it."""
    shown = {c: why for c, why in left_out.items() if c not in features}
    if not shown:
        return
    box = container.expander(f"Left out of the suggestion: {len(shown):,} column{'s' if len(shown) != 1 else ''} "
                             "(and why)", icon=":material/filter_alt:")
    box.markdown("\n".join(f"- **{plain(column)}** — {plain(why)}" for column, why in shown.items()))
    box.caption("Add any of them in the feature list above; its problems, if any, then show next to the control that "
                "fixes them. The counts are the data's own (internal, not private).")


def drop_lines(impact: Any) -> list[str]:
    """One plain line per column whose gaps drop rows: the rows it removes, and how many for it alone.

    >>> from engine.data.checks import DropImpact
    >>> for line in drop_lines(DropImpact(10_000, 8_059, {"emp_length": 817, "debt_to_income": 24},
    ...                                   {"emp_length": 700, "debt_to_income": 0})): print(line)
    Dropping the rows with a gap in 'emp_length' removes 817 rows, 700 of them for this column alone (filling its gaps with a public constant would keep those).
    Dropping the rows with a gap in 'debt_to_income' removes 24 rows, all of them also missing another column.
    """
    lines = []
    for column, missing in sorted(impact.missing.items(), key=lambda item: -item[1]):
        alone = impact.only.get(column, 0)
        tail = (f", {alone:,} of them for this column alone (filling its gaps with a public constant would keep those)"
                if alone else ", all of them also missing another column")
        lines.append(f"Dropping the rows with a gap in {column!r} removes {missing:,} rows{tail}.")
    return lines


def draw_rows_kept(impact: Any, target: str | None, container: Any) -> None:
    """The rows kept and what each dropping column costs (the target's gaps are always dropped)."""
    share = impact.kept / impact.rows if impact.rows else 0.0
    head = f"These choices keep **{impact.kept:,} of {impact.rows:,} rows** ({share:.0%})."
    if not impact.missing:
        container.caption(head.replace("**", "") + " No used column has a gap.")
        return
    if target in impact.missing:
        head += f" Rows whose target {plain(repr(target))} is missing are always dropped."
    container.markdown(head)
    container.caption("\n".join(f"- {plain(line)}" for line in drop_lines(impact)) + "\n\n(Internal counts of the "
                      "data, not private; the released n reveals the rows kept.)")
