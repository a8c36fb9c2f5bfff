"""Test-wide settings."""

import os

# A fixed fingerprint key, so that tests (and the Streamlit server the browser test starts, which inherits the
# environment) never create or read a key file in the user's home directory.
os.environ.setdefault("STUDIO_FINGERPRINT_KEY", "privacy-parameter-studio-tests")

# One thread per process for OpenBLAS and OpenMP (numpy, scipy, scikit-learn), here and in the servers, command
# lines and Dask workers the tests start (they inherit the environment). The test command runs one pytest worker
# per core, so a library's own thread pool only oversubscribes the cores, and OpenMP threads spin while they wait:
# on the 2-core machine the tests outside the browser took 113 s with the libraries' default threads and 104 s
# with one (the k-means blob experiment 6 s and 3 s). Set before numpy is imported; a value already set is kept.
for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")


def pytest_collection_modifyitems(config, items):
    """The type check and the linter first: the test command hands modules to its workers in collection order
    (``scripts/studio.sh``), and mypy from scratch on a new machine is the longest single test (12–16 s) — at the
    end of the order it left one worker running alone. (A stable sort: every other test keeps its place.)"""
    first = ("tests/test_types.py", "tests/test_lint.py")
    items.sort(key=lambda item: 0 if item.nodeid.startswith(first) else 1)
