#!/usr/bin/env bash
# The Docker backend's prerequisites on a Debian/Ubuntu machine, as root: the engine (docker.io), a running
# dockerd, a base image, and the embedded-sites image (`webrl up --backend docker --images embedded`).
# Idempotent: the engine, the daemon and the base image are only set up when missing; the wheelhouse and the
# sites image are rebuilt every time, so the image always serves this checkout (the layer cache keeps it short).
#
# No registry is needed: the default base image is made from Debian's packages (debootstrap + docker import)
# and webrl goes into the image from a wheelhouse built here, so the build itself needs no network.
# Run scripts/install.sh first (it makes .venv). `scripts/install-docker.sh --stop` stops a dockerd it started.
#
# `--suite` also builds webrl/suite:latest (Dockerfile.suite): webrl itself with Chromium and the training stack,
# from this machine's .venv (a GPU machine's .venv gives the GPU image) and Chromium's Debian packages.
#
# Settings (environment): BASE_IMAGE (default local/debian-py:bookworm; a registry image such as python:3.11-slim
# is pulled instead), DOCKERD_LOG. The sites image is webrl/sites:latest (webrl.sites.docker.images.EMBEDDED_IMAGE).
set -euo pipefail
cd "$(dirname "$0")/.."

BASE_IMAGE=${BASE_IMAGE:-local/debian-py:bookworm}
SITES_IMAGE=webrl/sites:latest
SUITE_IMAGE=webrl/suite:latest
DOCKERD_LOG=${DOCKERD_LOG:-/var/log/webrl-dockerd.log}
DOCKERD_PID=/run/webrl-dockerd.pid  # written only when this script started dockerd
CONTEXT=build/docker/context
SUITE_CONTEXT=build/docker/suite-context
PYTHON=.venv/bin/python

say() { printf '[install-docker] %s\n' "$*"; }

step() {  # step NAME COMMAND...: run a step and print how long it took
  local name=$1 start
  shift
  start=$(date +%s.%N)
  "$@"
  say "$(awk -v s="$start" -v e="$(date +%s.%N)" -v n="$name" 'BEGIN { printf "%-40s %7.1f s", n, e - s }')"
}

pip_quiet() {  # pip, minus the noise of index locations configured on some machines; its failure still fails
  "$PYTHON" -m pip "$@" 2>&1 | { grep -v "^WARNING: Location" || true; }
}

apt_get() {
  DEBIAN_FRONTEND=noninteractive NEEDRESTART_SUSPEND=1 apt-get -y -qq "$@"
}

apt_install() {  # quiet unless it fails; refreshes the package lists only when the packages are not found
  local log
  log=$(mktemp)
  if ! apt_get install "$@" >"$log" 2>&1 && ! { apt_get update && apt_get install "$@"; } >"$log" 2>&1; then
    cat "$log" >&2
    rm -f "$log"
    return 1
  fi
  rm -f "$log"
}

engine() {
  # The package's own service start may be refused by policy (containers, CI); the daemon is started below.
  command -v dockerd >/dev/null || apt_install docker.io
  # Compose is not needed by webrl; the tests validate compose.yaml with it.
  docker compose version >/dev/null 2>&1 || command -v docker-compose >/dev/null || apt_install docker-compose
}

daemon() {
  docker info >/dev/null 2>&1 && return
  nohup dockerd >"$DOCKERD_LOG" 2>&1 &
  echo $! >"$DOCKERD_PID"
  for _ in $(seq 120); do
    docker info >/dev/null 2>&1 && return
    kill -0 "$(cat "$DOCKERD_PID")" 2>/dev/null || break
    sleep 0.5
  done
  say "dockerd did not come up; the end of $DOCKERD_LOG:"
  tail -n 20 "$DOCKERD_LOG" >&2
  exit 1
}

base_image() {
  docker image inspect "$BASE_IMAGE" >/dev/null 2>&1 && return
  if [[ $BASE_IMAGE != local/* ]]; then
    docker pull "$BASE_IMAGE"
    return
  fi
  command -v debootstrap >/dev/null || apt_install debootstrap
  local rootfs
  rootfs=$(mktemp -d /var/tmp/webrl-rootfs.XXXXXX)
  # The mirror the host's apt uses (it is reachable from here); Debian's default otherwise.
  local mirror
  mirror=$(grep -rhoE 'https?://[^ ]+/debian/?$' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null |
           head -n 1 || true)
  debootstrap --variant=minbase --include=python3,python3-venv,python3-pip,ca-certificates \
    bookworm "$rootfs" "${mirror:-http://deb.debian.org/debian}" >/dev/null
  tar -C "$rootfs" -c . | docker import - "$BASE_IMAGE" >/dev/null
  rm -rf "$rootfs"
}

wheelhouse() {
  [[ -x $PYTHON ]] || { say "no $PYTHON: run scripts/install.sh first"; exit 1; }
  rm -rf "$CONTEXT"
  mkdir -p "$CONTEXT/wheelhouse" "$CONTEXT/webrl"
  # Only what the sites import goes into the image (no torch, Playwright or DeepSpeed); the list lives in
  # webrl.sites.docker.images and takes its version ranges from the installed webrl's metadata.
  "$PYTHON" -m webrl.sites.docker.images requirements >"$CONTEXT/wheelhouse/sites-requirements.txt"
  pip_quiet wheel -q --no-deps -w "$CONTEXT/webrl" .
  pip_quiet wheel -q -w "$CONTEXT/wheelhouse" -r "$CONTEXT/wheelhouse/sites-requirements.txt"
}

build_image() {  # build_image DOCKERFILE CONTEXT IMAGE
  local old
  old=$(docker image inspect -f '{{.Id}}' "$3" 2>/dev/null || true)
  # Its output only on a failure (the legacy builder warns of its deprecation on every build).
  docker build -q -f "$1" --build-arg "BASE=$BASE_IMAGE" -t "$3" "$2" >"$2.log" 2>&1 || { cat "$2.log" >&2; exit 1; }
  # The image this build replaced, unless containers still use it (their snapshots record which one they need).
  if [[ -n $old && $old != $(docker image inspect -f '{{.Id}}' "$3") ]]; then
    docker rmi "$old" >/dev/null 2>&1 || true
  fi
  say "$3: $(docker image inspect -f '{{.Size}}' "$3" | awk '{ printf "%.0f MB", $1 / 1e6 }')"
}

suite_context() {
  local codename base_codename apt_state
  codename=$(. /etc/os-release && echo "$VERSION_CODENAME")
  base_codename=$(docker run --rm "$BASE_IMAGE" sh -c '. /etc/os-release && echo "$VERSION_CODENAME"')
  if [[ $codename != "$base_codename" ]]; then
    say "the suite image takes Chromium's packages from this machine's apt ($codename), but $BASE_IMAGE is" \
        "${base_codename:-not Debian}: set BASE_IMAGE to a $codename image"
    exit 1
  fi
  rm -rf "$SUITE_CONTEXT"
  mkdir -p "$SUITE_CONTEXT/debs/partial" "$SUITE_CONTEXT/wheelhouse" "$SUITE_CONTEXT/webrl"
  # Chromium and its headless shell, what they need beyond the base image (apt resolves against the base image's package database), and
  # libatomic1 for the node runtime inside Playwright.
  apt_state=$(mktemp -d)
  docker run --rm "$BASE_IMAGE" cat /var/lib/dpkg/status >"$apt_state/status"
  local download=(-o "Dir::State::status=$apt_state/status" -o "Dir::Cache::archives=$PWD/$SUITE_CONTEXT/debs"
                  -o Debug::NoLocking=1 --download-only --no-install-recommends install chromium chromium-headless-shell libatomic1)
  apt_get "${download[@]}" >/dev/null 2>&1 || { apt_get update && apt_get "${download[@]}" >/dev/null; }
  rm -rf "$apt_state" "$SUITE_CONTEXT/debs/partial" "$SUITE_CONTEXT/debs/lock"
  # Every package of .venv at its installed version but the docs tools: the image runs what the tests ran here.
  "$PYTHON" scripts/suite_requirements.py >"$SUITE_CONTEXT/requirements.txt"
  pip_quiet wheel -q --no-deps -w "$SUITE_CONTEXT/wheelhouse" -r "$SUITE_CONTEXT/requirements.txt"
  pip_quiet wheel -q --no-deps -w "$SUITE_CONTEXT/webrl" .
  say "suite context: $(ls "$SUITE_CONTEXT/debs" | wc -l) Debian packages, $(ls "$SUITE_CONTEXT/wheelhouse" | wc -l)" \
      "wheels, $(du -sh "$SUITE_CONTEXT" | cut -f1)"
}

stop() {
  if [[ -f $DOCKERD_PID ]] && kill "$(cat "$DOCKERD_PID")" 2>/dev/null; then
    for _ in $(seq 60); do kill -0 "$(cat "$DOCKERD_PID")" 2>/dev/null || break; sleep 0.5; done
    say "stopped dockerd (pid $(cat "$DOCKERD_PID"))"
  else
    say "no dockerd started by this script is running"
  fi
  rm -f "$DOCKERD_PID"
}

if [[ ${1:-} == --stop ]]; then
  stop
  exit 0
fi
[[ $(id -u) == 0 ]] || { say "run as root (it installs packages and starts dockerd)"; exit 1; }
step "engine (docker.io)" engine
step "daemon (dockerd)" daemon
step "base image ($BASE_IMAGE)" base_image
step "wheelhouse" wheelhouse
step "sites image ($SITES_IMAGE)" build_image Dockerfile "$CONTEXT" "$SITES_IMAGE"
if [[ ${1:-} == --suite ]]; then
  step "suite context" suite_context
  step "suite image ($SUITE_IMAGE)" build_image Dockerfile.suite "$SUITE_CONTEXT" "$SUITE_IMAGE"
fi
say "done: run \`webrl up --backend docker --images embedded\`"
