# syntax=docker/dockerfile:1
#
# webreach's API server as an image: `webreach serve` on 0.0.0.0:$PORT (8080), run by an
# unprivileged user, with a health check on /healthz. docs/server/deployment.md.
#
#   docker build -t webreach .
#   docker run -p 8080:8080 -e WEBREACH_UPSTREAM_BASE_URL=… -e WEBREACH_SERVER_API_KEYS=… \
#     -e WEBREACH_SIGNING_KEY=… webreach
#
# Arguments after the image name go to `webreach serve` (e.g. `--log-level debug`); other
# commands: `docker run --entrypoint webreach webreach config`.
#
# Reproducible: the base image is pinned by digest (the tag is only a reminder; deploy/pin-images
# moves the pins of this file and deploy/compose.yaml to what their tags name today), and every
# Python package comes from deploy/requirements.lock with its sha256 hashes, as wheels
# (deploy/lock refreshes the locks from pyproject.toml).
#
# With a browser, to draw the pages that need one (docs/library/browser.md):
#
#   docker build --build-arg BROWSER=chromium -t webreach:browser .
#
# BROWSER picks a stage by name (`deps-…`, `runtime-…`): `none` (the default) builds exactly
# the image above, the browser's stages never run and nothing of them enters its layers or their
# cache keys; `chromium` adds the `browser` extra from deploy/browser-requirements.lock and
# Debian's Chromium. Any other value names no stage: the build looks for an image of that
# name (deps-<value>) and stops. BuildKit (the `syntax` line) builds only the stages the image
# needs.
ARG BROWSER=none

# ---- build: a virtual environment holding webreach and the extras the server needs ----------
FROM python:3.12-slim@sha256:229a2c5bfa27522db7815ea81f9bed70af17ccb9de9fc7ad142b1877b5830d36 AS build-base

ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_ROOT_USER_ACTION=ignore
RUN python -m venv /opt/venv
WORKDIR /src

# The dependencies first, from the locks alone, so that a change to the source reuses this
# layer. The runtime lock holds the extras `server` and `redis` (the shared cache and response
# store of replicas); deploy/lock says how to add `mcp`. Wheels only and hashes required: pip
# runs no build script and installs nothing the lock does not name. The build backend
# (hatchling, deploy/build-requirements.lock) goes into the base interpreter of this stage only.
FROM build-base AS deps-none
COPY deploy/requirements.lock deploy/build-requirements.lock ./deploy/
RUN /opt/venv/bin/pip install --require-hashes --no-deps --only-binary :all: \
      -r deploy/requirements.lock \
 && pip install --require-hashes --no-deps --only-binary :all: \
      -r deploy/build-requirements.lock

# The same with the `browser` extra (Playwright and its Node driver): the browser lock holds the
# runtime lock's pins and Playwright's, so it is installed instead of it, not on top.
FROM build-base AS deps-chromium
COPY deploy/browser-requirements.lock deploy/build-requirements.lock ./deploy/
RUN /opt/venv/bin/pip install --require-hashes --no-deps --only-binary :all: \
      -r deploy/browser-requirements.lock \
 && pip install --require-hashes --no-deps --only-binary :all: \
      -r deploy/build-requirements.lock

FROM deps-${BROWSER} AS build
# Then webreach itself: a wheel built with that backend (no build isolation, so nothing else is
# fetched), installed without dependencies; `pip check` fails the build if the lock missed one.
COPY pyproject.toml README.md ./
COPY src ./src
RUN pip wheel --no-deps --no-build-isolation --wheel-dir /tmp/dist . \
 && /opt/venv/bin/pip install --no-deps /tmp/dist/webreach-*.whl \
 && /opt/venv/bin/pip check \
 && /opt/venv/bin/webreach --version

# ---- runtime: the same base, the environment, and nothing else ---------------------------------
FROM python:3.12-slim@sha256:229a2c5bfa27522db7815ea81f9bed70af17ccb9de9fc7ad142b1877b5830d36 AS runtime-none

ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PORT=8080

# A numeric user, so that runtimes enforcing "run as non-root" (Kubernetes runAsNonRoot) can
# check it; the home holds nothing the server needs (its cache is memory or Redis).
RUN groupadd --system --gid 10001 webreach \
 && useradd --system --uid 10001 --gid 10001 --create-home --home-dir /home/webreach \
    --shell /usr/sbin/nologin webreach

# Debian's Chromium, for the `browser` fetch provider. What pins it: the base image's digest fixes
# the Debian release (its apt sources); the package is that release's current chromium when the
# image is built (its security updates replace older versions in the archive, so a version pin
# would stop building within weeks). The setuid sandbox helper (chromium-sandbox, only
# recommended) stays out.
# The sandbox: the server runs as user 10001, not root, so Chromium starts its own sandbox (user
# namespaces) where the container runtime allows them; Docker's and containerd's default seccomp
# profiles refuse them, and then no page is drawn in the browser (`auto` gives the HTTP result,
# marked "the browser could not start", and the log warns). The operator decides: a seccomp
# profile that allows user namespaces (and a host kernel that does), or
# WEBREACH_BROWSER_NO_SANDBOX=true (Chromium without its sandbox: the guard proxy, the
# per-fetch context and the container are then the only walls around a page's code).
FROM runtime-none AS runtime-chromium
RUN apt-get update \
 && apt-get install --yes --no-install-recommends chromium \
 && rm -rf /var/lib/apt/lists/*
ENV WEBREACH_BROWSER_EXECUTABLE=/usr/bin/chromium

FROM runtime-${BROWSER}
COPY --from=build /opt/venv /opt/venv

USER 10001:10001
WORKDIR /home/webreach
EXPOSE 8080

# GET /healthz answers 200 {"status": "ok"} without authentication. The standard library only
# (no curl in the image), straight to the socket so that no HTTP(S)_PROXY variable intervenes.
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
  CMD python -c 'import http.client, json, os; c = http.client.HTTPConnection("127.0.0.1", int(os.environ.get("PORT") or 8080), timeout=4); c.request("GET", "/healthz"); r = c.getresponse(); raise SystemExit(0 if r.status == 200 and json.load(r).get("status") == "ok" else 1)' || exit 1

# `exec`, so webreach is PID 1 and stops cleanly on the SIGTERM of `docker stop`. Serving on
# 0.0.0.0 needs WEBREACH_SERVER_API_KEYS (webreach refuses otherwise) and an upstream
# (WEBREACH_UPSTREAM_BASE_URL); replicas also share WEBREACH_SIGNING_KEY and WEBREACH_CACHE.
ENTRYPOINT ["/bin/sh", "-c", "exec webreach serve --host 0.0.0.0 --port \"${PORT:-8080}\" \"$@\"", "webreach-serve"]
CMD []
