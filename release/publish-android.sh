#!/usr/bin/env bash
# release/publish-android.sh OUTDIR --store file:DATA_DIR|s3://BUCKET/PREFIX [--json]
#
# Publishes what release/build-android.sh put into OUTDIR through `devicebridge release publish`:
#
#   snapshot-helper-<v>.apk  → helper android-snapshot-helper (installArgs "install -r -t", its only
#                              instrumentation as runner, signer pinned by the publisher)
#   glass-agent-<v>.jar      → helper glass-agent, kind app-process-jar (main class
#                              dev.devicebridge.glassagent.Main, socket localabstract:glass-agent,
#                              pushed to /data/local/tmp/glass-agent.jar)
#   glass-a11y-<v>.apk       → helper glass-a11y, kind accessibility-service-apk (its only
#                              accessibility service, socket localabstract:glass-a11y)
#
# Each artifact's <file>.sha256 is checked first; the version is android/VERSION. Publishing the
# same version again with identical bytes is a no-op; different bytes are refused (CONFLICT).
# S3 stores take the usual S3_* / AWS_* environment. Exit status: 0 all published, else the first
# failure's.
# With --json each publish prints one JSON line (three lines in all).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
usage() { echo "usage: release/publish-android.sh OUTDIR --store file:DATA_DIR|s3://BUCKET/PREFIX [--json]" >&2; exit 2; }
[ $# -ge 3 ] || usage
OUT="$1"; shift
STORE=""; JSON=()
while [ $# -gt 0 ]; do
  case "$1" in
    --store) [ $# -ge 2 ] || usage; STORE="$2"; shift 2 ;;
    --json) JSON=(--json); shift ;;
    *) usage ;;
  esac
done
[ -n "$STORE" ] || usage
VERSION="$(tr -d ' \r\n' < "$ROOT/android/VERSION")"

publish() {
  local name=$1 flag=$2 file=$3; shift 3
  [ -f "$OUT/$file" ] || { echo "publish-android: $OUT/$file is missing (run release/build-android.sh $OUT)" >&2; exit 1; }
  (cd "$OUT" && sha256sum --check --quiet --strict "$file.sha256") || {
    echo "publish-android: $OUT/$file does not match $file.sha256" >&2
    exit 1
  }
  node "$ROOT/src/cli/bin.js" release publish "$flag" "$OUT/$file" --version "$VERSION" --name "$name" \
    --store "$STORE" "$@" "${JSON[@]}"
}

publish android-snapshot-helper --apk "snapshot-helper-$VERSION.apk" --install-args "install -r -t"
publish glass-agent --jar "glass-agent-$VERSION.jar" --kind app-process-jar \
  --main-class dev.devicebridge.glassagent.Main --socket-name glass-agent \
  --device-path /data/local/tmp/glass-agent.jar
publish glass-a11y --apk "glass-a11y-$VERSION.apk" --kind accessibility-service-apk \
  --install-args "install -r -t" --socket-name glass-a11y
