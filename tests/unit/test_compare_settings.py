"""What Compare reads of a run's settings: a studio run states its whole config, a script or an imported summary
only what it recorded; differences count stated values only, and the parallel coordinates put a setting a run
did not state at its own "not stated" tick instead of at the studio's default."""
import json

import pytest

from core.app.comparison import setting_axes, setting_differences, stated
from core.config import TrainConfig
from core.foreign_settings import lineage_settings, stated_settings, studio_config
from core.runs.rows import EXTERNAL, SUMMARY
from tests.support.apptest import page


def runs_of_three_sources(store):
    studio = store.create_run(TrainConfig(network="mlp", learning_rate=0.05, batch_size=64), name="studio",
                              source="cli", exclusive=False)
    script_params = {"lr": 0.2, "batch": 128, "network": "resnet50", "my_own": 3}
    script = store.create_run(studio_config(script_params), name="script", source=EXTERNAL, status="running",
                              exclusive=False, params=json.dumps(script_params))
    lineage = {"summary_dir": "/somewhere", "learning_rate": 0.01, "optimizer": "Momentum", "epochs": 3,
               "network": "LeNet5", "loss_function": "SoftmaxCrossEntropyWithLogits"}
    summary = store.create_run(studio_config(lineage_settings(lineage)), name="summary", source=SUMMARY,
                               status="completed", exclusive=False, params=json.dumps(lineage))
    return [store.get(i) for i in (studio, script, summary)]


def test_a_run_states_only_what_it_recorded(store):
    studio, script, summary = runs_of_three_sources(store)
    assert stated(studio) == studio.config.to_dict()
    assert stated(script) == {"learning_rate": 0.2, "batch_size": 128}  # resnet50 is not one of the studio's
    assert stated(summary) == {"learning_rate": 0.01, "optimizer": "momentum", "epochs": 3, "network": "lenet5"}
    # the script's config holds the studio's defaults where it said nothing: they are not what it stated
    assert script.config.style == TrainConfig().style and "style" not in stated(script)


def test_a_lineages_float32_rate_reads_as_it_was_set():
    assert lineage_settings({"learning_rate": 0.009999999776482582})["learning_rate"] == 0.01


def test_lists_name_a_summarys_network_as_the_studio_does_and_a_scripts_own_as_it_said(store):
    from ui.format import network_word
    studio, script, summary = runs_of_three_sources(store)
    assert network_word(summary) == "LeNet-5" and network_word(script) == "resnet50"


def test_differences_count_stated_values_only():
    assert setting_differences([{"a": 1, "b": 2}, {"a": 1}]) == set()
    assert setting_differences([{"a": 1, "b": 2}, {"a": 3}, {"b": 2}]) == {"a"}
    assert setting_differences([{"lr": 0.01}, {"lr": 0.009999999776482582}]) == set(), "float32's 0.01 is 0.01"


def test_the_parallel_axes_put_an_unstated_setting_on_its_own_tick(store):
    studio, script, summary = runs_of_three_sources(store)
    axes = {a.name: a for a in setting_axes([studio, script, summary], "not stated")}
    rate = axes["learning_rate"]
    assert rate.values == (0.05, 0.2, 0.01) and rate.ticktext == ("0.01", "0.05", "0.2")
    batch = axes["batch_size"]
    assert batch.values[:2] == (64.0, 128.0) and batch.values[2] < 64
    assert batch.ticktext[-1] == "not stated" and batch.tickvals[-1] == batch.values[2]
    network = axes["network"]
    assert dict(zip(network.tickvals, network.ticktext, strict=True)) == {0.0: "lenet5", 1.0: "mlp", -1.0: "not stated"}
    assert network.values == (1.0, -1.0, 0.0)
    style = axes["style"]  # only the studio run states it: the other two sit at "not stated"
    assert style.values == (0.0, -1.0, -1.0)


def test_settings_no_run_states_have_no_axis(store):
    _, script, _ = runs_of_three_sources(store)
    other = store.get(store.create_run(studio_config({"lr": 0.1}), name="other", source=EXTERNAL,
                                       status="running", exclusive=False, params=json.dumps({"lr": 0.1})))
    assert [a.name for a in setting_axes([script, other], "?")] == ["learning_rate", "batch_size"]


@pytest.mark.parametrize("settings", [{"lr": 0.3, "lr_extra": 1}, {"learning_rate": -1}, {}])
def test_a_scripts_stated_settings_make_its_config(settings):
    assert studio_config(settings) == TrainConfig().with_(**stated_settings(settings))


def test_compare_shows_an_imported_and_a_scripts_unstated_settings_as_not_stated(store):
    runs = runs_of_three_sources(store)
    for i, run in enumerate(runs):
        store.update(run.id, best_val_acc=0.9 + i / 100, best_epoch=1, epoch=1)
    at = page("compare")
    at.multiselect(key="compare_runs").set_value([r.id for r in runs]).run()
    assert not at.exception, [e.value for e in at.exception]
    table = at.dataframe[0].value
    assert table.loc["Training style", "studio"] == "cell" and table.loc["Training style", "script"] == "–"
    assert table.loc["Optimizer", "summary"] == "momentum" and table.loc["Optimizer", "script"] == "–"
    # the script's and the summary's learning rates are their own, not the studio's default
    assert table.loc["Learning rate", "script"] == "0.2" and table.loc["Learning rate", "summary"] == "0.01"
    at.toggle(key="compare_parallel").set_value(True).run()
    spec = json.loads(at.get("plotly_chart")[-1].proto.spec)  # after the curves, if any
    dims = {d["label"]: d for d in spec["data"][0]["dimensions"]}
    assert dims["Network"]["ticktext"] == ["lenet5", "mlp", "not stated"]
    assert sorted(dims["best val acc"]["values"]) == [0.9, 0.91, 0.92]  # a line for each run
    assert any('"not stated"' in c.value for c in at.caption)


def test_the_accuracy_axis_and_colours_of_runs_that_scored_alike_stay_between_0_and_100_percent():
    """Plotly spread one value half of it each way: two runs at 95.6 % drew a colour bar from 60 % to 140 %."""
    from ui.charts import accuracy_range
    from ui.compare_chart import settings_figure
    assert accuracy_range([0.9, 0.95]) == (0.9, 0.95)
    assert accuracy_range([1.0, 1.0]) == (0.99, 1.0) and accuracy_range([0.0]) == (0.0, 0.01)
    low, high = accuracy_range([0.956, 0.956])
    assert low < 0.956 < high and high - low == pytest.approx(0.01)
    chart = settings_figure([], [0.956, 0.956], "best val acc").data[0]
    assert (chart.line.cmin, chart.line.cmax) == (low, high)
    assert tuple(chart.dimensions[-1].range) == (low, high)
