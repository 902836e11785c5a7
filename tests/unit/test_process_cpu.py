"""bench/process_cpu.py: each process counts under its kind, and only the CPU it spent while the command ran."""
import sys

from bench.process_cpu import kind_of, measure, report


def test_a_process_counts_under_its_kind_by_name_and_command_line():
    venv = "/tmp/x/main/.venv/bin/python"
    assert kind_of("chromium-headle", "/usr/lib/chromium/chromium-headless-shell --type=renderer --headless=old") \
        == "Chromium renderer"
    assert kind_of("chromium-headle", "/usr/lib/chromium/chromium-headless-shell --type=gpu-process") \
        == "Chromium GPU process"
    assert kind_of("python", f"{venv} -u -c import sys;exec(eval(sys.stdin.readline()))") == "pytest worker (xdist)"
    assert kind_of("python", f"{venv} -m ui.serve --server.port 4 --server.address 127.0.0.1") == "app server (ui.serve)"
    # a store under pytest's temporary folder does not make a training process a pytest process
    assert kind_of("python", f"{venv} -m core.cli.worker 2026-x --store /tmp/pytest-of-root/pytest-3/s") \
        == "run worker (training)"
    assert kind_of("python", f"{venv} -m core.cli.warm_worker mlp --store /tmp/s") == "warm worker (training)"
    # its name is "node-MainThread", and its path is under .venv's python3.11
    assert kind_of("node-MainThread", "/x/.venv/lib/python3.11/site-packages/playwright/driver/node "
                                      "/x/.venv/lib/python3.11/site-packages/playwright/driver/package/cli.js "
                                      "run-driver") == "Playwright's Node driver"
    assert kind_of("postgres", "postgres: studio studio 127.0.0.1(5) idle") == "PostgreSQL"
    assert kind_of("kdamond.0", "") == "kernel: kdamond.0"


def test_a_commands_process_is_counted_and_what_ran_before_it_is_not():
    figures = measure([sys.executable, "-m", "core.cli.store", "--help"], every=0.05)
    assert figures["exit_status"] == 0
    command = next(r for r in figures["kinds"] if r["kind"] == "other core.cli command")
    # importing the store takes ~1 CPU-s; other tests' commands may run beside it (./test.sh runs this group beside
    # both phases) and count under the same kind
    assert command["processes"] >= 1 and command["cpu_s"] >= 0.2, figures
    # every process's CPU before the command is left out: counted, they would add up to far more than the
    # machine spent while it ran (this test's own process alone has spent seconds)
    assert figures["counted_s"] <= figures["machine_busy_s"] * 1.2 + 0.5, figures
    assert "other core.cli command" in report(figures)
