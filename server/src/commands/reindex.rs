//! `engram-server reindex`: rebuilds the search index with a progress bar.

use std::io::{IsTerminal as _, Write as _};
use std::time::{Duration, Instant};

use crate::index::{IndexOptions, Progress, TextIndex};
use crate::store::Store;

/// Width of the bar, in characters.
const BAR_WIDTH: usize = 30;
/// Without a terminal, a line at most this often.
const LINE_EVERY: Duration = Duration::from_secs(2);

/// Rebuilds the index in `options.dir` from `store`, drawing progress on
/// standard error.
pub async fn run(options: &IndexOptions, store: &dyn Store) -> anyhow::Result<()> {
    let started = Instant::now();
    let mut bar = Bar::new(std::io::stderr().is_terminal());
    TextIndex::rebuild(options, store, &mut |progress| bar.draw(progress)).await?;
    bar.finish();
    eprintln!(
        "rebuilt the search index in {} in {:.1}s",
        options.dir.display(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// A progress bar on a terminal (redrawn in place), or a line now and then.
struct Bar {
    terminal: bool,
    last: Option<(Instant, &'static str)>,
    drawn: bool,
}

impl Bar {
    fn new(terminal: bool) -> Bar {
        Bar {
            terminal,
            last: None,
            drawn: false,
        }
    }

    fn draw(&mut self, progress: Progress) {
        let line = render(progress);
        let mut err = std::io::stderr().lock();
        if self.terminal {
            // A new phase starts on a line of its own.
            if self.drawn && self.last.is_some_and(|(_, phase)| phase != progress.phase) {
                let _ = writeln!(err);
            }
            let _ = write!(err, "\r{line}");
            let _ = err.flush();
            self.drawn = true;
            self.last = Some((Instant::now(), progress.phase));
        } else {
            let due = self
                .last
                .is_none_or(|(at, phase)| at.elapsed() >= LINE_EVERY || phase != progress.phase)
                || progress.done >= progress.total;
            if due {
                let _ = writeln!(err, "{line}");
                self.last = Some((Instant::now(), progress.phase));
            }
        }
    }

    fn finish(&mut self) {
        if self.terminal && self.drawn {
            eprintln!();
        }
    }
}

/// `indexing memories [#########.....................]  30% 3000/10000`.
fn render(progress: Progress) -> String {
    let total = progress.total.max(1);
    let done = progress.done.min(total);
    let filled = usize::try_from(done * BAR_WIDTH as u64 / total).unwrap_or(BAR_WIDTH);
    format!(
        "{} [{}{}] {:>3}% {}/{}",
        progress.phase,
        "#".repeat(filled),
        ".".repeat(BAR_WIDTH - filled),
        done * 100 / total,
        progress.done,
        progress.total
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bar_fills_with_progress() {
        let line = render(Progress {
            phase: "indexing memories",
            done: 3,
            total: 10,
        });
        assert_eq!(
            line,
            "indexing memories [#########.....................]  30% 3/10"
        );
        let empty = render(Progress {
            phase: "indexing memories",
            done: 0,
            total: 0,
        });
        assert!(empty.ends_with("  0% 0/0"), "{empty}");
    }
}
