"""Baselines shared by several methods (harmonic functions, graph-kernel SVMs, ...)."""
