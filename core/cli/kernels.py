"""Build the project's C++ operators now (./run.sh does, so the first LeNet-5 run does not wait for g++) and
say where they are, or why there are none:

    python -m core.cli.kernels
"""
from __future__ import annotations

import argparse
import logging
import sys

from core.kernels.library import SWITCH, library, switched_off


def main(argv: list[str] | None = None) -> int:
    argparse.ArgumentParser(description="Build LeNet-5's C++ operators now (once per host and CPU) and say where "
                            f"they are, or why there are none. {SWITCH}=0 switches them off.").parse_args(argv)
    logging.basicConfig(format="%(message)s")
    if switched_off():
        print(f"custom operators switched off ({SWITCH}=0): LeNet-5 trains with MindSpore's own")
        return 0
    path = library()
    print(f"custom operators: {path}" if path else "custom operators: none (see above); MindSpore's own are used")
    return 0


if __name__ == "__main__":
    sys.exit(main())
