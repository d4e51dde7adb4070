#!/bin/bash
# Run the test suite (validation/tests) on Debian's python3 and pytest.
# Each test boots its own QEMU; console logs land in build/logs.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top/validation"
exec /usr/bin/python3 -m pytest -p no:cacheprovider -rA "$@" tests
