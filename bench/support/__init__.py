"""Helpers the bench scripts share (databases, generated ledgers, data sets, baselines).

Nothing here is run by itself; scripts import it as ``from bench.support import ...``.
"""
