"""A guard the no-outside-requests test loads into a server under test (sitecustomize.py)."""
