"""The UI in English and Simplified Chinese: complete catalogues, no text left in the pages, and the switch."""
import ast
import dataclasses
import re

import numpy as np
import pytest

from core import i18n
from core.config import AMP_LEVELS, LOSSES, MODES, NETWORKS, OPTIMIZERS, STYLES, TrainConfig
from core import PROJECT_ROOT
from core.runs.rows import ACTIVE, FINISHED, SOURCES
from ui.navigation import PAGES
from streamlit.testing.v1 import AppTest
from tests.support.apptest import APP, page

UI_FILES = sorted(p for d in ("app_pages", "ui") for p in (PROJECT_ROOT / d).glob("*.py")) + [PROJECT_ROOT / "app.py"]
CJK = re.compile(r"[\u4e00-\u9fff]")
# Streamlit arguments that people read; everything else (keys, formats, types) is for the program.
READ_BY_PEOPLE = {"label", "help", "placeholder", "caption", "text", "body", "title", "page_title"}
PLOT_TEXT = {"name", "xaxis_title", "yaxis_title", "title_text", "hovertemplate"}


def test_every_key_is_in_every_language_with_the_same_placeholders():
    en = i18n.catalogue("en")
    for lang in i18n.LANGUAGES:
        cat = i18n.catalogue(lang)
        assert set(cat) == set(en), (lang, sorted(set(en) ^ set(cat)))
        for key, template in cat.items():
            assert template.strip(), (lang, key)
            assert i18n.placeholders(template) == i18n.placeholders(en[key]), (lang, key)
    zh = i18n.catalogue("zh")
    untranslated = [k for k in zh if not k.startswith(("labels.", "runs.format_")) and zh[k] == en[k]
                    and re.search(r"[a-z]{3}", en[k])]
    assert untranslated == [], untranslated  # copies of English text are missing translations
    assert all(CJK.search(zh[f"nav.{url}"]) for _, _, url in PAGES)


def _used_keys() -> tuple[set[str], set[str]]:
    """Keys the UI asks for: literal t("...") calls, and the prefixes of computed ones (t(f"x.{...}"))."""
    literal, prefixes = set(), set()
    for path in UI_FILES:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "t" and node.args:
                arg = node.args[0]
                if isinstance(arg, ast.Constant):
                    literal.add(arg.value)
                elif isinstance(arg, ast.JoinedStr) and isinstance(arg.values[0], ast.Constant):
                    prefixes.add(arg.values[0].value)
                elif isinstance(arg, ast.BinOp) and isinstance(arg.left, ast.Constant):
                    prefixes.add(arg.left.value)
    return literal, prefixes


def test_every_key_the_pages_use_exists_and_computed_keys_cover_their_values():
    en = i18n.catalogue("en")
    literal, prefixes = _used_keys()
    assert literal and not literal - set(en), sorted(literal - set(en))
    assert all(any(k.startswith(p) for k in en) for p in prefixes), prefixes
    computed = {f"labels.{v}" for v in (*NETWORKS, *STYLES, *MODES, *OPTIMIZERS, *LOSSES, *AMP_LEVELS)}
    computed |= {f"status.{s}" for s in (*ACTIVE, *FINISHED)}
    computed |= {f"sources.{s}" for s in SOURCES}  # where a run came from (Runs, Train)
    computed |= {f"configure.f_{f.name}" for f in dataclasses.fields(TrainConfig)}  # setting names (Compare)
    assert not computed - set(en), sorted(computed - set(en))


def _literal_text(node) -> str | None:
    """Human text written directly into a call argument (a string or f-string with letters)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        text = node.value
    elif isinstance(node, ast.JoinedStr):
        text = "".join(v.value for v in node.values if isinstance(v, ast.Constant))
    else:
        return None
    return text if re.search(r"[A-Za-z]{2}", text) else None


def test_no_page_writes_text_of_its_own():
    """Every string a person reads comes from a catalogue: no st.* call gets literal English."""
    found = []
    for path in UI_FILES:
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call):
                continue
            name = ast.unparse(node.func)
            if re.match(r"(fig|go|px)\.", name):  # plotly: titles, trace names, axis titles
                args = [k.value for k in node.keywords if k.arg in READ_BY_PEOPLE | PLOT_TEXT]
            elif re.match(r"(st|col|left|right|mid|a|b|c|m\[\d\]|cols\[-1\]|notice|slots\[name\])\.", name):
                if re.search(r"\.(session_state|query_params|secrets|user|context\.headers|context\.cookies)\.|\.get_option$", name):
                    continue  # state and settings, not text
                args = [] if name.endswith((".fragment", ".form", ".columns", ".switch_page", ".page_link", ".Page")) \
                    else node.args[:1]
                args += [k.value for k in node.keywords if k.arg in READ_BY_PEOPLE]
            else:
                continue
            for arg in args:
                text = _literal_text(arg)
                if text:
                    found.append(f"{path.name}:{node.lineno} {name}({text!r})")
    assert found == [], "\n".join(found)


@pytest.mark.parametrize("url", ["data", "configure", "train", "evaluate", "draw", "compare", "weights", "runs"])
def test_every_page_speaks_chinese_when_the_link_says_so(with_run, url):
    at = page(url, {"lang": "zh"})
    assert not at.exception, [e.value for e in at.exception]
    title = at.title[0].value
    assert CJK.search(title), title
    assert "zh" in str(at.query_params.get("lang"))  # still in the URL after moving to the page


def test_the_sidebar_switch_changes_the_language_and_the_link(store):
    at = AppTest.from_file(APP, default_timeout=60).run()  # the Train page, with its sidebar
    assert at.title[0].value.endswith("Train") and "lang" not in at.query_params
    at.selectbox(key="lang_choice").set_value("zh").run()
    assert not at.exception
    assert at.title[0].value.endswith(i18n.text("zh", "nav.train"))
    assert at.info[0].value == i18n.text("zh", "train.no_runs")
    assert "zh" in str(at.query_params.get("lang"))  # remembered in the URL
    # (AppTest leaves the sidebar out of reruns, so each check below starts from a fresh first run)
    shared = AppTest.from_file(APP, default_timeout=60)  # a shared link with ?lang=zh: the sidebar too
    shared.query_params["lang"] = "zh"
    shared.run()
    assert [link.label for link in shared.sidebar.get("page_link")] == [
        i18n.text("zh", f"nav.{url}") for _, _, url in PAGES]
    assert shared.selectbox(key="lang_choice").value == "zh"
    shared.selectbox(key="lang_choice").set_value("en").run()
    assert shared.title[0].value.endswith("Train") and "lang" not in shared.query_params


def test_an_unknown_language_in_the_link_is_explained(store):
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["lang"] = "fr"
    at.run()
    assert not at.exception
    assert any("“fr”" in w.value and "zh" in w.value for w in at.warning)
    assert at.title[0].value.endswith("Train")


def test_setting_errors_are_in_the_users_language(store):
    at = page("configure", {"lang": "zh"})
    at.text_input(key="cfg_epochs").set_value("abc").run()
    at.text_input(key="cfg_batch_size").set_value("0").run()
    errors = [e.value for e in at.error]
    assert "'abc' 不是有效的整数" in errors and "必须 ≥ 1 且 ≤ 4096，收到的是 0" in errors, errors
    assert TrainConfig(epochs=0).errors()["epochs"] == "must be ≥ 1 and ≤ 1000, got 0"  # English by default
    assert set(TrainConfig(epochs=0, workers=3).errors("zh")) == set(TrainConfig(epochs=0, workers=3).errors())


def test_core_notices_and_layer_warnings_are_in_the_users_language(store):
    """A pause notice (from the store) and a dead-layer warning (from core's diagnosis) come from the
    catalogue, not as core's English."""
    import time

    from core.training.layer_stats import summarize
    run_id = store.create_run(TrainConfig(network="mlp"), name="直播", source="cli")
    store.update(run_id, status="running", heartbeat=time.time())
    at = page("train", {"lang": "zh"})
    next(b for b in at.button if "暂停" in b.label).click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert [t.value for t in at.toast] == ["已请求暂停。"]
    store.finish(run_id, "stopped", "")
    store.add_layer_stats(run_id, [summarize(1, "classifier.0.weight", "grad", np.ones(4)),
                                   summarize(2, "classifier.0.weight", "grad", np.zeros(4))])
    weights = page("weights", {"lang": "zh"})
    assert any("classifier.0.weight" in w.value and "停止学习" in w.value for w in weights.warning)
    assert not any("stopped learning" in w.value for w in weights.warning)


def test_core_errors_and_run_outcomes_are_in_the_users_language(store, tmp_path, small_mnist):
    """A folder check's error and a finished run's outcome, made by core, read in Chinese on a Chinese page
    (with the user's path shown literally), and in English on the command line (str)."""
    from core.data.folders import validate_mnist_dir
    from core.data.idx import DataError
    from core.messages import Message
    missing = tmp_path / "no_such_folder"
    with pytest.raises(DataError) as e:
        validate_mnist_dir(missing)
    assert str(e.value).startswith(f"The folder {missing} does not exist")
    at = page("data", {"lang": "zh"})
    at.radio(key="data_source").set_value("folder").run()
    at.text_input(key="folder_path").input(str(missing)).run()
    next(b for b in at.button if b.label == "使用此文件夹").click().run()
    assert any("不存在" in e.value and "no\\_such\\_folder" in e.value for e in at.error), [e.value for e in at.error]
    run_id = store.create_run(TrainConfig(network="mlp"), source="cli")
    store.finish(run_id, "stopped", Message("with_checkpoint", {"what": Message("stopped_at", {"step": 6}),
                                                                 "path": "/x/model.ckpt"}))
    assert store.get(run_id).message == "stopped by request at step 6; checkpoint: /x/model.ckpt"
    train = page("train", {"lang": "zh"})
    assert any("应请求在第 6 步停止" in w.value for w in train.warning), [w.value for w in train.warning]


def _message_keys(node: ast.expr, en: dict) -> list[str]:
    """The catalogue keys a key expression can produce: a literal, either branch of `a if c else b`, or an
    f-string expanded over the [messages] entries it matches."""
    if isinstance(node, ast.Constant):
        return [node.value]
    if isinstance(node, ast.IfExp):
        return _message_keys(node.body, en) + _message_keys(node.orelse, en)
    if isinstance(node, ast.JoinedStr):
        pattern = "".join(_part_pattern(v) for v in node.values)
        return [k[len("messages."):] for k in en if re.fullmatch("messages." + pattern, k)]
    return []


def _part_pattern(part: ast.expr) -> str:
    """A regular expression for one part of an f-string key: text as it is; `{'a' if c else 'b'}` as a|b; a
    name as one word (kind, why, then); an attribute (why.key, e.phase) as words joined by "_"."""
    if isinstance(part, ast.Constant):
        return re.escape(part.value)
    value = part.value
    if isinstance(value, ast.IfExp) and all(isinstance(b, ast.Constant) for b in (value.body, value.orelse)):
        return f"(?:{re.escape(value.body.value)}|{re.escape(value.orelse.value)})"
    return "[a-z0-9]+" if isinstance(value, ast.Name) else "[a-z0-9_]+"


def test_every_message_core_raises_or_stores_is_given_the_values_its_words_need():
    """A message built with a literal key (`DataError("folder_missing", root=...)`, `Message("stopped_at",
    {"step": ...})`) must pass every placeholder its templates use; a missing one would turn an error into
    a KeyError on a page. Keys built with an f-string are expanded over the choices the code can make."""
    en = i18n.catalogue("en")
    explained = {"DataError", "CheckpointError", "DrawingError", "RunBusy", "StoreError", "ClusterError",
                 "CheckpointWriteError", "DownloadCancelled", "ExplainedValueError", "Explained"}
    checked, problems = 0, []
    for path in sorted((PROJECT_ROOT / "core").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.args):
                continue
            name, first = node.func.id, node.args[0]
            if name in explained and any(k.arg is None for k in node.keywords):
                continue  # **values passed on from another message (resume_refused_* from resumable())
            if name in explained:
                given = {k.arg for k in node.keywords}
            elif name == "Message" and len(node.args) == 2 and isinstance(node.args[1], ast.Dict):
                given = {k.value for k in node.args[1].keys if isinstance(k, ast.Constant)}
            elif name == "Message" and len(node.args) == 1:
                given = set()
            else:
                continue
            keys = _message_keys(first, en)
            assert keys, f"{path.name}:{node.lineno}: no catalogue entry for this message"
            for key in keys:
                checked += 1
                missing = i18n.placeholders(en[f"messages.{key}"]) - given
                if missing:
                    problems.append(f"{path.relative_to(PROJECT_ROOT)}:{node.lineno} {key} lacks {sorted(missing)}")
    assert problems == [] and checked > 60, (checked, problems)


def test_a_count_of_one_takes_the_singular_form_where_a_language_has_one():
    from core.messages import Message
    assert str(Message("finished_epochs", {"n": 1})) == "finished 1 epoch"
    assert str(Message("finished_epochs", {"n": 3})) == "finished 3 epochs"
    assert i18n.text("en", "draw.mine", n=1) == "My handwriting (1 drawing)"
    assert i18n.text("zh", "draw.mine", n=1) == "我的手写集（1 张）"
    assert i18n.text("en", "queue.header", n=1, slots=2) == "Queue: 1 run waiting for a slot (slots on this server: 2)"
    assert i18n.text("en", "queue.header", n=3, slots=2) == "Queue: 3 runs waiting for a slot (slots on this server: 2)"
    plural_hacks = [k for k, v in i18n.catalogue("en").items() if re.search(r"\{\w+\}[^{}]{0,30}?\(s\)", v)]
    assert plural_hacks == [], plural_hacks  # "{n} run(s)": a count says its plural (and its _one its singular)
    assert i18n.counted(1, "new step") == "1 new step" and i18n.counted(0, "run") == "0 runs"
    in_code = [f"{p.relative_to(PROJECT_ROOT)}:{i}" for folder in ("core", "ui", "app_pages")
               for p in sorted((PROJECT_ROOT / folder).rglob("*.py"))
               for i, line in enumerate(p.read_text().splitlines(), 1) if re.search(r"\}\s[\w ]{1,30}\(s\)", line)]
    assert in_code == [], in_code  # the command line and the logs count with i18n.counted
