#!/usr/bin/env bash
# Fails when a commit after the base has a subject over 72 characters
# (STYLE.md: subjects of at most 72 characters, the reason in the body).
# The same rule as scripts/hooks/commit-msg, for commits made without the
# hook. Older history is left as it is: the base is the last commit before
# the rule.
# Usage: scripts/check_commits.sh [REV]   (default HEAD)
set -uo pipefail
export LC_ALL=C.UTF-8  # ${#subject} counts characters, not bytes
cd "$(dirname "$0")/.."

base=b2df78c6e45c8befd4990e26b7b6c48be137b5c2
max=72
rev="${1:-HEAD}"

if ! git cat-file -e "$base^{commit}" 2>/dev/null; then
  echo "check_commits: base commit $base is not in this clone" \
    "(a shallow clone? fetch the full history)" >&2
  exit 2
fi
if ! git merge-base --is-ancestor "$base" "$rev"; then
  echo "check_commits: $rev does not descend from the base $base" >&2
  exit 2
fi

bad=0 count=0
while IFS= read -r line; do
  count=$((count + 1))
  subject="${line#* }"
  if [ "${#subject}" -gt "$max" ]; then
    echo "${line%% *}: subject of ${#subject} characters (at most $max): $subject"
    bad=$((bad + 1))
  fi
done < <(git log --format='%h %s' "$base..$rev")

if [ "$bad" -gt 0 ]; then
  echo "check_commits: $bad of $count commits after ${base:0:7} have subjects" \
    "over $max characters; reword them (git rebase -i) before merging"
  exit 1
fi
echo "check_commits: $count commits after ${base:0:7}, every subject at most $max characters"
