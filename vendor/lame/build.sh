#!/bin/sh
# Rebuilds vendor/lame/lame.wasm: LAME 3.100 (Debian's source package lame 3.100-6, upstream tarball unchanged: its
# Debian patches touch only the frontend, docs and build files) and lame-glue.c, compiled to WebAssembly (WASI
# reactor) with Debian's clang and wasi-libc. The result is committed, so neither a build nor CI runs this; run it
# only to change the glue, the flags or LAME itself, then `npm run build` and the MP3 tests.
#
# Needs, on Debian 12 (as root): a deb-src line for bookworm main in /etc/apt/sources.list.d/, then
#   apt-get update && apt-get install clang-16 lld-16 wasi-libc libclang-rt-16-dev-wasm32 dpkg-dev
#
#   sh vendor/lame/build.sh
set -eu
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

apt-get source --download-only lame=3.100-6 >/dev/null
echo "ddfe36cab873794038ae2c1210557ad34857a4b6bdc515785d1da9e175b1da1e  lame_3.100.orig.tar.gz" | sha256sum -c -
tar xzf lame_3.100.orig.tar.gz

cc="clang-16 --target=wasm32-wasi --sysroot=/usr -isystem /usr/include/wasm32-wasi -L/usr/lib/wasm32-wasi"
flags="-O2 -DNDEBUG -DNO_STDIO"
mkdir build
cd build
# LAME's config.sub (2017) does not know wasm32; an i686 host gives the same 32-bit, IEEE-754 configuration.
CC="$cc" AR=llvm-ar-16 RANLIB=llvm-ranlib-16 CFLAGS="$flags" ../lame-3.100/configure \
  --host=i686-pc-none --build=x86_64-pc-linux-gnu --disable-shared --disable-dependency-tracking \
  --disable-gtktest --disable-analyzer-hooks --disable-decoder --disable-frontend >configure.log 2>&1 ||
  { tail -30 configure.log; exit 1; }
# LAME 3.100 compiles with many warnings (and configure adds x86 flags that clang ignores for wasm32): logged, not shown.
make -C libmp3lame -j2 >make.log 2>&1 || { tail -30 make.log; exit 1; }
mkdir -p include/lame
cp ../lame-3.100/include/lame.h include/lame/
$cc $flags -mexec-model=reactor -Iinclude "$here/lame-glue.c" libmp3lame/.libs/libmp3lame.a -lm \
  -Wl,--strip-all -o "$here/lame.wasm" 2>link.log || { cat link.log; exit 1; }
sha256sum "$here/lame.wasm"
