"""The data generators: ``fragments`` (generate, check, compare), ``mqnli``, ``monotonicity`` (generate, check), ``monli-generate``."""

from __future__ import annotations

import os
import sys

import click

from interp.cli import options as o
from interp.cli.base import main
from interp.core.errors import ConfigError
from interp.tasks.fragments.data import FRAGMENTS, LOGIC


@main.group()
def fragments() -> None:
    """The semantic fragments (Richardson et al. 2020): generate one, check its labels in finite models, compare it with the released one."""


@fragments.command("generate")
@click.option("--fragment", type=click.Choice(["monotonicity", *LOGIC]), default="monotonicity", show_default=True,
              help="monotonicity (Figure 8's grammar, --setting) or a logic fragment (§3's templates, with its causal model).")
@click.option("--setting", type=click.Choice(["simple", "hard"]), default=None, help="monotonicity only: simple (one relative clause, 5 determiners; the default) or hard (up to three, all 14 kinds of determiner).")
@click.option("--n-train", type=int, default=3000, show_default=True, help="Training pairs (labels balanced 1:1:1).")
@click.option("--n-dev", type=int, default=1000, show_default=True)
@click.option("--n-test", type=int, default=1000, show_default=True, help="Test pairs (a logic fragment's test names are disjoint from training's).")
@click.option("--depth", type=int, default=None, help="monotonicity only: longest walk of substitutions [default: simple 2, hard 3].")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--out", required=True, type=click.Path(dir_okay=False), help="JSONL file to write (statistics go to <out stem>.stats.json); read it with --task monotonicity-fragment (or logic-fragment) --data-file.")
@click.option("--overwrite", is_flag=True, help="Replace an existing --out.")
def fragments_generate(fragment, setting, n_train, n_dev, n_test, depth, seed, out, overwrite):
    """Generate labelled pairs of a fragment (seeded): the monotonicity grammar, or a logic fragment's templates, each label checked in finite models."""
    if fragment != "monotonicity":
        from interp.tasks.fragments.logic.generate import LogicConfig, generate_logic_fragment

        if setting is not None or depth is not None:
            raise ConfigError(f"--{'setting' if setting is not None else 'depth'} is for --fragment monotonicity only")
        config = LogicConfig(fragment=fragment, n_train=n_train, n_dev=n_dev, n_test=n_test, seed=seed)
        stats, done = generate_logic_fragment(config, out, overwrite=overwrite), " (every label confirmed in finite models)"
    else:
        from interp.tasks.fragments.monotonicity.generate import GenerateConfig, generate_fragment

        config = GenerateConfig(setting=setting or "simple", n_train=n_train, n_dev=n_dev, n_test=n_test, seed=seed, depth=depth)
        stats, done = generate_fragment(config, out, overwrite=overwrite), ""
    for split in ("train", "dev", "test"):
        if split in stats:
            s = stats[split]
            lexical = f"; lexical {s['lexical']} {s['lexical_polarity_direction']}" if "lexical" in s else ""
            click.echo(f"{split:6} {s['pairs']:6} pairs from {s['premises']} premises; labels {s['labels']}{lexical}")
    click.echo(f"wrote {out}{done}")


@fragments.command("check")
@click.argument("data_file", type=click.Path(dir_okay=False))
@click.option("--models", "per_size", type=int, default=1000, show_default=True, help="monotonicity: sampled models per universe size (1 to 10), besides the exhaustive ones (a logic fragment's models are all searched).")
@click.option("--seed", type=int, default=0, show_default=True)
def fragments_check(data_file, per_size, seed):
    """Check every label of a generated file in finite models; exit 1 if a model refutes one."""
    from interp.tasks.fragments.files import check_fragment_file

    result = check_fragment_file(data_file, per_size, seed)
    for key, c in result["counts"].items():
        click.echo(f"{key:28} confirmed {c['confirmed']:6}  unconfirmed {c['unconfirmed']:4}  refuted {c['refuted']:4}")
    if result["unconfirmed"]:
        click.echo(f"unconfirmed (no model of the kind the label needs was found): {', '.join(result['unconfirmed'][:20])}")
    if result["refuted"]:
        more = f" and {len(result['refuted']) - 50} more" if len(result["refuted"]) > 50 else ""
        click.echo(f"refuted: {', '.join(result['refuted'][:50])}{more}", err=True)
        sys.exit(1)


@fragments.command("compare")
@click.argument("data_file", type=click.Path(dir_okay=False))
@click.option("--fragment", type=click.Choice(list(FRAGMENTS)), default=None, help="The released fragment [default: the file's: its logic fragment, or monotonicity_SETTING].")
@click.option("--splits", default="train,dev,test", show_default=True, help="Splits of both to compare.")
@o.data(task=False)
def fragments_compare(data_file, fragment, splits, data):
    """Set a generated file beside the released fragment: label balance, determiners, sentence length, vocabulary overlap."""
    from interp.tasks.fragments.files import compare_with_released

    click.echo(compare_with_released(data_file, fragment, o.listed(splits, "--splits"), **data))


@main.command()
@click.option("--out", required=True, type=click.Path(dir_okay=False), help="JSONL file to write (stats go to <out stem>.stats.json).")
@click.option("--n-train", type=int, default=5000, show_default=True, help="Training examples.")
@click.option("--n-test", type=int, default=1000, show_default=True, help="Test examples.")
@click.option("--n-dev", type=int, default=0, show_default=True, help="Development examples, drawn like the test ones (no pair in both).")
@click.option("--split", default="fair", show_default=True, help="fair (Algorithm 3 at --ratio; test on the rest), random (a pool as large; test on the rest) or iid (train and test from the whole space).")
@click.option("--ratio", type=float, default=0.0, show_default=True, help="Algorithm 3's ratio: 0 the hardest fair split, 1 the whole space.")
@click.option("--vocab-size", type=int, default=100, show_default=True, help="Artificial words per open class.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--overwrite", is_flag=True, help="Replace an existing --out.")
def mqnli(out, n_train, n_test, n_dev, split, ratio, vocab_size, seed, overwrite):
    """Generate MQNLI pairs labelled by the natural-logic tree, with a fair, random or iid train/test (and dev) split."""
    from interp.tasks.mqnli.generate import MQNLIConfig, format_stats, generate_mqnli

    config = MQNLIConfig(n_train=n_train, n_test=n_test, n_dev=n_dev, split=split, ratio=ratio, vocab_size=vocab_size, seed=seed)
    stats = generate_mqnli(config, out, overwrite=overwrite)
    click.echo(format_stats(stats))
    click.echo(f"wrote {out}")


@main.group()
def monotonicity() -> None:
    """Systematicity of monotonicity (Yanaka et al. 2020): generate a protocol's train and test sets, check their labels."""


@monotonicity.command("generate")
@click.option("--protocol", type=click.Choice(["predicate", "quantifier", "productivity", "localism"]), required=True, help="predicate / quantifier replacements' systematicity, productivity or localism (§2.2).")
@click.option("--step", type=int, default=1, show_default=True, help="The protocol's step i (1-3); for localism the training depth d (3-5).")
@click.option("--n-train", type=int, default=6000, show_default=True, help="Training pairs (split evenly over the protocol's training components).")
@click.option("--n-test", type=int, default=1000, show_default=True, help="Pairs per test set.")
@click.option("--quantifier", default="some", show_default=True, help="predicate: the quantifier q seen with every replacement.")
@click.option("--replacement", default="hyponym", show_default=True, help="predicate: the replacement r seen with every quantifier.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--out", required=True, type=click.Path(dir_okay=False), help="JSONL to write (statistics beside the paper's Table 1 go to <out stem>.stats.json).")
@click.option("--overwrite", is_flag=True, help="Replace an existing --out.")
def monotonicity_generate(protocol, step, n_train, n_test, quantifier, replacement, seed, out, overwrite):
    """Pairs with depth, quantifiers, replacement, position and polarity, labelled by polarity and replacement direction."""
    from interp.tasks.systematicity.protocols import ProtocolConfig, write_protocol

    config = ProtocolConfig(protocol=protocol, step=step, n_train=n_train, n_test=n_test, quantifier=quantifier, replacement=replacement, seed=seed)
    stats = write_protocol(config, out, overwrite=overwrite)
    for split, s in stats["splits"].items():
        click.echo(f"{split:17} {s['pairs']:6} pairs  labels {s['labels']}  polarity {s['polarity']}  depths {s['depths']}")
    for depth, s in stats["length_by_depth"].items():
        paper = f"{s['paper']:.1f}" if s["paper"] else "-"
        click.echo(f"depth {depth}: mean sentence length {s['mean_words']:.1f} words (paper, Table 1: {paper})")
    click.echo(f"wrote {out}")


@monotonicity.command("check")
@click.argument("data_file", type=click.Path(dir_okay=False))
@click.option("--models", "per_size", type=int, default=500, show_default=True, help="Sampled models per universe size (1 to 10).")
def monotonicity_check(data_file, per_size):
    """Check every label of a generated file in finite models; exit 1 if a model refutes one."""
    from interp.tasks.systematicity.semantics import check_file

    result = check_file(data_file, per_size)
    for key, c in result["counts"].items():
        click.echo(f"{key:24} confirmed {c['confirmed']:6}  unconfirmed {c['unconfirmed']:4}  refuted {c['refuted']:4}")
    if result["refuted"]:
        click.echo(f"refuted: {', '.join(result['refuted'][:20])}", err=True)
        sys.exit(1)


@main.command("monli-generate")
@click.option("--out", required=True, type=click.Path(dir_okay=False), help="MoNLI-format JSONL to write (statistics and WordNet's agreement with MoNLI go to <out stem>.stats.json); read it with --task monli --data-file.")
@click.option("--wordnet-dir", default=None, type=click.Path(file_okay=False), help="WordNet 3.0 database (default: $INTERP_WORDNET_DIR, else /usr/share/wordnet from Debian's wordnet-base).")
@click.option("--corpus", "corpus_splits", default="pmonli,nmonli_train", show_default=True, help="MoNLI splits whose premises and marked nouns are substituted (negated ones give NMoNLI-style pairs).")
@click.option("--per-sentence", type=int, default=2, show_default=True, help="Hypernyms, and as many hyponyms, substituted per sentence.")
@click.option("--max-depth", type=int, default=2, show_default=True, help="Most WordNet steps between the two words.")
@click.option("--min-count", type=int, default=1, show_default=True, help="Rare-lemma filter: least uses in WordNet's sense-tagged corpus (cntlist).")
@click.option("--new-words-only", is_flag=True, help="Only substitutes that are none of MoNLI's substituted words.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--overwrite", is_flag=True, help="Replace an existing --out.")
@o.data(task=False)
def monli_generate(out, wordnet_dir, corpus_splits, per_sentence, max_depth, min_count, new_words_only, seed, overwrite, data):
    """MoNLI-style pairs by WordNet hypernym / hyponym substitution (Geiger et al. 2020, §3), lexrel and label through INFER."""
    from interp.tasks.monli.generate import MonliGenerateConfig, generate_monli

    config = MonliGenerateConfig(per_sentence=per_sentence, max_depth=max_depth, min_count=min_count, new_words_only=new_words_only, seed=seed,
                                 corpus=o.listed(corpus_splits, "--corpus"), **data, wordnet_dir=wordnet_dir)
    stats = generate_monli(config, out, overwrite=overwrite)
    agreement = stats["wordnet_agreement"]
    click.echo(f"{stats['pairs']} pairs from {stats['sentences']} sentences ({stats['negated']} negated); labels {stats['labels']}; "
               f"{stats['substitutes']} substitute words, {stats['new_words']} not in MoNLI")
    click.echo(f"WordNet vs MoNLI's lexrel: {agreement['both_in_wordnet']} of {agreement['pairs']} word pairs have both words in WordNet, "
               f"{agreement['related_by_wordnet']} related there; agreement {100 * agreement['agreement_when_related']:.1f}% of those "
               f"({100 * agreement['agreement_of_both']:.1f}% of all with both words); same distance {100 * agreement['same_distance_when_agreeing']:.1f}%; "
               f"null: {100 * agreement['null_related_at_random']:.1f}% of randomly re-paired words are related at all")
    for d in agreement["disagreements"][:10]:
        click.echo(f"  disagrees: {d['w_p']} / {d['w_h']}: MoNLI {d['monli']}, WordNet {d['wordnet']} ({d['example']})")
    click.echo(f"wrote {out} and {os.path.splitext(out)[0]}.stats.json")

