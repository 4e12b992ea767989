"""The TransformerLens backend against interp's own: the same vectors and interchange outcomes at every site, and through the commands."""

from __future__ import annotations

import json
import subprocess
import sys

import h5py
import numpy as np
import pytest
import torch
from click.testing import CliRunner

from interp.backends import get_runner
from interp.cli import main
from interp.hooks.locations import Location, all_locations, component_locations
from interp.tasks.monli import encode_examples, load_monli
from ties import assert_labels_agree

from families import family_model, save_family_model

pytest.importorskip("transformer_lens")


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def _every_site(model) -> list[Location]:
    layers, heads = model.config.num_hidden_layers, model.config.num_attention_heads
    return all_locations(layers, ["cls", "w_h"]) + component_locations(layers, ["cls", "w_h"], n_heads=heads) + component_locations(layers, ["w_h"])


@pytest.mark.parametrize("which", ["tiny", "roberta", "embedded"])
def test_every_site_agrees_across_backends(which, wide_classifier_dir, monli_dir, minilm_tokenizer, tmp_path):
    """Vectors within 1e-4 and the same labels (logits within 1e-4) through both backends, at every site of each model."""
    from interp.models.loading import load_classifier

    spec = {"tiny": str(wide_classifier_dir), "embedded": "minilm"}.get(which)
    if which == "roberta":  # TransformerLens's RoBERTa adapter, with its classification head
        spec = str(save_family_model("roberta", tmp_path / "roberta", minilm_tokenizer, seed=4))
    model, tokenizer = load_classifier(spec, labels=("entailment", "neutral"), seed=0)
    encoded = encode_examples(load_monli(monli_dir, ("nmonli_test",))[:12], tokenizer)
    hf, tl = get_runner("hf", model), get_runner("transformer-lens", model, tokenizer)
    sites = _every_site(model)
    if which == "embedded":  # 6 blocks × 12 heads: one block of each kind, and the residual stream at three depths
        sites = [loc for loc in sites if loc.layer in (0, 3) and (loc.head in (-1, 0, 11))]
    moved = 0
    for loc in sites:
        a, b = hf.vectors(encoded, loc), tl.vectors(encoded, loc)
        assert a.shape == b.shape == (12, loc.token_width(model.config)), loc
        assert torch.allclose(a, b, atol=1e-4, rtol=1e-4), (loc, (a - b).abs().max())
        logits_hf = hf.interchange_logits(encoded[:4], a[4:], loc)
        logits_tl = tl.interchange_logits(encoded[:4], b[4:], loc, batch_size=5)
        assert_labels_agree(logits_tl, logits_hf)
        assert torch.allclose(logits_hf, logits_tl, atol=1e-4, rtol=0), (loc, (logits_hf - logits_tl).abs().max())
        moved += bool((logits_hf - logits_hf[:, :1]).abs().amax() > 1e-3)
    assert moved > len(sites) // 3  # the interventions do move the outputs, so agreement could have failed


def test_the_bridge_wraps_a_copy(wide_classifier_dir):
    from interp.models.loading import load_classifier

    model, tokenizer = load_classifier(str(wide_classifier_dir))
    before = {k: v.clone() for k, v in model.state_dict().items()}
    implementation = model.config._attn_implementation
    backend = get_runner("transformer-lens", model, tokenizer)
    assert "blocks.1.attn.hook_z" in backend.bridge.hook_dict
    assert model.config._attn_implementation == implementation
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())
    from transformer_lens.factories.architecture_adapter_factory import SUPPORTED_ARCHITECTURES, ArchitectureAdapterFactory

    assert "BertForSequenceClassification" in SUPPORTED_ARCHITECTURES
    assert "BertForSequenceClassification" in ArchitectureAdapterFactory._adapters


def test_cache_probe_intervene_and_cliques_through_both_backends(wide_classifier_dir, monli_dir, tmp_path):
    """The commands at component sites: the caches agree, the probes and interventions agree, the cliques are the same."""
    common = ["--model", wide_classifier_dir, "--data-dir", monli_dir, "--quiet"]
    sites = "blocks.0.attn.hook_z.h1@w_h,blocks.1.hook_mlp_out@cls,blocks.0.hook_attn_out@w_h"
    files = {}
    for backend in ("hf", "transformer-lens"):
        where = tmp_path / backend
        cache = where / "cache.h5"
        result = run("cache", *common, "--splits", "nmonli_test", "--components", "--backend", backend, "--out", cache)
        assert result.exit_code == 0, result.output
        result = run("probe", "--cache", cache, "--out", where / "probes", "--locations", "heads@w_h,blocks.1.hook_mlp_out@cls",
                     "--targets", "lexrel", "--probes", "linear", "--probe-seeds", "1", "--folds", "3", "--quiet")  # fmt: skip
        assert result.exit_code == 0, result.output
        out = where / "iv.h5"
        result = run("intervene", *common, "--splits", "nmonli_test", "--max-examples", "30", "--locations", sites, "--backend", backend, "--out", out)
        assert result.exit_code == 0, result.output
        result = run("cliques", "--interventions", out, "--out", where / "cliques", "--location", "blocks.0.attn.hook_z.h1@w_h", "--alphas", "1-3")
        assert result.exit_code == 0, result.output
        files[backend] = where
    with h5py.File(files["hf"] / "cache.h5") as a, h5py.File(files["transformer-lens"] / "cache.h5") as b:
        names = [n for n in json.loads(json.dumps(list(a.attrs["locations"])))]
        assert "blocks.1.attn.hook_z@w_h" in names and "blocks.1.hook_resid_mid@cls" in names
        for name in names:
            assert np.allclose(a[name][:], b[name][:], atol=1e-4), name
        assert b.attrs["backend"] == "transformer-lens" and "backend" not in a.attrs
    probes = {k: json.loads((v / "probes" / "probes.json").read_text())["rows"] for k, v in files.items()}
    assert [r["location"] for r in probes["hf"]] == [r["location"] for r in probes["transformer-lens"]]
    assert {r["location"] for r in probes["hf"]} == {"blocks.0.attn.hook_z.h0@w_h", "blocks.0.attn.hook_z.h1@w_h",
                                                     "blocks.1.attn.hook_z.h0@w_h", "blocks.1.attn.hook_z.h1@w_h",
                                                     "blocks.1.hook_mlp_out@cls"}  # fmt: skip
    for r, s in zip(probes["hf"], probes["transformer-lens"]):
        assert abs(r["task_acc_mean"] - s["task_acc_mean"]) <= 0.05, r["location"]
    with h5py.File(files["hf"] / "iv.h5") as a, h5py.File(files["transformer-lens"] / "iv.h5") as b:
        for site in sites.split(","):
            key = f"lexrel/{site}"
            assert np.array_equal(a[key]["model_pred"][:], b[key]["model_pred"][:]), site
    cliques = {k: json.loads((v / "cliques" / "cliques.json").read_text()) for k, v in files.items()}
    assert cliques["hf"]["cliques"] == cliques["transformer-lens"]["cliques"]
    assert cliques["hf"]["graph"] == cliques["transformer-lens"]["graph"]


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--locations", "blocks.0.attn.hook_z.h2@w_h"], "head 2 is out of range for a model with 2 heads"),
        (["--locations", "blocks.0.hook_mlp_out@w_h", "--backend", "pytorch"], "--backend must be one of hf, transformer-lens"),
        (["--locations", "blocks.3.hook_mlp_out@w_h"], "layer 3 is out of range"),
    ],
)
def test_bad_component_input_is_one_line_and_exit_2(extra, message, wide_classifier_dir, monli_dir, tmp_path):
    out = tmp_path / "iv.h5"
    result = run("intervene", "--model", wide_classifier_dir, "--data-dir", monli_dir, "--out", out, "--quiet", *extra)
    assert result.exit_code == 2
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert not out.exists()


def test_a_missing_transformer_lens_is_one_line_and_exit_2(wide_classifier_dir, monli_dir, tmp_path):
    """In a process where transformer_lens cannot be imported, --backend transformer-lens says how to install it."""
    code = (
        "import sys; sys.modules['transformer_lens'] = None\n"
        "import importlib.util; importlib.util.find_spec = (lambda f: lambda name, *a: None if name == 'transformer_lens' else f(name, *a))(importlib.util.find_spec)\n"
        "from interp.cli import main; main()\n"
    )
    args = ["intervene", "--model", str(wide_classifier_dir), "--data-dir", str(monli_dir), "--out", str(tmp_path / "x.h5"),
            "--locations", "blocks.0.hook_mlp_out@w_h", "--backend", "transformer-lens", "--quiet"]  # fmt: skip
    result = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True)
    assert result.returncode == 2, result.stderr
    assert "transformer-lens package is not installed; pip install 'interp[tl]'" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_the_engine_import_path_is_free_of_transformer_lens():
    code = "import sys, interp.engine, interp.backends, interp.jobs.intervene, interp.jobs.cache, interp.cli; print('transformer_lens' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "False"


@pytest.mark.parametrize("family", ["distilbert", "deberta-v2"])
def test_a_model_the_bridge_adapter_lacks_is_one_line_and_exit_2(family, minilm_tokenizer, monli_dir, tmp_path):
    """TransformerLens's bridge has encoder adapters for BERT and RoBERTa only: another family through --backend
    transformer-lens is refused by name, naming the backend that runs it; the default backend runs it."""
    path = save_family_model(family, tmp_path / family, minilm_tokenizer)
    out = tmp_path / "iv.h5"
    args = ["intervene", "--model", path, "--data-dir", monli_dir, "--out", out, "--quiet", "--locations", "blocks.0.attn.hook_z.h1@w_h",
            "--max-examples", "12"]  # fmt: skip
    result = run(*args, "--backend", "transformer-lens")
    assert result.exit_code == 2, result.output
    assert f"has no adapter for {type(family_model(family)).__name__} (it has BertForSequenceClassification and " in result.stderr
    assert "the default backend `hf` runs every family" in result.stderr and "--backend" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and not out.exists()
    assert run(*args).exit_code == 0 and out.is_file()


# -- every public call of IntervenableModel through both runners -------------------------------------------------------

SITE, COMPONENT = "blocks.0.hook_resid_post@w_h", "blocks.1.attn.hook_z.h1@w_p"


def _call(lab, examples, name: str):
    """What the public call ``name`` of ``lab`` returns on ``examples``, as tensors and numbers to compare."""
    import interp

    few = examples[:6]
    if name == "bind":
        return [e.id for e in lab.bind(examples)]
    if name == "encode":
        return [e.input_ids for e in lab.encode(examples)]
    if name in ("location", "locations"):
        return [str(loc) for loc in lab.locations("blocks.1.hook_resid_post", ["lexrel"])] + [str(lab.location(SITE))]
    if name == "predict":
        return lab.predict(examples)
    if name in ("vectors", "source_vectors"):
        return [getattr(lab, name)(examples, loc) for loc in (SITE, COMPONENT)]
    if name == "width":
        return [lab.width(examples, loc) for loc in (SITE, COMPONENT)]
    if name == "run_with_cache":
        return list(lab.run_with_cache(examples, [lab.location(SITE), lab.location(COMPONENT)]).values())
    if name == "gradients":
        found = lab.gradients(few, [SITE, COMPONENT])
        return [t for g in found.values() for t in (g.activations, g.gradients)]
    if name == "precision":
        with lab.precision("fp32"):
            return lab.predict(few)
    if name == "interchange_logits":
        return lab.interchange_logits(few, examples, lab.location(COMPONENT))
    if name == "interchange":
        rotated = interp.RotatedSubspace(lab.width(examples, SITE), k=8, seed=1)
        return [lab.interchange(examples, examples, SITE).logits, lab.interchange(few, examples, COMPONENT).logits,
                lab.interchange(few, few, SITE, naive=True).logits, lab.interchange(examples, few, SITE, intervention=rotated).logits,
                lab.interchange(few, few, [SITE, COMPONENT]).summary_frame()["iia"].to_numpy()]  # fmt: skip
    if name == "ablate":
        return [lab.ablate(few, SITE), lab.ablate(few, SITE, kind="mean", reference=examples)]
    if name == "steer":
        return lab.steer(few, SITE, torch.linspace(-1, 1, lab.width(few, SITE)), scale=2.0)
    if name == "interchange_jointly":  # the write plan through the runner: the bridge's hook points on the bridge
        res = lab.interchange_jointly(few, {"lexrel": examples, "negated": examples}, {"lexrel": SITE, "negated": COMPONENT}, per_base=2)
        return [res.logits, torch.tensor(res.counterfactual)]
    if name == "train_das_jointly":  # training and scoring through the runner's write plan, its weights frozen by the runner
        found = lab.train_das_jointly(examples, {"lexrel": SITE, "negated": COMPONENT}, k=4, per_base=2, epochs=1, batch_size=8, test_share=0.5)
        return [torch.tensor(found.losses), found.trained.logits, found.vanilla.logits]
    if name in ("path_patch", "path_patch_sweep"):
        sweep = lab.path_patch_sweep(few[:3], few[:3], COMPONENT)[["direct", "direct_low", "total"]].to_numpy(dtype=float)
        return [lab.path_patch(few, few, COMPONENT), torch.tensor(sweep)]
    if name in ("split_accuracies", "evaluate"):
        frame = lab.evaluate(examples)
        return frame[["examples", "accuracy", "accuracy_low", "accuracy_high"]].to_numpy(dtype=float)
    if name in ("train_das", "score_das"):
        das = lab.train_das(examples, SITE, "lexrel", k=8, n_pairs=48, epochs=1, batch_size=16, test_pairs=24, warn_unlearned=False)
        scored = lab.score_das(examples, das, SITE, "lexrel", test_pairs=24)
        return [torch.tensor(das.losses), das.intervention.matrix.detach(), float(das.iia), float(das.untrained_iia), scored["intervention"]["iia"]]
    if name == "screen":  # two locations, one confirmed as the top and one drawn: every figure estimated and exact
        rows = sorted(lab.screen(few, few, f"{SITE},{COMPONENT}", variable="lexrel", confirm=1, qk_fix=False, graddrop=False).rows,
                      key=lambda r: r["location"])  # AtP*'s fixes: the hf backend's only (tests/test_atp_star.py)
        return [[r[key] for key in ("estimated_iia", "estimated_iia_low", "estimated_stays", "exact_iia")] for r in rows]
    raise AssertionError(f"no call {name!r}")


PUBLIC = ("bind", "encode", "location", "locations", "predict", "vectors", "source_vectors", "width", "run_with_cache", "gradients",
          "precision", "interchange_logits", "interchange", "split_accuracies", "evaluate", "train_das", "score_das", "screen", "ablate",
          "steer", "interchange_jointly", "train_das_jointly", "path_patch", "path_patch_sweep")


def test_the_parametrization_covers_every_public_call():
    """The null of the next test's coverage: a public call added to IntervenableModel without a row here fails."""
    from interp.api.intervenable import IntervenableModel

    public = {name for name in dir(IntervenableModel) if not name.startswith("_") and callable(getattr(IntervenableModel, name))}
    assert public - {"from_specs"} == set(PUBLIC)


@pytest.fixture(scope="module")
def both(wide_classifier_dir, monli_dir):
    import interp

    task = interp.load_task("monli", data_dir=str(monli_dir))
    labs = {name: interp.IntervenableModel(str(wide_classifier_dir), task, backend=name) for name in ("hf", "transformer-lens")}
    return labs, task.examples(("pmonli", "nmonli_test"), per_split=12, seed=5)


def test_every_runner_has_the_protocols_attributes(both):
    """What a job reads of a runner is on every runner, its reference included: ``name``, ``atp_star`` and
    ``compile_stats`` (what compiling did: the hf runner's record, ``None`` for runners that never compile)."""
    from interp.backends.base import Runner
    from interp.engine.compiled import CompileStats

    labs, _ = both
    runners = [runner for lab in labs.values() for runner in (lab.runner, lab.runner.reference())]
    for runner in runners:
        assert all(hasattr(runner, name) for name in Runner.__annotations__), (runner.name, Runner.__annotations__)
    stats = {runner.name: runner.compile_stats for runner in runners}
    assert isinstance(stats["hf"], CompileStats) and {k for k, v in stats.items() if v is None} == set(stats) - {"hf"}


@pytest.mark.filterwarnings("ignore::interp.InterpWarning")
def test_joint_runs_joint_das_and_path_patching_run_on_the_bridge_when_it_is_chosen(both, monkeypatch):
    """``backend="transformer-lens"``: a joint run, joint DAS and a path patch go through the bridge's own hook points
    (counted), not the Hugging Face model, and equal the hf runner's within 1e-4; a receiver, which has no bridge hook,
    is refused by name."""
    import interp
    from interp.backends.tl_bridge import BridgeRunner

    labs, examples = both
    few, forward, calls = examples[:6], BridgeRunner._forward, []
    monkeypatch.setattr(BridgeRunner, "_forward", lambda self, *a, **k: calls.append(len(k.get("hooks", ()))) or forward(self, *a, **k))
    joint = {k: labs[k].interchange_jointly(few, {"lexrel": examples, "negated": examples}, {"lexrel": SITE, "negated": COMPONENT}, per_base=2)
             for k in ("hf", "transformer-lens")}  # fmt: skip
    assert calls and max(calls) == 2  # the bridge ran the rows, both sites hooked
    assert torch.allclose(joint["hf"].logits, joint["transformer-lens"].logits, atol=1e-4)
    calls.clear()
    sender = "blocks.0.attn.hook_z.h1@cls"  # a head at the read token: its path to the readout is the residual stream there
    path = {k: labs[k].path_patch(few, few, sender) for k in ("hf", "transformer-lens")}
    held = 3  # block 0's MLP output, block 1's attention and MLP outputs
    assert calls and max(calls) == 1 + held and torch.allclose(path["hf"], path["transformer-lens"], atol=1e-4)
    assert (path["hf"] - labs["hf"].predict(few)[:, None]).abs().amax() > 1e-4  # the path moves the answer
    assert (path["hf"] - labs["hf"].interchange_logits(few, few, labs["hf"].location(sender))).abs().amax() > 1e-4  # held: not the total
    calls.clear()
    labs["transformer-lens"].train_das_jointly(examples, {"lexrel": SITE, "negated": COMPONENT}, k=4, per_base=2, epochs=1, batch_size=8, test_share=0.5)
    assert calls and max(calls) == 2  # trained and scored through the bridge's hooks
    with pytest.raises(interp.ConfigError, match="no hook on the transformer-lens bridge.*backend=.?hf"):
        labs["transformer-lens"].path_patch(few, few, "blocks.0.attn.hook_z.h1@w_p", receiver="blocks.1.attn.hook_k.h0@w_h")


def _flat(found) -> list:
    if isinstance(found, (list, tuple)):
        return [x for item in found for x in _flat(item)]
    return [found.float() if isinstance(found, torch.Tensor) else torch.tensor(np.array(found, dtype=float)).float()]


@pytest.mark.filterwarnings("ignore::interp.InterpWarning")
@pytest.mark.parametrize("name", PUBLIC)
def test_every_public_call_agrees_across_runners(name, both):
    """Each public call of IntervenableModel through the Hugging Face runner and the TransformerLens bridge: the same
    numbers (logits, vectors and gradients within 1e-4, DAS's losses and rotation within 1e-3), with the runner named."""
    labs, examples = both
    hf, tl = (_flat(_call(labs[k], examples, name)) if name not in ("bind", "encode", "location", "locations")
              else _call(labs[k], examples, name) for k in ("hf", "transformer-lens"))  # fmt: skip
    assert type(labs["transformer-lens"].runner).__name__ == "BridgeRunner" and type(labs["hf"].runner).__name__ == "EncoderRunner"
    if name in ("bind", "encode", "location", "locations"):
        assert hf == tl
        return
    tolerance = 1e-3 if name in ("train_das", "score_das") else 1e-4
    assert len(hf) == len(tl)
    for a, b in zip(hf, tl):
        assert a.shape == b.shape and torch.allclose(a, b, atol=tolerance, rtol=tolerance), (name, (a - b).abs().max())
    assert any(float(a.abs().max()) > 1e-3 for a in hf)  # the numbers are not all zero: agreement could have failed
