"""The installed Studio's command, ``studio`` (:mod:`studio.cli`), and the offline bundle (:mod:`studio.bundle`).

The wheel also carries the app's own files under ``studio/app/`` (``setup.py`` copies them there at build time).
"""
