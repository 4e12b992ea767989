"""The logit shift toward the counterfactual: a naive loop over pairs, a planted grid where no label flips but every
logit moves, and through a model's interchange."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner

from interp.analysis.shift import logit_shift
from interp.cli import main
from interp.core.errors import ConfigError

pytestmark = pytest.mark.filterwarnings("ignore::interp.InterpWarning")


def _naive(after, before, counterfactual, own, columns):
    found = []
    for i in range(len(before)):
        for j in range(len(before)):
            c, b = columns[counterfactual[i, j]], columns[own[i]]
            if c != b:
                found.append((after[i, j, c] - after[i, j, b]) - (before[i, c] - before[i, b]))
    return float(np.mean(found))


def test_the_shift_is_the_naive_loops_and_moves_where_no_label_flips():
    rng = np.random.default_rng(0)
    n, labels = 12, 3
    before = rng.normal(size=(n, labels)) + np.array([3.0, 0.0, 0.0])  # every base says label 0, by a wide margin
    own = before.argmax(-1)
    counterfactual = rng.integers(0, labels, size=(n, n))
    after = before[:, None, :].repeat(n, 1)
    toward = 0.5
    rows, cols = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    after[rows, cols, counterfactual] += toward * (counterfactual != own[:, None])  # a push of 0.5 toward each counterfactual
    assert (after.argmax(-1) == own[:, None]).all()  # no label flips: IIA would read the share already agreeing, no more
    columns = np.arange(labels)
    found = logit_shift(after, before, counterfactual, own, columns, n_boot=200)
    assert found == pytest.approx(_naive(after, before, counterfactual, own, columns)) and found == pytest.approx(toward)
    assert found.low <= toward <= found.high
    noisy = after + rng.normal(scale=0.3, size=after.shape)
    again = logit_shift(noisy, before, counterfactual, own, columns, groups=np.arange(n) // 3, unit="pairs of four", n_boot=200)
    assert again == pytest.approx(_naive(noisy, before, counterfactual, own, columns)) and again.low < again < again.high
    assert "4 pairs of four" in again.method
    with pytest.raises(ConfigError, match="square grid"):
        logit_shift(after[:, :5], before, counterfactual, own, columns)


def test_through_the_model_it_is_the_naive_loop_over_the_interchanges_logits(encoder_lab, task):
    examples = task.examples(("pmonli", "nmonli_test"), per_split=6, seed=2)
    res = encoder_lab.interchange(examples, examples, "blocks.1.hook_resid_post@cls")  # the vector the head reads: logits move
    logits = res.logits.double().numpy()
    columns = np.arange(logits.shape[-1])
    expected = _naive(logits, logits[np.arange(12), np.arange(12)], res.causal_pred["output"], res.base_pred, columns)
    assert float(res.logit_shift("output")) == pytest.approx(expected, rel=1e-5, abs=1e-6) and abs(expected) > 1e-3
    with pytest.raises(ConfigError, match="give the bases as the sources"):
        encoder_lab.interchange(examples[:3], examples, "blocks.1.hook_resid_post@cls").logit_shift("output")


def test_the_files_shift_is_the_results_and_the_command_prints_it(encoder_lab, task, wide_classifier_dir, monli_dir, tmp_path):
    """The interventions file's logits give the result's own figure; ``interp intervene`` prints it for every variable and location."""
    from interp.analysis.iia import file_logit_shift
    examples = task.examples(("pmonli", "nmonli_test"), per_split=6, seed=2)
    res = encoder_lab.interchange(examples, examples, "blocks.1.hook_resid_post@cls")
    path = res.save(tmp_path / "iv.h5")
    found, expected = file_logit_shift(path, variable="output"), res.logit_shift("output")
    assert float(found) == pytest.approx(float(expected), abs=1e-5) and abs(float(expected)) > 1e-3
    assert (found.low, found.high) == pytest.approx((expected.low, expected.high), abs=1e-5) and found.method == expected.method
    out = tmp_path / "cli.h5"
    result = CliRunner().invoke(main, [str(a) for a in ("intervene", "--model", wide_classifier_dir, "--data-dir", monli_dir, "--splits", "nmonli_test", "--max-examples", "12",
                 "--locations", "blocks.1.hook_resid_post@w_h", "--out", out, "--quiet")])  # fmt: skip
    assert result.exit_code == 0, result.output
    printed = str(file_logit_shift(out, variable="lexrel"))
    assert "Logit shift toward the counterfactual" in result.output
    assert any(line.startswith("lexrel") and line.rstrip().endswith(printed) for line in result.output.splitlines()), result.output
