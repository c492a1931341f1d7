#!/usr/bin/env bash
# Prints size figures for the hand-written C++ of the tree (or of the dirs
# given): the largest files, function count, mean and longest functions,
# and what is over the limits docs/architecture.md keeps ("Limits we
# keep": files under 600 lines, functions under 80).
# A function's length is its line span (signature to closing brace) as
# universal-ctags reports it (kinds f: functions and methods with a body).
# Usage: scripts/code_stats.sh [DIR...]   (default: every component, the
# folders of the top-level CMakeLists.txt's component loop but tests/ and
# bench/)
set -euo pipefail
cd "$(dirname "$0")/.."

max_file_lines=600
max_function_lines=80

# The components, read from the loop that adds them in CMakeLists.txt:
#   foreach(dir proto util api ... cli tests bench)
components() {
  sed -nE 's/^foreach\(dir ([a-z_ ]+)\)$/\1/p' CMakeLists.txt | head -1 |
    tr ' ' '\n' | grep -vxE 'tests|bench' |
    while read -r dir; do [ -d "$dir" ] && echo "$dir"; done
}

dirs=("$@")
if [ ${#dirs[@]} -eq 0 ]; then
  mapfile -t dirs < <(components)
  [ ${#dirs[@]} -gt 0 ] || { echo "code_stats: no component loop in CMakeLists.txt" >&2; exit 1; }
fi
echo "dirs: ${dirs[*]}"
files=$(find "${dirs[@]}" -type f \( -name '*.cc' -o -name '*.h' -o -name '*.cu' \) | sort)

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# shellcheck disable=SC2086
wc -l $files | grep -v ' total$' | sort -rn >"$tmp/files"
echo "files: $(wc -l <"$tmp/files")"
echo "largest hand-written source files (lines):"
head -5 "$tmp/files" | sed 's/^/  /'

# shellcheck disable=SC2086
ctags -x --_xformat='%N %F %n %{end}' --kinds-c++=f --language-force=c++ \
  --fields=+ne $files 2>/dev/null |
  awk '$4 != "" && $4 >= $3 { print $4 - $3 + 1, $1, $2 ":" $3 }' |
  sort -rn >"$tmp/functions"
awk '{ n++; sum += $1 } END { printf "functions: %d, mean length %.1f lines\n", n, n ? sum / n : 0 }' \
  "$tmp/functions"
echo "longest functions (lines, name, where):"
head -8 "$tmp/functions" | sed 's/^/  /'

awk -v max="$max_file_lines" '$1 > max' "$tmp/files" >"$tmp/long_files"
echo "files over $max_file_lines lines: $(wc -l <"$tmp/long_files")"
sed 's/^/  /' "$tmp/long_files"
awk -v max="$max_function_lines" '$1 > max' "$tmp/functions" >"$tmp/long_functions"
echo "functions over $max_function_lines lines: $(wc -l <"$tmp/long_functions")"
sed 's/^/  /' "$tmp/long_functions"
