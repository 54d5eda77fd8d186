// The clocks of calls and wrappers: real time, or a test's manual clock (`clock: { now() }`).

/** Milliseconds of a monotonic clock. */
export const realClock = { now: () => Math.floor(performance.now()) };
/** The manual clock of `options`, or null. */
export const clockOf = (options) => (options.clock && typeof options.clock.now === 'function' ? options.clock : null);
