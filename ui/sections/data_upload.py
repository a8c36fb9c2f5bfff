"""Taking an uploaded file into the session (memory only), or refusing it with one message and nothing changed.

A file is refused only for what no choice on the Data page can fix (issue 34): it cannot be read, it is too large or
too wide for the app, it has too few rows, or no column could be a feature (``engine.data.profile.unusable``).
Everything else — a suggestion that keeps few rows, a constant column, text, gaps — is shown next to the control
that fixes it once the file is taken.

The size limits are read from :mod:`ui.cached` at each upload (tests lower them there)."""

from __future__ import annotations

from engine.data.checks import table_problems
from engine.errors import EngineError
from ui import cached
from ui.cached import default_upload_spec, prepared_data, sha256_bytes, unusable_upload, uploaded_table
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
    key = f"upload:{fingerprint}"
    try:
        why = unusable_upload(key, frame)  # only what no choice on the Data page can fix
    except EngineError as exc:
        why = str(exc)
    if why is not None:
        rows, columns = frame.shape
        del frame
        cached.forget_uploaded_table(fingerprint, name, content)  # a refused table does not stay in memory
        return (f"'{name}' ({rows:,} rows × {columns:,} columns) was read but cannot be used: {why}. "
                f"Fix the file and upload it again. {kept}")
    linked = state.source == "upload" and state.upload_bytes is None and state.upload_fingerprint == fingerprint
    replacing = state.source == "upload" and state.upload_bytes is not None
    same_file = replacing and state.upload_fingerprint == fingerprint
    # A new file for the same table (a re-upload, a newer extract): the settings made for the previous upload are
    # kept when they still prepare it without a problem; what changed in the columns is said either way.
    previous = _previous_columns(state) if replacing and not same_file else None
    columns = [str(c) for c in frame.columns]
    keep = state.spec if (linked or same_file or previous is not None) and state.spec is not None else None
    candidate_spec = keep
    kept_settings = keep is not None
    if keep is not None and previous is not None:
        try:
            if table_problems(frame, keep):
                raise EngineError("the previous settings do not apply")
            prepared_data(key, keep, frame)
        except EngineError:
            candidate_spec, kept_settings = None, False
    if state.upload_fingerprint is not None and state.upload_bytes is None and not linked:
        state.notices.append(
            f"This file's fingerprint ({fingerprint[:12]}…) differs from the one in the shared link "
            f"({state.upload_fingerprint[:12]}…): the link's data settings were not applied."
        )
        kept_settings = False
        candidate_spec = None
    elif previous is not None:
        state.notices.append(_columns_note(name, previous, columns, kept_settings))
    elif same_file:
        state.notices.append(f"'{name}' is the file already loaded (the same fingerprint): your data settings, the "
                             "program and every result are kept.")
    state.source = "upload"
    state.upload_bytes = content
    state.upload_name = name
    state.upload_fingerprint = fingerprint
    if not linked and not same_file:
        # The kept settings, else the suggestion (every problem it leaves is shown next to the control that fixes it
        # on the Data page).
        state.spec = candidate_spec if candidate_spec is not None else default_upload_spec(key, frame)
        if not kept_settings:
            state.program = None
    state.switch_data()
    reset_column_widgets()
    return None


def _previous_columns(state: StudioState) -> list[str] | None:
    """The columns of the upload held now (None when there is none in memory)."""
    if state.upload_bytes is None or state.upload_fingerprint is None:
        return None
    try:
        frame = uploaded_table(state.upload_fingerprint, state.upload_name or "upload.csv", state.upload_bytes)
    except EngineError:
        return None
    return [str(c) for c in frame.columns]


def _columns_note(name: str, before: list[str], after: list[str], kept: bool) -> str:
    """What a new upload changed in the columns, and whether the settings were kept."""
    added = [c for c in after if c not in before]
    removed = [c for c in before if c not in after]

    def listed(cols: list[str]) -> str:
        return ", ".join(repr(c) for c in cols[:8]) + (f" and {len(cols) - 8} more" if len(cols) > 8 else "")

    if not added and not removed:
        change = f"'{name}' has the same {len(after)} columns as the previous upload"
    else:
        parts = ([f"new columns {listed(added)}"] if added else []) + ([f"no longer {listed(removed)}"] if removed else [])
        change = f"'{name}' differs from the previous upload in its columns: " + "; ".join(parts)
    if kept:
        return change + ": your data settings and the program are kept."
    return change + ": the previous settings do not apply to it, so the Data page starts from the suggested ones."
