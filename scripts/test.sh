#!/bin/bash
# Run the test suite (validation/tests) on Debian's python3 and pytest.
# Each test boots its own QEMU; console logs land in build/logs.
#
# Two passes.  First every test but those marked serial, two at a time
# (pytest-xdist; FIQ_TEST_JOBS): most of them wait on the host's paced
# serial input or on a guest's timeout rather than on the CPU.  Then the
# serial ones alone: their figures (instruction counts, cost ratios,
# entries per second) are what a second guest on the host would disturb.
# Arguments go to both passes; a pass that selects nothing is not a failure.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top/validation"
pytest=(/usr/bin/python3 -m pytest -p no:cacheprovider -rA)
rc=0
pass() {
	"${pytest[@]}" "$@" tests
	local r=$?
	[ $r -eq 0 ] || [ $r -eq 5 ] || rc=1
}
pass -n "${FIQ_TEST_JOBS:-2}" --dist loadgroup -m "not serial" "$@"
FIQ_FIGURES_APPEND=1 pass -m serial "$@"
exit $rc
