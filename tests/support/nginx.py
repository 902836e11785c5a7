"""nginx (Debian's package) in front of app servers on 127.0.0.1, for the tests and the benchmarks: a
configuration in a temporary folder, one worker, websockets passed on.

forwarded: add X-Forwarded-For/-Proto and the browser's Host, as docs/deploy.md does; without, a plain
proxy_pass (the careless set-up the app must see through). balance: how browsers are spread over several
upstreams (ip_hash for sticky sessions; hash $remote_port spreads one machine's clients for a benchmark)."""
from __future__ import annotations

import shutil
import subprocess
import time
import urllib.request
from pathlib import Path

from tests.support.postgres import skip_or_fail
from tests.support.server import free_port

__all__ = ["NGINX", "start_nginx", "stop_nginx"]

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"


def start_nginx(folder: Path, upstreams: list[str], forwarded: bool = True,
                balance: str = "ip_hash") -> tuple[subprocess.Popen, str]:
    """nginx on a free port of 127.0.0.1 in front of upstreams (http://host:port); (process, its URL)."""
    if not Path(NGINX).exists():
        skip_or_fail("nginx is not installed (Debian: apt-get install nginx; .ci/run installs it)")
    port = free_port()
    folder.mkdir(parents=True, exist_ok=True)
    servers = "\n".join(f"        server {u.removeprefix('http://')};" for u in upstreams)
    headers = ("proxy_set_header Host $host;\n            proxy_set_header X-Forwarded-For $remote_addr;\n"
               "            proxy_set_header X-Forwarded-Proto $scheme;") if forwarded else ""
    (folder / "nginx.conf").write_text(f"""
daemon off;
worker_processes 1;
pid {folder}/nginx.pid;
error_log {folder}/error.log;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    client_body_temp_path {folder}/body; proxy_temp_path {folder}/proxy; fastcgi_temp_path {folder}/fcgi;
    uwsgi_temp_path {folder}/uwsgi; scgi_temp_path {folder}/scgi;
    client_max_body_size 60m;
    upstream studio {{
        {balance};
{servers}
    }}
    server {{
        listen 127.0.0.1:{port};
        location / {{
            proxy_pass http://studio;
            proxy_http_version 1.1;
            proxy_set_header Upgrade $http_upgrade;
            proxy_set_header Connection "upgrade";
            {headers}
            proxy_read_timeout 86400;
            proxy_buffering off;          # nothing to nginx's temp folders (its workers run as another user)
            proxy_request_buffering off;
        }}
    }}
}}
""")
    proc = subprocess.Popen([NGINX, "-c", str(folder / "nginx.conf"), "-p", str(folder)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if urllib.request.urlopen(url + "/_stcore/health", timeout=1).read() == b"ok":
                return proc, url
        except OSError:
            time.sleep(0.2)
        if proc.poll() is not None:
            break
    proc.kill()
    raise RuntimeError("nginx did not start: " + (folder / "error.log").read_text(errors="replace")[-2000:])


def stop_nginx(proxies: list[tuple[subprocess.Popen, str]]) -> None:
    """Stop what start_nginx started."""
    for proc, _ in proxies:
        proc.terminate()
        proc.wait(timeout=10)
