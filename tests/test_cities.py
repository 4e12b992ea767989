"""The city-attributes task: its table, its prompts, its causal model on its whole truth table (RAVEL's Cause and
Isolate), the answers a tokenizer reads by their first token, and bad tables refused by file and line."""

from __future__ import annotations

import pytest

import interp
from interp.causal import run_forward, run_interchange
from interp.core.errors import ConfigError, DataError
from interp.tasks.cities import TABLE, city_causal_model, city_examples, city_task, first_token_words, read_cities
from interp.tasks.cities.data import TEMPLATES

from decoders import scratch_tokenizers


def test_the_committed_table_has_the_cities_the_task_promises():
    rows = read_cities()
    assert len(rows) >= 80 and len({r.city for r in rows}) == len(rows)
    assert {r.continent for r in rows} == {"Africa", "Asia", "Europe", "North America", "Oceania", "South America"}
    assert all(len(TEMPLATES[a]) >= 4 for a in ("country", "continent"))
    assert {r.city: r.country for r in rows}["Paris"] == "France" and {r.city: r.continent for r in rows}["Lima"] == "South America"


def test_the_causal_model_on_its_whole_truth_table():
    """Every (city, attribute): the answer is the city's own; an interchange of Country from every other city changes
    the answer of a base asking the country (Cause) to the source's country, and leaves one asking the continent alone
    (Isolate); Continent the other way round."""
    table = read_cities()
    model = city_causal_model(table)
    assert model.values["city"] == tuple(r.city for r in table)
    for base in table:
        for attribute in ("country", "continent"):
            inputs = {"city": base.city, "attribute": attribute}
            assert run_forward(model, inputs)["answer"] == getattr(base, attribute)
            for source in table[::7]:
                src = {"city": source.city, "attribute": "country"}
                for variable, asked in (("Country", "country"), ("Continent", "continent")):
                    moved = run_interchange(model, base=inputs, sources={variable: src})["answer"]
                    expected = getattr(source, asked) if attribute == asked else getattr(base, attribute)
                    assert moved == expected, (base, source, variable, attribute)


def test_the_prompts_split_cities_and_ask_each_attribute_in_every_template():
    table = read_cities()
    train, test = city_examples(("train",), table), city_examples(("test",), table)
    assert len(train) + len(test) == 8 * len(table)
    assert not {e.city for e in train} & {e.city for e in test} and len({e.city for e in test}) == len(table) // 5
    for e in train[:16] + test[:16]:
        assert e.city in e.premise and e.words == {"city_p": e.city} and e.label == getattr(e, e.attribute)
    task = interp.load_task("city-attributes")
    assert task.groups.unit == "cities" and set(task.alignment) == {"Country", "Continent"}
    assert set(task.labels) == {r.country for r in table} | {r.continent for r in table}
    assert {task.breakdown["attribute"](e) for e in test} == {"country", "continent"}


def test_a_tokenizer_reads_each_answer_by_its_first_token_and_drops_those_that_share_one():
    """Answers of several tokens are read by their first; two answers with one first token are dropped with their
    cities, and the task says which."""
    sentences = ["in the United States", "in the United Kingdom", "in France", "in Europe", "in Japan"] * 20
    tok = scratch_tokenizers().byte_level_bpe(sentences, 300)
    words, dropped = first_token_words(tok, ("United States", "United Kingdom", "France", "Europe"))
    assert set(dropped) == {"United States", "United Kingdom"} and set(words) == {"France", "Europe"}
    assert all(len(tok(w, add_special_tokens=False)["input_ids"]) == 1 for w in words.values())


@pytest.mark.parametrize("text, said", [
    ("city,country\nParis,France\n", ":1: the city table has no column 'continent'"),
    ("city,country,continent\nParis,France,Europe\nLima,Peru,South America\nParis,France,Europe\n", ":4: city 'Paris' is also on line 2"),
    ("city,country,continent\nParis,,Europe\nLima,Peru,South America\n", ":2: the country is empty"),
    ("city,country,continent\nParis,France,Europe\n", "at least two cities on two continents"),
])  # fmt: skip
def test_a_bad_city_table_is_refused_naming_its_file_and_line(tmp_path, text, said):
    path = tmp_path / "cities.csv"
    path.write_text(text)
    with pytest.raises(DataError, match=f"{path}{said}" if said.startswith(":") else said):
        city_task(str(path))


def test_the_command_line_refuses_a_bad_table_with_exit_2_and_writes_nothing(tmp_path):
    from click.testing import CliRunner

    from interp.cli import main

    path = tmp_path / "cities.csv"
    path.write_text("city,country,continent\nParis,France,Europe\nParis,France,Europe\n")
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["localize", "--model", "minilm", "--task", "city-attributes", "--data-file", str(path), "--out", str(out)])
    assert result.exit_code == 2 and f"{path}:3: city 'Paris'" in result.output and not out.exists()
    own = tmp_path / "own.csv"
    own.write_text("city,country,continent\nParis,France,Europe\nLima,Peru,South America\nOsaka,Japan,Asia\n")
    assert interp.load_task("city-attributes", data_file=str(own)).labels == ("France", "Peru", "Japan", "Europe", "South America", "Asia")
    with pytest.raises(ConfigError, match="a data file"):
        interp.load_task("ioi", data_file=str(own))
    assert TABLE.is_file()
