#!/usr/bin/env bash
# image.sh — builds the smcryptd container image (deploy/docker/Dockerfile) with podman on
# a Debian 12 host, without pulling from any container registry.
#
#   deploy/local/image.sh [--tag TAG] [--base IMAGE] [--ccache DIR]   from source (stage runtime)
#   deploy/local/image.sh --target build [--tag TAG] [--ccache DIR]    only the build stage
#   deploy/local/image.sh --from-install BUILD_DIR [--tag TAG] [--base IMAGE]
#   deploy/local/image.sh --probe                                      only the host check
#
# From source: the full multi-stage build, what `docker build` gives a user (compiles in the
# build stage). --from-install BUILD_DIR: `cmake --install BUILD_DIR --strip` into a staging
# folder, then only stage runtime-from-install with that folder as the build context — the
# same runtime image from binaries already built on this Debian 12 host (the CI's Release
# build), with no second compile. --ccache DIR mounts DIR into the build stage as its
# compiler cache (`podman build -v DIR:/ccache`), so a repeated build recompiles only what
# changed. --target build stops after the build stage (configure and compile of smcryptd).
# The image gets the labels org.opencontainers.image.revision (git commit of this tree),
# .created (now, UTC) and .source (the `origin` remote, when there is one).
#
# TAG defaults to localhost/smcrypt:0.1.0. IMAGE (the Dockerfile's BASE) defaults to
# localhost/debian:bookworm, which is made here when missing: `debootstrap --variant=minbase
# bookworm` from the Debian mirror this host's apt uses, imported with `podman import`.
# Missing podman, runc or debootstrap are installed with apt-get. podman runs through
# deploy/local/podman.sh (smcrypt's containers.conf, runc).
#
# Exit 77 when podman cannot store or run an image on this host (the reason is printed),
# so the container tests can skip: before anything slow, `podman info`, `podman import` of
# a tiny tree (/usr/bin/true and its libraries) and `podman run` of it are run, then the
# base's import and run; a failure whose message is one a host without a usable mount
# namespace, cgroup tree, overlay or user namespaces gives (podman_unusable_reason in
# deploy/local/lib-podman.sh: a chroot's `remount /, flags: 0x44000: invalid argument`,
# no /sys/fs/cgroup, overlay on overlay, namespaces refused) is that case. Any other
# failure exits non-zero as well. --probe runs only the first three steps (no image is
# built; exit 0 when podman works).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD

tag=localhost/smcrypt:0.1.0
base=localhost/debian:bookworm
from_install=""
ccache_dir=""
target=runtime
probe_only=0
while (($#)); do
  case $1 in
    --tag) tag=$2; shift 2 ;;
    --base) base=$2; shift 2 ;;
    --from-install) from_install=$2; shift 2 ;;
    --ccache) ccache_dir=$2; shift 2 ;;
    --target) target=$2; shift 2 ;;
    --probe) probe_only=1; shift ;;
    -h|--help) sed -n '2,34p' "$0"; exit 0 ;;
    *) echo "image.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

missing=()
command -v podman >/dev/null 2>&1 || missing+=(podman)
command -v runc >/dev/null 2>&1 || missing+=(runc)
if ((!probe_only)) && [[ $base == localhost/debian:bookworm ]] && ! command -v debootstrap >/dev/null 2>&1; then
  missing+=(debootstrap)
fi
if ((${#missing[@]})); then
  SUDO=""
  if [[ $(id -u) -ne 0 ]]; then SUDO=sudo; fi
  echo "image.sh: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
podman=("$root/deploy/local/podman.sh")
# shellcheck source=deploy/local/lib-podman.sh
source "$root/deploy/local/lib-podman.sh"

# podman_step WHAT CMD...: runs a podman step; when it fails with an error that means
# podman cannot store or run an image on this host, exits 77 with the reason and the
# error; any other failure exits 1 with the error.
podman_step() {
  local what=$1 out rc=0 reason
  shift
  out=$("$@" 2>&1) || rc=$?
  if ((rc == 0)); then return 0; fi
  if reason=$(podman_unusable_reason "$out"); then
    echo "image.sh: SKIP: podman cannot store or run an image on this host: $reason ($what: $out)" >&2
    exit 77
  fi
  echo "image.sh: $what failed (exit $rc): $out" >&2
  exit 1
}

# The host check, before anything slow: podman's store (info, importing a tree made of
# /usr/bin/true and the libraries it loads) and a container run from that image (a tag of
# this run's own, so that runs at the same time do not remove each other's).
probe_host() {
  local lib img=localhost/smcrypt-probe:$$
  podman_step "podman info" "${podman[@]}" info
  tree=$(mktemp -d /var/tmp/smcrypt-probe.XXXXXX)
  trap 'rm -rf "$tree"' EXIT
  cp /usr/bin/true "$tree/true"
  for lib in $(ldd /usr/bin/true | grep -o '/[^ ]*'); do
    mkdir -p "$tree$(dirname "$lib")"
    cp -L "$lib" "$tree$lib"
  done
  podman_step "podman import" bash -c 'tar -C "$1" -c . | "${@:2}" import - "$0"' \
    "$img" "$tree" "${podman[@]}"
  rm -rf "$tree"
  trap - EXIT
  podman_step "podman run" "${podman[@]}" run --rm --network none "$img" /true
  "${podman[@]}" rmi "$img" >/dev/null 2>&1 || true
}
probe_host
if ((probe_only)); then
  echo "image.sh: podman can store and run images on this host"
  exit 0
fi

# The first Debian mirror of this host's apt sources (deb822 or one-line format).
debian_mirror() {
  local f uri
  for f in /etc/apt/sources.list.d/*.sources; do
    [[ -f $f ]] || continue
    uri=$(awk '/^URIs:/ {u=$2} /^Suites:/ && / bookworm( |$)/ && u {print u; exit}' "$f")
    [[ -n $uri ]] && { echo "$uri"; return; }
  done
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [[ -f $f ]] || continue
    uri=$(awk '$1 == "deb" && $3 == "bookworm" {print $2; exit}' "$f")
    [[ -n $uri ]] && { echo "$uri"; return; }
  done
  echo http://deb.debian.org/debian
}

if [[ $base == localhost/debian:bookworm ]] && ! "${podman[@]}" image exists "$base"; then
  start=$SECONDS
  mirror=$(debian_mirror)
  echo "image.sh: making $base with debootstrap from $mirror"
  rootfs=$(mktemp -d /var/tmp/smcrypt-debootstrap.XXXXXX)
  trap 'rm -rf "$rootfs"' EXIT
  debootstrap --variant=minbase bookworm "$rootfs" "$mirror" >"$rootfs.log" 2>&1 \
    || { tail -n 30 "$rootfs.log" >&2; rm -f "$rootfs.log"; exit 1; }
  rm -f "$rootfs.log"
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/log/*.log
  # As Docker's debian:*-slim: no documentation, manual pages or translations, now or from
  # packages installed later (dpkg path-exclude), copyright files kept.
  cat >"$rootfs/etc/dpkg/dpkg.cfg.d/docker-slim" <<'CFG'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
CFG
  find "$rootfs/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
  find "$rootfs/usr/share/doc" -mindepth 1 -type d -empty -delete
  rm -rf "$rootfs"/usr/share/man/* "$rootfs"/usr/share/groff/* "$rootfs"/usr/share/info/* \
    "$rootfs"/usr/share/lintian/* "$rootfs"/usr/share/linda/*
  find "$rootfs/usr/share/locale" -mindepth 1 -maxdepth 1 -not -name locale.alias -exec rm -rf {} +
  # The environment and command of Docker's debian images.
  podman_step "podman import of the base" bash -c 'tar -C "$0" -c . | "${@:1}" import \
    --change "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
    --change "CMD [\"bash\"]" - localhost/debian:bookworm' "$rootfs" "${podman[@]}"
  rm -rf "$rootfs"
  trap - EXIT
  echo "image.sh: $base made in $((SECONDS - start)) s"
fi

# Can this host run a container of the base? (A build's RUN steps need the same.)
podman_step "podman run of $base" "${podman[@]}" run --rm --network none "$base" true

# The labels known only now (the Dockerfile sets title, description and version).
labels=(--label "org.opencontainers.image.created=$(date -u +%Y-%m-%dT%H:%M:%SZ)")
if revision=$(git -C "$root" rev-parse HEAD 2>/dev/null); then
  labels+=(--label "org.opencontainers.image.revision=$revision")
fi
if source_url=$(git -C "$root" remote get-url origin 2>/dev/null); then
  labels+=(--label "org.opencontainers.image.source=$source_url")
fi

start=$SECONDS
if [[ -n $from_install ]]; then
  stage=$(mktemp -d /var/tmp/smcrypt-install.XXXXXX)
  trap 'rm -rf "$stage"' EXIT
  # smcryptd only (server/daemon's install rule), and the runtime package list.
  cmake --install "$from_install/server/daemon" --prefix "$stage" --strip >/dev/null
  mkdir -p "$stage/deploy/packages"
  cp "$root/deploy/packages/runtime.txt" "$stage/deploy/packages/"
  "${podman[@]}" build --build-arg BASE="$base" --target runtime-from-install "${labels[@]}" \
    -f "$root/deploy/docker/Dockerfile" -t "$tag" "$stage"
else
  volume=()
  if [[ -n $ccache_dir ]]; then
    mkdir -p "$ccache_dir"
    volume=(-v "$(realpath "$ccache_dir"):/ccache")
  fi
  "${podman[@]}" build --build-arg BASE="$base" --target "$target" "${labels[@]}" "${volume[@]}" \
    -f "$root/deploy/docker/Dockerfile" -t "$tag" "$root"
  # Each build leaves its build stage's image (untagged, the build tree); those of builds
  # more than 2 hours old go, so that repeated runs (CI) do not fill the disk, while the
  # latest keeps podman's layer cache (the build packages' layer) for the next build.
  "${podman[@]}" image prune --force --filter label=io.smcrypt.stage=build \
    --filter until=2h >/dev/null || true
fi
echo "image.sh: $tag built in $((SECONDS - start)) s ($("${podman[@]}" image inspect --format '{{.Size}}' "$tag") bytes)"
