"""A reproducible image and a deployment that says what is wrong: base images
pinned by digest and a command that moves the pins; Python packages from a lock with hashes,
covering everything the image's extras need; compose stopping with a message naming a required
value left empty; nginx's resolver taken from the container's own DNS (Docker or Podman); the
compose health check on /readyz; and .ci/run building the image only where it can.

No container engine or network: the files are read as Docker, compose and nginx read them, the
shell scripts run against fake ``docker`` / ``podman`` / ``crane`` executables, and the health
check runs against a local HTTP server.
"""

from __future__ import annotations

import hashlib
import http.server
import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
import threading
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from deploy_files import (
    BROWSER_LOCK,
    BUILD_LOCK,
    COMPOSE,
    DEPLOY,
    DOCKERFILE,
    ENV_EXAMPLE,
    LOCK,
    NGINX_CONF,
    ROOT,
    MissingVariable,
    compose,
    dockerfile_args,
    dockerfile_stages,
    env_file,
    env_of,
    free_port,
    healthcheck,
    image_stage,
    lock_pins,
    nginx_conf,
    service_environment,
)

PINNED = re.compile(
    r"(?P<name>[a-z0-9][a-z0-9./_-]*):(?P<tag>[\w.-]+)@sha256:(?P<digest>[0-9a-f]{64})"
)
# The values of the Dockerfile's BROWSER build argument (`none` is the default image).
BROWSERS = ("none", "chromium")
REQUIRED = ("WEBREACH_UPSTREAM_BASE_URL", "WEBREACH_SERVER_API_KEYS", "WEBREACH_SIGNING_KEY")
FILLED = {
    "WEBREACH_UPSTREAM_BASE_URL": "http://upstream.internal/v1",
    "WEBREACH_SERVER_API_KEYS": "inbound-key",
    "WEBREACH_SIGNING_KEY": "s" * 43,
}
# The interpreter and platform of the image (python:3.12-slim, Debian, amd64 or arm64).
IMAGE_MARKERS = {
    "python_version": "3.12",
    "python_full_version": "3.12.13",
    "implementation_name": "cpython",
    "platform_python_implementation": "CPython",
    "sys_platform": "linux",
    "platform_system": "Linux",
    "os_name": "posix",
    "platform_machine": "x86_64",
}


# --- base images pinned by digest ---------------------------------------------------------------


def test_every_base_image_is_pinned_by_digest() -> None:
    stages = dockerfile_stages()
    aliases = {stage.alias for stage in stages}
    # Every FROM is a pinned image or an earlier stage (its name perhaps chosen by BROWSER).
    bases = [stage.base for stage in stages if stage.base.split("-$")[0] not in aliases]
    bases = [base for base in bases if "${" not in base]
    assert all(PINNED.fullmatch(base) for base in bases), bases
    for browser in BROWSERS:
        for alias in ("build", None):
            assert PINNED.fullmatch(image_stage({"BROWSER": browser}, alias).base)
    assert len(set(bases)) == 1, "the build and the runtime stages share one pinned base"
    services = compose()["services"]
    for name in ("lb", "redis"):
        assert PINNED.fullmatch(services[name]["image"]), services[name]["image"]
    # The replicas run the image built here, never one pulled by name.
    assert "build" in services["webreach"]


def fake_executable(directory: Path, name: str, script: str) -> None:
    path = directory / name
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(0o755)


def tools_path(directory: Path, *names: str) -> str:
    """A PATH of ``directory`` (the fakes) and only these real tools, so whatever engine this
    machine has installed stays out of sight."""
    tools = directory / "tools"
    tools.mkdir(exist_ok=True)
    for name in ("sh", "dirname", "sed", "sort", "tail", "timeout", "grep", "tr", "cut", *names):
        found = shutil.which(name)
        assert found, f"{name} is needed to run the deploy scripts"
        if not (tools / name).exists():
            (tools / name).symlink_to(found)
    return f"{directory}{os.pathsep}{tools}"


@pytest.mark.slow
def test_pin_images_moves_every_pin_to_what_its_tag_names_now(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    (tree / "deploy").mkdir(parents=True)
    for path in (DOCKERFILE, COMPOSE, DEPLOY / "pin-images"):
        shutil.copy2(path, tree / path.relative_to(ROOT))
    fakes = tmp_path / "bin"
    fakes.mkdir()
    # `crane digest NAME:TAG` answers a digest derived from the tag, and logs what it was asked.
    fake_executable(
        fakes,
        "crane",
        f'echo "$*" >> {tmp_path}/crane.log\n'
        'printf "sha256:%s\\n" "$(printf %s "$2" | sha256sum | cut -d" " -f1)"\n',
    )
    before = {p: (tree / p).read_text() for p in ("Dockerfile", "deploy/compose.yaml")}
    done = subprocess.run(
        ["deploy/pin-images"],
        cwd=tree,
        env={"PATH": tools_path(fakes, "sha256sum")},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    asked = sorted(set((tmp_path / "crane.log").read_text().split("\n")) - {""})
    assert asked == [
        "digest nginx:1.30-alpine",
        "digest python:3.12-slim",
        "digest redis:7-alpine",
    ]
    for relative, old in before.items():
        new = (tree / relative).read_text()
        old_refs = list(PINNED.finditer(old))
        new_refs = list(PINNED.finditer(new))
        assert [m.group("name", "tag") for m in old_refs] == [
            m.group("name", "tag") for m in new_refs
        ]
        for ref in new_refs:
            expected = hashlib.sha256(f"{ref['name']}:{ref['tag']}".encode()).hexdigest()
            assert ref["digest"] == expected
        # Nothing but the digests moved.
        assert PINNED.sub("REF", old) == PINNED.sub("REF", new)


@pytest.mark.slow
def test_pin_images_refuses_without_a_tool_to_ask(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    (tree / "deploy").mkdir(parents=True)
    for path in (DOCKERFILE, COMPOSE, DEPLOY / "pin-images"):
        shutil.copy2(path, tree / path.relative_to(ROOT))
    done = subprocess.run(
        ["deploy/pin-images"],
        cwd=tree,
        env={"PATH": tools_path(tmp_path)},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 2
    assert "needs crane, docker buildx or skopeo" in done.stderr
    assert (tree / "Dockerfile").read_text() == DOCKERFILE.read_text()  # untouched


# --- the lock ---------------------------------------------------------------------------------


def lock_extras(lock: Path = LOCK) -> list[str]:
    """The extras deploy/lock locks into ``lock``: the ``--extra NAME`` of the uv command
    writing it."""
    lines = (DEPLOY / "lock").read_text().splitlines()
    script = "\n".join(line for line in lines if not line.lstrip().startswith("#"))
    commands = script.replace("\\\n", " ").splitlines()
    (command,) = [c for c in commands if f"--output-file deploy/{lock.name}" in c]
    return re.findall(r"--extra (\w+)", command)


def runtime_requirements(lock: Path = LOCK) -> list[Requirement]:
    """What ``pip install ".[extras]"`` asks for: the dependencies and the locked extras'."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = lock_extras(lock)
    named = [*project["dependencies"]]
    for extra in extras:
        named += project["optional-dependencies"][extra]
    return [Requirement(text) for text in named]


def applies(requirement: Requirement, extras: set[str]) -> bool:
    if requirement.marker is None:
        return True
    return any(
        requirement.marker.evaluate({**IMAGE_MARKERS, "extra": extra}) for extra in extras or {""}
    )


def closure(requirements: list[Requirement]) -> set[str]:
    """Every distribution those requirements pull in on the image's platform, walked through the
    metadata installed here (the dev install holds them all)."""
    seen: set[str] = set()
    queue = [(r, set(r.extras)) for r in requirements if applies(r, set())]
    while queue:
        requirement, extras = queue.pop()
        name = canonicalize_name(requirement.name)
        key = name + "[" + ",".join(sorted(extras)) + "]"
        if key in seen:
            continue
        seen.add(key)
        for text in importlib.metadata.requires(requirement.name) or []:
            dependency = Requirement(text)
            if applies(dependency, extras):
                queue.append((dependency, set(dependency.extras)))
    return {key.partition("[")[0] for key in seen}


@pytest.mark.parametrize(
    ("lock", "extras"),
    [(LOCK, ["server", "redis"]), (BROWSER_LOCK, ["server", "redis", "browser"])],
    ids=["runtime", "browser"],
)
def test_the_lock_covers_every_runtime_dependency_with_hashes(
    lock: Path, extras: list[str]
) -> None:
    assert lock_extras(lock) == extras
    pins = lock_pins(lock)
    for locked in pins.values():
        assert locked.hashes and all(h.startswith("sha256:") for h in locked.hashes), locked.name
    # The direct requirements: pinned at a version pyproject.toml allows (a bump there
    # without `deploy/lock` fails here).
    for requirement in runtime_requirements(lock):
        pin = pins.get(canonicalize_name(requirement.name))
        assert pin is not None, f"{requirement.name} is not in {lock.name}; run deploy/lock"
        assert requirement.specifier.contains(pin.version, prereleases=True), (
            f"{lock.name} pins {pin.name}=={pin.version}, pyproject.toml wants {requirement}"
        )
    # And everything they pull in on the image's platform.
    needed = closure(runtime_requirements(lock)) - {"webreach"}
    missing = sorted(needed - set(pins))
    assert not missing, f"{lock.name} lacks {missing}; run deploy/lock"
    for name in needed:
        marker = pins[name].marker
        assert not marker or Marker(marker).evaluate(IMAGE_MARKERS), (name, marker)
    # Only the server's extras: no test or MCP tooling in the image.
    assert not {"pytest", "mcp", "mypy"} & set(pins)


def test_the_browser_lock_is_the_runtime_lock_and_playwright() -> None:
    """The browser image runs the same versions as the default one, plus Playwright's."""
    runtime, browser = lock_pins(LOCK), lock_pins(BROWSER_LOCK)
    assert "playwright" in browser and "playwright" not in runtime
    for name, pin in runtime.items():
        assert name in browser, f"{BROWSER_LOCK.name} lacks {name}; run deploy/lock"
        assert browser[name].version == pin.version, (name, browser[name].version, pin.version)
    added = closure([Requirement("playwright")])
    assert set(browser) - set(runtime) <= added, sorted(set(browser) - set(runtime) - added)


def test_the_build_backend_is_locked_too() -> None:
    pins = lock_pins(BUILD_LOCK)
    build_system = tomllib.loads((ROOT / "pyproject.toml").read_text())["build-system"]
    for text in build_system["requires"]:
        requirement = Requirement(text)
        pin = pins[canonicalize_name(requirement.name)]
        assert requirement.specifier.contains(pin.version)
    assert all(pin.hashes for pin in pins.values())
    for lock in (LOCK, BROWSER_LOCK, BUILD_LOCK):
        assert "#    deploy/lock" in lock.read_text(), f"{lock.name} names its refresh command"


@pytest.mark.parametrize(
    ("browser", "lock"),
    [("none", "requirements.lock"), ("chromium", "browser-requirements.lock")],
)
def test_the_image_installs_only_from_the_locks_with_hashes(browser: str, lock: str) -> None:
    build = image_stage({"BROWSER": browser}, "build")
    copies = build.all("COPY")
    assert copies[0] == f"deploy/{lock} deploy/build-requirements.lock ./deploy/"
    runs = [step for run in build.all("RUN") for step in run.split("&&")]
    installs = [step.strip() for step in runs if re.search(r"\bpip (install|wheel)\b", step)]
    from_locks = [step for step in installs if " -r " in step]
    assert len(from_locks) == 2
    for step in from_locks:
        # Hashes required, nothing outside the lock, nothing built from a source archive.
        for flag in ("--require-hashes", "--no-deps", "--only-binary :all:"):
            assert flag in step, (flag, step)
    assert any(f"-r deploy/{lock}" in step for step in from_locks)
    assert any("-r deploy/build-requirements.lock" in step for step in from_locks)
    # webreach itself: a wheel built with the locked backend, installed without dependencies.
    (wheel,) = [step for step in installs if "pip wheel" in step]
    assert "--no-build-isolation" in wheel and "--no-deps" in wheel
    (package,) = [step for step in installs if ".whl" in step]
    assert "--no-deps" in package
    assert any("pip check" in step for step in runs)
    assert not any(re.search(r"pip install[^&]* \.(\[|\s|$)", step) for step in installs)


# --- the image with a browser (--build-arg BROWSER=chromium) ------------------------------------


def test_the_default_build_has_nothing_of_the_browser() -> None:
    assert dockerfile_args() == {"BROWSER": "none"}
    for alias in ("build", None):
        stage = image_stage(alias=alias)
        assert stage == image_stage({"BROWSER": "none"}, alias)
        text = " ".join(i.args for i in stage.instructions)
        # No ARG in a stage, so no build argument enters a step's cache key.
        assert not stage.all("ARG")
        assert not re.search(r"chromium|browser|BROWSER", text), text
    assert not any("apt-get" in run for run in image_stage().all("RUN"))


def test_the_browser_image_is_the_default_one_and_debians_chromium() -> None:
    default, browser = image_stage(), image_stage({"BROWSER": "chromium"})
    assert browser.base == default.base
    added = [i for i in browser.instructions if i not in default.instructions]
    assert [i for i in browser.instructions if i not in added] == default.instructions
    (install,) = [i.args for i in added if i.name == "RUN"]
    steps = [step.strip() for step in install.split("&&")]
    assert steps[0] == "apt-get update"
    assert steps[1] == "apt-get install --yes --no-install-recommends chromium"
    assert steps[-1] == "rm -rf /var/lib/apt/lists/*"
    assert "chromium-sandbox" not in install  # no setuid helper
    # Installed as root, before the image turns to its unprivileged user for good.
    names = [i.name for i in browser.instructions]
    assert names.index("USER") > browser.instructions.index(added[0])
    assert browser.last("USER") == default.last("USER") == "10001:10001"
    environment = env_of(browser)
    assert environment["WEBREACH_BROWSER_EXECUTABLE"] == "/usr/bin/chromium"
    # The sandbox stays on unless the operator turns it off (docs/library/browser.md).
    assert "WEBREACH_BROWSER_NO_SANDBOX" not in environment
    assert {k: v for k, v in environment.items() if not k.startswith("WEBREACH_BROWSER")} == (
        env_of(default)
    )


def test_every_browser_value_names_its_stages_and_no_other_does() -> None:
    for browser in BROWSERS:
        for alias in ("build", None):
            assert image_stage({"BROWSER": browser}, alias)
    with pytest.raises(AssertionError, match="names no stage"):
        image_stage({"BROWSER": "firefox"})


# --- compose: a required value left empty -------------------------------------------------------


def test_the_env_example_as_copied_stops_compose_naming_the_value() -> None:
    copied = env_file(ENV_EXAMPLE)
    with pytest.raises(MissingVariable) as stopped:
        compose(copied)
    assert stopped.value.name in REQUIRED
    assert "deploy/.env" in str(stopped.value)


@pytest.mark.parametrize("empty", REQUIRED)
def test_each_required_value_left_empty_is_named(empty: str) -> None:
    variables = {**env_file(ENV_EXAMPLE), **FILLED, empty: ""}
    with pytest.raises(MissingVariable) as stopped:
        compose(variables)
    assert stopped.value.name == empty
    assert "set it in deploy/.env" in str(stopped.value)
    # Unset is refused as empty is (`:?`, not `?`).
    del variables[empty]
    with pytest.raises(MissingVariable):
        compose(variables)


def test_filled_in_the_replicas_get_the_values_as_written() -> None:
    variables = {**env_file(ENV_EXAMPLE), **FILLED}
    environment = service_environment(compose(variables)["services"]["webreach"])
    for name, value in FILLED.items():
        assert environment[name] == value
    # Every variable compose asks for is one the template names, so copying it is enough.
    asked = set(re.findall(r"\$\{(\w+)", str(compose())))
    assert asked == set(REQUIRED) <= set(env_file(ENV_EXAMPLE))


@pytest.mark.slow
def test_compose_config_accepts_the_filled_file_when_an_engine_answers(tmp_path: Path) -> None:
    """The real `docker compose config`, where an engine is present (not on this machine)."""
    docker = shutil.which("docker")
    if docker is None or subprocess.run([docker, "info"], capture_output=True).returncode != 0:
        pytest.skip("no container engine answers here; the interpolation is checked above")
    if subprocess.run([docker, "compose", "version"], capture_output=True).returncode != 0:
        pytest.skip("docker has no compose plugin here")
    tree = tmp_path / "deploy"
    shutil.copytree(DEPLOY, tree)
    (tree / ".env").write_text("".join(f"{k}={v}\n" for k, v in FILLED.items()))
    done = subprocess.run(
        [docker, "compose", "-f", str(tree / "compose.yaml"), "config", "--quiet"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    (tree / ".env").write_text("WEBREACH_SERVER_API_KEYS=\n")
    done = subprocess.run(
        [docker, "compose", "-f", str(tree / "compose.yaml"), "config", "--quiet"],
        capture_output=True,
        text=True,
    )
    assert done.returncode != 0 and "deploy/.env" in done.stderr


# --- nginx's resolver under Docker and Podman ---------------------------------------------------

DOCKER_RESOLV_CONF = "# Generated by Docker Engine.\nnameserver 127.0.0.11\noptions ndots:0\n"
PODMAN_RESOLV_CONF = "search dns.podman\nnameserver 10.89.0.1\nnameserver fd00:89::1\n"


@pytest.mark.parametrize(
    ("resolv_conf", "resolvers"),
    [(DOCKER_RESOLV_CONF, ["127.0.0.11"]), (PODMAN_RESOLV_CONF, ["10.89.0.1", "[fd00:89::1]"])],
    ids=["docker", "podman"],
)
def test_nginx_resolves_through_the_containers_own_dns(
    resolv_conf: str, resolvers: list[str]
) -> None:
    conf = nginx_conf(resolv_conf=resolv_conf)
    resolver = conf.one("resolver")
    assert resolver[: len(resolvers)] == resolvers
    assert "valid=10s" in resolver[len(resolvers) :]
    (server,) = conf.block("upstream", "webreach").directives["server"]
    assert "resolve" in server
    # No engine's address is written in the template itself.
    assert "127.0.0.11" not in NGINX_CONF.read_text().split("resolver", 1)[1].split(";")[0]


def test_only_the_resolver_variable_is_substituted() -> None:
    lb = service_environment(compose()["services"]["lb"])
    pattern = lb["NGINX_ENVSUBST_FILTER"]
    used = set(re.findall(r"\$\{?([A-Za-z_]\w*)", NGINX_CONF.read_text()))
    assert {name for name in used if re.search(pattern, name)} == {"NGINX_LOCAL_RESOLVERS"}
    assert {"host", "remote_addr", "request_id"} <= used  # nginx's own, left alone


# --- health checks --------------------------------------------------------------------------


class _Readiness(http.server.BaseHTTPRequestHandler):
    ready = True

    def do_GET(self) -> None:
        if self.path == "/healthz":
            status = 200
        elif self.path == "/readyz":
            status = 200 if type(self).ready else 503
        else:
            status = 404
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.end_headers()
        self.wfile.write(b'{"status": "ok"}' if status == 200 else b'{"status": "unready"}')

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def readiness() -> Iterator[tuple[int, type[_Readiness]]]:
    handler = type("Handler", (_Readiness,), {"ready": True})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], handler
    finally:
        server.shutdown()
        server.server_close()


def run_compose_health_check(port: int) -> int:
    check = compose()["services"]["webreach"]["healthcheck"]["test"]
    assert check[:3] == ["CMD", "python", "-c"], check
    env = {"PATH": os.environ["PATH"], "PORT": str(port)}
    return subprocess.run([sys.executable, *check[2:]], env=env, timeout=30).returncode


@pytest.mark.slow
def test_compose_waits_for_ready_replicas_on_readyz(
    readiness: tuple[int, type[_Readiness]],
) -> None:
    port, handler = readiness
    assert run_compose_health_check(port) == 0
    handler.ready = False  # alive (/healthz 200) but the upstream has not answered lately
    assert run_compose_health_check(port) == 1
    assert run_compose_health_check(free_port()) == 1  # nothing listening
    services = compose()["services"]
    assert services["lb"]["depends_on"]["webreach"]["condition"] == "service_healthy"
    # The image's own check stays on liveness, for runtimes that read only the image.
    _, command = healthcheck(image_stage())
    assert "/healthz" in command and "/readyz" not in command


# --- .ci/run: the image built only where it can be ---------------------------------------------

ENGINE = """case "$1" in
  info) exit {info} ;;
  image) [ -e "{root}/present" ] && exit 0; exit 1 ;;
  pull) echo "pull $*" >> "{root}/calls"
        [ {pull} -eq 0 ] && exit 0
        echo "Error: initializing source docker://$3: pinging container registry" \
             "registry-1.docker.io: dial tcp: lookup registry-1.docker.io: no such host" >&2
        exit 125 ;;
  build) echo "build $*" >> "{root}/calls"
         [ -e "{root}/present" ] && exit 0
         echo "Error: creating build container: python:3.12-slim: no such host" >&2
         exit 125 ;;
esac
exit 0
"""


def engines(tmp_path: Path, **scripted: tuple[int, int]) -> Path:
    """Fake engines named as given, each answering ``info`` and ``pull`` with these codes."""
    fakes = tmp_path / "bin"
    fakes.mkdir(exist_ok=True)
    for name, (info, pull) in scripted.items():
        fake_executable(fakes, name, ENGINE.format(info=info, pull=pull, root=tmp_path))
    return fakes


def can_build(tmp_path: Path, fakes: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(DEPLOY / "can-build")],
        env={"PATH": tools_path(fakes)},
        capture_output=True,
        text=True,
        timeout=60,
    )


def base_image() -> str:
    return dockerfile_stages()[0].base


@pytest.mark.slow
def test_no_engine_installed_is_a_reason_to_skip(tmp_path: Path) -> None:
    done = can_build(tmp_path, engines(tmp_path))
    assert (done.returncode, done.stdout.strip()) == (1, "no docker or podman on this machine")


@pytest.mark.slow
def test_a_docker_cli_without_its_daemon_is_a_reason_to_skip(tmp_path: Path) -> None:
    done = can_build(tmp_path, engines(tmp_path, docker=(1, 0)))
    assert done.returncode == 1
    assert done.stdout.strip() == "installed but no engine answering: docker"


@pytest.mark.slow
def test_podman_without_registry_access_skips_naming_the_image(tmp_path: Path) -> None:
    """The machine of the issue: podman answers, the base image is not there and cannot be
    pulled."""
    done = can_build(tmp_path, engines(tmp_path, docker=(1, 0), podman=(0, 1)))
    assert done.returncode == 1
    reason = done.stdout.strip()
    assert reason.startswith(f"podman answers, but the base image {base_image()} is not present")
    assert "could not be pulled" in reason and "no such host" in reason


@pytest.mark.slow
def test_podman_with_the_image_present_builds_without_pulling(tmp_path: Path) -> None:
    (tmp_path / "present").touch()
    done = can_build(tmp_path, engines(tmp_path, docker=(1, 0), podman=(0, 1)))
    assert (done.returncode, done.stdout.strip()) == (0, "podman")
    assert not (tmp_path / "calls").exists()


@pytest.mark.slow
def test_an_engine_that_can_pull_the_image_builds(tmp_path: Path) -> None:
    done = can_build(tmp_path, engines(tmp_path, docker=(0, 0)))
    assert (done.returncode, done.stdout.strip()) == (0, "docker")
    assert (tmp_path / "calls").read_text() == f"pull pull --quiet {base_image()}\n"


def ci_image_step(tmp_path: Path, fakes: Path) -> subprocess.CompletedProcess[str]:
    """.ci/run's own `step` function and image step, run as .ci/run runs them."""
    text = (ROOT / ".ci" / "run").read_text()
    step = text[text.index("status=0") : text.index("}\n", text.index("step()")) + 2]
    image = text[text.index("# The container image") : text.index("exit $status")]
    script = f"set -euo pipefail\ncd {ROOT}\n{step}\n{image}\nexit $status\n"
    return subprocess.run(
        ["bash", "-c", script],
        env={"PATH": tools_path(fakes, "bash")},
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.slow
def test_ci_skips_the_image_with_its_reason_and_keeps_its_status(tmp_path: Path) -> None:
    done = ci_image_step(tmp_path, engines(tmp_path, podman=(0, 1)))
    assert done.returncode == 0, done.stdout + done.stderr
    (line,) = [line for line in done.stdout.splitlines() if line.startswith("==")]
    reason = f"podman answers, but the base image {base_image()} is not present"
    assert line.startswith(f"== skipped: image build ({reason}")
    assert "!! failed" not in done.stdout


@pytest.mark.slow
def test_ci_builds_the_image_where_it_can(tmp_path: Path) -> None:
    (tmp_path / "present").touch()
    done = ci_image_step(tmp_path, engines(tmp_path, podman=(0, 0)))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "== podman build --quiet --tag webreach:ci ." in done.stdout
    assert (tmp_path / "calls").read_text() == "build build --quiet --tag webreach:ci .\n"
