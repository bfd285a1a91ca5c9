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

# ---- build: a virtual environment holding webreach and the extras the server needs ----------
FROM python:3.12-slim AS build

ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_ROOT_USER_ACTION=ignore
RUN python -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH
WORKDIR /src

# `redis` is the shared cache and response store of replicas; add `mcp` to serve MCP too.
ARG EXTRAS=server,redis

# The dependencies first, from the project's metadata and an empty package (with a version file,
# which the build reads), so that a change to the source reuses this layer; then webreach itself
# without its dependencies.
COPY pyproject.toml README.md ./
RUN mkdir -p src/webreach \
 && touch src/webreach/__init__.py \
 && echo '__version__ = "0"' > src/webreach/_version.py \
 && pip install ".[${EXTRAS}]" \
 && pip uninstall --yes webreach
COPY src ./src
RUN pip install --no-deps . \
 && webreach --version

# ---- runtime: the same base, the environment, and nothing else ---------------------------------
FROM python:3.12-slim

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
