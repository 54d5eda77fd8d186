/* Start-up for QEMU's mps2-an386 (Cortex-M4F) without the C library's crt0: the vector
 * table the core reads at address 0, a reset handler that prepares RAM and the FPU, and
 * SysTick counting milliseconds. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "board.h"

/* From link.ld. */
extern uint32_t __stack_top;
extern uint32_t __data_start__, __data_end__, __data_load__;
extern uint32_t __bss_start__, __bss_end__;

/* newlib's rdimon: opens stdin/stdout/stderr over semihosting. */
extern void initialise_monitor_handles(void);
extern int main(void);

void reset_handler(void);
void fault_handler(void);
void systick_handler(void);

/* The C library's exit() runs the .fini_array through _fini; crt0 would bring these. */
void _init(void) {}
void _fini(void) {}

/* Vector table: initial stack pointer, then the exception handlers (ARMv7-M numbering). */
typedef void (*vector)(void);
__attribute__((section(".vectors"), used)) static const vector vectors[16] = {
    (vector)(uintptr_t)&__stack_top, /* 0: initial SP */
    reset_handler,                   /* 1: Reset */
    fault_handler,                   /* 2: NMI */
    fault_handler,                   /* 3: HardFault */
    fault_handler,                   /* 4: MemManage */
    fault_handler,                   /* 5: BusFault */
    fault_handler,                   /* 6: UsageFault */
    0, 0, 0, 0,                      /* 7-10: reserved */
    fault_handler,                   /* 11: SVCall */
    fault_handler,                   /* 12: DebugMonitor */
    0,                               /* 13: reserved */
    fault_handler,                   /* 14: PendSV */
    systick_handler,                 /* 15: SysTick */
};

#define REG32(addr) (*(volatile uint32_t *)(uintptr_t)(addr))
#define CPACR REG32(0xE000ED88u)
#define SYST_CSR REG32(0xE000E010u)
#define SYST_RVR REG32(0xE000E014u)
#define SYST_CVR REG32(0xE000E018u)

void reset_handler(void) {
    memcpy(&__data_start__, &__data_load__,
           (size_t)((char *)&__data_end__ - (char *)&__data_start__));
    memset(&__bss_start__, 0, (size_t)((char *)&__bss_end__ - (char *)&__bss_start__));
    /* Full access to CP10 and CP11 (the FPU) before any floating-point instruction. */
    CPACR |= 0xFu << 20;
    __asm__ volatile("dsb\n\tisb" ::: "memory");
    initialise_monitor_handles();
    exit(main());
}

/* Any fault or unexpected exception: a distinct exit status, so the test fails. */
void fault_handler(void) {
    _Exit(99);
}

static volatile uint64_t ticks_ms;

void systick_handler(void) {
    ticks_ms++;
}

void board_start_tick(void) {
    SYST_RVR = BOARD_CORE_HZ / 1000u - 1u; /* 24 999: one interrupt per ms */
    SYST_CVR = 0;
    SYST_CSR = 7u; /* core clock, interrupt, enable */
}

uint64_t board_now_ms(void) {
    /* A 64-bit read is two loads: keep SysTick out in between. */
    uint32_t primask;
    uint64_t t;
    __asm__ volatile("mrs %0, primask\n\tcpsid i" : "=r"(primask)::"memory");
    t = ticks_ms;
    __asm__ volatile("msr primask, %0" ::"r"(primask) : "memory");
    return t;
}

void board_wait_for_interrupt(void) {
    __asm__ volatile("wfi" ::: "memory");
}
