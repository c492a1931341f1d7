#!/bin/bash
# Prints the Debian mirrors this machine's apt uses for SUITE, as one-line
# sources.list entries (the file ensure_image.sh gives mmdebstrap), from both
# ways apt is configured:
#  - deb822 files, /etc/apt/sources.list.d/*.sources (Debian's cloud and
#    container images keep their mirror in debian.sources);
#  - one-line files, /etc/apt/sources.list (where a Debian installed from its
#    installer keeps its mirror) and /etc/apt/sources.list.d/*.list.
# Kept: `deb` entries whose suite is SUITE or SUITE-* (-updates, -security),
# with component main only (the base image needs nothing else, and a
# third-party repository naming the suite has no main). Left out: comments,
# deb-src, `Enabled: no` stanzas, cdrom: entries (an installer's disc), and
# files apt ignores (other extensions). The one-line options ([arch=...
# signed-by=...]) are kept; a deb822 Signed-By is kept when it names a file
# (an inline key is left to the default keyring). Duplicates are printed once.
# Exits 1, naming the files read, when no entry is left.
# Usage: apt_mirrors.sh SUITE [ROOT]   (ROOT stands for /; the test's samples)
set -euo pipefail
suite="${1:?usage: apt_mirrors.sh SUITE [ROOT]}"
root="${2:-}"
apt="$root/etc/apt"
shopt -s nullglob
deb822=("$apt"/sources.list.d/*.sources)
oneline=()
[ -f "$apt/sources.list" ] && oneline+=("$apt/sources.list")
oneline+=("$apt"/sources.list.d/*.list)

# deb822: stanzas are separated by blank lines; a line starting with a blank
# continues the field before it (a multi-line Signed-By key).
from_deb822() {
  [ $# -gt 0 ] || return 0
  awk -v suite="$suite" '
    function flush() { emit(); delete f; delete multi }
    function emit(   n, u, s, i, j, uris, suites, comps, types, ok, opt) {
      if (f["uris"] == "") return
      n = split(f["types"], types, /[ \t]+/); ok = 0
      for (i = 1; i <= n; i++) if (types[i] == "deb") ok = 1
      if (tolower(f["enabled"]) == "no") ok = 0
      n = split(f["components"], comps, /[ \t]+/); j = 0
      for (i = 1; i <= n; i++) if (comps[i] == "main") j = 1
      if (!ok || !j) return
      opt = ""
      if (f["signed-by"] ~ /^\/[^ \t]*$/ && !multi["signed-by"]) {
        opt = "[signed-by=" f["signed-by"] "] "
      }
      u = split(f["uris"], uris, /[ \t]+/)
      s = split(f["suites"], suites, /[ \t]+/)
      for (i = 1; i <= u; i++) {
        if (uris[i] == "" || uris[i] ~ /^cdrom:/) continue
        for (j = 1; j <= s; j++) {
          if (suites[j] == suite || index(suites[j], suite "-") == 1) {
            print "deb " opt uris[i] " " suites[j] " main"
          }
        }
      }
    }
    FNR == 1 { flush(); key = "" }
    /^[ \t]*$/ { flush(); key = ""; next }
    /^#/ { next }
    /^[ \t]/ { if (key != "") multi[key] = 1; next }
    {
      i = index($0, ":"); if (i == 0) next
      key = tolower(substr($0, 1, i - 1))
      v = substr($0, i + 1); gsub(/^[ \t]+|[ \t]+$/, "", v)
      f[key] = v
    }
    END { flush() }' "$@"
}

# One-line: deb [options] URI SUITE COMPONENT...
from_oneline() {
  [ $# -gt 0 ] || return 0
  awk -v suite="$suite" '
    {
      sub(/#.*/, ""); n = split($0, t, /[ \t]+/); i = 1
      if (t[1] == "") i = 2
      if (t[i] != "deb") next
      i++; opt = ""
      if (substr(t[i], 1, 1) == "[") {
        o = t[i]
        while (o !~ /\]$/ && i < n) { i++; o = o " " t[i] }
        i++; opt = o " "
      }
      uri = t[i]; s = t[i + 1]; main = 0
      for (j = i + 2; j <= n; j++) if (t[j] == "main") main = 1
      if (uri == "" || uri ~ /^cdrom:/ || !main) next
      if (s == suite || index(s, suite "-") == 1) print "deb " opt uri " " s " main"
    }' "$@"
}

out="$({ from_deb822 "${deb822[@]}"; from_oneline "${oneline[@]}"; } | awk '!seen[$0]++')"
if [ -z "$out" ]; then
  read_files="$(echo ${deb822[@]+"${deb822[@]}"} ${oneline[@]+"${oneline[@]}"})"
  echo "apt_mirrors.sh: no Debian mirror for $suite (a \`deb URI $suite main\`" \
    "entry) in $apt/sources.list.d/*.sources or $apt/sources.list{,.d/*.list};" \
    "files read: ${read_files:-none}" >&2
  exit 1
fi
printf '%s\n' "$out"
