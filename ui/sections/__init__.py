"""Sections of the Studio's pages: each draws one part of a page from engine results (no number is made here)."""

__all__: list[str] = []
