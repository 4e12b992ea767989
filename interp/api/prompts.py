"""A causal LM asked for a label word: the prompt before each pair, zero-shot or few-shot, plain or in the model's chat
format.

Usage::

    import interp
    from interp.api.prompts import make_prompt
    task = interp.load_task("monli")
    prompt = make_prompt(task, label_words={"entailment": " Yes", "neutral": " No"}, shots=4, seed=0)
    prompt.template          # k solved training pairs, then the query's slots: a template interp.load_model(template=) takes
    prompt.demonstrations    # the ids of the examples shown, which scoring leaves out

Few-shot: ``shots`` examples drawn (seeded) from the task's training splits, each rendered by the template and followed
by its label's word, stand before the query (in-context learning; Brown et al. 2020, *Language models are few-shot
learners*, §2). With ``chat`` the pairs become the turns of the tokenizer's own chat template (a user turn per pair, an
assistant turn per answer, the query's user turn last, then the assistant's opening): the label word follows that
opening, so it is written without a leading space (``" Yes"`` is read as ``"Yes"``). The prompt's text is a
:class:`~interp.hooks.templates.Template`, so every command reads, records and checks it as any template.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Mapping

from interp.core.checks import check_int
from interp.core.errors import ConfigError, named
from interp.hooks.templates import DEFAULT_TEMPLATE, SLOTS, Template, parse_label_words


@dataclass(frozen=True)
class Prompt:
    """The text before and around a pair (:attr:`template`, with ``{premise}`` and ``{hypothesis}`` once each) and how
    it was made: ``shots`` demonstrations drawn with ``seed`` (their example ids in :attr:`demonstrations`), in the chat
    format or not, and the label words it asks for (:attr:`label_words`, as the model must be read with them)."""

    template: str
    label_words: dict[str, str]
    shots: int = 0
    seed: int = 0
    chat: bool = False
    demonstrations: tuple[str, ...] = ()

    def record(self) -> dict:
        """What a file keeps of it (JSON)."""
        return {**asdict(self), "demonstrations": list(self.demonstrations)}


def make_prompt(task, *, label_words: Mapping[str, str] | str, template: str | None = None, shots: int = 0, seed: int = 0,
                tokenizer=None, chat: bool = False) -> Prompt:  # fmt: skip
    """The prompt for ``task``'s pairs: ``template`` (default :data:`~interp.hooks.templates.DEFAULT_TEMPLATE`) after
    ``shots`` seeded demonstrations from the task's training splits, each answered by its label's word; with ``chat``,
    as turns of ``tokenizer``'s chat template.

    Raises:
        ConfigError: naming ``shots=`` (negative, or more than the training splits hold), ``label_words=`` (a task label
            without a word), ``template=`` (as :class:`~interp.hooks.templates.Template`), or ``chat=`` (no tokenizer,
            or one without a chat template).
    """
    check_int(shots, "shots", least=0)
    check_int(seed, "seed", least=0)
    words = parse_label_words(label_words)
    missing = [label for label in task.labels if label not in words]
    if missing:
        raise ConfigError(f"{named('label_words', repr(words))}: no word for the task's label {missing[0]!r}; a prompt asks for one word per label")
    query = Template(template if template is not None else DEFAULT_TEMPLATE)
    shown = task.examples(task.training_splits, n=shots, seed=seed) if shots else []
    if shots and len(shown) < shots:
        raise ConfigError(f"{named('shots', shots)}: the training splits ({', '.join(task.training_splits)}) hold {len(shown)} examples")
    if not chat:
        solved = "".join(_solved(query, e, words[e.label]) + "\n\n" for e in shown)
        return Prompt(solved + query.text, words, shots, seed, False, tuple(e.id for e in shown))
    if tokenizer is None or not getattr(tokenizer, "chat_template", None):
        raise ConfigError(f"{named('chat', True)}: the model's tokenizer has no chat template; read it with chat=False")
    messages = []
    for e in shown:
        messages += [{"role": "user", "content": _solved(query, e, None)}, {"role": "assistant", "content": words[e.label].strip()}]
    messages.append({"role": "user", "content": query.text})
    text = render_chat(tokenizer, messages)
    if any(text.count(slot) != 1 for slot in SLOTS):
        raise ConfigError(f"{named('chat', True)}: the model's chat template does not keep the query's slots as written")
    bos = getattr(tokenizer, "bos_token", None)
    if bos and text.startswith(bos) and tokenizer("x")["input_ids"][:1] == [tokenizer.bos_token_id]:
        text = text[len(bos) :]  # the tokenizer adds its own beginning-of-text token: not twice
    return Prompt(text, {label: word.strip() for label, word in words.items()}, shots, seed, True, tuple(e.id for e in shown))


#: Seconds a chat template may take to render (a template is data from the checkpoint: three nested loops of 99,999 each
#: stay under Jinja's sandbox range limit and would run for ever).
CHAT_SECONDS = 5.0


def render_chat(tokenizer, messages: list[dict]) -> str:
    """``tokenizer``'s chat template rendered on ``messages`` (Jinja's sandbox, through transformers), within
    :data:`CHAT_SECONDS` of wall time where this is the main thread of a Unix process.

    Raises:
        ConfigError: naming ``chat=``: the template ran past the time limit, tried what the sandbox forbids, called
            ``raise_exception``, or failed otherwise; one line, the template's own text left out.
    """
    import signal
    import threading

    class _Late(Exception):
        pass

    def late(signum, frame):
        raise _Late

    timed = threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer")
    previous = signal.signal(signal.SIGALRM, late) if timed else None
    try:
        if timed:
            signal.setitimer(signal.ITIMER_REAL, CHAT_SECONDS)
        return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    except _Late:
        raise ConfigError(f"{named('chat', True)}: the model's chat template did not finish within {CHAT_SECONDS:g} s; "
                          "read the model with chat=False or a template of your own") from None  # fmt: skip
    except Exception as exc:  # noqa: BLE001 - the sandbox's SecurityError, raise_exception's TemplateError, any other
        said = " ".join(str(exc).split())[:160]
        raise ConfigError(f"{named('chat', True)}: the model's chat template failed ({type(exc).__name__}: {said}); "
                          "read the model with chat=False") from None  # fmt: skip
    finally:
        if timed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)


def _solved(query: Template, example, word: str | None) -> str:
    """A demonstration: the pair rendered by the query's template, followed by its answer's word where given."""
    text, _, _ = query.render(str(example.premise), str(example.hypothesis))
    return text + (word or "")


def model_tokenizer(spec: str):
    """The tokenizer of the checkpoint ``spec`` names (a packaged decoder's converted folder too), without its weights:
    what a chat prompt is made with before the model loads.

    Raises:
        ModelError: as :func:`interp.models.loading.resolve_model`.
    """
    from transformers import AutoTokenizer

    from interp.models.loading import resolve_model
    from interp.models.quiet import quiet_transformers

    with quiet_transformers():
        return AutoTokenizer.from_pretrained(resolve_model(spec).location)
