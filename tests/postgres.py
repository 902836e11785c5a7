"""A real PostgreSQL server for tests: Debian's postgresql package, a cluster in a temporary folder, listening on
127.0.0.1 only, run as an unprivileged user (initdb refuses root; as root the tests run it as `postgres`).

Where the server is not installed the tests that need it skip with the reason; with STUDIO_REQUIRE_REAL_FAULTS
(set by .ci/run, which installs the package) they fail instead."""
from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

import pytest

__all__ = ["PostgresServer", "postgres_bin", "skip_or_fail"]


def skip_or_fail(reason: str):
    if os.environ.get("STUDIO_REQUIRE_REAL_FAULTS"):
        pytest.fail(reason + " (STUDIO_REQUIRE_REAL_FAULTS is set: this test must run here)")
    pytest.skip(reason)


def postgres_bin() -> Path | None:
    """The newest installed server's bin folder (/usr/lib/postgresql/N/bin), or None."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]))
    return Path(found[-1]).parent if found else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PostgresServer:
    """initdb + pg_ctl start in a temporary folder; .url(db) names a fresh database on it; stop() removes it."""

    def __init__(self, address: str = "127.0.0.1", on_host: list[str] | None = None, clients: str | None = None):
        """address: where it listens; on_host: a prefix that runs a command on another host (tests/hosts.py);
        clients: a network (a.b.c.0/24) whose hosts may connect too."""
        self.address, self.on_host, self.clients = address, on_host or [], clients
        self.bin = postgres_bin()
        if self.bin is None:
            skip_or_fail("PostgreSQL's server is not installed (Debian: apt-get install postgresql)")
        self.as_user = self.on_host + (["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else [])
        self.dir = Path(tempfile.mkdtemp(prefix="studio-pg-"))
        if os.geteuid() == 0:
            shutil.chown(self.dir, "postgres", "postgres")
        self.data, self.port = self.dir / "data", _free_port()
        self.user = "postgres" if os.geteuid() == 0 else os.environ.get("USER", "postgres")

    def _run(self, *args: str) -> None:
        out = subprocess.run([*self.as_user, *args], capture_output=True, text=True, timeout=120)
        if out.returncode != 0:
            raise RuntimeError(f"{' '.join(args)} failed ({out.returncode}): {out.stdout}{out.stderr}")

    def start(self) -> "PostgresServer":
        self._run(str(self.bin / "initdb"), "-D", str(self.data), "-U", self.user, "--auth=trust", "-E", "UTF8",
                  "--no-sync")
        if self.clients:
            with open(self.data / "pg_hba.conf", "a") as f:
                f.write(f"host all all {self.clients} trust\n")
        options = (f"-c listen_addresses={self.address} -p {self.port} -c unix_socket_directories={self.dir} "
                   "-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200")
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-o", options, "-l", str(self.dir / "log"),
                  "-w", "-t", "60", "start")
        return self

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://{self.user}@{self.address}:{self.port}/{database}"

    def new_database(self) -> str:
        """A new, empty database on this server; its URL."""
        import psycopg
        name = f"studio_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(f"host={self.address} port={self.port} user={self.user} dbname=postgres",
                             autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def stop(self) -> None:
        try:
            self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")
        finally:
            time.sleep(0.1)
            shutil.rmtree(self.dir, ignore_errors=True)
