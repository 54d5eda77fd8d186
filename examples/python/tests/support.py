"""What the test modules share: which copy of the package they test, and where the repository
is (its recorded data, `target/mcp-servers/env.sh`).

- Run from the source folder (`examples/python/tests`, as tests/tests/python_binding.rs does,
  with `PW_LIB`), the source package beside this folder is put first on `sys.path`.
- Run from a copy of this folder elsewhere (tests/python_wheel.sh: the wheel installed in a
  venv), there is no package beside it, so nothing is added and `import` finds the installed
  one; `PW_REPO_ROOT` then says where the repository is.
"""

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE = HERE.parent
if (SOURCE / "polyweave_tool_adapter" / "__init__.py").is_file():
    sys.path.insert(0, str(SOURCE))

ROOT = Path(os.environ.get("PW_REPO_ROOT") or HERE.parents[2]).resolve()
