# Sourced by scripts/demo and scripts/test: create .venv and install the package into it.
# Re-installs only when pyproject.toml changed (the install is editable, so code changes need none).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
PY="$VENV/bin/python"
EXTRAS="${SMMCTS_EXTRAS:-test,plot}"
if [ ! -x "$PY" ]; then
  echo "Creating $VENV" >&2
  python3 -m venv "$VENV"
fi
STAMP="$VENV/.smmcts-installed"
WANT="$(cat "$ROOT/pyproject.toml" | sha256sum | cut -c1-16)-$EXTRAS"
if [ ! -f "$STAMP" ] || [ "$(cat "$STAMP")" != "$WANT" ]; then
  echo "Installing smmcts-spiel[$EXTRAS] into $VENV" >&2
  "$PY" -m pip install --quiet --upgrade pip >&2
  "$PY" -m pip install --quiet -e "$ROOT[$EXTRAS]" >&2
  echo "$WANT" > "$STAMP"
fi
