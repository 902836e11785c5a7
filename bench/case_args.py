"""The command-line arguments shared by bench/reference.py and bench/project_case.py (same cases)."""
import argparse


def case_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser()
    ap.add_argument("--network", default="lenet5")
    ap.add_argument("--style", default="cell")
    ap.add_argument("--mode", default="graph")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--steps", type=int, default=0, help="stop after this many steps (0: all)")
    return ap
