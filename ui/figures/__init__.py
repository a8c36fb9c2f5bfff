"""Pure plotly figure builders: data in, ``go.Figure`` out, so tests can inspect them without a browser.

Shared colours, fonts and number formats live in :mod:`ui.figures.theme`.
"""
