"""Build the action's image at one or more revisions with buildah and measure it: the total size,
the base's, what each layer adds, the Debian packages the image adds to its base, and the
installed size of each Python distribution in its site-packages.

Sizes are uncompressed (what `docker image ls` shows), in MB of 10^6 bytes. The Dockerfile is
built as the release builds it, from the revision's tracked files (`git archive`); its
`FROM python:3.12-slim` resolves to buildah's local localhost/python:3.12-slim, which
benchmarks/image_base.py builds when it is missing (--python-prefix).

Needs root and buildah (`apt-get install -y buildah`); buildah runs with the vfs storage driver
and chroot isolation, for machines without overlayfs or user namespaces.

Run: python benchmarks/image_size.py [--revision REV]... [--python-prefix DIR] [--pip-cert FILE]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from image_base import BASE_TAG, BUILDAH, BaseError, build_base, image_exists, run  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
LAYERS = Path("/var/lib/containers/storage/vfs-layers/layers.json")
SITE_PACKAGES = "/usr/local/lib/python3.12/site-packages"
MB = 1_000_000
# Run inside the image: each distribution's installed files (its RECORD, bytecode pip compiled
# included), then what site-packages holds that no RECORD lists.
DISTRIBUTION_SIZES = f"""
import importlib.metadata, json, os
site = {SITE_PACKAGES!r}
sizes, listed = {{}}, set()
for distribution in importlib.metadata.distributions(path=[site]):
    total = 0
    for file in distribution.files or ():
        path = os.path.realpath(os.path.join(site, file))
        if os.path.isfile(path) and path not in listed:
            listed.add(path)
            total += os.path.getsize(path)
    sizes[distribution.metadata["Name"]] = total
unlisted = sum(os.path.getsize(os.path.join(folder, name)) for folder, _, names in os.walk(site)
               for name in names if os.path.realpath(os.path.join(folder, name)) not in listed)
print(json.dumps({{"distributions": sizes, "unlisted": unlisted}}))
"""
INSTALLED_PACKAGES = ("dpkg-query", "-W", "-f", "${Package} ${Installed-Size}\\n")


@dataclass(frozen=True)
class Layer:
    created_by: str
    size: int


@dataclass(frozen=True)
class Measurement:
    revision: str
    image: str
    layers: list[Layer]
    base_layers: int
    added_packages: dict[str, int]  # Debian package -> installed size in bytes
    distributions: dict[str, int]
    unlisted: int
    site_packages: int

    @property
    def total(self) -> int:
        return sum(layer.size for layer in self.layers)

    @property
    def base(self) -> int:
        return sum(layer.size for layer in self.layers[: self.base_layers])


def layer_sizes(image: str) -> list[Layer]:
    """Each layer with the instruction that made it: the image's history (empty entries left out)
    beside its diff IDs, whose uncompressed sizes the storage records."""
    inspected = json.loads(run([*BUILDAH, "inspect", "--type", "image", image]))
    history = [entry for entry in inspected["OCIv1"]["history"] if not entry.get("empty_layer")]
    diff_ids = inspected["OCIv1"]["rootfs"]["diff_ids"]
    stored = {layer.get("diff-digest"): layer.get("diff-size", 0) for layer in json.loads(LAYERS.read_text())}
    if len(history) != len(diff_ids):  # an image committed by hand has no history entry for its layer
        history = [{"created_by": "(imported root file system)"}] * (len(diff_ids) - len(history)) + history
    return [Layer(entry.get("created_by", ""), int(stored.get(diff_id, 0))) for entry, diff_id in zip(history, diff_ids, strict=True)]


def in_image(image: str, *command: str) -> str:
    container = run([*BUILDAH, "from", "--pull=never", image]).strip()
    try:
        return run([*BUILDAH, "run", "--isolation", "chroot", container, "--", *command])
    finally:
        subprocess.run([*BUILDAH, "rm", container], capture_output=True, check=False)


def debian_packages(image: str) -> dict[str, int]:
    listed = in_image(image, *INSTALLED_PACKAGES)
    return {name: int(size or 0) * 1024 for name, _, size in (line.partition(" ") for line in listed.splitlines())}


def build(revision: str, work_dir: Path, pip_cert: Path | None) -> str:
    """The Dockerfile of `revision` built from that revision's tracked files."""
    commit = run(["git", "-C", str(ROOT), "rev-parse", "--short", f"{revision}^{{commit}}"]).strip()
    image = f"localhost/reviewgate-measured:{commit}"
    with tempfile.TemporaryDirectory(dir=work_dir) as context:
        run(["bash", "-c", 'git -C "$1" archive "$2" | tar -x -C "$3"', "archive", str(ROOT), commit, context])
        mounts: list[str] = []
        if pip_cert is not None:
            # pip inside the build trusts this bundle (a proxy's CA): mounted for the RUN steps, never in a layer.
            config = Path(context).parent / f"pip-{commit}.conf"
            config.write_text("[global]\ncert = /run/pip-cert.pem\n")
            mounts = ["--volume", f"{pip_cert}:/run/pip-cert.pem:ro", "--volume", f"{config}:/etc/pip.conf:ro"]
        run([*BUILDAH, "build", "--isolation", "chroot", "--pull=never", "--layers", *mounts,
             "--tag", image, context])
    return image


def measure(revision: str, image: str) -> Measurement:
    layers = layer_sizes(image)
    base_layers = len(layer_sizes(BASE_TAG))
    base_packages = debian_packages(BASE_TAG)
    packages = debian_packages(image)
    found = json.loads(in_image(image, "python", "-c", DISTRIBUTION_SIZES))
    site_packages = int(in_image(image, "du", "-sk", SITE_PACKAGES).split()[0]) * 1024
    return Measurement(revision, image, layers, base_layers,
                       {name: size for name, size in packages.items() if name not in base_packages},
                       found["distributions"], found["unlisted"], site_packages)


def megabytes(size: int) -> str:
    return f"{size / MB:.1f}"


def report(measurement: Measurement) -> str:
    lines = [f"## {measurement.revision} ({measurement.image})", "",
             f"total {megabytes(measurement.total)} MB, base {megabytes(measurement.base)} MB, "
             f"added {megabytes(measurement.total - measurement.base)} MB", "", "| layer | adds (MB) |", "|---|---|"]
    for index, layer in enumerate(measurement.layers):
        name = "base" if index < measurement.base_layers else layer.created_by.replace("|", "\\|")[:160]
        lines.append(f"| {name} | {megabytes(layer.size)} |")
    added = sorted(measurement.added_packages.items(), key=lambda item: -item[1])
    lines += ["", f"Debian packages added to the base ({megabytes(sum(size for _, size in added))} MB installed): "
              + ", ".join(f"{name} {megabytes(size)}" for name, size in added), "",
              f"site-packages {megabytes(measurement.site_packages)} MB (du):", "", "| distribution | MB |", "|---|---|"]
    for name, size in sorted(measurement.distributions.items(), key=lambda item: -item[1]):
        lines.append(f"| {name} | {megabytes(size)} |")
    lines.append(f"| (in no RECORD) | {megabytes(measurement.unlisted)} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--revision", action="append", help="a commit to build (repeatable; default HEAD)")
    parser.add_argument("--python-prefix", type=Path, help="a CPython 3.12 install for image_base.py, when the base is missing")
    parser.add_argument("--pip-cert", type=Path, help="a CA bundle pip inside the build must trust (an intercepting proxy's)")
    parser.add_argument("--work-dir", type=Path, default=Path("/tmp/reviewgate-image"), help="where contexts and the base are built")
    arguments = parser.parse_args(argv)
    if arguments.pip_cert is not None and not arguments.pip_cert.is_file():
        parser.error(f"--pip-cert {arguments.pip_cert}: no such file")
    try:
        arguments.work_dir.mkdir(parents=True, exist_ok=True)
        if not image_exists(BASE_TAG):
            if arguments.python_prefix is None:
                parser.error(f"{BASE_TAG} is not in buildah's storage: give --python-prefix to build it")
            build_base(arguments.python_prefix.expanduser(), arguments.work_dir / "base")
        for revision in arguments.revision or ["HEAD"]:
            image = build(revision, arguments.work_dir, arguments.pip_cert)
            print(report(measure(revision, image)), end="\n\n", flush=True)
    except BaseError as error:
        print(f"image_size: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
