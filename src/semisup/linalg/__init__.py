"""Numerical building blocks shared by several methods."""
