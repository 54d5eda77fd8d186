#!/usr/bin/env bash
# Prebuilt static libraries for C firmware: one release archive per Cortex-M target,
#
#     target/dist/polyweave-tool-adapter-VERSION-TARGET.tar.gz   (in CARGO_TARGET_DIR if set)
#         lib/libpolyweave_tool_adapter.a     (the no_std ffi crate, --no-default-features)
#         include/polyweave_tool_adapter.h, include/polyweave_tool_adapter.hpp
#         LICENSE-MIT, LICENSE-APACHE, README.md
#
# for thumbv7em-none-eabihf (Cortex-M4F/M7F) and thumbv6m-none-eabi (Cortex-M0/M0+).
#
#     examples/c-firmware/release-archives.sh           # build the archives
#     examples/c-firmware/release-archives.sh --check   # ... then unpack each, list it, and
#                                                       # run C firmware linked against it by
#                                                       # arm-none-eabi-gcc on QEMU: this
#                                                       # folder's (mps2-an386, Cortex-M4F) and
#                                                       # a small host (microbit, Cortex-M0)
#
# The archives are reproducible: same sources and toolchain, same bytes (sorted names, owner
# 0, the last commit's time, gzip -n).
set -euo pipefail
checkout=$(cd "$(dirname "$0")/../.." && pwd)
cd "$checkout"
# apt_install, crate_version, target_dir
. tests/lib.sh

check=0
case "${1:-}" in
  "") ;;
  --check) check=1 ;;
  *) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac

fail() { printf 'release-archives.sh: %s\n' "$*" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

targets="thumbv7em-none-eabihf thumbv6m-none-eabi"
# The arm-none-eabi-gcc flags of each target's ABI (what its Rust target was built for).
gcc_flags() {
  case "$1" in
    thumbv7em-none-eabihf) echo "-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16" ;;
    thumbv6m-none-eabi) echo "-mcpu=cortex-m0 -mthumb -mfloat-abi=soft" ;;
  esac
}
cpus() {
  case "$1" in
    thumbv7em-none-eabihf) echo "Cortex-M4F and Cortex-M7F, hard-float ABI" ;;
    thumbv6m-none-eabi) echo "Cortex-M0 and Cortex-M0+, soft-float ABI" ;;
  esac
}

version=$(crate_version)
mtime=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}
target_dir=$(target_dir)
dist="$target_dir/dist"
mkdir -p "$dist"

installed=$(rustup target list --installed)
for t in $targets; do
  grep -qx "$t" <<<"$installed" || rustup target add "$t"
done

for t in $targets; do
  name="polyweave-tool-adapter-$version-$t"
  echo "==> $name"
  cargo build --release --locked -p polyweave-tool-adapter-ffi --no-default-features --target "$t"
  stage="$tmp/stage/$name"
  mkdir -p "$stage/lib" "$stage/include"
  # The C library's name, as cargo-c installs it on the host: -lpolyweave_tool_adapter.
  cp "$target_dir/$t/release/libpolyweave_tool_adapter_ffi.a" "$stage/lib/libpolyweave_tool_adapter.a"
  cp include/polyweave_tool_adapter.h include/polyweave_tool_adapter.hpp "$stage/include/"
  cp LICENSE-MIT LICENSE-APACHE "$stage/"
  flags=$(gcc_flags "$t")
  cat >"$stage/README.md" <<EOF
# polyweave-tool-adapter $version for $t

The C ABI of polyweave-tool-adapter (the crate polyweave-tool-adapter-ffi, built
\`--no-default-features\`: no_std) as a static library for bare-metal firmware on
$(cpus "$t"). It never allocates and keeps no global state: every
object lives in memory the firmware hands in. A panic (a bug) spins forever, for a watchdog
to reset the device.

- \`lib/libpolyweave_tool_adapter.a\`: the library
- \`include/polyweave_tool_adapter.h\`: its C API (C99; the conventions are in its preamble)
- \`include/polyweave_tool_adapter.hpp\`: a header-only C++17 wrapper (no heap, no exceptions)
- \`LICENSE-MIT\`, \`LICENSE-APACHE\`: MIT OR Apache-2.0, at your option

Compile and link with arm-none-eabi-gcc (--gc-sections keeps only what you call):

    arm-none-eabi-gcc $flags -Os -ffunction-sections -fdata-sections -Iinclude -c main.c
    arm-none-eabi-gcc $flags -Wl,--gc-sections main.o lib/libpolyweave_tool_adapter.a -o firmware.elf

Built by \`examples/c-firmware/release-archives.sh\`: \`cargo build --release --locked -p
polyweave-tool-adapter-ffi --no-default-features --target $t\`.
EOF
  tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$mtime" -C "$tmp/stage" -cf - "$name" |
    gzip -9n >"$dist/$name.tar.gz.part"
  mv "$dist/$name.tar.gz.part" "$dist/$name.tar.gz"
  ls -l "$dist/$name.tar.gz"
done

[ "$check" = 1 ] || exit 0

command -v arm-none-eabi-gcc >/dev/null || apt_install gcc-arm-none-eabi libnewlib-arm-none-eabi
command -v qemu-system-arm >/dev/null || apt_install qemu-system-arm

# A host of the library as small as it gets, linked against each archive: one sync tool, one
# TOOL_CALL, the TOOL_RESULT compared with the expected bytes (main's return value).
cat >"$tmp/check.c" <<'EOF'
#include <string.h>
#include "polyweave_tool_adapter.h"

static uint64_t block[PW_WRAPPER_DEFAULT_SIZE_BOUND(1, 1) /
                          sizeof(uint64_t) + 1];
static uint8_t frame[PW_WRAPPER_DEFAULT_MAX_FRAME_LEN];

static pw_tool_status answer(void *userdata, pw_str args, pw_writer *out) {
    (void)userdata;
    (void)args;
    pw_writer_write(out, (const uint8_t *)"42", 2);
    return PW_TOOL_STATUS_OK;
}

int main(void) {
    static const char call[] = "{\"type\":\"TOOL_CALL\",\"content\":{\"id\":\"1\",\"name\":\"answer\",\"args\":{}}}";
    static const char want[] = "{\"type\":\"TOOL_RESULT\",\"content\":{\"id\":\"1\",\"name\":\"answer\",\"result\":42}}";
    pw_tool tool = {{(const uint8_t *)"answer", 6}, PW_TOOL_KIND_SYNC, PW_TOOL_DEFAULT_TIMEOUT, answer, NULL, {NULL, 0}, NULL, 0};
    pw_hooks hooks = {NULL, NULL, NULL};
    pw_wrapper_config cfg;
    pw_wrapper *w;
    pw_disposition d;
    pw_transmit t;
    pw_wrapper_config_default(&cfg);
    if (pw_wrapper_init(block, sizeof block, &cfg, 1, &tool, 1, &hooks, &w) != PW_OK) return 1;
    if (pw_wrapper_handle_response(w, 0, (const uint8_t *)call, sizeof call - 1, &d) != PW_OK) return 2;
    if (pw_wrapper_poll_transmit(w, frame, sizeof frame, &t) != PW_OK) return 3;
    return t.len == sizeof want - 1 && memcmp(frame, want, t.len) == 0 ? 0 : 4;
}
EOF

# The small host on QEMU's microbit (nRF51822: 256 KiB flash at 0, 16 KiB RAM at 0x2000_0000):
# a vector table, a reset handler that prepares RAM, runs main and ends QEMU through
# semihosting (exit status 0 when main returned 0, 1 otherwise or on a fault).
cat >"$tmp/microbit.ld" <<'EOF'
MEMORY
{
  FLASH : ORIGIN = 0x00000000, LENGTH = 256K
  RAM   : ORIGIN = 0x20000000, LENGTH = 16K
}
ENTRY(reset_handler)
__stack_top = ORIGIN(RAM) + LENGTH(RAM);
SECTIONS
{
  .vectors ORIGIN(FLASH) : { KEEP(*(.vectors)) } > FLASH
  .text : { *(.text .text.*) *(.rodata .rodata.*) . = ALIGN(4); } > FLASH
  .ARM.exidx : { *(.ARM.exidx* .gnu.linkonce.armexidx.*) } > FLASH
  .data : ALIGN(4) { __data_start__ = .; *(.data .data.*) . = ALIGN(4); __data_end__ = .; } > RAM AT > FLASH
  __data_load__ = LOADADDR(.data);
  .bss (NOLOAD) : ALIGN(8) { __bss_start__ = .; *(.bss .bss.*) *(COMMON) . = ALIGN(8); __bss_end__ = .; } > RAM
  ASSERT(__stack_top - __bss_end__ >= 4096, "less than 4 KiB of RAM left for the stack")
}
EOF
cat >"$tmp/microbit_start.c" <<'EOF'
#include <stdint.h>
#include <string.h>

extern uint32_t __stack_top, __data_start__, __data_end__, __data_load__, __bss_start__, __bss_end__;
int main(void);
void reset_handler(void);
void fault_handler(void);

/* SYS_EXIT: ADP_Stopped_ApplicationExit ends QEMU with status 0, RunTimeErrorUnknown with 1. */
static void semihosting_exit(int passed) {
    register uint32_t op __asm__("r0") = 0x18u;
    register uint32_t reason __asm__("r1") = passed ? 0x20026u : 0x20023u;
    __asm__ volatile("bkpt 0xab" : : "r"(op), "r"(reason) : "memory");
    for (;;) {
    }
}

typedef void (*vector)(void);
/* Initial SP, Reset, NMI, HardFault (the only fault an ARMv6-M core has). */
__attribute__((section(".vectors"), used)) static const vector vectors[4] = {
    (vector)(uintptr_t)&__stack_top, reset_handler, fault_handler, fault_handler,
};

void fault_handler(void) { semihosting_exit(0); }

void reset_handler(void) {
    memcpy(&__data_start__, &__data_load__, (size_t)((char *)&__data_end__ - (char *)&__data_start__));
    memset(&__bss_start__, 0, (size_t)((char *)&__bss_end__ - (char *)&__bss_start__));
    semihosting_exit(main() == 0);
}
EOF

for t in $targets; do
  name="polyweave-tool-adapter-$version-$t"
  archive="$dist/$name.tar.gz"
  echo "==> check $archive"
  tar -tvzf "$archive"
  tar -tzf "$archive" >"$tmp/list"
  cat >"$tmp/list.want" <<EOF
$name/
$name/LICENSE-APACHE
$name/LICENSE-MIT
$name/README.md
$name/include/
$name/include/polyweave_tool_adapter.h
$name/include/polyweave_tool_adapter.hpp
$name/lib/
$name/lib/libpolyweave_tool_adapter.a
EOF
  diff -u "$tmp/list.want" "$tmp/list" || fail "$archive does not hold the expected files"
  rm -rf "$tmp/unpacked"
  mkdir -p "$tmp/unpacked"
  tar -xzf "$archive" -C "$tmp/unpacked"
  root="$tmp/unpacked/$name"
  for f in include/polyweave_tool_adapter.h include/polyweave_tool_adapter.hpp LICENSE-MIT LICENSE-APACHE; do
    # The archive's layout is the checkout's for these.
    cmp "$f" "$root/$f" || fail "$archive: $f differs from the checkout's"
  done

  # shellcheck disable=SC2046 # the flags are a list
  flags=($(gcc_flags "$t"))
  # Linking fails if the archive is not for this CPU and float ABI ("uses VFP register
  # arguments", "conflicting architecture profiles").
  arm-none-eabi-gcc "${flags[@]}" -std=c99 -Wall -Wextra -Werror -Os -ffunction-sections -fdata-sections \
    -I"$root/include" --specs=nano.specs --specs=nosys.specs -Wl,--gc-sections -Wl,--no-warn-execstack \
    "$tmp/check.c" "$root/lib/libpolyweave_tool_adapter.a" -o "$tmp/check-$t.elf"
  arm-none-eabi-nm "$tmp/check-$t.elf" >"$tmp/nm"
  for sym in pw_wrapper_init pw_wrapper_handle_response pw_wrapper_poll_transmit; do
    grep -Eq "^[0-9a-f]+ T $sym$" "$tmp/nm" || fail "check-$t.elf lacks $sym"
  done
  arm-none-eabi-size "$tmp/check-$t.elf"

  if [ "$t" = thumbv6m-none-eabi ]; then
    arm-none-eabi-gcc "${flags[@]}" -std=c99 -Wall -Wextra -Werror -Os -ffunction-sections -fdata-sections \
      -I"$root/include" --specs=nano.specs --specs=nosys.specs -nostartfiles -T "$tmp/microbit.ld" \
      -Wl,--gc-sections -Wl,--no-warn-execstack "$tmp/microbit_start.c" "$tmp/check.c" \
      "$root/lib/libpolyweave_tool_adapter.a" -o "$tmp/check-microbit.elf"
    timeout 60 qemu-system-arm -machine microbit -nographic -semihosting-config enable=on,target=native \
      -kernel "$tmp/check-microbit.elf" || fail "the small host failed on QEMU's microbit (Cortex-M0)"
    echo "the small host ran on QEMU's microbit (Cortex-M0): the TOOL_RESULT as expected"
  fi
  if [ "$t" = thumbv7em-none-eabihf ]; then
    # This folder's firmware (its Makefile's flags), against the unpacked archive instead of
    # target/: QEMU's exit status is its verdict.
    fw=examples/c-firmware
    cflags=("${flags[@]}" -std=c99 -Wall -Wextra -Werror -Os -g -ffunction-sections -fdata-sections
      -I"$root/include")
    arm-none-eabi-gcc "${cflags[@]}" -c "$fw/startup.c" -o "$tmp/startup.o"
    arm-none-eabi-gcc "${cflags[@]}" -c "$fw/main.c" -o "$tmp/main.o"
    arm-none-eabi-gcc "${flags[@]}" --specs=rdimon.specs -nostartfiles -T "$fw/link.ld" \
      -Wl,--gc-sections -Wl,--no-warn-execstack "$tmp/startup.o" "$tmp/main.o" \
      "$root/lib/libpolyweave_tool_adapter.a" -o "$tmp/c-firmware.elf"
    timeout 60 qemu-system-arm -machine mps2-an386 -cpu cortex-m4 -nographic \
      -semihosting-config enable=on,target=native -icount shift=0,sleep=off \
      -kernel "$tmp/c-firmware.elf" >"$tmp/qemu.out" || { cat "$tmp/qemu.out"; fail "the C firmware failed on QEMU"; }
    tail -n 3 "$tmp/qemu.out"
  fi
done
echo "release-archives.sh: $(echo $targets | wc -w) archives built and checked in $dist"
