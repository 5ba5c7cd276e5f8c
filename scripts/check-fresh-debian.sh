#!/usr/bin/env bash
# Proves the README's quick start on a machine that has nothing but Debian 12 and Node 20: builds
# a minimal Debian 12 (debootstrap minbase, no browser, no NSS, no fontconfig), adds this
# machine's Node and npm, git and the toolchain better-sqlite3 compiles with (python3, make, g++,
# as in the node:20 image), clones the committed HEAD into it and runs `npm ci && npm test` there.
# Not part of `npm test` or CI: it needs root, debootstrap and a Debian mirror, and takes ~10 min.
#   sudo scripts/check-fresh-debian.sh [ROOT_DIR]      (default /tmp/pbx-fresh-debian, reused)
set -euo pipefail

root=${1:-/tmp/pbx-fresh-debian}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
repo=$(cd "$(dirname "$0")/.." && pwd)
commit=$(git -C "$repo" rev-parse HEAD)

if [ ! -x "$root/usr/bin/apt-get" ]; then
  debootstrap --variant=minbase bookworm "$root" "$mirror"
fi

cleanup() {
  for mount in dev/shm dev proc; do umount "$root/$mount" 2>/dev/null || true; done
}
trap cleanup EXIT
# An interrupted earlier run may have left them mounted: mount only what is not.
mountpoint -q "$root/proc" || mount -t proc proc "$root/proc"
mountpoint -q "$root/dev" || mount --bind /dev "$root/dev"
mountpoint -q "$root/dev/shm" || mount -t tmpfs shm "$root/dev/shm"

# Name resolution as any installed system has it (debootstrap writes no /etc/hosts).
cp /etc/resolv.conf "$root/etc/resolv.conf"
printf '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n' >"$root/etc/hosts"

chroot "$root" /usr/bin/env DEBIAN_FRONTEND=noninteractive apt-get update -qq
chroot "$root" /usr/bin/env DEBIAN_FRONTEND=noninteractive \
  apt-get install -y -qq --no-install-recommends git python3 make g++ ca-certificates >/dev/null
# This machine's trust store and npm settings: a registry behind a proxy needs both.
cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/ca-certificates.crt"
if [ -f "$HOME/.npmrc" ]; then cp "$HOME/.npmrc" "$root/root/.npmrc"; fi

# Node 20 and npm from this machine (its binary needs only glibc, libstdc++ and libgcc_s).
node=$(command -v node)
npm_dir=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")
node_prefix=$(dirname "$(dirname "$node")")
cp "$node" "$root/usr/bin/node"
mkdir -p "$root/usr/lib/node_modules" "$root/usr/include"
rm -rf "$root/usr/lib/node_modules/npm"
cp -a "$npm_dir" "$root/usr/lib/node_modules/npm"
ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/bin/npm"
ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/bin/npx"
# Headers for node-gyp where npm is configured to use them instead of downloading (nodedir).
if [ -d "$node_prefix/include/node" ]; then
  rm -rf "$root/usr/include/node"
  cp -a "$node_prefix/include/node" "$root/usr/include/node"
fi

rm -rf "$root/src/pbxctl" "$root/root/.npm"
git clone -q --no-checkout "$repo" "$root/src/pbxctl"
git -C "$root/src/pbxctl" checkout -q --detach "$commit"

chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/local/bin:/usr/bin:/bin \
  NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt /bin/bash -euo pipefail -c '
    cd /src/pbxctl
    echo "== $(git log --oneline -1)"
    for browser in /usr/bin/chromium /usr/lib/chromium /usr/bin/google-chrome; do
      if [ -e "$browser" ]; then echo "$browser exists: not a clean machine"; exit 1; fi
    done
    if ls /usr/lib/x86_64-linux-gnu | grep -E "^lib(nss3|nspr4|fontconfig|freetype)"; then
      echo "a browser library is installed: not a clean machine"; exit 1
    fi
    echo "== no Chromium, no NSS/NSPR/fontconfig/freetype; $(dpkg -l | grep -c ^ii) packages"
    npm ci --no-audit --no-fund
    npm test
  '
