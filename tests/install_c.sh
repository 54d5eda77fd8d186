#!/usr/bin/env bash
# The C library as a C or C++ user installs it: `cargo cinstall` (cargo-c) into a temporary
# prefix, the installed tree checked file by file (headers, static and shared library, SONAME
# and its links, pkg-config file), then examples/c-install built against that copy only, with
# `pkg-config --cflags --libs`, dynamically and statically, and with CMake's
# pkg_check_modules; every program's output is compared with the exact expected text.
#
# cargo-c is built once (about 4 minutes, `--debug`) into ${PW_TOOLS:-target/tools}/cargo-c
# when `cargo cinstall --version` does not answer. Everything else goes to target/ or to a
# temporary folder removed on exit.
#   tests/install_c.sh               # the tools, then the install and its checks
#   tests/install_c.sh --tools-only  # the tools alone (tests/run.sh builds them beside miri)
set -euo pipefail
checkout=$(cd "$(dirname "$0")/.." && pwd)
cd "$checkout"

step() { printf '\n--> %s\n' "$*"; }
fail() { printf 'install_c.sh: %s\n' "$*" >&2; exit 1; }
# apt_install, crate_version, target_dir
. tests/lib.sh

# grep -q would stop reading at the first match and fail the pipeline (pipefail) with
# SIGPIPE in the writer: this reads everything.
contains() { grep -c "$@" >/dev/null; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

step "tools: cc, c++, pkg-config, cmake, cargo-c"
command -v cc >/dev/null || apt_install gcc libc6-dev
command -v c++ >/dev/null || apt_install g++
command -v pkg-config >/dev/null || apt_install pkg-config
command -v cmake >/dev/null || apt_install cmake
command -v make >/dev/null || apt_install make
tools=${PW_TOOLS:-$checkout/target/tools}
export PATH="$tools/cargo-c/bin:$PATH"
if ! cargo cinstall --version >/dev/null 2>&1; then
  # 0.10.24 is the newest cargo-c that builds with rustc 1.95; it links the system OpenSSL.
  [ -e /usr/include/openssl/ssl.h ] || apt_install libssl-dev
  # --debug: a debug build of cargo-c is fast enough here and builds in half the time. Its
  # build folder is the temporary one (a CARGO_TARGET_DIR of the caller's would get it).
  start=$SECONDS
  CARGO_TARGET_DIR="$tmp/cargo-c-build" \
    cargo install cargo-c --version 0.10.24 --locked --debug --root "$tools/cargo-c"
  echo "cargo-c built in $((SECONDS - start)) s"
fi
cargo cinstall --version
[ "${1:-}" != --tools-only ] || exit 0

version=$(crate_version)
IFS=. read -r major minor patch <<<"$version"
# cargo-c's SONAME keeps the components a compatible release keeps: 0.MINOR before 1.0.
if [ "$major" = 0 ]; then soversion="0.$minor"; else soversion="$major"; fi
lib=libpolyweave_tool_adapter
echo "version $version, SONAME $lib.so.$soversion"

step "cargo cinstall into a temporary prefix"
prefix="$tmp/prefix"
cargo cinstall --release --locked -p polyweave-tool-adapter-ffi --prefix "$prefix" --libdir lib

step "the installed tree"
(cd "$prefix" && find . | LC_ALL=C sort) >"$tmp/tree"
cat >"$tmp/tree.want" <<EOF
.
./include
./include/polyweave_tool_adapter.h
./include/polyweave_tool_adapter.hpp
./lib
./lib/$lib.a
./lib/$lib.so
./lib/$lib.so.$soversion
./lib/$lib.so.$version
./lib/pkgconfig
./lib/pkgconfig/polyweave-tool-adapter.pc
EOF
diff -u "$tmp/tree.want" "$tmp/tree" || fail "the installed files are not the expected ones"
cat "$tmp/tree"
for h in polyweave_tool_adapter.h polyweave_tool_adapter.hpp; do
  cmp "include/$h" "$prefix/include/$h" || fail "installed $h differs from include/$h"
done
[ -f "$prefix/lib/$lib.so.$version" ] && [ ! -L "$prefix/lib/$lib.so.$version" ] ||
  fail "$lib.so.$version is not a plain file"
for link in "$lib.so" "$lib.so.$soversion"; do
  [ "$(readlink "$prefix/lib/$link")" = "$lib.so.$version" ] || fail "$link does not link to $lib.so.$version"
done
soname=$(readelf -d "$prefix/lib/$lib.so.$version" | sed -n 's/.*(SONAME).*\[\(.*\)\]$/\1/p')
[ "$soname" = "$lib.so.$soversion" ] || fail "SONAME is '$soname', not $lib.so.$soversion"
echo "SONAME $soname"
nm --defined-only "$prefix/lib/$lib.a" 2>/dev/null | contains -x '[0-9a-f]* T pw_version' ||
  fail "$lib.a does not define pw_version"
nm -D --defined-only "$prefix/lib/$lib.so" | contains -x '[0-9a-f]* T pw_version' ||
  fail "$lib.so does not export pw_version"
# Libs.private is what rustc says a program linking the staticlib needs (its
# native-static-libs, with std): the static builds below link with exactly that.
cat >"$tmp/pc.want" <<EOF
prefix=$prefix
exec_prefix=\${prefix}
libdir=\${prefix}/lib
includedir=\${prefix}/include

Name: polyweave-tool-adapter
Description: C ABI over polyweave-tool-adapter: no malloc, the host hands memory in
Version: $version
Libs: -L\${libdir} -l${lib#lib}
Cflags: -I\${includedir}
Libs.private: -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc
EOF
diff -u "$tmp/pc.want" "$prefix/lib/pkgconfig/polyweave-tool-adapter.pc" ||
  fail "polyweave-tool-adapter.pc is not the expected one"

# What both programs print, through the installed library.
cat >"$tmp/out.want" <<EOF
PW_VERSION_STRING $version
pw_version() polyweave-tool-adapter-ffi/$version
intercepted 1, call 0
model {"type":"TOOL_RESULT","content":{"id":"1","name":"echo","result":{"echo":{"text":"hi"}}}}
model {"type":"TEXT","content":"Tool results above."}
consumer {"type":"TEXT","content":"Tool results above."}
pending 0
EOF
needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p'; }
# run NAME BINARY [ENV...]: runs it (with the environment given), compares its output.
run() {
  local name=$1 bin=$2
  shift 2
  env "$@" "$bin" >"$tmp/$name.out" || fail "$name exited with status $?"
  diff -u "$tmp/out.want" "$tmp/$name.out" || fail "$name printed other than expected"
  echo "$name: output as expected"
}
# linked_dynamically NAME BINARY [ENV...]: NEEDED names the SONAME, resolved in the prefix.
linked_dynamically() {
  local name=$1 bin=$2
  shift 2
  needed "$bin" | contains -x "$lib.so.$soversion" || fail "$name does not need $lib.so.$soversion"
  env "$@" ldd "$bin" | contains "^[[:space:]]*$lib.so.$soversion => $prefix/lib/$lib.so.$soversion " ||
    fail "$name does not load $lib.so.$soversion from the prefix"
}
# linked_statically NAME BINARY: the archive is inside; no NEEDED on the shared library.
linked_statically() {
  local name=$1 bin=$2
  if needed "$bin" | contains "^$lib"; then fail "$name needs the shared library"; fi
  nm "$bin" | contains -x '[0-9a-f]* T pw_version' || fail "$name does not contain pw_version"
}

export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
pc=polyweave-tool-adapter
[ "$(pkg-config --modversion $pc)" = "$version" ] || fail "pkg-config --modversion is not $version"
cflags=$(pkg-config --cflags $pc)
libdir=$(pkg-config --variable=libdir $pc)
src=examples/c-install
c_flags=(-std=c99 -Wall -Wextra -Werror -pedantic)
cxx_flags=(-std=c++17 -Wall -Wextra -Werror -pedantic -fno-exceptions -fno-rtti)

step "dynamic: pkg-config --cflags --libs"
# The C program finds the library through its run path, the C++ one through LD_LIBRARY_PATH.
# shellcheck disable=SC2046 # pkg-config's output is a list of flags
cc "${c_flags[@]}" -o "$tmp/c-dynamic" "$src/main.c" $cflags $(pkg-config --libs $pc) -Wl,-rpath,"$libdir"
linked_dynamically c-dynamic "$tmp/c-dynamic"
run c-dynamic "$tmp/c-dynamic"
# shellcheck disable=SC2046
c++ "${cxx_flags[@]}" -o "$tmp/cpp-dynamic" "$src/main.cpp" $cflags $(pkg-config --libs $pc)
linked_dynamically cpp-dynamic "$tmp/cpp-dynamic" LD_LIBRARY_PATH="$libdir"
run cpp-dynamic "$tmp/cpp-dynamic" LD_LIBRARY_PATH="$libdir"

# README's C and C++ examples (examples/c-install/readme.c, .cpp, the same bytes: tests/tests/docs.rs), built
# with README's command line.
# shellcheck disable=SC2046
cc "${c_flags[@]}" "$src/readme.c" $(pkg-config --cflags --libs $pc) -Wl,-rpath,"$libdir" -o "$tmp/readme"
"$tmp/readme" >"$tmp/readme.out" || fail "README's C example exited with status $?"
cat >"$tmp/readme.want" <<'EOF'
model {"type":"TOOL_RESULT","content":{"id":"c1","name":"add","result":5}}
model {"type":"TEXT","content":"Tool results above."}
consumer {"type":"TEXT","content":"Tool results above."}
EOF
diff -u "$tmp/readme.want" "$tmp/readme.out" || fail "README's C example printed other than expected"
echo "README's C example: output as expected"
# shellcheck disable=SC2046
c++ "${cxx_flags[@]}" "$src/readme.cpp" $(pkg-config --cflags --libs $pc) -Wl,-rpath,"$libdir" -o "$tmp/readme-cpp"
"$tmp/readme-cpp" >"$tmp/readme-cpp.out" || fail "README's C++ example exited with status $?"
diff -u "$tmp/readme.want" "$tmp/readme-cpp.out" || fail "README's C++ example printed other than expected"
echo "README's C++ example: output as expected"

step "static: pkg-config --static --libs, the archive named explicitly"
# With the .so beside the .a, -lpolyweave_tool_adapter would pick the .so: -l:NAME.a takes
# the archive, and Libs.private brings what it needs (libgcc_s has no archive: no -static).
static_libs=$(pkg-config --static --libs $pc)
static_libs=${static_libs/-l${lib#lib}/-l:$lib.a}
echo "link flags: $static_libs"
# shellcheck disable=SC2086
cc "${c_flags[@]}" -o "$tmp/c-static" "$src/main.c" $cflags $static_libs
linked_statically c-static "$tmp/c-static"
run c-static "$tmp/c-static"
# shellcheck disable=SC2086
c++ "${cxx_flags[@]}" -o "$tmp/cpp-static" "$src/main.cpp" $cflags $static_libs
linked_statically cpp-static "$tmp/cpp-static"
run cpp-static "$tmp/cpp-static"

step "CMake: pkg_check_modules(... IMPORTED_TARGET polyweave-tool-adapter)"
# Found through CMAKE_PREFIX_PATH alone: CMake's pkg-config search, not PKG_CONFIG_PATH.
env -u PKG_CONFIG_PATH cmake -S "$src" -B "$tmp/cmake" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_C_FLAGS="-Wall -Wextra -Werror" -DCMAKE_CXX_FLAGS="-Wall -Wextra -Werror" >"$tmp/cmake.log" ||
  { cat "$tmp/cmake.log"; fail "cmake could not configure $src"; }
cmake --build "$tmp/cmake" >>"$tmp/cmake.log" || { cat "$tmp/cmake.log"; fail "cmake could not build $src"; }
for name in pw_install_c pw_install_cpp; do
  linked_dynamically "cmake $name" "$tmp/cmake/$name"
  run "cmake-$name" "$tmp/cmake/$name"
done

echo
echo "install_c.sh: cargo cinstall, pkg-config (dynamic and static) and CMake: all as expected"
