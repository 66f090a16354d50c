# reviewgate on a slim Python with git: the image the action runs and the GitLab job uses.
# The release workflow builds it for linux/amd64 and linux/arm64 and pushes it to
# ghcr.io/reviewgate/reviewgate:<version>.
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
COPY pyproject.toml README.md LICENSE MANIFEST.in ./
COPY reviewgate ./reviewgate
COPY entrypoint.py ./
RUN pip install --no-cache-dir --disable-pip-version-check .

ENTRYPOINT ["python", "/opt/reviewgate/entrypoint.py"]
