"""Every parser of untrusted text, fed what Hypothesis makes up: links' settings, run and display names, tags,
notes, sweep spaces, passes and tokens, a script's settings and an upload's name and bytes. None may raise
anything but the studio's own errors (which say what was wrong); a value it accepts is one the studio keeps."""
from __future__ import annotations

import contextlib
import os
import tempfile

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.app.passes import read_pass
from core.app.server_token import token_matches
from core.config import ConfigError, TrainConfig, parse_fields
from core.messages import Explained, Message
from core.runs import sweeps
from core.runs.people.annotations import checked_notes, parse_tags
from core.runs.people.permissions import claim_name
from core.runs.store import RunStore
from core.runs.store.run_store import MAX_RUN_NAME, checked_run_name
from core.track import _jsonable, studio_config
from ui.admit_route import safe_next
from ui.config_form import URL_FIELDS

FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
anything = st.text(max_size=300)  # every code point Hypothesis likes: controls, surrogates' neighbours, RTL...
_STORE: list[RunStore] = []


def _store() -> RunStore:
    if not _STORE:
        _STORE.append(RunStore(tempfile.mkdtemp(prefix="studio-property-"),
                               f"sqlite:///{tempfile.mkdtemp(prefix='studio-property-db-')}/runs.sqlite"))
    return _STORE[0]


@FAST
@given(st.dictionaries(st.sampled_from(URL_FIELDS), anything, max_size=6))
def test_a_links_settings_parse_or_say_why(query):
    values, errors = parse_fields(query)
    assert set(values) | set(errors) <= set(query) | {"hidden", "setting_changes"}
    candidate = TrainConfig().with_(**values) if not errors else None
    if candidate is not None:
        assert isinstance(candidate.errors(), dict)  # a value that parses is checked, never raises


@FAST
@given(anything)
def test_a_run_name_is_kept_or_refused_with_the_rule(name):
    try:
        kept = checked_run_name(name)
    except Explained as e:
        assert e.said.key == "bad_run_name"
        return
    assert 1 <= len(kept) <= MAX_RUN_NAME and kept == kept.strip()


@FAST
@given(anything, st.text(min_size=1, max_size=40))
def test_a_display_name_is_claimed_or_refused_with_a_message(name, token):
    said = claim_name(_store(), name, token)
    assert said is None or isinstance(said, Message)


@FAST
@given(anything, st.text(max_size=3000))
def test_tags_and_notes_parse_or_say_why(tags, notes):
    for parse, value in ((parse_tags, tags), (checked_notes, notes)):
        with contextlib.suppress(Explained):
            parse(value)


@FAST
@given(anything)
def test_a_sweep_space_parses_or_says_why(text):
    try:
        space = sweeps.parse_space(text)
    except Explained:
        return
    assert space.name in sweeps.SWEEPABLE


@FAST
@given(anything, st.sampled_from(["class", "cookie", "ticket"]))
def test_passes_tokens_and_next_paths_from_a_browser(text, purpose):
    assert read_pass(os.urandom(32), text, purpose) is None  # nothing made up is a valid pass
    assert token_matches(text) is False
    target = safe_next(text)
    assert target.startswith("/") and not target.startswith("//") and "\\" not in target


json_values = st.recursive(st.none() | st.booleans() | st.floats() | st.integers() | anything,
                           lambda inner: st.lists(inner, max_size=4) | st.dictionaries(anything, inner, max_size=4),
                           max_leaves=20)


@FAST
@given(st.dictionaries(anything, json_values, max_size=12))
def test_a_scripts_settings_are_kept_or_refused(config):
    chosen = studio_config(config)
    assert chosen.errors() == {}, "only settings the studio accepts reach its config"
    try:
        kept = _jsonable(config)
    except Explained:
        return
    assert isinstance(kept, str) and len(kept.encode()) <= 64 * 1024


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=2000), anything)
def test_an_uploads_bytes_and_name_are_refused_with_a_message(data, filename):
    from core.app import model_service
    try:
        model_service.import_checkpoint(_store(), data, filename or "x.ckpt")
    except (Explained, ConfigError) as e:
        assert str(e)
    else:
        raise AssertionError("made-up bytes were accepted as a checkpoint")


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(filename=anything)
def test_a_real_checkpoint_under_any_name_is_kept(trained_ckpt, filename):
    from core.app import model_service
    store = _store()
    run_id = model_service.import_checkpoint(store, trained_ckpt.read_bytes(), filename)
    run = store.get(run_id)
    assert run is not None and run.status == "completed" and checked_run_name(run.name) == run.name
