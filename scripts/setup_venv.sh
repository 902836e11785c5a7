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
  "$venv/bin/python" -m pip install --disable-pip-version-check -q -r "$here/$req"
  echo "$want" > "$stamp"
fi
export PATH="$venv/bin:$PATH"
cd "$here"
