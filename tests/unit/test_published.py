"""Every table README.md and docs/ publish is generated from the results file its benchmark recorded
(bench/published.py): a figure edited by hand, or a results file re-recorded without the documents, fails here."""
import re

from bench import published


def test_every_published_table_is_what_its_results_file_gives():
    assert published.stale() == [], "run `python -m bench.report --write` (or re-record the benchmark)"


def test_the_headline_figures_are_generated_tables():
    found = {doc.name: {name for name, _ in published.blocks(doc.read_text())} for doc in published.DOCUMENTS}
    assert "accuracy" in found["README.md"]
    assert {"augmentation", "step-variants", "distributed"} <= found["measured.md"]
    assert {"user-visible", "page-times"} <= found["performance.md"]
    assert set().union(*found.values()) == set(published.TABLES)  # every table is published somewhere


def test_a_figure_changed_by_hand_is_caught(tmp_path):
    readme = published.ROOT / "README.md"
    edited = tmp_path / "README.md"
    text = readme.read_text()
    block = re.search(r"<!-- bench:accuracy -->\n.*?<!-- /bench:accuracy -->", text, re.S).group(0)
    assert re.search(r"\d\d\.\d\d %", block), block  # the accuracy as a percentage
    edited.write_text(text.replace(block, re.sub(r"(\d\d\.\d)\d %", r"\g<1>9 %", block, count=1)))
    assert published.stale([edited]) == ["README.md: accuracy"]
    assert published.stale([readme]) == []
