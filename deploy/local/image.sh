#!/usr/bin/env bash
# image.sh — builds the smcryptd container image (deploy/docker/Dockerfile) with podman on
# a Debian 12 host, without pulling from any container registry.
#
#   deploy/local/image.sh [--tag TAG] [--base IMAGE]                  from source (stage runtime)
#   deploy/local/image.sh --from-install BUILD_DIR [--tag TAG] [--base IMAGE]
#
# From source: the full multi-stage build, what `docker build` gives a user (compiles in the
# build stage). --from-install BUILD_DIR: `cmake --install BUILD_DIR --strip` into a staging
# folder, then only stage runtime-from-install with that folder as the build context — the
# same runtime image from binaries already built on this Debian 12 host (the CI's Release
# build), with no second compile.
#
# TAG defaults to localhost/smcrypt:0.1.0. IMAGE (the Dockerfile's BASE) defaults to
# localhost/debian:bookworm, which is made here when missing: `debootstrap --variant=minbase
# bookworm` from the Debian mirror this host's apt uses, imported with `podman import`.
# Missing podman, runc or debootstrap are installed with apt-get. podman runs through
# deploy/local/podman.sh (smcrypt's containers.conf, runc).
#
# Exit 77 when podman cannot run a container on this host (the reason is printed), so the
# container tests can skip; any other failure exits non-zero as well.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD

tag=localhost/smcrypt:0.1.0
base=localhost/debian:bookworm
from_install=""
while (($#)); do
  case $1 in
    --tag) tag=$2; shift 2 ;;
    --base) base=$2; shift 2 ;;
    --from-install) from_install=$2; shift 2 ;;
    -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
    *) echo "image.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

missing=()
command -v podman >/dev/null 2>&1 || missing+=(podman)
command -v runc >/dev/null 2>&1 || missing+=(runc)
if [[ $base == localhost/debian:bookworm ]] && ! command -v debootstrap >/dev/null 2>&1; then
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
  tar -C "$rootfs" -c . | "${podman[@]}" import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'CMD ["bash"]' - "$base" >/dev/null
  rm -rf "$rootfs"
  trap - EXIT
  echo "image.sh: $base made in $((SECONDS - start)) s"
fi

# Can this host run a container at all? (A build's RUN steps need the same.)
if "${podman[@]}" image exists "$base"; then
  if ! err=$("${podman[@]}" run --rm --network none "$base" true 2>&1); then
    echo "image.sh: podman cannot run a container on this host: $err" >&2
    exit 77
  fi
fi

start=$SECONDS
if [[ -n $from_install ]]; then
  stage=$(mktemp -d /var/tmp/smcrypt-install.XXXXXX)
  trap 'rm -rf "$stage"' EXIT
  cmake --install "$from_install" --prefix "$stage" --strip >/dev/null
  "${podman[@]}" build --build-arg BASE="$base" --target runtime-from-install \
    -f "$root/deploy/docker/Dockerfile" -t "$tag" "$stage"
else
  "${podman[@]}" build --build-arg BASE="$base" --target runtime \
    -f "$root/deploy/docker/Dockerfile" -t "$tag" "$root"
fi
echo "image.sh: $tag built in $((SECONDS - start)) s ($("${podman[@]}" image inspect --format '{{.Size}}' "$tag") bytes)"
