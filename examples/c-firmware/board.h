/* What main.c needs from the board (startup.c). */
#ifndef C_FIRMWARE_BOARD_H
#define C_FIRMWARE_BOARD_H

#include <stdint.h>

/* SysTick's clock on mps2-an386: the 25 MHz core clock. */
#define BOARD_CORE_HZ 25000000u

/* Starts the 1 kHz SysTick; until then time stands at 0. */
void board_start_tick(void);
/* Milliseconds since board_start_tick. */
uint64_t board_now_ms(void);
/* Sleeps until the next interrupt (SysTick at the latest). */
void board_wait_for_interrupt(void);

#endif
