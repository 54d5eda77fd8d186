"""The package as a package: which copy was imported and which library it loaded, one version for
the package, the library and the crates, the files a wheel must carry (`py.typed`), and that the
sources are Python 3.9 (the `requires-python` floor) in syntax and in what they use of `typing`
and the standard library.

Run from the source folder (tests/tests/python_binding.rs, `PW_LIB` set), the source package is
the one imported and `PW_LIB` the library loaded. Run by tests/python_wheel.sh with
`PW_EXPECT_INSTALLED=1`, the package must be the wheel's, in the venv's site-packages, and the
library the one inside it, with `PW_LIB` unset.
"""

import ast
import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import typing
import unittest
from pathlib import Path

import support  # noqa: E402,F401 (first: it decides which package the imports below find)

import polyweave_tool_adapter as pw  # noqa: E402
from polyweave_tool_adapter import _ffi  # noqa: E402

PACKAGE_DIR = Path(pw.__file__).resolve().parent
INSTALLED = os.environ.get("PW_EXPECT_INSTALLED") == "1"
MODULES = [
    "__init__.py",
    "_ffi.py",
    "_owned.py",
    "decode.py",
    "errors.py",
    "lines.py",
    "mcp.py",
    "request.py",
    "wrapper.py",
]
PYTHON_DIR = support.ROOT / "examples" / "python"


def mapped_libraries(name):
    """Every file named `name` this process has mapped, from /proc/self/maps: what the dynamic
    loader really loaded, whatever path the code says it asked for."""
    paths = set()
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split(None, 5)
            if len(parts) == 6 and os.path.basename(parts[5].strip()) == name:
                paths.add(parts[5].strip())
    return sorted(paths)


def pyproject_version():
    text = (PYTHON_DIR / "pyproject.toml").read_text(encoding="utf-8")
    return re.search(r'^version = "([^"]+)"$', text, re.M).group(1)


def cargo_version():
    text = (support.ROOT / "Cargo.toml").read_text(encoding="utf-8")
    section = re.search(r"^\[workspace\.package\]$(.*?)(?=^\[|\Z)", text, re.M | re.S).group(1)
    return re.search(r'^version = "([^"]+)"$', section, re.M).group(1)


class WhichCopy(unittest.TestCase):
    @unittest.skipUnless(sys.platform.startswith("linux"), "reads /proc/self/maps")
    def test_the_library_loaded_is_the_one_chosen(self):
        env = os.environ.get("PW_LIB")
        if INSTALLED:
            self.assertIsNone(env, "the wheel run must not set PW_LIB")
        want = os.path.realpath(env) if env else str(PACKAGE_DIR / _ffi.LIB_NAME)
        self.assertEqual(_ffi.LIB_PATH, env or _ffi.PACKAGE_LIB)
        self.assertEqual(mapped_libraries(_ffi.LIB_NAME), [want])

    def test_the_package_imported_is_the_one_meant(self):
        if INSTALLED:
            site = Path(sysconfig.get_paths()["platlib"]).resolve()
            self.assertEqual(PACKAGE_DIR, site / "polyweave_tool_adapter")
            # The venv's, not the interpreter's that made the venv.
            self.assertEqual(Path(sys.prefix).resolve(), site.parents[2])
            self.assertNotEqual(sys.prefix, sys.base_prefix)
        else:
            self.assertEqual(PACKAGE_DIR, support.SOURCE / "polyweave_tool_adapter")

    def test_the_package_directory_holds_the_modules_and_py_typed(self):
        files = sorted(p.name for p in PACKAGE_DIR.iterdir() if p.is_file() and p.suffix != ".pyc")
        if not INSTALLED:
            # An editable install (`pip install -e`) leaves a library in the source folder.
            files = [f for f in files if f != _ffi.LIB_NAME]
        want = sorted(MODULES + ["py.typed"] + ([_ffi.LIB_NAME] if INSTALLED else []))
        self.assertEqual(files, want)
        self.assertEqual((PACKAGE_DIR / "py.typed").read_bytes(), b"")

    @unittest.skipUnless(INSTALLED, "only an installed package has distribution metadata")
    def test_the_distribution_records_the_library_and_py_typed(self):
        dist = importlib.metadata.distribution("polyweave-tool-adapter")
        files = sorted(str(f) for f in dist.files if f.parts[0] == "polyweave_tool_adapter" and f.suffix != ".pyc")
        want = sorted("polyweave_tool_adapter/" + f for f in MODULES + ["py.typed", _ffi.LIB_NAME])
        self.assertEqual(files, want)
        self.assertEqual(dist.metadata["Requires-Python"], ">=3.9")
        self.assertEqual(dist.metadata["License-Expression"], "MIT OR Apache-2.0")


class OneVersion(unittest.TestCase):
    def test_the_package_the_library_and_the_crates_agree(self):
        self.assertEqual(pw.version(), "polyweave-tool-adapter-ffi/" + pw.__version__)
        self.assertEqual(pyproject_version(), pw.__version__)
        self.assertEqual(cargo_version(), pw.__version__)
        self.assertEqual(
            (_ffi.PW_VERSION_MAJOR, _ffi.PW_VERSION_MINOR, _ffi.PW_VERSION_PATCH),
            tuple(int(p) for p in pw.__version__.split(".")),
        )
        if INSTALLED:
            self.assertEqual(importlib.metadata.version("polyweave-tool-adapter"), pw.__version__)


class Example(unittest.TestCase):
    """examples/python/example.py, the example README shows, prints what README says."""

    def test_the_example_prints_the_frames_and_their_routes(self):
        script = PYTHON_DIR / "example.py"
        env = dict(os.environ)
        with tempfile.TemporaryDirectory() as tmp:
            # Run from a copy: beside the original lies the source package, which a script's own
            # folder on sys.path would import instead of the installed one.
            copy = Path(tmp) / "example.py"
            shutil.copyfile(str(script), str(copy))
            if not INSTALLED:
                env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(support.SOURCE), env.get("PYTHONPATH")]))
            out = subprocess.run([sys.executable, str(copy)], env=env, cwd=tmp, capture_output=True, check=False)
        self.assertEqual((out.returncode, out.stderr), (0, b""))
        self.assertEqual(
            out.stdout.decode().splitlines(),
            [
                'MODEL {"type":"TOOL_RESULT","content":{"id":"c1","name":"get_weather",'
                '"result":{"city":"Oslo","temp_c":21}}}',
                'MODEL {"type":"TEXT","content":"Tool results above."}',
                'CONSUMER {"type":"TEXT","content":"Tool results above."}',
                'CONSUMER {"type":"END"}',
            ],
        )


class Install(unittest.TestCase):
    """README's install commands, as a user types them from the checkout's root."""

    def test_the_commands_install_build_first_and_name_where_the_files_go(self):
        text = (PYTHON_DIR / "README.md").read_text(encoding="utf-8")
        section = text.split("\n## Install\n", 1)[1].split("\n## ", 1)[0]
        blocks = re.findall(r"^```sh\n(.*?)^```$", section, re.M | re.S)
        commands = [line.split("#", 1)[0].strip() for block in blocks for line in block.splitlines()]
        # `build` is not in the standard library: installed before it is run. Without --outdir,
        # `python -m build DIR` writes to DIR/dist (here examples/python/dist), not to ./dist.
        self.assertEqual(
            commands,
            ["pip install ./examples/python", "pip install build", "python -m build --outdir dist examples/python"],
        )
        self.assertIn("go to `examples/python/dist/`", " ".join(section.split()))


# ------------------------------------------------------------ Python 3.9

# `typing` names newer than 3.9 (What's New in 3.10 to 3.13): the 3.11 this runs on has them,
# a 3.9 user does not.
TYPING_AFTER_3_9 = {
    "Concatenate", "ParamSpec", "ParamSpecArgs", "ParamSpecKwargs", "TypeAlias", "TypeGuard",
    "is_typeddict",  # 3.10
    "LiteralString", "Never", "NotRequired", "Required", "Self", "TypeVarTuple", "Unpack",
    "assert_never", "assert_type", "clear_overloads", "dataclass_transform", "get_overloads",
    "reveal_type",  # 3.11
    "TypeAliasType", "override", "get_protocol_members", "is_protocol",  # 3.12
    "TypeIs", "ReadOnly", "NoDefault", "get_original_bases",  # 3.13
}
# Standard-library modules and names newer than 3.9.
MODULES_AFTER_3_9 = {"tomllib", "wsgiref.types"}
NAMES_AFTER_3_9 = {("itertools", "pairwise"), ("contextlib", "chdir"), ("datetime", "UTC"), ("enum", "StrEnum")}
BUILTINS_AFTER_3_9 = {"aiter", "anext", "ExceptionGroup", "BaseExceptionGroup", "EncodingWarning"}
# Keyword arguments newer than 3.9: (function, keyword).
KEYWORDS_AFTER_3_9 = {("dataclass", "slots"), ("dataclass", "kw_only"), ("zip", "strict")}
# Names that make `A | B` a union of types (a TypeError at run time on 3.9).
TYPE_NAMES = {"int", "str", "bytes", "bytearray", "memoryview", "float", "bool", "dict", "list", "tuple", "set",
              "frozenset", "type", "object"}


def newer_than_3_9(source, filename="<source>"):
    """What in `source` a Python 3.9 would refuse or fail on, as `line: what` strings. Syntax is
    `ast.parse(feature_version=(3, 9))`'s to judge (`match`, `except*`, ...); the rest is what
    parses on 3.9 but fails there at run time."""
    tree = ast.parse(source, filename, feature_version=(3, 9))
    future = any(isinstance(n, ast.ImportFrom) and n.module == "__future__"
                 and any(a.name == "annotations" for a in n.names) for n in tree.body)
    typing_names = set(TYPE_NAMES)
    found = []
    annotations = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = node.args
            for a in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]:
                if a is not None and a.annotation is not None:
                    annotations.add(id(a.annotation))
            if node.returns is not None:
                annotations.add(id(node.returns))
        elif isinstance(node, ast.AnnAssign):
            annotations.add(id(node.annotation))
    in_annotation = set()
    for node in ast.walk(tree):
        if id(node) in annotations:
            in_annotation.update(id(n) for n in ast.walk(node))

    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "typing":
            for a in node.names:
                typing_names.add(a.asname or a.name)
                if a.name in TYPING_AFTER_3_9 or a.name not in typing.__all__:
                    found.append("%d: typing.%s" % (node.lineno, a.name))
        elif isinstance(node, ast.ImportFrom) and node.module in MODULES_AFTER_3_9:
            found.append("%d: module %s" % (node.lineno, node.module))
        elif isinstance(node, ast.ImportFrom):
            for a in node.names:
                if (node.module, a.name) in NAMES_AFTER_3_9:
                    found.append("%d: %s.%s" % (node.lineno, node.module, a.name))
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name in MODULES_AFTER_3_9:
                    found.append("%d: module %s" % (node.lineno, a.name))
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if node.value.id == "typing" and node.attr in TYPING_AFTER_3_9:
                found.append("%d: typing.%s" % (node.lineno, node.attr))
            elif (node.value.id, node.attr) in NAMES_AFTER_3_9:
                found.append("%d: %s.%s" % (node.lineno, node.value.id, node.attr))
        elif isinstance(node, ast.Name) and node.id in BUILTINS_AFTER_3_9:
            found.append("%d: %s" % (node.lineno, node.id))
        elif isinstance(node, ast.Call):
            fn = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", None)
            for k in node.keywords:
                if (fn, k.arg) in KEYWORDS_AFTER_3_9:
                    found.append("%d: %s(%s=...)" % (node.lineno, fn, k.arg))

    def is_type(n):
        return (isinstance(n, ast.Constant) and n.value is None) or isinstance(n, ast.Subscript) or (
            isinstance(n, ast.Name) and n.id in typing_names) or (
            isinstance(n, ast.BinOp) and isinstance(n.op, ast.BitOr) and (is_type(n.left) or is_type(n.right)))

    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            # In an annotation, `X | Y` is a string under `from __future__ import annotations`
            # (never evaluated), an error on 3.9 otherwise; outside one it is always evaluated.
            if id(node) in in_annotation:
                if not future:
                    found.append("%d: X | Y annotation without from __future__ import annotations" % node.lineno)
            elif is_type(node.left) or is_type(node.right):
                found.append("%d: X | Y of types evaluated at run time" % node.lineno)
    return sorted(set(found), key=lambda s: (int(s.split(":")[0]), s))


def sources():
    """Every Python file a user runs: the package's modules as imported, and beside them in the
    checkout setup.py, replay.py, bench.py, example.py and the tests."""
    files = [PACKAGE_DIR / m for m in MODULES]
    if PYTHON_DIR.is_dir():
        files += [PYTHON_DIR / f for f in ("setup.py", "replay.py", "bench.py", "example.py")]
    files += sorted(support.HERE.glob("*.py"))
    return files


class Python39(unittest.TestCase):
    def test_the_check_finds_what_3_9_lacks(self):
        self.assertRaises(SyntaxError, newer_than_3_9, "match x:\n    case 1:\n        pass\n")
        self.assertRaises(SyntaxError, newer_than_3_9, "try:\n    pass\nexcept* ValueError:\n    pass\n")
        self.assertEqual(
            newer_than_3_9(
                "from typing import Optional, TypeAlias\nimport tomllib\n"
                "def f(x: int | None) -> Optional[int]:\n    return isinstance(x, int | str)\n"
                "y = zip([], [], strict=True)\nz = 1 | 2\n"
            ),
            [
                "1: typing.TypeAlias",
                "2: module tomllib",
                "3: X | Y annotation without from __future__ import annotations",
                "4: X | Y of types evaluated at run time",
                "5: zip(strict=...)",
            ],
        )
        # Under `from __future__ import annotations` an annotation is never evaluated.
        self.assertEqual(
            newer_than_3_9("from __future__ import annotations\ndef f(x: int | None) -> bytes | str: ...\n"), []
        )

    def test_every_source_is_python_3_9(self):
        files = sources()
        self.assertEqual([f.name for f in files[:len(MODULES)]], MODULES)
        for f in files:
            with self.subTest(file=str(f)):
                self.assertEqual(newer_than_3_9(f.read_text(encoding="utf-8"), str(f)), [])


if __name__ == "__main__":
    unittest.main()
