"""Readers for the deployment files (Dockerfile, .dockerignore, deploy/compose.yaml,
deploy/nginx.conf.template and the lock files), so tests can assert what they say and run what
they would run, without a container engine."""

from __future__ import annotations

import json
import os
import re
import shlex
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from client_sockets import STARTUP_PATIENCE

ROOT = Path(__file__).resolve().parent.parent
DOCKERFILE = ROOT / "Dockerfile"
DOCKERIGNORE = ROOT / ".dockerignore"
DEPLOY = ROOT / "deploy"
COMPOSE = DEPLOY / "compose.yaml"
NGINX_CONF = DEPLOY / "nginx.conf.template"
ENV_EXAMPLE = DEPLOY / "webreach.env.example"
LOCK = DEPLOY / "requirements.lock"
BROWSER_LOCK = DEPLOY / "browser-requirements.lock"
BUILD_LOCK = DEPLOY / "build-requirements.lock"


# --- Dockerfile -------------------------------------------------------------------------------


@dataclass
class Instruction:
    name: str  # upper case: FROM, RUN, COPY …
    args: str  # the rest of the (joined) line


@dataclass
class Stage:
    base: str
    alias: str | None
    instructions: list[Instruction] = field(default_factory=list)

    def all(self, name: str) -> list[str]:
        return [i.args for i in self.instructions if i.name == name]

    def last(self, name: str) -> str:
        found = self.all(name)
        assert found, f"the stage FROM {self.base} has no {name}"
        return found[-1]


def dockerfile_lines(path: Path = DOCKERFILE) -> list[str]:
    """A Dockerfile's instructions: comments dropped, continuation lines joined."""
    lines: list[str] = []
    pending = ""
    for raw in path.read_text().splitlines():
        if raw.lstrip().startswith("#"):
            continue  # a comment, the syntax directive, or a comment inside a continued line
        if raw.rstrip().endswith("\\"):
            pending += raw.rstrip()[:-1] + " "
            continue
        line = (pending + raw).strip()
        pending = ""
        if line:
            lines.append(line)
    assert not pending, "the Dockerfile ends inside a continued line"
    return lines


def dockerfile_args(path: Path = DOCKERFILE) -> dict[str, str]:
    """The ``ARG NAME=default`` lines before the first FROM: the only ones a FROM can use."""
    args: dict[str, str] = {}
    for line in dockerfile_lines(path):
        name, _, rest = line.partition(" ")
        if name.upper() == "FROM":
            break
        assert name.upper() == "ARG", f"{name} before any FROM"
        key, _, value = rest.strip().partition("=")
        args[key] = value
    return args


def dockerfile_stages(path: Path = DOCKERFILE) -> list[Stage]:
    """The stages of a Dockerfile as written (a FROM's ``${ARG}`` left in place)."""
    stages: list[Stage] = []
    for line in dockerfile_lines(path):
        name, _, args = line.partition(" ")
        name = name.upper()
        args = args.strip()
        if name == "FROM":
            words = args.split()
            words = [w for w in words if not w.startswith("--")]
            alias = words[2] if len(words) == 3 and words[1].upper() == "AS" else None
            stages.append(Stage(words[0], alias))
            continue
        if not stages:
            continue  # a global ARG (dockerfile_args)
        stages[-1].instructions.append(Instruction(name, args))
    return stages


def image_stage(
    build_args: dict[str, str] | None = None, alias: str | None = None, path: Path = DOCKERFILE
) -> Stage:
    """What a build with these ``--build-arg`` values runs for the stage named ``alias`` (the
    last stage, the image, by default), as BuildKit resolves it: ``${ARG}`` in each FROM filled
    in from the global ARGs, and a FROM naming an earlier stage replaced by that stage's own
    instructions. The result starts from a registry image and holds every instruction in
    order; a name that is no stage of the file fails here, as the build would."""
    stages = dockerfile_stages(path)
    values = {**dockerfile_args(path), **(build_args or {})}

    def fill(base: str) -> str:
        def replace(match: re.Match[str]) -> str:
            name = match[1] or match[2]
            assert name in values, f"FROM {base}: {name} is not a global ARG"
            return values[name]

        return re.sub(r"\$\{(\w+)\}|\$(\w+)", replace, base)

    def flatten(index: int) -> Stage:
        stage = stages[index]
        base = fill(stage.base)
        earlier = [i for i, s in enumerate(stages[:index]) if s.alias == base]
        if earlier:
            parent = flatten(earlier[-1])
            return Stage(parent.base, stage.alias, parent.instructions + stage.instructions)
        assert "@sha256:" in base, f"FROM {base} names no stage and no pinned image"
        return Stage(base, stage.alias, list(stage.instructions))

    if alias is None:
        return flatten(len(stages) - 1)
    (index,) = [i for i, s in enumerate(stages) if s.alias == alias]
    return flatten(index)


def exec_form(args: str) -> list[str]:
    """An instruction's JSON (exec) form."""
    value = json.loads(args)
    assert isinstance(value, list) and all(isinstance(v, str) for v in value), args
    return value


def env_of(stage: Stage) -> dict[str, str]:
    """The ``ENV key=value …`` of a stage (later ones win)."""
    env: dict[str, str] = {}
    for args in stage.all("ENV"):
        for word in shlex.split(args):
            key, _, value = word.partition("=")
            env[key] = value
    return env


def healthcheck(stage: Stage) -> tuple[dict[str, str], str]:
    """The options and the shell command of the stage's ``HEALTHCHECK … CMD <shell form>``."""
    args = stage.last("HEALTHCHECK")
    options_part, marker, command = args.partition(" CMD ")
    assert marker, f"HEALTHCHECK without CMD: {args}"
    options = dict(word.removeprefix("--").split("=", 1) for word in options_part.split())
    assert not command.lstrip().startswith("["), "the health check is expected in shell form"
    return options, command.strip()


# --- .dockerignore ----------------------------------------------------------------------------


@dataclass
class IgnorePattern:
    regex: re.Pattern[str]
    exclusion: bool  # a `!` line: re-includes what it matches


def _pattern_regex(pattern: str) -> re.Pattern[str]:
    """Go's filepath.Match with ``**`` (any number of directories), as Docker reads it."""
    out = ""
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out += "(?:.*/)?"
            i += 3
        elif pattern.startswith("**", i):
            out += ".*"
            i += 2
        elif pattern[i] == "*":
            out += "[^/]*"
            i += 1
        elif pattern[i] == "?":
            out += "[^/]"
            i += 1
        elif pattern[i] == "[":
            end = pattern.index("]", i)
            out += pattern[i : end + 1]
            i = end + 1
        else:
            out += re.escape(pattern[i])
            i += 1
    return re.compile(out)


def dockerignore(path: Path = DOCKERIGNORE) -> list[IgnorePattern]:
    return ignore_patterns(path.read_text().splitlines())


def ignore_patterns(lines: list[str]) -> list[IgnorePattern]:
    """The lines of a .dockerignore: comments dropped, each cleaned as Docker cleans it."""
    patterns: list[IgnorePattern] = []
    for raw in lines:
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        exclusion = line.startswith("!")
        line = os.path.normpath(line.removeprefix("!").strip()).lstrip("/")
        patterns.append(IgnorePattern(_pattern_regex(line), exclusion))
    return patterns


def in_build_context(relative: str, patterns: list[IgnorePattern]) -> bool:
    """Whether Docker sends this file (a path relative to the context, with ``/``): the last
    pattern matching the path or one of its parent directories decides (moby's
    ``MatchesOrParentMatches``)."""
    parts = relative.split("/")
    candidates = ["/".join(parts[: n + 1]) for n in range(len(parts))]
    ignored = False
    for pattern in patterns:
        if pattern.exclusion != ignored:
            continue
        if any(pattern.regex.fullmatch(candidate) for candidate in candidates):
            ignored = not pattern.exclusion
    return not ignored


# --- compose and its env file -----------------------------------------------------------------


def compose(variables: dict[str, str] | None = None) -> dict[str, Any]:
    """compose.yaml as written, or, given the variables compose would read (its .env), as
    compose interpolates it (:func:`interpolate`)."""
    loaded = yaml.safe_load(COMPOSE.read_text())
    assert isinstance(loaded, dict)
    if variables is None:
        return loaded
    interpolated = interpolate(loaded, variables)
    assert isinstance(interpolated, dict)
    return interpolated


class MissingVariable(Exception):
    """What compose stops with for ``${NAME:?message}`` (or ``${NAME?message}``)."""

    def __init__(self, name: str, message: str) -> None:
        super().__init__(f"required variable {name} is missing a value: {message}")
        self.name = name


_REFERENCE = re.compile(
    r"\$(?:(?P<escaped>\$)|\{(?P<braced>[A-Za-z_][A-Za-z0-9_]*)"
    r"(?:(?P<op>:?[-?+])(?P<arg>[^}]*))?\}|(?P<plain>[A-Za-z_][A-Za-z0-9_]*)|(?P<invalid>))"
)


def interpolate(node: Any, variables: dict[str, str]) -> Any:
    """Compose's interpolation of every string of ``node``: ``$$``, ``$NAME``, ``${NAME}``,
    ``${NAME:-default}`` / ``${NAME-default}``, ``${NAME:+alt}`` / ``${NAME+alt}`` and
    ``${NAME:?message}`` / ``${NAME?message}`` (the colon forms also treat empty as unset)."""
    if isinstance(node, dict):
        return {key: interpolate(value, variables) for key, value in node.items()}
    if isinstance(node, list):
        return [interpolate(value, variables) for value in node]
    if not isinstance(node, str):
        return node

    def replace(match: re.Match[str]) -> str:
        if match["escaped"]:
            return "$"
        if match["invalid"] is not None:
            raise ValueError(f"invalid interpolation format (a lone $; write $$): {node!r}")
        name = match["braced"] or match["plain"]
        value = variables.get(name)
        op, arg = match["op"] or "", match["arg"] or ""
        missing = value is None or (op.startswith(":") and value == "")
        if op.endswith("-"):
            return arg if missing else str(value)
        if op.endswith("+"):
            return "" if missing else arg
        if op.endswith("?") and missing:
            raise MissingVariable(name, arg)
        return value or ""

    return _REFERENCE.sub(replace, node)


def service_environment(service: dict[str, Any]) -> dict[str, str]:
    """A service's ``environment:`` (mapping or list form) as strings."""
    environment = service.get("environment") or {}
    if isinstance(environment, list):
        return dict(str(item).partition("=")[::2] for item in environment)
    return {str(k): "" if v is None else str(v) for k, v in environment.items()}


def env_file(path: Path) -> dict[str, str]:
    """``KEY=value`` lines, comments and blank lines skipped (no quoting is used here)."""
    values: dict[str, str] = {}
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.partition("=")
        assert sep, f"{path.name}: not KEY=value: {raw!r}"
        values[key.strip()] = value.strip()
    return values


# --- nginx.conf -------------------------------------------------------------------------------


@dataclass
class Block:
    """A block of nginx.conf: its directives (name → list of argument lists) and sub-blocks."""

    name: str
    args: list[str]
    directives: dict[str, list[list[str]]] = field(default_factory=dict)
    blocks: list[Block] = field(default_factory=list)

    def one(self, name: str) -> list[str]:
        found = self.directives.get(name, [])
        assert len(found) == 1, f"{self.name} {self.args}: {name} is set {len(found)} times"
        return found[0]

    def block(self, name: str, *args: str) -> Block:
        found = [b for b in self.blocks if b.name == name and tuple(b.args) == args]
        assert len(found) == 1, f"no single `{name} {' '.join(args)}` block"
        return found[0]


def resolv_conf_nameservers(text: str) -> str:
    """What the official nginx image's entry point puts in ``NGINX_LOCAL_RESOLVERS`` when
    ``NGINX_ENTRYPOINT_LOCAL_RESOLVERS`` is set: the ``nameserver`` addresses of the container's
    /etc/resolv.conf, space-separated, IPv6 ones in brackets."""
    servers = []
    for line in text.splitlines():
        words = line.split()
        if len(words) >= 2 and words[0] == "nameserver":
            servers.append(f"[{words[1]}]" if ":" in words[1] else words[1])
    return " ".join(servers)


def render_template(text: str, environment: dict[str, str], pattern: str) -> str:
    """The image's ``envsubst`` of /etc/nginx/templates: only variables that are set and whose
    name matches ``NGINX_ENVSUBST_FILTER`` are replaced; anything else (nginx's own ``$host``)
    is left as written."""

    def replace(match: re.Match[str]) -> str:
        name = match[1] or match[2]
        if name in environment and re.search(pattern, name):
            return environment[name]
        return match[0]

    return re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)", replace, text)


def nginx_conf(path: Path = NGINX_CONF, resolv_conf: str = "nameserver 127.0.0.11\n") -> Block:
    """The configuration nginx runs: the template as compose's ``lb`` service renders it, in a
    container whose /etc/resolv.conf is ``resolv_conf`` (Docker's by default)."""
    lb = compose()["services"]["lb"]
    environment = service_environment(lb)
    assert environment.get("NGINX_ENTRYPOINT_LOCAL_RESOLVERS"), "the resolvers are not filled in"
    environment["NGINX_LOCAL_RESOLVERS"] = resolv_conf_nameservers(resolv_conf)
    rendered = render_template(
        path.read_text(), environment, environment.get("NGINX_ENVSUBST_FILTER", "")
    )
    text = "\n".join(line.split("#", 1)[0] for line in rendered.splitlines())
    assert "${" not in text, "a template variable is left in nginx.conf"
    tokens = re.findall(r'"[^"]*"|[{};]|[^\s{};"]+', text)
    root = Block("main", [])
    stack = [root]
    words: list[str] = []
    for token in tokens:
        if token == "{":
            block = Block(words[0], words[1:])
            stack[-1].blocks.append(block)
            stack.append(block)
            words = []
        elif token == "}":
            assert not words, f"unterminated directive {words}"
            stack.pop()
        elif token == ";":
            stack[-1].directives.setdefault(words[0], []).append(words[1:])
            words = []
        else:
            words.append(token.strip('"') if token.startswith('"') else token)
    assert len(stack) == 1 and not words, "unbalanced braces in nginx.conf"
    return root


def nginx_seconds(value: str) -> float:
    """An nginx time (``900s``, ``15m``, ``4s``, ``500ms``, a bare number of seconds)."""
    match = re.fullmatch(r"(\d+)(ms|s|m|h)?", value)
    assert match, value
    number, unit = int(match.group(1)), match.group(2) or "s"
    return number * {"ms": 0.001, "s": 1, "m": 60, "h": 3600}[unit]


# --- the lock files ---------------------------------------------------------------------------


@dataclass
class Pin:
    name: str  # normalized (PEP 503)
    version: str
    marker: str  # "" when the pin applies everywhere
    hashes: list[str]


def lock_pins(path: Path = LOCK) -> dict[str, Pin]:
    """A ``uv pip compile --generate-hashes`` output: ``name==version ; marker`` with its
    ``--hash=sha256:…`` continuation lines."""
    from packaging.utils import canonicalize_name

    pins: dict[str, Pin] = {}
    current: Pin | None = None
    for raw in path.read_text().splitlines():
        line = raw.split(" #", 1)[0].strip() if not raw.lstrip().startswith("#") else ""
        line = line.rstrip("\\").strip()
        if not line:
            continue
        if line.startswith("--hash="):
            assert current is not None, f"{path.name}: a hash before any pin"
            current.hashes.append(line.removeprefix("--hash="))
            continue
        requirement, _, marker = line.partition(";")
        name, sep, version = requirement.strip().partition("==")
        assert sep, f"{path.name}: not pinned with ==: {raw!r}"
        current = Pin(canonicalize_name(name), version.strip(), marker.strip(), [])
        assert current.name not in pins, f"{path.name}: {name} pinned twice"
        pins[current.name] = current
    return pins


# --- what the image would run, run on this machine --------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def webreach_on_path(directory: Path) -> str:
    """A PATH whose first entry holds ``webreach`` and ``python`` for this interpreter, as the
    image's virtual environment provides them."""
    bin_dir = directory / "bin"
    bin_dir.mkdir(exist_ok=True)
    shim = bin_dir / "webreach"
    shim.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m webreach "$@"\n')
    shim.chmod(0o755)
    python = bin_dir / "python"
    if not python.exists():
        python.symlink_to(sys.executable)
    return os.pathsep.join([str(bin_dir), os.environ.get("PATH", "")])


def run_health_check(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """The image's HEALTHCHECK command, as Docker runs a shell form: ``/bin/sh -c``."""
    _, command = healthcheck(image_stage())
    return subprocess.run(
        ["/bin/sh", "-c", command], env=env, capture_output=True, text=True, timeout=30
    )


@contextmanager
def run_image(env: dict[str, str], cwd: Path, *args: str) -> Iterator[subprocess.Popen[bytes]]:
    """The image's ENTRYPOINT and CMD followed by ``args`` (as ``docker run IMAGE args``), in
    ``env`` (which needs PATH from :func:`webreach_on_path` and PORT); yields once the health
    check passes, as compose's ``condition: service_healthy`` waits for it."""
    final = image_stage()
    argv = exec_form(final.last("ENTRYPOINT")) + exec_form(final.last("CMD")) + list(args)
    process = subprocess.Popen(
        argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + STARTUP_PATIENCE
        while run_health_check(env).returncode != 0:
            assert process.poll() is None, f"the entry point exited with {process.returncode}"
            assert time.monotonic() < deadline, "the health check never passed"
            time.sleep(0.1)
        yield process
    finally:
        process.terminate()
        process.wait(10)
