# Sourced by scripts/demo and scripts/test: create .venv and install the package into it.
# Installs the pinned versions of constraints.txt (reproducible installs, CI included);
# SMMCTS_UNPINNED=1 installs the newest versions pyproject.toml allows instead (e.g. on a
# Python other than the one the pins were made with). Re-installs only when pyproject.toml,
# constraints.txt or the extras changed (the install is editable, so code changes need none).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
PY="$VENV/bin/python"
EXTRAS="${SMMCTS_EXTRAS:-test,plot}"
CONSTRAINTS=(-c "$ROOT/constraints.txt")
if [ "${SMMCTS_UNPINNED:-0}" = 1 ]; then
  CONSTRAINTS=()
fi
if [ ! -x "$PY" ]; then
  echo "Creating $VENV" >&2
  python3 -m venv "$VENV"
fi
STAMP="$VENV/.smmcts-installed"
WANT="$(cat "$ROOT/pyproject.toml" "$ROOT/constraints.txt" | sha256sum | cut -c1-16)-$EXTRAS-${#CONSTRAINTS[@]}"
if [ ! -f "$STAMP" ] || [ "$(cat "$STAMP")" != "$WANT" ]; then
  echo "Installing smmcts-spiel[$EXTRAS] into $VENV" >&2
  "$PY" -m pip install --quiet --upgrade pip >&2
  "$PY" -m pip install --quiet "${CONSTRAINTS[@]}" -e "$ROOT[$EXTRAS]" >&2
  echo "$WANT" > "$STAMP"
fi
