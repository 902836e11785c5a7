#!/usr/bin/env bash
# Set up (once) and start MindSpore Training Studio on http://127.0.0.1:8501 with the bundled data.
source "$(dirname "$0")/scripts/setup_venv.sh" requirements.txt
python -m core.cli.kernels   # LeNet-5's C++ operators, built once into ~/.cache/mindspore-studio (needs g++)
exec python -m ui.serve "$@"   # streamlit run app.py, with the run queue's dispatcher from the start
