"""Engines: where the array work of an estimator runs, chosen by the input's type."""
