#!/usr/bin/env bash
# release/test-android-jvm.sh — compile the pure-Java cores of android/ with their JUnit 4 tests and
# run them on the host JVM (Debian junit4, hamcrest, libandroid-json-java: Android's real org.json).
# Some tests read the shared fixtures of test/fixtures/ (the TypeScript tests run them too).
# `npm test` runs this through test/android/jvm.test.ts. Exit status is JUnit's.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
J=/usr/share/java
CP="$J/junit4.jar:$J/hamcrest-core.jar:$J/com.android.json.jar"
missing=()
for jar in junit4.jar hamcrest-core.jar com.android.json.jar; do
  [ -f "$J/$jar" ] || missing+=("$J/$jar")
done
command -v javac >/dev/null 2>&1 || missing+=(javac)
if [ "${#missing[@]}" -gt 0 ]; then
  echo "test-android-jvm: missing ${missing[*]} (run release/setup-toolchain.sh)" >&2
  exit 1
fi

WORK="$(mktemp -d)"
mkdir -p "$WORK/classes"
trap 'rm -rf "$WORK"' EXIT
classes=()
# strict-json first (every core parses with it), then glass-common: the glass components' cores and
# tests compile against their classes.
for module in strict-json glass-common snapshot-helper glass-agent a11y-service; do
  dir="$ROOT/android/$module/src"
  [ -d "$dir/test/java" ] || continue
  # --release 8: the cores must not use anything newer than what the APKs can run.
  # shellcheck disable=SC2046
  javac -J-XX:TieredStopAtLevel=1 -J-XX:+UseSerialGC --release 8 -encoding UTF-8 -Xlint:all -Xlint:-serial -Werror -cp "$WORK/classes:$CP" -d "$WORK/classes" \
    $(find "$dir/core/java" "$dir/test/java" -name '*.java' | sort)
  while IFS= read -r f; do
    rel="${f#"$dir/test/java/"}"
    classes+=("$(echo "${rel%.java}" | tr / .)")
  done < <(find "$dir/test/java" -name '*Test.java' | sort)
done
# -Dfixtures: the fixtures the TypeScript tests run too (test/fixtures/), one set for both sides.
exec java -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Dfixtures="$ROOT/test/fixtures" -cp "$WORK/classes:$CP" org.junit.runner.JUnitCore "${classes[@]}"
