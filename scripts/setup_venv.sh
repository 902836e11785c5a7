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
  # ~100 s with pip. It compiles the bytecode as pip does (without it each process's imports take twice as long).
  if "$venv/bin/python" -m pip install --disable-pip-version-check -q "uv==0.13.9"; then
    "$venv/bin/uv" pip install -q --compile-bytecode --python "$venv/bin/python" -r "$here/$req"
  else
    echo "setup: uv could not be installed (above); installing with pip instead, which is slower" >&2
    "$venv/bin/python" -m pip install --disable-pip-version-check -q -r "$here/$req"
  fi
  echo "$want" > "$stamp"
fi
export PATH="$venv/bin:$PATH"
cd "$here"
# The project's own bytecode, written now (what is up to date is skipped): where PYTHONDONTWRITEBYTECODE is set,
# as on the machines this is tested on, every process compiled each module it imports from its source again,
# ~0.3 CPU-seconds of a training worker's start (docs/testing.md). Ignored by git (__pycache__/).
python -m compileall -q -j 0 core ui app_pages app.py tests bench  # -q: says only what does not compile
