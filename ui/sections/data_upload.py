"""Taking an uploaded file into the session (memory only), or refusing it with one message and nothing changed.

A file is refused only for what no choice on the Data page can fix (issue 34): it cannot be read, it is too large or
too wide for the app, it has too few rows, or no column could be a feature (``engine.data.profile.unusable``).
Everything else — a suggestion that keeps few rows, a constant column, text, gaps — is shown next to the control
that fixes it once the file is taken.

The size limits are read from :mod:`ui.cached` at each upload (tests lower them there)."""

from __future__ import annotations

from engine.errors import EngineError
from ui import cached
from ui.cached import default_upload_spec, sha256_bytes, unusable_upload, uploaded_table
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
        # The suggestion (every problem it leaves is shown next to the control that fixes it on the Data page).
        state.spec = default_upload_spec(key, frame)
        state.program = None
    state.switch_data()
    reset_column_widgets()
    return None
