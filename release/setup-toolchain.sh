#!/usr/bin/env bash
# Set up what release/build-android.sh needs on a Debian machine without an Android SDK
# (see ANDROID-TOOLCHAIN notes in README, "Building and releasing"):
#
#   - from the machine's own suite (bookworm), installed with apt when missing:
#     openjdk-17-jdk-headless, junit4, libandroid-json-java, dexdump, aapt, zipalign, apksigner,
#     android-framework-res;
#   - from bullseye, which the machine does not use: libandroid-23-java (android.jar, API 23 stubs)
#     and dalvik-exchange (dx). These are fetched with a PRIVATE apt configuration (its own
#     sources.list, state and cache under the tools folder) and unpacked with dpkg-deb -x; the
#     machine's apt sources are never changed and nothing from bullseye is installed.
#
# Result: $TOOLS/android-23.jar and $TOOLS/dx.jar (TOOLS = $DEVICEBRIDGE_TOOLS or <repo>/.tools,
# gitignored). Idempotent: a second run with everything in place does no network work.
#
# Environment: DEVICEBRIDGE_TOOLS (tools folder), DEVICEBRIDGE_DEBIAN_MIRROR (default: the first
# Debian mirror the machine's apt already uses, else http://deb.debian.org/debian).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
TOOLS="${DEVICEBRIDGE_TOOLS:-$ROOT/.tools}"
ANDROID_JAR_PKG="libandroid-23-java=6.0.1+r72-6"
DX_PKG="dalvik-exchange=10.0.0+r36-1"

log() { echo "setup-toolchain: $*" >&2; }

# --- 1. Packages from the machine's own suite ------------------------------------------------
need=()
command -v javac >/dev/null 2>&1 || need+=(openjdk-17-jdk-headless)
[ -f /usr/share/java/junit4.jar ] || need+=(junit4)
[ -f /usr/share/java/com.android.json.jar ] || need+=(libandroid-json-java)
command -v dexdump >/dev/null 2>&1 || need+=(dexdump)
command -v aapt >/dev/null 2>&1 || need+=(aapt)
command -v zipalign >/dev/null 2>&1 || need+=(zipalign)
command -v apksigner >/dev/null 2>&1 || need+=(apksigner)
[ -f /usr/share/android-framework-res/framework-res.apk ] || need+=(android-framework-res)

if [ "${#need[@]}" -gt 0 ]; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
      log "missing Debian packages: ${need[*]} (run: apt-get install ${need[*]})"
      exit 1
    fi
  fi
  log "installing Debian packages: ${need[*]}"
  # Other jobs on the machine may hold the dpkg lock for a while: wait for it instead of failing.
  if ! DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
      -o DPkg::Lock::Timeout=300 "${need[@]}" >&2; then
    $SUDO apt-get update -qq -o DPkg::Lock::Timeout=300
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
      -o DPkg::Lock::Timeout=300 "${need[@]}" >&2
  fi
fi

# --- 2. The two bullseye packages, through a private apt configuration -----------------------
if [ -f "$TOOLS/android-23.jar" ] && [ -f "$TOOLS/dx.jar" ]; then
  exit 0
fi

mirror="${DEVICEBRIDGE_DEBIAN_MIRROR:-}"
if [ -z "$mirror" ]; then
  # The first http(s) URI of a Debian main archive entry the machine already uses (deb822 or
  # one-line format); security and updates archives carry no bullseye main suite.
  mirror="$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null \
    | sed -n 's/^URIs:[[:space:]]*//p' | tr ' ' '\n' | grep -E '^https?://' | grep -v -- '-security' | head -n1 || true)"
  if [ -z "$mirror" ]; then
    mirror="$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null \
      | awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^https?:\/\//) { print $i; exit } }' \
      | grep -v -- '-security' | head -n1 || true)"
  fi
  mirror="${mirror:-http://deb.debian.org/debian}"
fi
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
[ -f "$keyring" ] || { log "missing $keyring (package debian-archive-keyring)"; exit 1; }

apt_dir="$TOOLS/apt-bullseye"
mkdir -p "$apt_dir/state/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/debs" "$apt_dir/etc/preferences.d"
: > "$apt_dir/state/status"
echo "deb [signed-by=$keyring] $mirror bullseye main" > "$apt_dir/etc/sources.list"
cat > "$apt_dir/apt.conf" <<CONF
Dir::Etc::SourceList "$apt_dir/etc/sources.list";
Dir::Etc::SourceParts "/nonexistent";
Dir::Etc::Preferences "/nonexistent";
Dir::Etc::PreferencesParts "$apt_dir/etc/preferences.d";
Dir::State "$apt_dir/state";
Dir::State::status "$apt_dir/state/status";
Dir::Cache "$apt_dir/cache";
APT::Architecture "amd64";
APT::Sandbox::User "root";
Acquire::Languages "none";
Acquire::IndexTargets::deb::Contents-deb::DefaultEnabled "false";
CONF
export APT_CONFIG="$apt_dir/apt.conf"
log "fetching $ANDROID_JAR_PKG and $DX_PKG from $mirror bullseye (private apt config, machine sources untouched)"
apt-get update -qq >&2
(cd "$apt_dir/debs" && apt-get download -qq "$ANDROID_JAR_PKG" "$DX_PKG" >&2)
unset APT_CONFIG

unpack="$apt_dir/unpacked"
rm -rf "$unpack"
mkdir -p "$unpack"
for deb in "$apt_dir"/debs/*.deb; do dpkg-deb -x "$deb" "$unpack"; done
android_jar="$unpack/usr/share/java/com.android.android-23.jar"
dx_jar="$(ls "$unpack"/usr/share/java/com.android.dx-*.jar 2>/dev/null | head -n1 || true)"
[ -f "$android_jar" ] || { log "libandroid-23-java did not contain com.android.android-23.jar"; exit 1; }
[ -n "$dx_jar" ] || { log "dalvik-exchange did not contain com.android.dx-*.jar"; exit 1; }
cp "$android_jar" "$TOOLS/android-23.jar.tmp" && mv "$TOOLS/android-23.jar.tmp" "$TOOLS/android-23.jar"
cp "$dx_jar" "$TOOLS/dx.jar.tmp" && mv "$TOOLS/dx.jar.tmp" "$TOOLS/dx.jar"
rm -rf "$unpack" "$apt_dir/state/lists" "$apt_dir/cache" "$apt_dir/debs"
log "ready: $TOOLS/android-23.jar, $TOOLS/dx.jar"
