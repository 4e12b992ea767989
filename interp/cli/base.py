"""The `interp` group: one line on stderr and exit code 2 for every error the library or click raises, warnings as
one line each, and the one table that writes the library's parameter names as this command line's flags."""

from __future__ import annotations

import warnings

import click

from interp.core.errors import ConfigError, InterpError, InterpWarning

#: The one table from a library parameter, as the library's errors name it, to this CLI's flag.
#: A parameter not listed is its name with dashes (``batch_size`` is ``--batch-size``); a
#: switch the message asks to turn on (``overwrite=True``) is its flag alone.
FLAGS: dict[str | tuple[str, str], str] = {
    ("verify_checksums", "False"): "--skip-checksums",
    ("compile", "False"): "--no-compile",
    ("prefix_reuse", "False"): "--no-prefix-reuse",
    "variables": "--variable",
    "subspaces": "--subspace",
    "kinds": "--kind",
    "ks": "--k",
    "lrs": "--lr",
    "formats": "--format",
    "per_size": "--models",
    "n_pairs": "--train-pairs",  # IntervenableModel.train_das's count, which `interp das` runs
    "reference": "--reference-splits",  # ablate's and steer's reference set
}


def flag(param: str, value: str) -> str:
    """How the CLI writes a parameter a library message names (see :mod:`interp.core.errors`)."""
    if (param, value) in FLAGS:
        return FLAGS[param, value]
    name = FLAGS.get(param, "--" + param.replace("_", "-"))
    return name if value in ("", "True") else f"{name} {value}"


def _shown(previous):
    """``warnings.showwarning`` that prints the library's warnings as one line each on stderr, each text once per
    command (a check repeated for every scale or unit says the same thing once), and hands others to ``previous``."""
    said: set[str] = set()

    def show(message, category, filename, lineno, file=None, line=None) -> None:
        if issubclass(category, InterpWarning):
            text = f"interp: warning: {message.render(flag) if isinstance(message, InterpWarning) else message}"
            if text not in said:
                said.add(text)
                click.echo(text, err=True)
        else:
            previous(message, category, filename, lineno, file, line)

    return show


class _Group(click.Group):
    def invoke(self, ctx: click.Context):
        try:
            bad = next((a for a in ctx.args if "\x00" in a), None)
            if bad is not None:  # no path or name can hold one, and the OS refuses it with a ValueError deep in a command
                raise ConfigError(f"argument {bad!r} holds a NUL character, which no path or name can")
            with warnings.catch_warnings():  # the library's warnings as one line each on stderr
                warnings.simplefilter("always", InterpWarning)
                warnings.showwarning = _shown(warnings.showwarning)
                return super().invoke(ctx)
        except InterpError as exc:
            click.echo(f"interp: error: {exc.render(flag)}", err=True)
            ctx.exit(2)
        except click.UsageError as exc:  # a flag click itself refuses: one line too, naming the (sub)command's help
            names, c = [], exc.ctx
            while c is not None and c.parent is not None:
                names.append(c.info_name)
                c = c.parent
            where = f"; see interp {' '.join(reversed(names))} --help" if names else ""
            click.echo(f"interp: error: {exc.format_message().rstrip('.')}{where}", err=True)
            ctx.exit(2)
        except KeyboardInterrupt:
            click.echo("\ninterp: interrupted; run the same command again to resume", err=True)
            ctx.exit(130)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="interp")
def main() -> None:
    """Probes, interchange interventions, DAS and causal models for NLI models: encoders (BERT, RoBERTa, XLM-R, ELECTRA,
    DistilBERT, DeBERTa-v2, ModernBERT) and decoders (GPT-2, Llama, Qwen, Mistral, Gemma: a classifier read at the last token,
    or a causal LM through label words; smollm2-135m and gemma3-270m from the package registry)."""
