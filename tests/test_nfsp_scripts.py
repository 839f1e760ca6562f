"""scripts/nfsp_othello.py and scripts/nfsp_poker.py refuse bad flags with a usage error."""

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("jax")
pytest.importorskip("flax")

ROOT = Path(__file__).resolve().parents[1]


def _run(script, *flags):
    return subprocess.run([sys.executable, str(ROOT / "scripts" / script), *flags],
                          capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("script, flags, message", [
    ("nfsp_othello.py", ["--algorithms=dqn"], "use mc_nfsp, nfsp, own_nfsp"),
    ("nfsp_othello.py", ["--game=kuhn_poker"], "perfect information"),
    ("nfsp_poker.py", ["--algorithms=cfr"], "use anfsp, own_nfsp, mc_nfsp, openspiel_nfsp"),
    ("nfsp_poker.py", ["--game=matrix_pd"], "zero-sum"),
    ("nfsp_poker.py", ["--resume"], "not checkpointed"),
])
def test_bad_flags_are_usage_errors(script, flags, message, tmp_path):
    proc = _run(script, *flags, f"--out={tmp_path / 'out'}")
    assert proc.returncode == 2
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr
