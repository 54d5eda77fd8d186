//! Time as a value the host passes in: the core never reads a clock.

/// A point in time, in milliseconds since an epoch the host chooses.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Instant(u64);

impl Instant {
    /// The epoch.
    pub const ZERO: Instant = Instant(0);

    /// An instant `ms` milliseconds after the epoch.
    pub const fn from_millis(ms: u64) -> Self {
        Instant(ms)
    }

    /// Milliseconds since the epoch.
    pub const fn as_millis(self) -> u64 {
        self.0
    }

    /// `self + ms`, saturating at the far future.
    pub const fn saturating_add_millis(self, ms: u64) -> Self {
        Instant(self.0.saturating_add(ms))
    }
}

impl From<u64> for Instant {
    fn from(ms: u64) -> Self {
        Instant(ms)
    }
}

#[cfg(feature = "embassy-time")]
impl From<embassy_time::Instant> for Instant {
    fn from(t: embassy_time::Instant) -> Self {
        Instant(t.as_millis())
    }
}

#[cfg(feature = "embassy-time")]
impl From<Instant> for embassy_time::Instant {
    fn from(t: Instant) -> Self {
        embassy_time::Instant::from_millis(t.0)
    }
}

/// The clock given to a machine was earlier than one it had already seen.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct ClockWentBackwards {
    /// The latest instant the machine had seen.
    pub last: Instant,
    /// The instant it was given.
    pub given: Instant,
}

impl core::fmt::Display for ClockWentBackwards {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "clock went backwards: {} ms after {} ms",
            self.given.as_millis(),
            self.last.as_millis()
        )
    }
}

impl core::error::Error for ClockWentBackwards {}

/// Tracks the latest instant seen and refuses earlier ones.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Clock {
    last: Instant,
}

impl Clock {
    /// The latest instant seen.
    pub fn now(&self) -> Instant {
        self.last
    }

    /// Checks `now` against the latest instant without moving it.
    pub fn check(&self, now: Instant) -> Result<(), ClockWentBackwards> {
        if now < self.last {
            Err(ClockWentBackwards {
                last: self.last,
                given: now,
            })
        } else {
            Ok(())
        }
    }

    /// Moves to `now` (already checked).
    pub fn advance(&mut self, now: Instant) {
        // Equivalent mutant: `>` -> `>=`: on equal instants it assigns the same value.
        if now > self.last {
            self.last = now;
        }
    }
}

#[cfg(all(test, feature = "embassy-time"))]
mod tests {
    use super::*;

    // `cargo test -p polyweave-tool-adapter --features embassy-time --lib` (tests/run.sh).
    #[test]
    fn embassy_instants_convert_to_the_same_millisecond() {
        let e = embassy_time::Instant::from_millis(98_765);
        assert_eq!(Instant::from(e), Instant::from_millis(98_765));
        assert_eq!(
            embassy_time::Instant::from(Instant::from_millis(4_321)).as_millis(),
            4_321
        );
    }
}
