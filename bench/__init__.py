"""karani's benchmarks. Each bench/<name>.py is a script, run from the repository root as
``python -m bench.<name>``; the helpers they share are in ``bench.support``. See bench/README.md.
"""
