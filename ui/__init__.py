"""Streamlit-side helpers of Privacy Parameter Studio: session state, caching adapters, figures and shared widgets.

Nothing here computes privacy quantities: every number comes from ``engine/``. Modules here may import Streamlit
and plotly; ``engine/`` never does.
"""
