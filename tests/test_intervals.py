"""Mean and 95% interval over runs (interp.analysis.intervals): coverage on simulated runs, the grouped table, errors."""

import numpy as np
import pandas as pd
import pytest

from interp.analysis.intervals import mean_interval, runs_table
from interp.core.errors import ConfigError


@pytest.mark.parametrize("n", [3, 5])
def test_the_interval_covers_the_true_mean_about_95_percent_of_the_time(n):
    rng = np.random.default_rng(0)
    draws = rng.normal(0.52, 0.03, size=(4000, n))
    covered = np.mean([low <= 0.52 <= high for _, low, high in map(mean_interval, draws)])
    assert 0.935 < covered < 0.965
    # The null: a 1.96 standard-error interval (normal, not t) undercovers with 3 runs; t must widen it.
    if n == 3:
        normal = np.mean([abs(d.mean() - 0.52) <= 1.96 * d.std(ddof=1) / np.sqrt(n) for d in draws])
        assert normal < 0.90 < covered


def test_the_interval_is_centred_on_the_mean_and_narrows_with_confidence():
    values = [0.31, 0.35, 0.40, 0.38]
    mean, low, high = mean_interval(values)
    assert mean == pytest.approx(np.mean(values)) and high - mean == pytest.approx(mean - low)
    _, low90, high90 = mean_interval(values, confidence=0.90)
    assert low < low90 < mean < high90 < high


def test_bounds_clip_the_interval_to_what_the_figure_can_be():
    """Three accuracies near 1 (Table 1's three seeds): unbounded, the t interval passes 1 (the null); bounded, it stops there."""
    values = [0.995, 0.960, 0.965]
    mean, low, high = mean_interval(values)
    assert high > 1
    assert mean_interval(values, bounds=(0.0, 1.0)) == (mean, low, 1.0)
    assert mean_interval([0.0, 0.02, 0.10])[1] < 0 == mean_interval([0.0, 0.02, 0.10], bounds=(0.0, 1.0))[1]


def test_runs_table_is_mean_interval_per_group():
    rows = [{"split": s, "seed": k, "test": 0.5 + 0.1 * (s == "fair") + 0.01 * k, "train": 0.9 - 0.01 * k}
            for s in ("fair", "random") for k in range(3)]  # fmt: skip
    table = runs_table(rows, by="split", values=["test", "train"])
    assert list(table["split"]) == ["fair", "random"] and list(table["runs"]) == [3, 3]
    for _, row in table.iterrows():
        mean, low, high = mean_interval([r["test"] for r in rows if r["split"] == row["split"]])
        assert (row["test"], row["test_low"], row["test_high"]) == pytest.approx((mean, low, high))
    assert runs_table(pd.DataFrame(rows), by=["split"], values=["test"])["test"].tolist() == pytest.approx(table["test"].tolist())


def test_errors_name_the_parameter():
    with pytest.raises(ConfigError, match="values="):
        mean_interval([])
    with pytest.raises(ConfigError, match="confidence=1.5"):
        mean_interval([0.1, 0.2], confidence=1.5)
    with pytest.raises(ConfigError, match="by=kind"):
        runs_table([{"split": "fair", "test": 0.5}], by="kind", values=["test"])
    with pytest.raises(ConfigError, match="values=dev"):
        runs_table([{"split": "fair", "test": 0.5}], by="split", values=["dev"])
