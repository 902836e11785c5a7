"""Tags and notes on runs, and the Runs page's search and filters (core/runs/people/annotations.py)."""
from __future__ import annotations

import pytest

from core.config import TrainConfig
from core.messages import ExplainedValueError
from core.runs.people.actions import Actions
from core.runs.people.annotations import RunFilter, all_tags, parse_tags
from core.runs.people.permissions import NotAllowed, person
from tests.support.apptest import page


def test_tags_are_trimmed_deduplicated_and_checked():
    assert parse_tags(" baseline, Lesson 3 ,BASELINE,, ") == ("baseline", "Lesson 3")
    for bad in ("x" * 31, "a\x07b", ",".join(f"t{i}" for i in range(11))):
        with pytest.raises(ExplainedValueError):
            parse_tags(bad)


def test_the_owner_tags_and_annotates_a_run_others_may_not_and_the_filter_finds_it(store):
    ann, bob = Actions(store, person("Ann", proven=False)), Actions(store, person("Bob", proven=False))
    mlp = store.create_run(TrainConfig(network="mlp"), name="small mlp", exclusive=False, submitter="Ann")
    lenet = store.create_run(TrainConfig(), name="lenet baseline", exclusive=False, submitter="Bob")
    ann.annotate(store.get(mlp), "lesson 3, Fast", "Shown in class: learns in a minute.")
    with pytest.raises(NotAllowed):
        bob.annotate(store.get(mlp), "mine now", "")
    with pytest.raises(ExplainedValueError):
        ann.annotate(store.get(mlp), "ok", "x" * 2001)
    run = store.get(mlp)
    assert run.tags == ("lesson 3", "Fast") and run.notes == "Shown in class: learns in a minute."
    runs = store.list_runs()
    assert all_tags(runs) == ["Fast", "lesson 3"]
    assert [r.id for r in RunFilter("IN CLASS").apply(runs)] == [mlp], "the note is searched, any case"
    assert [r.id for r in RunFilter(tags=frozenset({"fast"})).apply(runs)] == [mlp]
    assert [r.id for r in RunFilter(owners=frozenset({"Bob"})).apply(runs)] == [lenet]
    assert [r.id for r in RunFilter(networks=frozenset({"lenet5"}), text="baseline").apply(runs)] == [lenet]
    assert RunFilter("baseline", owners=frozenset({"Ann"})).apply(runs) == []


def test_the_runs_page_searches_filters_and_saves_tags_and_a_note(store):
    first = store.create_run(TrainConfig(network="mlp"), name="first mlp", exclusive=False)
    store.create_run(TrainConfig(), name="a lenet", exclusive=False)
    at = page("runs")
    assert not at.exception, [e.value for e in at.exception]
    assert len(at.dataframe[0].value) == 2
    at.text_input(key="runs_search").set_value("mlp").run()
    assert list(at.dataframe[0].value["name"]) == ["first mlp"] and "Showing 1 of 2 runs." in [c.value for c in at.caption]
    at.text_input(key=f"tags_{first}").set_value("baseline, lesson 1")
    at.text_area(key=f"notes_{first}").set_value("The class's first run.")
    at.button(key=f"save_notes_{first}").click().run()
    assert not at.exception and store.get(first).tags == ("baseline", "lesson 1")
    assert "Saved the tags and note of first mlp." in [m.value for m in at.success], "said after the rerun"
    at.text_input(key="runs_search").set_value("").run()
    at.multiselect(key="runs_f_tags").set_value(["baseline"]).run()
    assert list(at.dataframe[0].value["name"]) == ["first mlp  🏷️ baseline, lesson 1"], "tags beside the name"
    at.text_input(key="runs_search").set_value("nothing like this").run()
    assert "No run matches the search and filters: clear some of them." in [i.value for i in at.info]
