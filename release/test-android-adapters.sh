#!/usr/bin/env bash
# release/test-android-adapters.sh [PROFILE...] — run the Android adapters (src/main) on the host
# JVM against android/framework-fakes, once per device profile (API level, optionally an OEM).
#
# Compiles once: the fakes' base classes, each overlay (framework-fakes/src/apiNN/java: classes
# that appear at API NN) separately, then every module that has src/adapter-test/java together with
# its src/main + src/core (and glass-common's for the glass components) against the base fakes
# only — never android.jar, and never an overlay, so an adapter can reach a newer class only by
# reflection, as on a device. Then, per profile, one JVM with -Ddevicebridge.fake.profile=PROFILE
# and the overlays whose NN <= the profile's API level on the classpath.
#
# Prints one line per profile, "profile P: OK (N tests; glass-common 2, glass-agent 30, ...)" or
# "profile P: FAILED (N tests, F failures; glass-common 2, ...)" (each module's test count) followed
# by JUnit's failure report indented by two spaces. Exit status 0 when every
# profile passed. `npm test` runs it through test/integration/android-adapters.test.ts.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
A="$ROOT/android"
J=/usr/share/java
CP="$J/junit4.jar:$J/hamcrest-core.jar:$J/com.android.json.jar"
# The profiles every run covers; keep in sync with test/integration/android-adapters.test.ts.
DEFAULT_PROFILES=(23 24 26 29 31 33 34 35 33-vivo 34-vivo 34-honor 34-miui 33-coloros)
PROFILES=("$@")
[ "${#PROFILES[@]}" -gt 0 ] || PROFILES=("${DEFAULT_PROFILES[@]}")

missing=()
for jar in junit4.jar hamcrest-core.jar com.android.json.jar; do [ -f "$J/$jar" ] || missing+=("$J/$jar"); done
command -v javac >/dev/null 2>&1 || missing+=(javac)
if [ "${#missing[@]}" -gt 0 ]; then
  echo "test-android-adapters: missing ${missing[*]} (run release/setup-toolchain.sh)" >&2
  exit 1
fi

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
JAVAC=(javac -J-XX:TieredStopAtLevel=1 -J-XX:+UseSerialGC --release 8 -encoding UTF-8 -Xlint:all -Xlint:-serial -Xlint:-options -Werror -implicit:none)
JAVA=(java -XX:TieredStopAtLevel=1 -XX:+UseSerialGC)
sources() { find "$@" -name '*.java' 2>/dev/null | sort; }

FAKES="$A/framework-fakes/src"
mkdir -p "$WORK/fakes/base"
# shellcheck disable=SC2046
"${JAVAC[@]}" -d "$WORK/fakes/base" $(sources "$FAKES/base/java")
overlays=()
for dir in "$FAKES"/api*/; do
  level="$(basename "$dir")"; level="${level#api}"
  mkdir -p "$WORK/fakes/api$level"
  # shellcheck disable=SC2046
  "${JAVAC[@]}" -cp "$WORK/fakes/base" -d "$WORK/fakes/api$level" $(sources "$dir/java")
  overlays+=("$level")
done

# Modules with adapter tests. glass-common's main/core are compiled into each glass component,
# strict-json's core into every module.
classes=()
tests=()
for module in glass-common glass-agent a11y-service snapshot-helper; do
  src="$A/$module/src"
  [ -d "$src/adapter-test/java" ] || continue
  # strict-json (the strict JSON reader) is compiled into every helper.
  dirs=("$src/core/java" "$src/main/java" "$src/adapter-test/java" "$A/strict-json/src/core/java")
  case "$module" in glass-agent | a11y-service) dirs+=("$A/glass-common/src/core/java" "$A/glass-common/src/main/java") ;; esac
  out="$WORK/modules/$module"
  mkdir -p "$out"
  # shellcheck disable=SC2046
  "${JAVAC[@]}" -cp "$WORK/fakes/base:$CP" -d "$out" $(sources "${dirs[@]}")
  classes+=("$out")
  while IFS= read -r f; do
    rel="${f#"$src/adapter-test/java/"}"
    tests+=("$(echo "${rel%.java}" | tr / .)")
  done < <(find "$src/adapter-test/java" -name '*Test.java' | sort)
done
[ "${#tests[@]}" -gt 0 ] || { echo "test-android-adapters: no adapter tests found" >&2; exit 1; }

status=0
for profile in "${PROFILES[@]}"; do
  level="${profile%%-*}"
  cp="$WORK/fakes/base"
  for o in "${overlays[@]}"; do [ "$level" -ge "$o" ] && cp="$WORK/fakes/api$o:$cp"; done
  # Each module runs in its own JVM: two modules may carry different builds of glass-common.
  total=0; failures=0; report=""; per_module=()
  for i in "${!classes[@]}"; do
    module_dir="${classes[$i]}"
    module_tests=()
    for t in "${tests[@]}"; do [ -f "$module_dir/$(echo "$t" | tr . /).class" ] && module_tests+=("$t"); done
    [ "${#module_tests[@]}" -gt 0 ] || continue
    before=$total
    set +e
    out="$("${JAVA[@]}" -Ddevicebridge.fake.profile="$profile" -cp "$cp:$module_dir:$CP" org.junit.runner.JUnitCore "${module_tests[@]}" 2>&1)"
    rc=$?
    set -e
    if ok="$(grep -oE '^OK \(([0-9]+) tests?\)' <<<"$out")"; then
      total=$((total + $(grep -oE '[0-9]+' <<<"$ok")))
    elif run="$(grep -oE '^Tests run: [0-9]+,  Failures: [0-9]+' <<<"$out")"; then
      n="$(grep -oE '[0-9]+' <<<"$run" | head -n1)"; f="$(grep -oE '[0-9]+' <<<"$run" | tail -n1)"
      total=$((total + n)); failures=$((failures + f))
      report+="$(sed -n '/^There w[ae][sr]e\? [0-9]* failures\?:/,/^FAILURES!!!/p' <<<"$out" | grep -v '^\s*at \(org\.junit\|sun\.\|java\.base\|jdk\.internal\|java\.lang\.reflect\)' )"$'\n'
    else
      failures=$((failures + 1)); report+="$out"$'\n'
    fi
    [ "$rc" -eq 0 ] || [ "$failures" -gt 0 ] || { failures=1; report+="$out"$'\n'; }
    per_module+=("$(basename "$module_dir") $((total - before))")
  done
  modules="$(IFS=,; echo "${per_module[*]}" | sed 's/,/, /g')"
  if [ "$failures" -eq 0 ]; then
    echo "profile $profile: OK ($total tests; $modules)"
  else
    status=1
    echo "profile $profile: FAILED ($total tests, $failures failures; $modules)"
    sed 's/^/  /' <<<"${report%$'\n'}"
  fi
done
exit "$status"
