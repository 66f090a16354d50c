# reviewgate on a slim Python with git: the image the action runs and the GitLab job uses.
# The release workflow builds it for linux/amd64 and linux/arm64 and pushes it to
# ghcr.io/reviewgate/reviewgate:<version>.

# The wheel is built where a C compiler is, for the builtin reviewer's compiled parts
# (reviewgate/reviewers/builtin/_walk.c, lenses/duplication/*.c); the image that runs it has none.
FROM python:3.12-slim AS build
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends gcc libc6-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY pyproject.toml README.md LICENSE MANIFEST.in ./
COPY reviewgate ./reviewgate
# Installed here, not in the image: no wheel, pip cache or bytecode of pip's own run lands in a layer
# of the image, and the compiled modules are stripped of their debug symbols (6.4 MB of the 27 MB
# of .so files the dependencies' wheels carry; the dynamic symbols an import needs stay).
RUN pip wheel --no-cache-dir --disable-pip-version-check --no-deps -w /wheels . \
    && pip install --no-cache-dir --disable-pip-version-check --no-warn-script-location --prefix /install /wheels/*.whl \
    && find /install -name '*.so' -exec strip --strip-unneeded {} +

FROM python:3.12-slim

# The source label links the GHCR package to the repository.
LABEL org.opencontainers.image.source="https://github.com/reviewgate/reviewgate" \
      org.opencontainers.image.description="reviewgate: an independent review gate for CI" \
      org.opencontainers.image.licenses="MIT"

# git: the gate freezes the diff with it. Debian's versions move within a release, so apt
# packages are not pinned; the base image tag fixes the release.
# safe.directory: Actions mount the workspace owned by another user than the container's root.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends git ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && git config --system --add safe.directory '*'

WORKDIR /opt/reviewgate
COPY --from=build /install /usr/local
COPY entrypoint.py ./
# The import fails the build if a compiled part (every ext-module of pyproject.toml) did not make
# it into the wheel (their build is optional, so that `pip install` works without a compiler).
RUN python -c "import reviewgate.reviewers.builtin.lenses.duplication._normalize, reviewgate.reviewers.builtin.lenses.duplication._runs, reviewgate.reviewers.builtin._walk"

ENTRYPOINT ["python", "/opt/reviewgate/entrypoint.py"]
