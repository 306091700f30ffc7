#!/usr/bin/env bash
# Fails when halo_info --unsupported lists a function the foundation must
# implement (the list: tools/ci/foundation_functions.txt).
set -euo pipefail
info=${1:?usage: check_unsupported.sh path/to/halo_info}
here=$(cd "$(dirname "$0")" && pwd)
unsupported=$("$info" --unsupported)
missing=0
for f in $(grep -v '^#' "$here/foundation_functions.txt"); do
    if grep -qx "$f" <<<"$unsupported"; then
        echo "check_unsupported: $f is still unsupported"
        missing=1
    fi
done
total=$(grep -v '^#' "$here/foundation_functions.txt" | wc -w)
if [ $missing -eq 0 ]; then
    echo "check_unsupported: all $total foundation functions are implemented"
fi
exit $missing
