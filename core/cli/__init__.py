"""The command lines, one module each, run as `python -m core.cli.NAME`: train, sweep, evaluate, control,
download, and the processes the studio starts itself (worker: one run; warm_worker: a worker waiting with
MindSpore loaded). Nothing in the library imports them (tests/unit/test_structure.py)."""
