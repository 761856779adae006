//! Progress of a long export, import or migration, on standard error.

use std::time::{Duration, Instant};

/// How often a long run reports its progress on standard error.
const PROGRESS_EVERY: Duration = Duration::from_secs(2);

/// Lines on standard error now and then while a long run goes on.
pub struct Progress {
    last: Instant,
}

impl Progress {
    pub fn new() -> Progress {
        Progress {
            last: Instant::now(),
        }
    }

    /// Reports `line()` if the last report is old enough.
    pub fn tick(&mut self, line: impl FnOnce() -> String) {
        if self.last.elapsed() >= PROGRESS_EVERY {
            eprintln!("{}", line());
            self.last = Instant::now();
        }
    }
}
