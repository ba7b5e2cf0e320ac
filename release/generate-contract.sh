#!/usr/bin/env bash
# release/generate-contract.sh [OUTDIR] — run the pure-Java cores over the committed contract
# requests and write the exact byte streams a device produces:
#   - snapshot helper (test/fixtures/contract/snapshot-helper/: requests.json, trees/) → am
#     instrument output and session responses, into OUTDIR/snapshot-helper (default: its streams/);
#   - glass agent and a11y service (test/fixtures/contract/glass/requests.json) → the bytes each
#     client sends and each device side answers, into OUTDIR/glass (default: its streams/).
# Without OUTDIR the committed streams/ directories are replaced. The contract tests regenerate
# them into a temporary directory and fail when the committed ones are stale.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CONTRACTS="$ROOT/test/fixtures/contract"
CONTRACT="$CONTRACTS/snapshot-helper"
OUT="${1:+$1/snapshot-helper}"; OUT="${OUT:-$CONTRACT/streams}"
GLASS_OUT="${1:+$1/glass}"; GLASS_OUT="${GLASS_OUT:-$CONTRACTS/glass/streams}"
J=/usr/share/java
[ -f "$J/com.android.json.jar" ] || { echo "generate-contract: missing $J/com.android.json.jar (run release/setup-toolchain.sh)" >&2; exit 1; }
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
SH="$ROOT/android/snapshot-helper/src"
GA="$ROOT/android/glass-agent/src"
A11Y="$ROOT/android/a11y-service/src"
COMMON="$ROOT/android/glass-common/src"
STRICT="$ROOT/android/strict-json/src"
# shellcheck disable=SC2046
javac -J-XX:TieredStopAtLevel=1 -J-XX:+UseSerialGC --release 8 -encoding UTF-8 -nowarn -cp "$J/com.android.json.jar" -d "$WORK/classes" \
  $(find "$STRICT/core/java" "$SH/core/java" "$SH/contract/java" -name '*.java' | sort) \
  "$SH/test/java/dev/devicebridge/snapshothelper/core/FakeNode.java" \
  $(find "$COMMON/core/java" "$GA/core/java" "$A11Y/core/java" "$A11Y/contract/java" -name '*.java' | sort)
if [ -z "${1:-}" ]; then rm -rf "$OUT" "$GLASS_OUT"; fi
mkdir -p "$OUT" "$GLASS_OUT"
java -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -cp "$WORK/classes:$J/com.android.json.jar" dev.devicebridge.snapshothelper.contract.GenerateContract "$CONTRACT" "$OUT"
java -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -cp "$WORK/classes:$J/com.android.json.jar" dev.devicebridge.glasscontract.GenerateGlassContract "$CONTRACTS/glass" "$GLASS_OUT"
