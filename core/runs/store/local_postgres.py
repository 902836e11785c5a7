"""A PostgreSQL server on this machine, to try a team's database, for the tests and the benchmarks: Debian's
postgresql package, a cluster in a temporary folder, listening where it is told (127.0.0.1 by default), run as an
unprivileged user (initdb refuses root; as root it runs as `postgres`), fsync off (a scratch server).

    .venv/bin/python -m core.runs.store.local_postgres     # prints a STUDIO_DATABASE_URL; Ctrl-C removes it
"""
from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import uuid
from pathlib import Path

import psycopg

__all__ = ["PostgresServer", "PostgresMissing", "postgres_bin"]


class PostgresMissing(RuntimeError):
    """PostgreSQL's server programs are not installed here."""


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

    def __init__(self, address: str = "127.0.0.1", on_host: list[str] | None = None, clients: str | None = None,
                 durable: bool = False):
        """address: where it listens; on_host: a prefix that runs a command on another host (tests/support/hosts.py);
        clients: a network (a.b.c.0/24) whose hosts may connect too; durable: fsync every commit, as a real
        server does (a scratch server does not)."""
        self.address, self.on_host, self.clients, self.durable = address, on_host or [], clients, durable
        found = postgres_bin()
        if found is None:
            raise PostgresMissing("PostgreSQL's server is not installed (Debian: apt-get install postgresql)")
        self.bin = found
        self.as_user = self.on_host + (["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else [])
        self.dir = Path(tempfile.mkdtemp(prefix="studio-pg-"))
        if os.geteuid() == 0:
            shutil.chown(self.dir, "postgres", "postgres")
        self.data, self.port = self.dir / "data", _free_port()
        self.user = "postgres" if os.geteuid() == 0 else os.environ.get("USER", "postgres")

    def _run(self, *args: str) -> None:
        out = subprocess.run([*self.as_user, *args], capture_output=True, text=True, timeout=120,
                             check=False)
        if out.returncode != 0:
            raise RuntimeError(f"{' '.join(args)} failed ({out.returncode}): {out.stdout}{out.stderr}")

    def start(self) -> "PostgresServer":
        self._run(str(self.bin / "initdb"), "-D", str(self.data), "-U", self.user, "--auth=trust", "-E", "UTF8",
                  "--no-sync")
        if self.clients:
            with open(self.data / "pg_hba.conf", "a") as f:
                f.write(f"host all all {self.clients} trust\n")
        options = (f"-c listen_addresses={self.address} -p {self.port} -c unix_socket_directories={self.dir} "
                   "-c max_connections=200")
        if not self.durable:
            options += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        self._options = options
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-o", options, "-l", str(self.dir / "log"),
                  "-w", "-t", "60", "start")
        return self

    def halt(self) -> None:
        """Stop the server and keep its data (a database restart, or an outage: start_again() ends it)."""
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop")

    def start_again(self) -> None:
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-o", self._options, "-l", str(self.dir / "log"),
                  "-w", "-t", "60", "start")

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://{self.user}@{self.address}:{self.port}/{database}"

    def new_database(self) -> str:
        """A new, empty database on this server; its URL."""
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


def main() -> int:
    server = PostgresServer().start()
    print(f"STUDIO_DATABASE_URL={server.new_database()}  (a scratch server in {server.dir}; Ctrl-C removes it)",
          flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        print("removing the scratch server", flush=True)  # Ctrl-C: the way it is meant to end
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
