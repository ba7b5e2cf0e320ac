#!/usr/bin/env bash
# release/build-android.sh OUTDIR — build Device Bridge's on-device helpers from android/ into OUTDIR:
#
#   snapshot-helper-<v>.apk (+ .sha256)   instrumentation APK, dev.devicebridge.snapshothelper
#   glass-agent-<v>.jar (+ .sha256)       app_process dex jar, main class dev.devicebridge.glassagent.Main
#   glass-a11y-<v>.apk (+ .sha256)        AccessibilityService APK, dev.devicebridge.glassa11y
#
# Toolchain: an Android SDK when ANDROID_HOME or ANDROID_SDK_ROOT is set (the newest
# platforms/android-N/android.jar to link resources against, and d8/aapt/zipalign/apksigner of
# DEVICEBRIDGE_BUILD_TOOLS or the newest build-tools, said on stderr); otherwise Debian's toolchain,
# whose two bullseye jars release/setup-toolchain.sh puts into $DEVICEBRIDGE_TOOLS (default
# <repo>/.tools). Fails with a message naming whatever is missing.
#
# Java sources are compiled against API 23's android.jar on both toolchains (the SDK's
# platforms/android-23, else Debian's; DEVICEBRIDGE_API23_JAR overrides): the helpers run from
# Android 7, so a newer API called directly (not through reflection) must fail the build.
#
# Version: android/VERSION (x.y.z), versionCode = x*1,000,000 + y*1,000 + z. Signed with the
# committed android/debug.keystore (see android/README.md: it must never rotate). Deterministic:
# the same commit and toolchain give the same bytes (entry order and times are fixed by
# release/tools/ZipNormalize.java before aligning and signing).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
TOOLS="${DEVICEBRIDGE_TOOLS:-$ROOT/.tools}"
log() { echo "build-android: $*" >&2; }

[ $# -eq 1 ] || { echo "usage: release/build-android.sh OUTDIR" >&2; exit 2; }
mkdir -p "$1"
OUT="$(cd "$1" && pwd)"

VERSION="$(tr -d ' \r\n' < "$ROOT/android/VERSION")"
if ! [[ $VERSION =~ ^(0|[1-9][0-9]{0,2})\.(0|[1-9][0-9]{0,2})\.(0|[1-9][0-9]{0,2})$ ]]; then
  log "android/VERSION must be MAJOR.MINOR.PATCH with each part 0-999, got '$VERSION'"
  exit 1
fi
VERSION_CODE=$(( BASH_REMATCH[1] * 1000000 + BASH_REMATCH[2] * 1000 + BASH_REMATCH[3] ))
[ "$VERSION_CODE" -ge 1 ] || { log "versionCode must be at least 1 (android/VERSION is $VERSION)"; exit 1; }

KEYSTORE="$ROOT/android/debug.keystore"
KS_ALIAS=androiddebugkey
KS_PASS=android

# --- toolchain ---------------------------------------------------------------------------------
missing=()
SDK="${ANDROID_HOME:-${ANDROID_SDK_ROOT:-}}"
if [ -n "$SDK" ]; then
  ANDROID_JAR="$(ls -d "$SDK"/platforms/android-*/android.jar 2>/dev/null | sort -V | tail -n1 || true)"
  [ -n "$ANDROID_JAR" ] || missing+=("$SDK/platforms/android-N/android.jar (sdkmanager 'platforms;android-35')")
  if [ -n "${DEVICEBRIDGE_BUILD_TOOLS:-}" ]; then
    BT="$SDK/build-tools/$DEVICEBRIDGE_BUILD_TOOLS"
  else
    BT="$(ls -d "$SDK"/build-tools/*/ 2>/dev/null | sort -V | tail -n1 || true)"
    BT="${BT%/}"
    [ -z "$BT" ] || log "DEVICEBRIDGE_BUILD_TOOLS not set: using the newest build-tools, $(basename "$BT")"
  fi
  [ -n "$BT" ] && [ -d "$BT" ] || missing+=("$SDK/build-tools/<version> (sdkmanager 'build-tools;35.0.0')")
  D8="${BT:-}/d8"; AAPT="${BT:-}/aapt"; ZIPALIGN="${BT:-}/zipalign"; APKSIGNER="${BT:-}/apksigner"
  for tool in "$D8" "$AAPT" "$ZIPALIGN" "$APKSIGNER"; do [ -x "$tool" ] || missing+=("$tool"); done
  LINK_AGAINST="$ANDROID_JAR"
  if [ -n "${DEVICEBRIDGE_API23_JAR:-}" ]; then API23_JAR="$DEVICEBRIDGE_API23_JAR"
  elif [ -f "$SDK/platforms/android-23/android.jar" ]; then API23_JAR="$SDK/platforms/android-23/android.jar"
  elif [ -f "$TOOLS/android-23.jar" ]; then API23_JAR="$TOOLS/android-23.jar"
  else API23_JAR="$SDK/platforms/android-23/android.jar"; fi
  [ -f "$API23_JAR" ] || missing+=("$API23_JAR (sdkmanager 'platforms;android-23': the sources compile against API 23)")
  DEXER=d8
else
  ANDROID_JAR="$TOOLS/android-23.jar"
  DX_JAR="$TOOLS/dx.jar"
  [ -f "$ANDROID_JAR" ] || missing+=("$ANDROID_JAR (libandroid-23-java from bullseye: run release/setup-toolchain.sh)")
  [ -f "$DX_JAR" ] || missing+=("$DX_JAR (dalvik-exchange from bullseye: run release/setup-toolchain.sh)")
  AAPT="$(command -v aapt || echo aapt)"; ZIPALIGN="$(command -v zipalign || echo zipalign)"
  APKSIGNER="$(command -v apksigner || echo apksigner)"
  for tool in aapt zipalign apksigner; do command -v "$tool" >/dev/null 2>&1 || missing+=("$tool (apt-get install $tool)"); done
  API23_JAR="$ANDROID_JAR"
  LINK_AGAINST=/usr/share/android-framework-res/framework-res.apk
  [ -f "$LINK_AGAINST" ] || missing+=("$LINK_AGAINST (apt-get install android-framework-res)")
  DEXER=dx
fi
for tool in javac java jar; do command -v "$tool" >/dev/null 2>&1 || missing+=("$tool (apt-get install openjdk-17-jdk-headless)"); done
[ -f "$KEYSTORE" ] || missing+=("$KEYSTORE (committed; restore it from git, never regenerate it)")
if [ "${#missing[@]}" -gt 0 ]; then
  log "cannot build, missing:"
  for m in "${missing[@]}"; do echo "  - $m" >&2; done
  exit 1
fi

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
export TZ=UTC LC_ALL=C

# compile NAME SRC_DIRS... -> $WORK/NAME/classes
compile() {
  local name=$1; shift
  local classes="$WORK/$name/classes"
  mkdir -p "$classes"
  local sources
  sources="$(find "$@" -name '*.java' | sort)"
  # shellcheck disable=SC2086
  javac -J-XX:TieredStopAtLevel=1 -J-XX:+UseSerialGC -source 8 -target 8 -Xlint:-options -encoding UTF-8 -bootclasspath "$API23_JAR" \
    -implicit:none -d "$classes" $sources
}

# dex NAME -> $WORK/NAME/classes.dex
dex() {
  local name=$1 classes="$WORK/$1/classes"
  if [ "$DEXER" = d8 ]; then
    mkdir -p "$WORK/$name/d8"
    # shellcheck disable=SC2046
    "$D8" --release --min-api 23 --lib "$API23_JAR" --output "$WORK/$name/d8" $(find "$classes" -name '*.class' | sort)
    mv "$WORK/$name/d8/classes.dex" "$WORK/$name/classes.dex"
  else
    java "${JAVA_FAST[@]}" -jar "$DX_JAR" --dex --min-sdk-version=21 --output="$WORK/$name/classes.dex" "$classes"
  fi
}

# Short-lived JVMs: C1 only and the serial collector start and finish faster on small machines.
JAVA_FAST=(-XX:TieredStopAtLevel=1 -XX:+UseSerialGC)
mkdir -p "$WORK/tools"
javac -d "$WORK/tools" "$ROOT/release/tools/ZipNormalize.java"
normalize() { java "${JAVA_FAST[@]}" -cp "$WORK/tools" ZipNormalize "$1" "$2"; }

checksum() { (cd "$OUT" && sha256sum "$1" > "$1.sha256"); }

# build_apk NAME OUTFILE MANIFEST_DIR SRC_DIRS... (MANIFEST_DIR/res, when present, holds resources)
build_apk() {
  local name=$1 outfile=$2 dir=$3; shift 3
  compile "$name" "$@"
  dex "$name"
  local w="$WORK/$name" res=()
  [ -d "$dir/res" ] && res=(-S "$dir/res")
  "$AAPT" package -f -M "$dir/AndroidManifest.xml" "${res[@]}" -I "$LINK_AGAINST" \
    --version-code "$VERSION_CODE" --version-name "$VERSION" -0 arsc -F "$w/resources.apk" >/dev/null
  (cd "$w" && "$AAPT" add -f resources.apk classes.dex >/dev/null)
  normalize "$w/resources.apk" "$w/unaligned.apk"
  "$ZIPALIGN" -f -p 4 "$w/unaligned.apk" "$w/aligned.apk"
  "$APKSIGNER" sign --ks "$KEYSTORE" --ks-pass "pass:$KS_PASS" --ks-key-alias "$KS_ALIAS" \
    --key-pass "pass:$KS_PASS" --v4-signing-enabled false --out "$OUT/$outfile" "$w/aligned.apk"
  checksum "$outfile"
  log "built $OUT/$outfile"
}

# build_jar NAME OUTFILE SRC_DIRS... — an app_process dex jar: classes.dex alone in a zip.
build_jar() {
  local name=$1 outfile=$2; shift 2
  compile "$name" "$@"
  dex "$name"
  local w="$WORK/$name"
  (cd "$w" && jar cfM raw.jar classes.dex)
  normalize "$w/raw.jar" "$OUT/$outfile"
  checksum "$outfile"
  log "built $OUT/$outfile"
}

A="$ROOT/android"
# Every helper parses its JSON input with strict-json (RFC 8259, the bridge's rules).
STRICT_JSON="$A/strict-json/src/core/java"
build_apk snapshot-helper "snapshot-helper-$VERSION.apk" "$A/snapshot-helper" \
  "$STRICT_JSON" "$A/snapshot-helper/src/core/java" "$A/snapshot-helper/src/main/java"
# Both glass components are built with glass-common (the JSON-line protocol rules and the accept loop).
GLASS_COMMON=("$STRICT_JSON" "$A/glass-common/src/core/java" "$A/glass-common/src/main/java")
build_jar glass-agent "glass-agent-$VERSION.jar" \
  "${GLASS_COMMON[@]}" "$A/glass-agent/src/core/java" "$A/glass-agent/src/main/java"
build_apk glass-a11y "glass-a11y-$VERSION.apk" "$A/a11y-service" \
  "${GLASS_COMMON[@]}" "$A/a11y-service/src/core/java" "$A/a11y-service/src/main/java"
