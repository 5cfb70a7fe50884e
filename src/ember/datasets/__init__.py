"""ember.datasets: small data sets shipped inside the package, and synthetic generators.

``load_digits`` and ``load_diabetes`` read compressed files installed with ember (no network);
``DigitsDataset`` and ``DiabetesDataset`` wrap them for ``ember.utils.data.DataLoader``;
``make_moons``, ``make_blobs`` and ``make_regression`` generate toy problems from a seed.
Sources and licences of the shipped data: ``ember/datasets/NOTICE``.
"""
from ._shipped import DiabetesDataset, DigitsDataset, load_diabetes, load_digits
from ._synthetic import make_blobs, make_moons, make_regression
from ._util import Bunch

__all__ = ["load_digits", "load_diabetes", "DigitsDataset", "DiabetesDataset", "make_moons",
           "make_blobs", "make_regression", "Bunch"]
