"""Build a stand-in for `python:3.12-slim` where Docker Hub cannot be reached, and store it in
buildah's local storage as localhost/python:3.12-slim, so the Dockerfile builds unchanged.

The official image is debian:bookworm-slim (debootstrap minbase, then debuerreotype's slimify:
no docs, man pages or locales) plus ca-certificates, netbase, tzdata and CPython 3.12 built from
source into /usr/local (stripped, no test packages, no .pyc, no static libpython), the Debian
libraries its modules link against, pip, and PATH/LANG set. This builds the same from Debian's
mirror, with the CPython of an existing 3.12 install (--python-prefix, e.g. a pyenv build)
relocated to /usr/local, since python.org cannot be reached either: how the result differs from
the official one is printed at the end and kept in the image's labels.

Needs root, buildah, debootstrap, debuerreotype and patchelf (`apt-get install -y buildah
debootstrap debuerreotype patchelf`).

Run: python benchmarks/image_base.py --python-prefix ~/.pyenv/versions/3.12.1 [--work-dir DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

BASE_TAG = "localhost/python:3.12-slim"
SUITE = "bookworm"
MIRROR = ""  # debootstrap's own default
# buildah as this machine runs it: no overlay module, no user namespaces to isolate with.
BUILDAH = ("buildah", "--storage-driver", "vfs")
# What python:3.12-slim installs beside debian:bookworm-slim for itself (its Dockerfile's runtime dependencies).
RUNTIME_PACKAGES = ("ca-certificates", "netbase", "tzdata")
# The official build removes these from /usr/local after `make install`.
PYTHON_LEFT_OUT = ("test", "tests", "idle_test", "__pycache__", "*.pyc", "*.pyo", "libpython*.a", "site-packages/*")
NEEDED_TOOLS = ("buildah", "debootstrap", "debuerreotype-slimify", "patchelf", "strip", "rsync")


class BaseError(Exception):
    """The stand-in base cannot be built here; the message says what is missing."""


def run(command: list[str] | tuple[str, ...], **options: object) -> str:
    completed = subprocess.run(list(command), capture_output=True, text=True, check=False, **options)  # type: ignore[call-overload]
    if completed.returncode != 0:
        raise BaseError(f"{' '.join(command)} exited {completed.returncode}: {completed.stderr.strip()[-2000:]}")
    return str(completed.stdout)


def in_root(rootfs: Path, *command: str) -> str:
    """A command inside the root file system, with /dev, /proc and /sys bound (debuerreotype-chroot)."""
    return run(["debuerreotype-chroot", str(rootfs), *command])


def image_exists(tag: str) -> bool:
    return subprocess.run([*BUILDAH, "inspect", "--type", "image", tag], capture_output=True, check=False).returncode == 0


def check_tools() -> None:
    missing = [tool for tool in NEEDED_TOOLS if shutil.which(tool) is None]
    if missing:
        raise BaseError(f"missing {', '.join(missing)}: apt-get install -y buildah debootstrap debuerreotype patchelf rsync binutils")
    if os.geteuid() != 0:
        raise BaseError("debootstrap and buildah's vfs storage need root")


def debian_slim(rootfs: Path, mirror: str) -> None:
    """debian:bookworm-slim as debuerreotype makes it: minbase, the container apt config, slimified.
    Kept beside the root file system and reused while its mirror is the same (delete it to start over)."""
    kept = rootfs.with_name("debian-slim")
    done = kept.with_name("debian-slim.from")
    if not (done.exists() and done.read_text() == mirror):
        if kept.exists():
            shutil.rmtree(kept)
        done.unlink(missing_ok=True)
        debian_slim_from_mirror(kept, mirror)
        done.write_text(mirror)
    run(["cp", "-a", str(kept), str(rootfs)])


def debian_slim_from_mirror(rootfs: Path, mirror: str) -> None:
    run(["debootstrap", "--variant=minbase", SUITE, str(rootfs), *([mirror] if mirror else [])])
    (rootfs / "debuerreotype-epoch").write_text(f"{int(time.time())}\n")
    run(["debuerreotype-minimizing-config", str(rootfs)])
    run(["debuerreotype-apt-get", str(rootfs), "update", "-qq"])
    run(["debuerreotype-apt-get", str(rootfs), "dist-upgrade", "-yqq"])
    run(["debuerreotype-slimify", str(rootfs)])


def libraries_python_links(prefix: Path) -> list[str]:
    """The Debian packages holding the shared libraries the install's programs and modules link
    against, as the official build keeps them (`ldd` over /usr/local, tkinter left out). The host
    must be the same Debian release as the image, so its packages are the image's."""
    libraries: set[str] = set()
    for path in prefix.rglob("*"):
        if not path.is_file() or "tkinter" in path.name or not os.access(path, os.X_OK) and path.suffix != ".so":
            continue
        linked = subprocess.run(["ldd", str(path)], capture_output=True, text=True, check=False).stdout
        for line in linked.splitlines():
            parts = line.split()
            if "=>" in parts and len(parts) >= 4 and parts[2].startswith("/") and not parts[2].startswith(str(prefix)):
                libraries.add(os.path.realpath(parts[2]))
    packages: set[str] = set()
    for library in sorted(libraries):
        # Either /lib or /usr/lib may be the path a package lists (merged /usr): match both, as the official build does.
        owner = subprocess.run(["dpkg-query", "--search", "*" + library.removeprefix("/usr")], capture_output=True,
                               text=True, check=False).stdout
        packages.update(line.split(":")[0] for line in owner.splitlines() if ":" in line)
    return sorted(packages)


def is_elf(path: Path) -> bool:
    with path.open("rb") as file:
        return file.read(4) == b"\x7fELF"


def relocated_python(rootfs: Path, prefix: Path) -> str:
    """The install copied to /usr/local as the official build leaves it; returns its version."""
    local = rootfs / "usr" / "local"
    excludes = [f"--exclude={pattern}" for pattern in PYTHON_LEFT_OUT] + ["--exclude=bin/pip*"]
    run(["rsync", "-a", *excludes, f"{prefix}/", f"{local}/"])
    # The install's own prefix is written into its build configuration and scripts: it is /usr/local now.
    for path in local.rglob("*"):
        if path.is_file() and not path.is_symlink() and path.stat().st_size < 4_000_000:
            data = path.read_bytes()
            if str(prefix).encode() in data and b"\0" not in data[:4096]:
                path.write_bytes(data.replace(str(prefix).encode(), b"/usr/local"))
    elf = [path for path in local.rglob("*") if path.is_file() and not path.is_symlink() and is_elf(path)]
    for program in elf:
        if program.parent.name == "bin":
            run(["patchelf", "--set-rpath", "$ORIGIN/../lib", str(program)])
    # The official build links with -Wl,--strip-all.
    run(["strip", "--strip-all", *map(str, elf)])
    run(["ldconfig", "-r", str(rootfs)])
    version = in_root(rootfs, "/usr/local/bin/python3", "-c", "import platform; print(platform.python_version())").strip()
    # `make install` runs ensurepip --upgrade: pip3 and pip3.X, no setuptools on 3.12.
    in_root(rootfs, "/usr/local/bin/python3", "-m", "ensurepip", "--upgrade")
    for compiled in [*local.rglob("__pycache__")]:
        shutil.rmtree(compiled)
    for name in ("idle3", "pip3", "pydoc3", "python3", "python3-config"):
        link = local / "bin" / name.replace("3", "")
        if (local / "bin" / name).exists() and not link.exists():
            link.symlink_to(name)
    return version


def clean(rootfs: Path) -> None:
    for leftover in ("var/lib/apt/lists", "var/cache/apt", "var/log", "tmp"):
        for path in (rootfs / leftover).glob("*"):
            shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()
    (rootfs / "debuerreotype-epoch").unlink(missing_ok=True)


def commit(rootfs: Path, version: str, tag: str) -> None:
    container = run([*BUILDAH, "from", "scratch"]).strip()
    try:
        mount = run([*BUILDAH, "mount", container]).strip()
        run(["bash", "-c", 'tar -C "$1" -cf - . | tar -C "$2" -xpf -', "copy", str(rootfs), mount])
        run([*BUILDAH, "config",
             "--env", "PATH=/usr/local/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
             "--env", "LANG=C.UTF-8", "--env", f"PYTHON_VERSION={version}", "--cmd", "python3",
             "--label", f"reviewgate.stand-in=debootstrap {SUITE} minbase + debuerreotype slimify + "
                        f"CPython {version} relocated from an existing install; not the official python:3.12-slim",
             container])
        run([*BUILDAH, "commit", "--rm", container, tag])
    except BaseError:
        subprocess.run([*BUILDAH, "rm", container], capture_output=True, check=False)
        raise


def build_base(python_prefix: Path, work_dir: Path, mirror: str = MIRROR, tag: str = BASE_TAG) -> str:
    """Build the stand-in and commit it as `tag`; returns the CPython version it carries."""
    check_tools()
    interpreter = python_prefix / "bin" / "python3"
    if not interpreter.exists():
        raise BaseError(f"--python-prefix {python_prefix}: no bin/python3 there")
    found = run([str(interpreter), "-c", "import sys; print(sys.version_info[:2] == (3, 12))"]).strip()
    if found != "True":
        raise BaseError(f"--python-prefix {python_prefix}: not a CPython 3.12 (the Dockerfile's base is python:3.12-slim)")
    rootfs = work_dir / "rootfs"
    if rootfs.exists():
        shutil.rmtree(rootfs)
    work_dir.mkdir(parents=True, exist_ok=True)
    debian_slim(rootfs, mirror)
    packages = [*RUNTIME_PACKAGES, *libraries_python_links(python_prefix)]
    in_root(rootfs, "apt-get", "install", "-y", "-qq", "--no-install-recommends", *packages)
    version = relocated_python(rootfs, python_prefix)
    clean(rootfs)
    commit(rootfs, version, tag)
    print(f"{tag}: Debian {SUITE} slim (debootstrap minbase + debuerreotype slimify) with {', '.join(packages)};"
          f" CPython {version} from {python_prefix}, relocated to /usr/local, stripped, test packages and"
          " .pyc left out, pip from its ensurepip")
    return version


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--python-prefix", type=Path, required=True,
                        help="an installed CPython 3.12 (its bin/python3) to relocate into /usr/local")
    parser.add_argument("--work-dir", type=Path, default=Path("/tmp/reviewgate-image"), help="where the root file system is built")
    parser.add_argument("--mirror", default=MIRROR, help="the Debian mirror (default: debootstrap's)")
    parser.add_argument("--tag", default=BASE_TAG, help=f"the image to commit (default {BASE_TAG})")
    arguments = parser.parse_args(argv)
    try:
        build_base(arguments.python_prefix.expanduser(), arguments.work_dir, arguments.mirror, arguments.tag)
    except BaseError as error:
        print(f"image_base: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
