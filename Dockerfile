# syntax=docker/dockerfile:1
#
# webreach's API server as an image: `webreach serve` on 0.0.0.0:$PORT (8080), run by an
# unprivileged user, with a health check on /healthz. README, "From one process to many".
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

# ---- build: a virtual environment holding webreach and the extras the server needs ----------
FROM python:3.12-slim@sha256:229a2c5bfa27522db7815ea81f9bed70af17ccb9de9fc7ad142b1877b5830d36 AS build

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
COPY deploy/requirements.lock deploy/build-requirements.lock ./deploy/
RUN /opt/venv/bin/pip install --require-hashes --no-deps --only-binary :all: \
      -r deploy/requirements.lock \
 && pip install --require-hashes --no-deps --only-binary :all: \
      -r deploy/build-requirements.lock

# Then webreach itself: a wheel built with that backend (no build isolation, so nothing else is
# fetched), installed without dependencies; `pip check` fails the build if the lock missed one.
COPY pyproject.toml README.md ./
COPY src ./src
RUN pip wheel --no-deps --no-build-isolation --wheel-dir /tmp/dist . \
 && /opt/venv/bin/pip install --no-deps /tmp/dist/webreach-*.whl \
 && /opt/venv/bin/pip check \
 && /opt/venv/bin/webreach --version

# ---- runtime: the same base, the environment, and nothing else ---------------------------------
FROM python:3.12-slim@sha256:229a2c5bfa27522db7815ea81f9bed70af17ccb9de9fc7ad142b1877b5830d36

ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PORT=8080

# A numeric user, so that runtimes enforcing "run as non-root" (Kubernetes runAsNonRoot) can
# check it; the home holds nothing the server needs (its cache is memory or Redis).
RUN groupadd --system --gid 10001 webreach \
 && useradd --system --uid 10001 --gid 10001 --create-home --home-dir /home/webreach \
    --shell /usr/sbin/nologin webreach
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
