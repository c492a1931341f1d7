#!/usr/bin/env bash
# Prints size figures for the hand-written C++ of the tree (or of the dirs
# given): the largest files, function count, mean and longest functions.
# A function's length is its line span (signature to closing brace) as
# universal-ctags reports it (kinds f: functions and methods with a body).
# Usage: scripts/code_stats.sh [DIR...]   (default: every component)
set -euo pipefail
cd "$(dirname "$0")/.."
dirs=("$@")
[ ${#dirs[@]} -eq 0 ] && dirs=(proto store tuner trials jobs trainer monitoring server cli)
files=$(find "${dirs[@]}" -type f \( -name '*.cc' -o -name '*.h' -o -name '*.cu' \) | sort)
echo "largest hand-written source files (lines):"
# shellcheck disable=SC2086
wc -l $files | grep -v ' total$' | sort -rn | head -5 | sed 's/^/  /'
# shellcheck disable=SC2086
ctags -x --_xformat='%N %F %n %{end}' --kinds-c++=f --language-force=c++ \
  --fields=+ne $files 2>/dev/null |
  awk '$4 != "" && $4 >= $3 { n++; len = $4 - $3 + 1; sum += len;
         print len, $1, $2 ":" $3 }' | sort -rn >/tmp/cairn_functions.$$
awk '{ n++; sum += $1 } END { printf "functions: %d, mean length %.1f lines\n", n, sum / n }' \
  /tmp/cairn_functions.$$
echo "longest functions (lines, name, where):"
head -8 /tmp/cairn_functions.$$ | sed 's/^/  /'
rm -f /tmp/cairn_functions.$$
