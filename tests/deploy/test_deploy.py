"""The deployment files say what the README promises: a slim image run by an unprivileged user,
serving on 0.0.0.0:$PORT with a health check on /healthz, a build context without the tests or
the secrets, and a compose file running two replicas behind nginx that share Redis and one
signing key, with the proxy passing streams through unbuffered.

There is no container engine here: the files are read as Docker, compose and nginx read them,
and what the image would run (its entry point and its health check) is run on this machine.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from cli_helpers import clean_env
from deploy_files import (
    COMPOSE,
    DEPLOY,
    DOCKERFILE,
    ENV_EXAMPLE,
    NGINX_CONF,
    ROOT,
    IgnorePattern,
    compose,
    dockerfile_stages,
    dockerignore,
    env_file,
    env_of,
    exec_form,
    free_port,
    healthcheck,
    ignore_patterns,
    image_stage,
    in_build_context,
    nginx_conf,
    nginx_seconds,
    run_health_check,
    run_image,
    service_environment,
    webreach_on_path,
)
from scripted_upstream import ScriptedUpstream

SLIM_PYTHON = re.compile(r"python:3\.1[12]-slim(-\w+)?@sha256:[0-9a-f]{64}")
FINAL = image_stage()


# --- the image --------------------------------------------------------------------------------


def test_the_image_is_slim_python_built_in_a_separate_stage() -> None:
    build = image_stage(alias="build")
    assert SLIM_PYTHON.fullmatch(build.base) and SLIM_PYTHON.fullmatch(FINAL.base)
    assert all(SLIM_PYTHON.fullmatch(s.base) for s in dockerfile_stages() if "@" in s.base)
    # The runtime takes the build's virtual environment and nothing else from it.
    copies = FINAL.all("COPY")
    assert copies == ["--from=build /opt/venv /opt/venv"]
    assert env_of(FINAL)["PATH"].startswith("/opt/venv/bin:")
    # Installed from the lock (the extras `webreach serve` needs, Redis included; see
    # tests/deploy/test_deploy_image.py), with hashes required.
    assert any("--require-hashes" in run and "requirements.lock" in run for run in build.all("RUN"))
    assert not any("apt-get" in run for run in FINAL.all("RUN")), "no system packages at run time"


def test_the_image_runs_as_a_numeric_non_root_user_it_creates() -> None:
    user = FINAL.last("USER")
    uid, _, gid = user.partition(":")
    assert uid.isdigit() and uid != "0" and gid != "0", user
    (created,) = FINAL.all("RUN")
    assert f"--uid {uid}" in created and f"--gid {gid or uid}" in created
    # Nothing after USER runs as root again; the entry point and the check run as that user.
    names = [i.name for i in FINAL.instructions]
    after = names[names.index("USER") :]
    assert "RUN" not in after and "ENTRYPOINT" in after and "HEALTHCHECK" in after


def test_the_entry_point_is_webreach_serve_on_all_interfaces_and_PORT() -> None:
    entry = exec_form(FINAL.last("ENTRYPOINT"))
    assert entry[:2] == ["/bin/sh", "-c"]
    script = entry[2]
    assert shlex.split(script)[:6] == ["exec", "webreach", "serve", "--host", "0.0.0.0", "--port"]
    assert '"${PORT:-8080}"' in script and script.endswith('"$@"')
    assert exec_form(FINAL.last("CMD")) == []
    assert env_of(FINAL)["PORT"] == "8080"
    assert FINAL.last("EXPOSE") == "8080"


def test_the_health_check_asks_healthz_with_python_alone() -> None:
    options, command = healthcheck(FINAL)
    assert "/healthz" in command
    assert command.startswith("python -c ")
    assert not re.search(r"\b(curl|wget)\b", command)
    assert nginx_seconds(options["timeout"]) < nginx_seconds(options["interval"])
    assert int(options["retries"]) >= 2


def test_every_copied_file_is_in_the_build_context_and_nothing_else_is() -> None:
    patterns = dockerignore()
    tracked = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    sent = {path for path in tracked if in_build_context(path, patterns)}
    # What the Dockerfile copies from the context: the locks, the metadata, the readme
    # hatchling reads, and every file of the package.
    sources = [
        word
        for stage in dockerfile_stages()
        for copy in stage.all("COPY")
        if not copy.startswith("--from")
        for word in copy.split()[:-1]
    ]
    locks = [
        "deploy/requirements.lock",
        "deploy/build-requirements.lock",
        "deploy/browser-requirements.lock",  # --build-arg BROWSER=chromium
    ]
    assert sources == [*locks, locks[1], "pyproject.toml", "README.md", "src"]
    package = {path for path in tracked if path.startswith("src/")}
    assert package and package <= sent
    assert {"pyproject.toml", "README.md", *locks} <= sent
    assert sent == package | {"pyproject.toml", "README.md", *locks}
    # What must never be sent, tracked or not.
    for path in [
        ".git/HEAD",
        "tests/deploy/test_deploy.py",
        "tests/clients/package.json",
        "tests/clients/node_modules/openai/package.json",
        "bench/README.md",
        "deploy/webreach.env",
        "deploy/.env",
        "deploy/compose.yaml",
        "deploy/lock",
        ".env",
        "webreach.toml",
        "src/webreach/__pycache__/seam.cpython-312.pyc",
        "src/webreach/server/__pycache__/app.cpython-311.pyc",
    ]:
        assert not in_build_context(path, patterns), path


def test_the_dockerignore_reader_follows_docker() -> None:
    """Docker's rules on the reader itself: the last matching line wins, a pattern matching a
    directory covers what is inside it, ``*`` stays within one path segment."""

    def rules(*lines: str) -> list[IgnorePattern]:
        return ignore_patterns(list(lines))

    assert not in_build_context("tests/x.py", rules("tests"))
    assert in_build_context("tests/x.py", rules("tests", "!tests/x.py"))
    assert not in_build_context("tests/x.py", rules("!tests/x.py", "tests"))
    assert in_build_context("a/b.txt", rules("*.txt"))
    assert not in_build_context("a/b.txt", rules("*/*.txt"))
    assert not in_build_context("a/b/c/d.pyc", rules("**/*.pyc"))
    assert not in_build_context("d.pyc", rules("**/*.pyc"))


# --- what the image would run, run here --------------------------------------------------------


@pytest.fixture
def image_process(upstream: ScriptedUpstream, tmp_path: Path) -> Iterator[dict[str, str]]:
    """The image's entry point, with ``--host 127.0.0.1`` as a ``docker run`` argument (the
    tests stay on loopback; it also shows arguments reach ``webreach serve``)."""
    env = clean_env(
        PATH=webreach_on_path(tmp_path),
        PYTHONPATH=os.pathsep.join(sys.path),
        PORT=str(free_port()),
        WEBREACH_UPSTREAM_BASE_URL=upstream.url,
        WEBREACH_SERVER_API_KEYS="deploy-key",
        WEBREACH_SIGNING_KEY="k" * 32,
    )
    with run_image(env, tmp_path, "--host", "127.0.0.1") as process:
        yield {**env, "_PID": str(process.pid)}


def test_the_entry_point_serves_on_PORT_and_the_health_check_passes(
    image_process: dict[str, str],
) -> None:
    base = f"http://127.0.0.1:{image_process['PORT']}"
    assert httpx.get(base + "/healthz").json() == {"status": "ok"}
    models = httpx.get(base + "/v1/models", headers={"Authorization": "Bearer deploy-key"})
    assert models.status_code == 200
    assert httpx.get(base + "/v1/models").status_code == 401
    # `exec`: the shell is replaced, so `docker stop`'s SIGTERM reaches webreach itself.
    pid = image_process["_PID"]
    cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    assert b"webreach" in b" ".join(cmdline) and cmdline[0] != b"/bin/sh"


def test_the_health_check_fails_when_nothing_answers(tmp_path: Path) -> None:
    env = clean_env(PATH=webreach_on_path(tmp_path), PORT=str(free_port()))
    done = run_health_check(env)
    assert done.returncode == 1  # Docker's "unhealthy" (2 is reserved)


# --- the compose file -------------------------------------------------------------------------


def test_two_replicas_of_the_image_share_redis_and_one_env_file() -> None:
    services = compose()["services"]
    assert set(services) == {"lb", "webreach", "redis"}
    replicas = services["webreach"]
    assert replicas["deploy"]["replicas"] == 2
    assert "container_name" not in replicas  # a fixed name would forbid a second replica
    assert (COMPOSE.parent / replicas["build"]["context"]).resolve() == ROOT
    assert (ROOT / replicas["build"].get("dockerfile", "Dockerfile")).resolve() == DOCKERFILE
    # One service, so one environment for every replica: Redis as cache and response store …
    environment = service_environment(replicas)
    assert re.fullmatch(r"redis://redis:6379(/\d+)?", environment["WEBREACH_CACHE"])
    assert "redis" in replicas["depends_on"]
    assert services["redis"]["image"].split(":")[0] == "redis"
    assert "healthcheck" in services["redis"]
    # … and the signing key from the env file (compose's own .env, also read for the
    # required values), never written in the compose file itself.
    assert replicas["env_file"] in ([".env"], ".env")
    assert environment["WEBREACH_SIGNING_KEY"].startswith("${WEBREACH_SIGNING_KEY:?")
    # The replicas' port: the image's.
    assert environment["PORT"] == env_of(FINAL)["PORT"]
    assert "ports" not in replicas  # reached through the load balancer only


def test_the_env_file_template_names_what_every_replica_must_share() -> None:
    template = env_file(ENV_EXAMPLE)
    assert {
        "WEBREACH_SIGNING_KEY",
        "WEBREACH_SERVER_API_KEYS",
        "WEBREACH_UPSTREAM_BASE_URL",
    } <= set(template)
    assert "WEBREACH_CACHE" not in template  # compose.yaml sets it, to its Redis
    assert template["WEBREACH_SIGNING_KEY"] == ""  # each deployment makes its own
    ignored = subprocess.run(["git", "check-ignore", "--no-index", "-q", "deploy/.env"], cwd=ROOT)
    assert ignored.returncode == 0, "git must ignore deploy/.env (the secrets)"


def test_the_load_balancer_is_nginx_in_front_of_the_replicas() -> None:
    services = compose()["services"]
    lb = services["lb"]
    image, _, tag = lb["image"].partition(":")
    assert image == "nginx"
    # `server … resolve` (replicas followed as they scale) is in open-source nginx from 1.27.3.
    version = tuple(int(part) for part in re.findall(r"\d+", tag)[:2])
    assert version >= (1, 28), tag
    assert lb["ports"] == ["8080:80"]
    assert lb["depends_on"]["webreach"]["condition"] == "service_healthy"
    (mount,) = lb["volumes"]
    source, target, *_ = mount.split(":")
    assert (DEPLOY / source).resolve() == NGINX_CONF
    # A template the image's entry point renders into conf.d (the resolver filled in).
    assert target == "/etc/nginx/templates/default.conf.template"


def test_nginx_balances_over_the_replicas_and_passes_streams_through() -> None:
    conf = nginx_conf()
    assert conf.one("resolver")[0] == "127.0.0.11"  # Docker's DNS, from its resolv.conf
    upstream = conf.block("upstream", "webreach")
    (server,) = upstream.directives["server"]
    assert server[0] == f"webreach:{env_of(FINAL)['PORT']}" and "resolve" in server
    assert upstream.one("zone")  # `resolve` needs a shared zone
    # Idle upstream connections are dropped before uvicorn's 5 s keep-alive closes them.
    assert nginx_seconds(upstream.one("keepalive_timeout")[0]) < 5

    site = conf.block("server")
    assert site.one("listen") == ["80"]
    # As large as WEBREACH_SERVER_MAX_BODY_BYTES (32 MiB), so webreach answers 413 itself.
    assert site.one("client_max_body_size") == ["32m"]
    location = site.block("location", "/")
    assert location.one("proxy_pass") == ["http://webreach"]
    # Server-sent events: nothing held back.
    assert location.one("proxy_buffering") == ["off"]
    assert location.one("proxy_cache") == ["off"]
    assert location.one("gzip") == ["off"]
    # Keep-alive to the replicas needs HTTP/1.1 and no `Connection: close`.
    assert location.one("proxy_http_version") == ["1.1"]
    headers = {args[0]: args[1] for args in location.directives["proxy_set_header"]}
    assert headers["Connection"] == ""
    assert headers["X-Forwarded-For"] == "$proxy_add_x_forwarded_for"
    # Deep searches: longer than the server's own 600 s per upstream call.
    for directive in ("proxy_read_timeout", "proxy_send_timeout", "send_timeout"):
        assert nginx_seconds(location.one(directive)[0]) > 600, directive
