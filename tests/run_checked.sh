#!/bin/bash
# run_checked.sh "RE1;RE2;..." COMMAND [ARGS...]
# Runs the command; passes when it exits 0 and its output has a line
# matching each extended regular expression.
set -u
res=$1
shift
out=$("$@" 2>&1)
rc=$?
if [ $rc -ne 0 ]; then
    echo "run_checked: exit status $rc"; echo "$out"; exit 1
fi
IFS=';' read -r -a list <<<"$res"
for re in "${list[@]}"; do
    if ! grep -qE "$re" <<<"$out"; then
        echo "run_checked: no line matches /$re/"; echo "$out"; exit 1
    fi
done
exit 0
