"""Builds the wheel of `polyweave-tool-adapter` (metadata: pyproject.toml).

The package is `ctypes` over the C ABI's shared library, so what a wheel needs beyond the
Python modules is that library, built by cargo and put inside the package directory, where
`_ffi.py` loads it from:

- `build_py` runs `cargo build --release --locked -p polyweave-tool-adapter-ffi` in the Cargo
  workspace (below) and copies `libpolyweave_tool_adapter_ffi.so` beside the modules. It first
  checks that this package's version is the workspace's (`[workspace.package] version`).
- `bdist_wheel` tags the wheel `py3-none-<platform>`: it carries a platform's library but no
  extension module, so every Python 3 of that platform can load it.
- `sdist` carries the Rust sources the library is built from (`rust/`: the workspace manifest cut
  down to the two crates, its lock file cut down to match, `core/`, `ffi/`, the headers and the
  licences), so that a wheel built from the sdist, as plain `python -m build` does, builds the
  same library with no checkout around it.

In a checkout, setuptools' own build tree and egg-info go to `target/python-build/`, so that
building leaves the source folder as it was.

The workspace is `$PW_CARGO_ROOT` when set, else `rust/` beside this file (an unpacked sdist),
else the checkout this file is in (`../..`). cargo is `$CARGO` when set, else `cargo` on PATH;
`CARGO_TARGET_DIR` is cargo's own and is honoured.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, NoReturn

from setuptools import Distribution, setup
from setuptools.command.bdist_wheel import bdist_wheel
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist

HERE = Path(__file__).resolve().parent
PACKAGE = "polyweave_tool_adapter"
CRATE = "polyweave-tool-adapter-ffi"
# The library target's name in ffi/Cargo.toml ([lib] name), as cargo reports it.
LIB_TARGET = "polyweave_tool_adapter_ffi"
LIB_NAME = {
    "darwin": "libpolyweave_tool_adapter_ffi.dylib",
    "win32": "polyweave_tool_adapter_ffi.dll",
}.get(sys.platform, "libpolyweave_tool_adapter_ffi.so")
# Where an sdist keeps the Rust sources, relative to this file.
SDIST_RUST = "rust"
# What of the workspace an sdist carries: the two crates the library is built from, the
# checked-in headers (ffi/include links to them) and the licences (the crates link to them).
RUST_DIRS = ["core", "ffi", "include"]
RUST_FILES = ["Cargo.lock", "LICENSE-MIT", "LICENSE-APACHE"]
# Not needed to build the library, and large: the crates' tests and anything built.
RUST_IGNORE = shutil.ignore_patterns("tests", "benches", "fuzz", "target", "*.orig")


def fail(message: str) -> NoReturn:
    sys.exit("polyweave-tool-adapter setup.py: error: " + message)


def is_workspace(path: Path) -> bool:
    return (path / "Cargo.toml").is_file() and (path / "ffi" / "Cargo.toml").is_file()


def cargo_root() -> Path:
    """The Cargo workspace the library is built from (see the module's docs)."""
    env = os.environ.get("PW_CARGO_ROOT")
    if env:
        root = Path(env).resolve()
        if not is_workspace(root):
            fail("PW_CARGO_ROOT=%s holds no Cargo workspace with ffi/Cargo.toml" % env)
        return root
    for root in (HERE / SDIST_RUST, HERE.parent.parent):
        if is_workspace(root):
            return root
    fail(
        "no Rust sources to build the shared library from: neither %s (an sdist's) nor %s "
        "(a checkout's) holds Cargo.toml and ffi/Cargo.toml. Build from a checkout of the "
        "repository (`pip install ./examples/python`, `python -m build examples/python`) or "
        "from an sdist made there, or set PW_CARGO_ROOT to a checkout."
        % (HERE / SDIST_RUST, HERE.parent.parent)
    )


def workspace_version(root: Path) -> str:
    text = (root / "Cargo.toml").read_text(encoding="utf-8")
    section = re.search(r"^\[workspace\.package\][ \t]*$(.*?)(?=^\[|\Z)", text, re.M | re.S)
    version = section and re.search(r'^version\s*=\s*"([^"]+)"', section.group(1), re.M)
    if not version:
        fail("%s has no [workspace.package] version" % (root / "Cargo.toml"))
    return version.group(1)


def check_version(root: Path, version: str) -> None:
    """One version for the crates and the Python package: the wheel carries the crate's
    library, and its `pw_version()` says the crate's version."""
    cargo = workspace_version(root)
    if cargo != version:
        fail(
            "pyproject.toml says version %s but %s says %s: make them agree"
            % (version, root / "Cargo.toml", cargo)
        )


def cargo() -> str:
    return os.environ.get("CARGO", "cargo")


def build_library(root: Path) -> Path:
    """`cargo build --release --locked -p polyweave-tool-adapter-ffi`; the shared library it
    made, as cargo's own messages name it (so `CARGO_TARGET_DIR` and the target dir's layout
    are cargo's business)."""
    cmd = [cargo(), "build", "--release", "--locked", "-p", CRATE, "--message-format=json-render-diagnostics"]
    print("polyweave-tool-adapter: running %s in %s" % (" ".join(cmd), root), flush=True)
    try:
        # stdout carries cargo's JSON messages; its progress and diagnostics stay on stderr.
        out = subprocess.run(cmd, cwd=str(root), stdout=subprocess.PIPE, check=False)
    except FileNotFoundError:
        fail("%r is not on PATH: the wheel's shared library is built with cargo (rustup.rs)" % cargo())
    if out.returncode != 0:
        fail("%s failed (exit %d)" % (" ".join(cmd), out.returncode))
    found: List[Path] = []
    for line in out.stdout.decode("utf-8", "replace").splitlines():
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        target = msg.get("target") or {}
        if msg.get("reason") == "compiler-artifact" and target.get("name") == LIB_TARGET:
            found += [Path(f) for f in msg.get("filenames", []) if Path(f).name == LIB_NAME]
    if len(found) != 1 or not found[0].is_file():
        fail("cargo did not report exactly one %s (got %s)" % (LIB_NAME, [str(f) for f in found]))
    return found[0]


class BuildPy(build_py):
    """The modules, and the shared library built for them beside them."""

    def run(self) -> None:
        super().run()
        root = cargo_root()
        check_version(root, self.distribution.get_version())
        built = build_library(root)
        # An editable install runs the source folder's modules: the library goes there.
        if getattr(self, "editable_mode", False):
            dest = HERE / PACKAGE
        else:
            dest = Path(self.build_lib) / PACKAGE
        dest.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(str(built), str(dest / LIB_NAME))
        print("polyweave-tool-adapter: %s -> %s" % (built, dest / LIB_NAME), flush=True)

    def get_outputs(self, include_bytecode: bool = True) -> List[str]:
        outputs = list(super().get_outputs(include_bytecode))
        if not getattr(self, "editable_mode", False):
            outputs.append(str(Path(self.build_lib) / PACKAGE / LIB_NAME))
        return outputs


class PlatformDistribution(Distribution):
    """Not pure: the package carries a platform's library, so it installs into platlib and its
    wheel takes the platform's tag (setuptools asks this; there is no extension module to say
    it otherwise)."""

    def has_ext_modules(self) -> bool:
        return True


class BdistWheel(bdist_wheel):
    """`py3-none-<platform>`: platform-specific (the library), Python-version-independent (no
    extension module; `ctypes` loads the library)."""

    def get_tag(self) -> tuple:
        _python, _abi, plat = super().get_tag()
        return "py3", "none", plat


def workspace_manifest(text: str) -> str:
    """The root Cargo.toml with the workspace cut down to the crates an sdist carries: the
    other members (tests, examples) are not in the sdist, and cargo refuses a workspace whose
    members are missing. Everything else (workspace.package, workspace.dependencies, the
    profiles) is kept as is, so that the crates build as in the checkout."""
    members = 'members = ["core", "ffi"]'
    text, n = re.subn(r"^members\s*=\s*\[[^\]]*\]", members, text, count=1, flags=re.M)
    if n != 1:
        fail("the root Cargo.toml has no `members = [...]` line to cut down")
    text = re.sub(r"^(default-members|exclude)\s*=\s*\[[^\]]*\]\n?", "", text, flags=re.M)
    return text


def prune_lock(rust: Path) -> None:
    """Cuts the copied Cargo.lock down to the packages the cut-down workspace uses: cargo
    rewrites it on resolving (keeping every version it already pins), after which the wheel's
    `cargo build --locked` accepts it. Offline first: a checkout that built the library has
    every crate in cargo's cache."""
    base = [cargo(), "metadata", "--format-version", "1", "--manifest-path", str(rust / "Cargo.toml")]
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    if subprocess.run(base + ["--offline"], check=False, **quiet).returncode != 0:
        if subprocess.run(base, check=False, stdout=subprocess.DEVNULL).returncode != 0:
            fail("cargo metadata fails on the sdist's Rust sources in %s" % rust)
    # The pruned lock pins nothing new: a build from the sdist is the checkout's build.
    if subprocess.run(base + ["--locked", "--offline"], check=False, **quiet).returncode != 0:
        fail("the sdist's cut-down Cargo.lock is not accepted by cargo --locked")


class Sdist(sdist):
    """The Python sources and, under `rust/`, the Rust sources the library is built from."""

    def make_release_tree(self, base_dir: str, files: List[str]) -> None:
        super().make_release_tree(base_dir, files)
        root = cargo_root()
        check_version(root, self.distribution.get_version())
        rust = Path(base_dir) / SDIST_RUST
        if rust.exists():
            shutil.rmtree(str(rust))
        rust.mkdir(parents=True)
        manifest = (root / "Cargo.toml").read_text(encoding="utf-8")
        (rust / "Cargo.toml").write_text(workspace_manifest(manifest), encoding="utf-8")
        # symlinks=False: the crates' licence and header links become the files they name.
        for d in RUST_DIRS:
            shutil.copytree(str(root / d), str(rust / d), symlinks=False, ignore=RUST_IGNORE)
        for f in RUST_FILES:
            shutil.copyfile(str(root / f), str(rust / f))
        prune_lock(rust)


def build_dirs() -> Dict[str, Dict[str, str]]:
    """In a checkout, setuptools' build tree and egg-info go to the checkout's target/ (as
    cargo's output does) rather than into this source folder; elsewhere (an unpacked sdist, a
    temporary folder) setuptools' defaults are fine."""
    if (HERE / SDIST_RUST).is_dir() or not is_workspace(HERE.parent.parent):
        return {}
    base = HERE.parent.parent / "target" / "python-build"
    (base / "egg-info").mkdir(parents=True, exist_ok=True)
    return {"build": {"build_base": str(base / "build")}, "egg_info": {"egg_base": str(base / "egg-info")}}


setup(
    distclass=PlatformDistribution,
    cmdclass={"build_py": BuildPy, "bdist_wheel": BdistWheel, "sdist": Sdist},
    options=build_dirs(),
)
