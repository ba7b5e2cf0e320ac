#!/usr/bin/env bash
# release/generate-contract.sh [OUTDIR] — run the snapshot helper's pure-Java core over the contract
# requests and fixture trees in test/fixtures/contract/snapshot-helper/ and write the exact byte
# streams a device produces (am instrument output, session responses) into OUTDIR (default: that
# directory's streams/, replaced). test/integration/contract-snapshot-helper.test.ts regenerates
# them into a temporary directory and fails when the committed ones are stale.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CONTRACT="$ROOT/test/fixtures/contract/snapshot-helper"
OUT="${1:-$CONTRACT/streams}"
J=/usr/share/java
[ -f "$J/com.android.json.jar" ] || { echo "generate-contract: missing $J/com.android.json.jar (run release/setup-toolchain.sh)" >&2; exit 1; }
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
SH="$ROOT/android/snapshot-helper/src"
# shellcheck disable=SC2046
javac --release 8 -encoding UTF-8 -nowarn -cp "$J/com.android.json.jar" -d "$WORK/classes" \
  $(find "$SH/core/java" "$SH/contract/java" -name '*.java' | sort) \
  "$SH/test/java/dev/devicebridge/snapshothelper/core/FakeNode.java"
if [ -z "${1:-}" ]; then rm -rf "$OUT"; fi
mkdir -p "$OUT"
java -cp "$WORK/classes:$J/com.android.json.jar" dev.devicebridge.snapshothelper.contract.GenerateContract "$CONTRACT" "$OUT"
