#!/usr/bin/env bash
# Security overhead: round trips against three cairnds started side by side
# on fresh temp data dirs (durable writes, the default):
#   none   --auth=none, plaintext (the baseline)
#   none2  the same again: its ratio to `none` is this machine's noise floor
#   token  tokens checked (the default), plaintext on loopback
#   tls    tokens checked and TLS (a CA and server certificate this script
#          makes with openssl; P-256 keys)
# and, for GetStudy only, gRPC alone (bare_grpc_server: a service answering
# NOT_FOUND with none of Cairn's code) plaintext (`bare`) and with the same
# certificate (`bare_tls`): the bare_tls/bare ratio is what the gRPC library
# and OpenSSL themselves cost per call here, the floor under cairnd's.
# Each figure is measured by cairn_bench_core (one client, one connection)
# in ROUNDS interleaved rounds, the six servers in a rotating order, so
# all see the same load on a shared machine. Printed per figure: the median
# rate of each mode and the median of the per-round ratios to `none`, then
# cairnd's CPU time per call (from /proc/PID/stat around each run; less
# sensitive to a loaded machine than the rates, and what capacity costs).
# Target: overhead under 10% (ratio >= 0.90) for auth and auth+TLS.
#
# Figures: GetStudy (a study that does not exist, answered from memory: the
# worst case for relative overhead), SuggestTrials + CompleteTrial round
# trips, unary AddTrialMeasurement.
#
# Usage: bench/security/run.sh [--duration SECONDS] [--rounds N]
# Env: CAIRN_BIN_DIR (default build/bin).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BIN="${CAIRN_BIN_DIR:-$ROOT/build/bin}"
DURATION=2
ROUNDS=5
while [ $# -gt 0 ]; do
  case "$1" in
    --duration) DURATION="$2"; shift 2 ;;
    --rounds) ROUNDS="$2"; shift 2 ;;
    -h|--help) sed -n '2,23p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
case "$ROUNDS" in
  ''|*[!0-9]*|0) echo "run.sh: --rounds must be a positive integer, got '$ROUNDS'" >&2; exit 2 ;;
esac
source "$ROOT/scripts/common.sh"
cairn_require_bins "$BIN" cairnd cairn_bench_core bare_grpc_server
command -v openssl >/dev/null || { echo "run.sh: needs the openssl command" >&2; exit 1; }

WORK="$(mktemp -d "${TMPDIR:-/tmp}/cairn-bench-security.XXXXXX")"
# A root cairnd runs jobs as nobody, who must reach DIR/*/jobs (search only).
chmod 711 "$WORK"
PIDS=()
declare -A PID_OF
cleanup() {
  for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT

# A CA and a server certificate for 127.0.0.1, as an operator would make them.
PKI="$WORK/pki"
mkdir -p "$PKI"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
  -keyout "$PKI/ca.key" -out "$PKI/ca.crt" -days 2 -subj /CN=bench-ca 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
  -keyout "$PKI/server.key" -out "$PKI/server.csr" -subj /CN=cairnd 2>/dev/null
echo "subjectAltName=IP:127.0.0.1,DNS:localhost" >"$PKI/server.ext"
openssl x509 -req -in "$PKI/server.csr" -CA "$PKI/ca.crt" -CAkey "$PKI/ca.key" \
  -CAcreateserial -out "$PKI/server.crt" -days 2 -extfile "$PKI/server.ext" 2>/dev/null

# start MODE FLAGS...: cairnd on a free loopback port; its port in $WORK/MODE.port.
start() {
  local mode="$1"; shift
  "$BIN/cairnd" --data-dir "$WORK/$mode" --listen 127.0.0.1:0 --metrics-listen "" --http-listen "" \
    --port-file "$WORK/$mode.port" "$@" >"$WORK/$mode.log" 2>&1 &
  started "$mode"
}
# start_bare MODE FLAGS...: bare_grpc_server instead of cairnd.
start_bare() {
  local mode="$1"; shift
  "$BIN/bare_grpc_server" --port-file "$WORK/$mode.port" "$@" >"$WORK/$mode.log" 2>&1 &
  started "$mode"
}
# started MODE: records the server just started in the background and waits
# for its port file.
started() {
  local mode="$1"
  PIDS+=($!)
  PID_OF[$mode]=$!
  for _ in $(seq 1 300); do
    [ -s "$WORK/$mode.port" ] && return 0
    kill -0 "$!" 2>/dev/null || { cat "$WORK/$mode.log" >&2; return 1; }
    sleep 0.1
  done
  echo "cairnd ($mode) did not start" >&2; cat "$WORK/$mode.log" >&2; return 1
}
start none --auth=none
start none2 --auth=none
start token
start tls --tls-cert "$PKI/server.crt" --tls-key "$PKI/server.key"
start_bare bare
start_bare bare_tls --tls-cert "$PKI/server.crt" --tls-key "$PKI/server.key"

# cpu_ticks PID: user + system CPU time of a process, in clock ticks.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# measure MODE: one cairn_bench_core run per figure against that server,
# `key value` lines, plus cpu_us_<figure> (the server's CPU time in the run);
# gRPC alone answers GetStudy only.
measure() {
  local mode="$1" server fig before after
  server="127.0.0.1:$(tr -d '\n' <"$WORK/$mode.port")"
  local env=(env -u CAIRN_TOKEN -u CAIRN_TLS_CA -u CAIRN_TLS_CERT -u CAIRN_TLS_KEY)
  local figures=(empty_rpc round_trips unary)
  case "$mode" in
    none|none2) env+=(CAIRN_TOKEN_FILE=) ;;
    token) env+=(CAIRN_TOKEN_FILE="$WORK/token/admin.token") ;;
    tls) env+=(CAIRN_TOKEN_FILE="$WORK/tls/admin.token" CAIRN_TLS_CA="$PKI/ca.crt") ;;
    bare) env+=(CAIRN_TOKEN_FILE=); figures=(empty_rpc) ;;
    bare_tls) env+=(CAIRN_TOKEN_FILE= CAIRN_TLS_CA="$PKI/ca.crt"); figures=(empty_rpc) ;;
  esac
  for fig in "${figures[@]}"; do
    before="$(cpu_ticks "${PID_OF[$mode]}")"
    "${env[@]}" "$BIN/cairn_bench_core" --server "$server" --duration "$DURATION" \
      --clients 1 --figures "$fig"
    after="$(cpu_ticks "${PID_OF[$mode]}")"
    echo "cpu_us_$fig $(( (after - before) * 1000000 / TICKS ))"
  done
}
TICKS="$(getconf CLK_TCK)"

echo "cairnd none/none2/token/tls, gRPC alone bare/bare_tls in $WORK; ${DURATION}s per figure, $ROUNDS rounds" >&2
: >"$WORK/results.txt"
modes=(none none2 token tls bare bare_tls)
for r in $(seq 1 "$ROUNDS"); do
  for i in 0 1 2 3 4 5; do
    mode="${modes[$(( (i + r) % 6 ))]}"
    measure "$mode" | awk -v r="$r" -v m="$mode" '{ print r, m, $1, $2 }' >>"$WORK/results.txt"
  done
  awk -v r="$r" '$1 == r && $3 == "floor_empty_rpc_us" { v[$2] = 1e6 / $4 }
    END { printf "round %d: GetStudy/s none %.0f, none2 %.0f, token %.0f, tls %.0f; gRPC alone %.0f, with TLS %.0f\n",
                 r, v["none"], v["none2"], v["token"], v["tls"], v["bare"], v["bare_tls"] }' \
    "$WORK/results.txt" >&2
done

awk -v rounds="$ROUNDS" -v duration="$DURATION" '
  function median(a, n,   i, j, t, b) {
    for (i = 1; i <= n; i++) b[i] = a[i]
    for (i = 2; i <= n; i++) for (j = i; j > 1 && b[j-1] > b[j]; j--) {
      t = b[j]; b[j] = b[j-1]; b[j-1] = t
    }
    return (n % 2) ? b[(n + 1) / 2] : (b[n / 2] + b[n / 2 + 1]) / 2
  }
  # cairnd CPU microseconds per call (per round trip), from the run of the
  # figure: its CPU time over (rate x duration) calls. Lower is better.
  $3 ~ /^cpu_us_/ {
    fig = substr($3, 8)
    key = (fig == "empty_rpc") ? "get" : (fig == "round_trips") ? "rt" : "add"
    cpu[key, $2, $1] = $4; next
  }
  {
    rate = ($3 == "floor_empty_rpc_us") ? 1e6 / $4 : $4
    key = $3
    if (key == "floor_empty_rpc_us") key = "get"
    else if (key == "cairn_suggest_complete_per_s") key = "rt"
    else if (key == "cairn_add_measurement_per_s") key = "add"
    else next
    v[key, $2, $1] = rate
  }
  # Medians over the rounds: the rate of mode m, and its ratio to none.
  function med_rate(key, m,   r, a) {
    for (r = 1; r <= rounds; r++) a[r] = v[key, m, r]
    return median(a, rounds)
  }
  function med_ratio(key, m,   r, a) {
    for (r = 1; r <= rounds; r++) {
      a[r] = (v[key, "none", r] > 0) ? v[key, m, r] / v[key, "none", r] : 0
    }
    return median(a, rounds)
  }
  END {
    split("get rt add", keys, " ")
    label["get"] = "GetStudy (missing study)"
    label["rt"] = "SuggestTrials + CompleteTrial round trips"
    label["add"] = "AddTrialMeasurement (unary)"
    printf "%-42s %8s %8s %8s %10s | %7s %7s %7s\n", "per second, 1 client (median of rounds)",
           "none", "none2", "token", "token+TLS", "none2", "token", "+TLS"
    worst = 1
    for (k = 1; k <= 3; k++) {
      key = keys[k]
      a = med_ratio(key, "none2"); t = med_ratio(key, "token"); s = med_ratio(key, "tls")
      printf "%-42s %8.0f %8.0f %8.0f %10.0f | %6.3fx %6.3fx %6.3fx\n", label[key],
             med_rate(key, "none"), med_rate(key, "none2"), med_rate(key, "token"),
             med_rate(key, "tls"), a, t, s
      if (t < worst) worst = t
      if (s < worst) worst = s
      noise = (a < 1 ? 1 - a : a - 1); if (noise > max_noise) max_noise = noise
    }
    printf "%-42s %8s %8s %8s %10s | %7s %7s %7s\n", "cairnd CPU us per call (median of rounds)",
           "none", "none2", "token", "token+TLS", "none2", "token", "+TLS"
    for (k = 1; k <= 3; k++) {
      key = keys[k]
      for (m = 1; m <= 4; m++) {
        mode = (m == 1) ? "none" : (m == 2) ? "none2" : (m == 3) ? "token" : "tls"
        for (r = 1; r <= rounds; r++) {
          calls = v[key, mode, r] * duration
          c_[r] = (calls > 0) ? cpu[key, mode, r] / calls : 0
          cr_[mode, r] = c_[r]
        }
        med[mode] = median(c_, rounds)
      }
      for (m = 2; m <= 4; m++) {
        mode = (m == 2) ? "none2" : (m == 3) ? "token" : "tls"
        for (r = 1; r <= rounds; r++) {
          q_[r] = (cr_["none", r] > 0) ? cr_[mode, r] / cr_["none", r] : 0
        }
        cratio[mode] = median(q_, rounds)
      }
      printf "%-42s %8.1f %8.1f %8.1f %10.1f | %6.3fx %6.3fx %6.3fx\n", label[key],
             med["none"], med["none2"], med["token"], med["tls"],
             cratio["none2"], cratio["token"], cratio["tls"]
    }
    # TLS alone, like for like: cairnd with tokens, TLS vs not; gRPC alone,
    # TLS vs not (GetStudy).
    for (r = 1; r <= rounds; r++) {
      a_[r] = (v["get", "token", r] > 0) ? v["get", "tls", r] / v["get", "token", r] : 0
      b_[r] = (v["get", "bare", r] > 0) ? v["get", "bare_tls", r] / v["get", "bare", r] : 0
    }
    printf "%-42s %8.0f %8.0f %10s | TLS %6.3fx (cairnd with tokens: %.3fx)\n",
           "GetStudy/s, gRPC alone: plaintext, TLS", med_rate("get", "bare"),
           med_rate("get", "bare_tls"), "", median(b_, rounds), median(a_, rounds)
    printf "(ratios: the median of the per-round ratios to the first --auth=none server;\n"
    printf " none2 is an identical server, so its distance from 1.000x is the noise floor)\n"
    printf "worst overhead: %.1f%% (target < 10%%: %s); noise floor up to %.1f%%\n",
           100 * (1 - worst), (worst >= 0.90) ? "met" : "NOT met", 100 * max_noise
  }' "$WORK/results.txt"
