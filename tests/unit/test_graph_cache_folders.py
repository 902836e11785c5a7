"""The graph cache's folders (core.training.graph_cache), without MindSpore's compiler: a key's folder is used only
once complete, once per process, never when switched off; the newest KEEP stay. The real compilation and loading
are tests/process/test_graph_cache.py's."""
from __future__ import annotations

import os
import sys
import time

import pytest

from core.training import graph_cache


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A cache folder, a fixed key per settings, and a 'compiler' that writes what MindSpore writes into the folder
    it is given; records the folders it was given (None: compiled without the cache)."""
    monkeypatch.setenv("STUDIO_GRAPH_CACHE_DIR", str(tmp_path / "graphs"))
    monkeypatch.delenv(graph_cache.SWITCH, raising=False)
    monkeypatch.setattr(graph_cache, "_used", False)
    monkeypatch.setattr(graph_cache, "_allowed", True)  # a training process
    monkeypatch.setattr(sys, "argv", [__file__])  # with an entry script, as MindSpore's cache needs
    monkeypatch.setattr(graph_cache, "key_of", lambda parts: "key-" + "-".join(parts))
    given: list = []

    def with_cache(ms, folder, compile_graphs):
        given.append(folder)
        (folder / graph_cache.GRAPH_FILE).parent.mkdir(parents=True, exist_ok=True)
        (folder / graph_cache.GRAPH_FILE).write_bytes(b"graph")
        compile_graphs()

    monkeypatch.setattr(graph_cache, "_with_cache", with_cache)
    return tmp_path / "graphs", given


def compiled(log):
    return lambda: log.append("compiled")


def test_the_first_process_keeps_its_graphs_and_the_next_loads_them(cache, monkeypatch):
    root, given = cache
    log: list = []
    assert graph_cache.compile_once(("a",), compiled(log)) == "saved"
    assert given[0].name.startswith(".compiling-"), "compiled into a private folder first"
    folder = graph_cache.folder_for("key-a", root)
    assert (folder / graph_cache.COMPLETE).is_file() and (folder / graph_cache.GRAPH_FILE).is_file()
    assert not list(root.glob(".compiling-*"))
    assert graph_cache.compile_once(("a",), compiled(log)) == "compiled", "one use per process"
    monkeypatch.setattr(graph_cache, "_used", False)  # the next process
    assert graph_cache.compile_once(("a",), compiled(log)) == "loaded"
    assert given[-1] == folder and log == ["compiled"] * 3


def test_a_folder_without_its_marker_is_never_loaded_and_a_failed_compilation_leaves_nothing(cache, monkeypatch):
    root, given = cache
    half = graph_cache.folder_for("key-b", root)
    (half / graph_cache.GRAPH_FILE).parent.mkdir(parents=True)  # a copy in place by hand, say, without the marker
    assert graph_cache.compile_once(("b",), compiled([])) == "compiled"  # it was not loaded; it stays as it was
    assert given[-1] != half and not (half / graph_cache.COMPLETE).exists()
    monkeypatch.setattr(graph_cache, "_used", False)

    def fails():
        raise RuntimeError("the compiler failed")

    with pytest.raises(RuntimeError):
        graph_cache.compile_once(("c",), fails)
    assert not graph_cache.folder_for("key-c", root).exists() and not list(root.glob(".compiling-*"))


def test_switched_off_nothing_is_written(cache, monkeypatch):
    root, given = cache
    monkeypatch.setenv(graph_cache.SWITCH, "0")
    log: list = []
    assert graph_cache.compile_once(("a",), compiled(log)) == "compiled"
    assert log == ["compiled"] and given == [] and not root.exists()


def test_the_newest_folders_stay(cache, monkeypatch):
    root, _ = cache
    monkeypatch.setattr(graph_cache, "KEEP", 2)
    for i in range(4):
        monkeypatch.setattr(graph_cache, "_used", False)
        assert graph_cache.compile_once((str(i),), compiled([])) == "saved"
        marker = graph_cache.folder_for(f"key-{i}", root) / graph_cache.COMPLETE
        os.utime(marker, (time.time() - 100 + i, time.time() - 100 + i))  # used in this order
    stale = root / ".compiling-dead"
    stale.mkdir()
    os.utime(stale, (time.time() - 2 * graph_cache._STALE_S,) * 2)
    monkeypatch.setattr(graph_cache, "_used", False)
    graph_cache.compile_once(("4",), compiled([]))
    assert sorted(p.name for p in root.iterdir()) == ["graphs-key-3", "graphs-key-4"]


def test_only_a_training_process_with_an_entry_script_uses_the_cache(cache, monkeypatch):
    root, given = cache
    monkeypatch.setattr(graph_cache, "_allowed", False)  # a page's or a test's process
    assert graph_cache.compile_once(("a",), compiled([])) == "compiled"
    monkeypatch.setattr(graph_cache, "_allowed", True)
    monkeypatch.setattr(sys, "argv", ["-c"])  # python -c: MindSpore keeps nothing without an entry script
    assert graph_cache.compile_once(("a",), compiled([])) == "compiled"
    assert given == [] and not root.exists()

