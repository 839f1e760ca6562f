"""Intervals, tables and figures (smmcts_spiel.reports), and the committed tournaments'
tables rebuilt from their games by the current code."""

import csv
import math
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from smmcts_spiel import reports
from smmcts_spiel.reports import plots, tables

ROOT = Path(__file__).resolve().parents[1]


def test_t_intervals_cover_the_mean_of_small_normal_samples_95_percent_of_the_time():
    rng = np.random.default_rng(0)
    samples = rng.normal(3.0, 2.0, size=(2000, 5))
    covered = [reports.mean_interval(x) for x in samples]
    rate = np.mean([i.low <= 3.0 <= i.high for i in covered])
    assert 0.935 < rate < 0.965  # 95% +- 1.5 points: 3 standard errors of 2000 draws
    # The normal approximation, 1.96 s / sqrt(n), covers far less at n = 5 (about 88%).
    normal = 1.96 * samples.std(axis=1, ddof=1) / math.sqrt(5)
    assert np.mean(np.abs(samples.mean(axis=1) - 3.0) <= normal) < 0.91


def test_wilson_intervals_match_the_closed_form():
    for wins, n in [(0, 10), (3, 10), (10, 10), (87, 200)]:
        p, z = wins / n, 1.959963984540054
        centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
        interval = reports.rate_interval(wins, n)
        assert interval.low == pytest.approx(centre - half, abs=1e-12)
        assert interval.high == pytest.approx(centre + half, abs=1e-12)
        assert 0 <= interval.low < interval.high <= 1  # not zero-width at 0 or n wins


@pytest.mark.parametrize("values, text", [
    ([1.0], "+1.000 (n=1: too few for an interval)"),
    ([1.0, 1.0, 1.0], "+1.000 (all 3 equal: no interval)"),
])
def test_an_interval_a_sample_cannot_give_says_why(values, text):
    interval = reports.mean_interval(values)
    assert not interval.defined and interval.half_width == math.inf
    assert interval.format() == text


def test_a_small_interval_is_never_printed_as_zero():
    interval = reports.mean_interval(0.5 + 1e-4 * np.array([-1.0, 1.0] * 50))
    assert interval.format() == "+0.500 +- 0.000020"
    assert interval.format(style="[]") == "+0.500 [+0.499980, +0.500020]"


def test_refused_samples():
    with pytest.raises(ValueError, match="at least one value"):
        reports.mean_interval([])
    with pytest.raises(ValueError, match="finite"):
        reports.mean_interval([1.0, math.nan])
    with pytest.raises(ValueError, match="successes"):
        reports.rate_interval(3, 2)


def test_interval_from_a_standard_error_is_a_t_interval():
    interval = reports.interval_from_standard_error(1.0, 0.5, n=12, degrees_of_freedom=10)
    assert interval.half_width == pytest.approx(2.228138851986 * 0.5)  # t(0.975, 10)
    assert not reports.interval_from_standard_error(1.0, 0.0, 12, 10).defined


def test_tables_are_markdown_and_text():
    rows = [["a", "+0.5 +- 0.1"], ["bb", "-0.5 +- 0.1"]]
    md = tables.markdown(rows, ["bot", "mean"]).splitlines()
    assert md[0].startswith("| bot") and set(md[1]) <= set("|:- ") and len(md) == 4
    assert tables.text(rows, ["bot", "mean"]).splitlines()[2].startswith("a ")


def test_figures_are_written_and_bars_take_intervals_without_their_estimate(tmp_path):
    path = tmp_path / "bars.png"
    with plots.saved_figure(path, (4, 3)) as fig:
        ax = fig.subplots()
        plots.interval_bars(ax, ["game"], {"a": ([10.0], [12.0], [20.0]),
                                           "b": ([-10.0], [-20.0], [-5.0])})
        plots.curve(ax, [1, 2], [0.5, 0.4], [0.4, 0.3], [0.6, 0.5], label="c",
                    color=plots.selector_style("rmm")[0], style=plots.selector_style("rmm")[1])
    assert path.read_bytes()[:4] == b"\x89PNG"
    assert plots.selector_style("rm") == ("tab:red", "-")
    assert plots.selector_style("exp3m") == ("tab:cyan", "--")


# -- committed tournaments reproduce ------------------------------------------------------

COMMITTED = sorted(p.parent for p in (ROOT / "experiments" / "tournaments" / "results").glob(
    "*/*/games.csv"))


@pytest.mark.parametrize("folder", [
    pytest.param(f, marks=[] if f.name == "c_g13" else pytest.mark.slow, id=f.name)
    for f in COMMITTED])
def test_committed_tournament_tables_are_rebuilt_identically_from_their_games(folder,
                                                                              tmp_path):
    copy = tmp_path / folder.name
    copy.mkdir()
    for name in ("games.csv", "tournament.json"):
        shutil.copy(folder / name, copy / name)
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "tournament.py"),
                             "--from_games_csv", f"--results_dir={copy}"],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    for name in ("pairs.csv", "ratings.csv", "tournament.md"):
        assert (copy / name).read_text() == (folder / name).read_text(), name
    assert len(list(csv.DictReader(open(copy / "ratings.csv")))) > 0


def test_there_are_committed_tournaments_to_check():
    assert "c_g13" in {f.name for f in COMMITTED} and len(COMMITTED) >= 10


@pytest.mark.parametrize("interval, shown", [
    (reports.Interval(-1e-12, -1.1e-12, -0.9e-12, 40), "0.000 (no spread: no interval)"),
    (reports.Interval(-4e-4, -5e-4, -3e-4, 40), "0.000 +- 0.00010"),
    (reports.Interval(2e-9, 1e-9, 3e-9, 40), "0.000 (no spread: no interval)"),
])
def test_no_interval_prints_as_minus_zero_or_a_zero_half_width(interval, shown):
    """equilibrium_loss.py printed "-0.000 +- 0.00000000" for losses equal up to rounding."""
    assert interval.format(sign=False) == shown
    assert interval.format().lstrip("+") == shown


def test_the_legend_of_interval_bars_covers_no_bar(tmp_path):
    """The tournament's ratings.png had its legend over an error bar."""
    with plots.saved_figure(tmp_path / "bars.png", (4, 3)) as fig:
        ax = fig.subplots()
        plots.interval_bars(ax, ["g1", "g2"], {name: ([100.0, 100.0], [50.0, 50.0],
                                                      [150.0, 150.0]) for name in "abc"})
    legend = ax.get_legend().get_window_extent()  # as laid out and saved
    assert not legend.overlaps(ax.get_window_extent())
    assert fig.bbox.contains(legend.x1 - 1, legend.y1 - 1)  # and it is inside the figure
