"""Taking an uploaded file into the session (memory only), or refusing it with one message and nothing changed.

The size limits are read from :mod:`ui.cached` at each upload (tests lower them there)."""

from __future__ import annotations

from engine.data.preparation import table_problems
from engine.errors import EngineError
from ui import cached
from ui.cached import default_upload_spec, prepared_data, sha256_bytes, uploaded_table
from ui.data_controls import reset_column_widgets
from ui.state import StudioState


def handle_upload(state: StudioState, file: object) -> str | None:
    """Take a newly uploaded file into the session (memory only); return a message if it cannot be used.

    On failure nothing the user already did changes: the previous dataset and every setting stay.
    """
    content = file.getvalue()  # type: ignore[attr-defined]
    name = str(file.name)  # type: ignore[attr-defined]
    kept = "Your previous data and settings are unchanged."
    if len(content) > cached.MAX_UPLOAD_MB * 1024 * 1024:
        return (
            f"'{name}' is {len(content) / 1024 / 1024:.1f} MB, above this app's limit of {cached.MAX_UPLOAD_MB} MB — use a "
            f"sample of the rows here, or run the full release with 'python -m engine privatize'. {kept}"
        )
    fingerprint = sha256_bytes(content)
    try:  # columns, values and decoded size are bounded before the file is decoded (nothing cached if refused)
        frame = uploaded_table(fingerprint, name, content)
    except EngineError as exc:
        return f"{exc}. {kept}"
    linked = state.source == "upload" and state.upload_bytes is None and state.upload_fingerprint == fingerprint
    # Check the new file can be used before it replaces anything: its suggested settings (or the link's) must
    # prepare. A readable but unusable file (too few rows, only infinite values, constant or text columns …)
    # leaves the session exactly as it was.
    candidate_spec = state.spec if linked and state.spec is not None else None
    try:
        if candidate_spec is None:
            candidate_spec = default_upload_spec(f"upload:{fingerprint}", frame)
        problems = table_problems(frame, candidate_spec)
        if not problems:
            prepared_data(f"upload:{fingerprint}", candidate_spec, frame)
    except EngineError as exc:
        problems = [exc]
    if linked and not candidate_spec.positive_class and problems and all(
            getattr(p, "control", None) == "target" for p in problems):
        problems = []  # links leave out the outcome labels counted as 1 (values of the file): the Data page asks
    if problems:
        rows, columns = frame.shape
        del frame
        cached.forget_uploaded_table(fingerprint, name, content)  # a refused table does not stay in memory
        found = "; ".join(str(p) for p in problems[:3])
        if any("choose at least one feature column" in str(p) for p in problems):
            found += (" (no column is numeric with more than one value, a yes/no column, or a text column with few "
                      "levels — such columns are what the release privatizes)")
        return (f"'{name}' ({rows:,} rows × {columns:,} columns) was read but cannot be used: {found}. "
                f"Fix the file and upload it again. {kept}")
    if state.upload_fingerprint is not None and state.upload_bytes is None and not linked:
        state.notices.append(
            f"This file's fingerprint ({fingerprint[:12]}…) differs from the one in the shared link "
            f"({state.upload_fingerprint[:12]}…): the link's data settings were not applied."
        )
        state.spec = None
    state.source = "upload"
    state.upload_bytes = content
    state.upload_name = name
    state.upload_fingerprint = fingerprint
    if not linked:
        state.spec = candidate_spec
        state.program = None
    state.switch_data()
    reset_column_widgets()
    return None
