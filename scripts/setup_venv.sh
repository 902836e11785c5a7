# Sourced by run.sh and test.sh: create .venv once and (re)install only when a requirements file changed.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
req="${1:-requirements.txt}"
venv="$here/.venv"
if [ ! -x "$venv/bin/python" ]; then
  python3.11 -m venv "$venv" 2>/dev/null || python3 -m venv "$venv"
fi
stamp="$venv/.installed-$(basename "$req")"
want="$(cat "$here/requirements.txt" "$here/$req" | sha256sum | cut -d' ' -f1)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  # uv installs the pinned packages in parallel: a fresh .venv of requirements-dev.txt in ~20-30 s here against
  # ~100 s with pip. It compiles no bytecode ahead: the processes write it for what they import (below).
  if "$venv/bin/python" -m pip install --disable-pip-version-check -q "uv==0.13.9"; then
    "$venv/bin/uv" pip install -q --python "$venv/bin/python" -r "$here/$req"
  else
    echo "setup: uv could not be installed (above); installing with pip instead, which is slower" >&2
    "$venv/bin/python" -m pip install --disable-pip-version-check -q -r "$here/$req"
  fi
  echo "$want" > "$stamp"
fi
export PATH="$venv/bin:$PATH"
cd "$here"
# Bytecode is written by the first process that imports a module and read by every later one, in .venv and the
# project's __pycache__ folders (both ignored by git), also where PYTHONDONTWRITEBYTECODE is set, as on the
# machines this is tested on: without it every process compiled each module it imports from its source again
# (`import mindspore, streamlit` 4.95 s against 2.1 s). Compiling all of .venv ahead took 25 s of the set-up (47
# CPU-seconds for ~16,000 modules); a whole ./test.sh writes ~6,500 (docs/testing.md).
unset PYTHONDONTWRITEBYTECODE
