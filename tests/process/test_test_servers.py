"""The test kit's app servers (tests/support/server.py): a server whose port another one already holds is not
mistaken for that one, and a server given no port starts again on another when its free port was taken before it
bound it (two tests' servers starting at once)."""
from __future__ import annotations

import pytest

import tests.support.server as kit


def test_a_taken_port_is_never_mistaken_for_the_new_server_and_a_free_one_is_tried_next(tmp_path, monkeypatch):
    first = kit.start_server(tmp_path / "first")
    try:
        taken = int(first.url.rsplit(":", 1)[1])
        with pytest.raises(kit._PortTaken):  # the health check answers, but from the first server
            kit.start_server(tmp_path / "given", port=taken)
        ports, free = iter([taken]), kit.free_port
        monkeypatch.setattr(kit, "free_port", lambda: next(ports, None) or free())
        second = kit.start_server(tmp_path / "second")
        try:
            assert second.url != first.url and second.proc.poll() is None
            tried = list((tmp_path / "second").glob(f"server-{taken}-*.log"))  # its first try's log
            assert len(tried) == 1 and f"Port {taken} is not available" in tried[0].read_text()
        finally:
            second.stop()
    finally:
        first.stop()
