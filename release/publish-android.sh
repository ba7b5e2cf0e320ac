#!/usr/bin/env bash
# release/publish-android.sh OUTDIR --store file:DATA_DIR|s3://BUCKET/PREFIX [--json]
#
# Publishes what release/build-android.sh put into OUTDIR through `devicebridge release publish`:
#
#   snapshot-helper-<v>.apk  → helper android-snapshot-helper (installArgs "install -r -t", its only
#                              instrumentation as runner, signer pinned by the publisher)
#
# Each artifact's <file>.sha256 is checked first; the version is android/VERSION. Publishing the
# same version again with identical bytes is a no-op; different bytes are refused (CONFLICT).
# S3 stores take the usual S3_* / AWS_* environment. Exit status: 0 all published, else the first
# failure's.
#
# The glass companions (glass-agent jar, glass-a11y APK) have manifest kinds of their own
# (app-process-jar, accessibility-service-apk; see src/manifest/kinds.ts) that `release publish`
# does not write yet; they are published here once it does.
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
  local name=$1 file=$2; shift 2
  [ -f "$OUT/$file" ] || { echo "publish-android: $OUT/$file is missing (run release/build-android.sh $OUT)" >&2; exit 1; }
  (cd "$OUT" && sha256sum --check --quiet --strict "$file.sha256") || {
    echo "publish-android: $OUT/$file does not match $file.sha256" >&2
    exit 1
  }
  node "$ROOT/src/cli/bin.js" release publish --apk "$OUT/$file" --version "$VERSION" --name "$name" \
    --store "$STORE" "$@" "${JSON[@]}"
}

publish android-snapshot-helper "snapshot-helper-$VERSION.apk" --install-args "install -r -t"
