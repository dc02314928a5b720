//! The terminal progress bar of `fw update`: one line on stderr, redrawn in place at most ten
//! times a second, cleared when the flash ends.
//!
//! Written here rather than taken from a progress-bar crate: every invocation of `ocetool`
//! loads and relocates whatever the binary links, and a crate's rate estimator pulled in the
//! maths library for a bar only `fw update` on a terminal ever draws (docs/performance.md,
//! "Start-up"). The line is the one such crates draw: the section, a bar, bytes and speed.

use std::io::Write;
use std::time::{Duration, Instant};

/// How often the line is redrawn at most: often enough to look live, rare enough that a fast
/// flash does not spend its time writing to the terminal.
const REDRAW_EVERY: Duration = Duration::from_millis(100);
/// Cells of the bar between the brackets.
const BAR_CELLS: u64 = 40;
/// Columns the section name is padded to, so the bar does not move between sections.
const MESSAGE_COLUMNS: usize = 24;

/// A bar of `total` bytes drawn on stderr.
#[derive(Debug)]
pub(super) struct Bar {
    total: u64,
    position: u64,
    message: String,
    started: Instant,
    drawn: Option<Instant>,
}

impl Bar {
    pub(super) fn new(total: u64) -> Self {
        Self { total, position: 0, message: String::new(), started: Instant::now(), drawn: None }
    }

    /// The section being written; redraws at once.
    pub(super) fn set_message(&mut self, message: &str) {
        message.clone_into(&mut self.message);
        self.draw(true);
    }

    /// Bytes done so far; redraws when the last draw is old enough.
    pub(super) fn set_position(&mut self, position: u64) {
        self.position = position.min(self.total);
        self.draw(false);
    }

    /// Erases the line, leaving the cursor where the bar began.
    pub(super) fn finish_and_clear(&mut self) {
        if self.drawn.is_some() {
            let mut err = std::io::stderr().lock();
            // A terminal that went away cannot show the bar anyway: nothing to report.
            let _ = write!(err, "\r\x1b[2K");
            let _ = err.flush();
        }
    }

    fn draw(&mut self, now: bool) {
        let at = Instant::now();
        if !now && self.drawn.is_some_and(|last| at.duration_since(last) < REDRAW_EVERY) {
            return;
        }
        self.drawn = Some(at);
        let line = render(&self.message, self.position, self.total, at.duration_since(self.started));
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r\x1b[2K{line}");
        let _ = err.flush();
    }
}

/// The bar's line for `position` of `total` bytes after `elapsed`, without the control codes:
/// `{message:24} [{bar:40}] {bytes}/{total} {speed}`.
fn render(message: &str, position: u64, total: u64, elapsed: Duration) -> String {
    let filled = (position.min(total) * BAR_CELLS).checked_div(total).unwrap_or(BAR_CELLS);
    let mut bar = "=".repeat(filled as usize);
    if filled < BAR_CELLS {
        bar.push('>');
        bar.push_str(&" ".repeat((BAR_CELLS - filled - 1) as usize));
    }
    let secs = elapsed.as_secs_f64();
    let speed = if secs > 0.0 { format!("{}/s", bytes(position as f64 / secs)) } else { String::from("-") };
    format!("{message:MESSAGE_COLUMNS$} [{bar}] {}/{} {speed}", bytes(position as f64), bytes(total as f64))
}

/// `n` bytes in binary units with two decimals past 1 KiB: `512 B`, `1.50 KiB`, `16.00 MiB`.
fn bytes(n: f64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if n < 1024.0 {
        return format!("{n:.0} B");
    }
    let mut value = n / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.2} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_shows_the_section_the_bar_the_bytes_and_the_speed() {
        let line = render("UFI_TYPE_FIRMWARE", 4 << 20, 16 << 20, Duration::from_secs(2));
        assert_eq!(
            line,
            "UFI_TYPE_FIRMWARE        [==========>                             ] 4.00 MiB/16.00 MiB 2.00 MiB/s"
        );
    }

    #[test]
    fn ends_and_edges_draw_a_whole_bar() {
        let start = render("a", 0, 100, Duration::ZERO);
        assert_eq!(start, format!("{:24} [>{}] 0 B/100 B -", "a", " ".repeat(39)));
        let done = render("a", 100, 100, Duration::from_millis(500));
        assert_eq!(done, format!("{:24} [{}] 100 B/100 B 200 B/s", "a", "=".repeat(40)));
        let past = render("a", 150, 100, Duration::from_secs(1));
        assert!(past.contains(&format!("[{}]", "=".repeat(40))), "{past}");
        let empty = render("a", 0, 0, Duration::from_secs(1));
        assert!(empty.contains(&format!("[{}]", "=".repeat(40))), "{empty}");
    }

    #[test]
    fn sizes_use_binary_units() {
        assert_eq!(bytes(0.0), "0 B");
        assert_eq!(bytes(1023.0), "1023 B");
        assert_eq!(bytes(1536.0), "1.50 KiB");
        assert_eq!(bytes(32768.0), "32.00 KiB");
        assert_eq!(bytes(1_073_741_824.0), "1.00 GiB");
        assert_eq!(bytes(5.0 * 1_099_511_627_776.0 * 1024.0), "5120.00 TiB");
    }
}
