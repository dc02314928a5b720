//! The emulated firmware's diagnostic log ("FAT"), what MANAGE_FAT returns and `ocetool dump`
//! saves: the adapter's identity and its event log ([`crate::Event`]) as text. The real log's
//! format is not public; this one is the emulator's, and stable:
//!
//! ```text
//! bytes 0..4   u32 little-endian: the number of event lines (be2net's dump starts after it)
//! then ASCII lines, each ending in '\n':
//!   OCE14000 EMULATED FAT LOG 1
//!   adapter OCe14102 serial EMU0123456789 function pf
//!   firmware running 11.1.172.23 boot primary
//!   events 2 shown, 0 older dropped
//!   0 fw_init signature
//!   1 command 1-61 v0: base status 0 (MCC_STATUS_SUCCESS), additional status 0 (none)
//! ```
//!
//! Event lines are numbered from the first event this process saw (dropped ones count), oldest
//! first, each the event's `Display`. When the whole log would pass
//! [`FAT_LOG_MAX_LEN`](crate::assumptions::FAT_LOG_MAX_LEN) the oldest lines are left out and
//! counted as dropped.

use std::fmt::Write as _;

use super::Firmware;
use crate::assumptions::FAT_LOG_MAX_LEN;
use crate::events::Event;

/// The first line of every log: what it is and the format's version.
pub const FAT_LOG_MAGIC: &str = "OCE14000 EMULATED FAT LOG 1";

impl Firmware {
    /// Renders the log from the events so far and keeps it for RETRIEVE.
    pub(crate) fn render_fat_log(&mut self) -> &[u8] {
        let identity = self.card().state.identity.clone();
        let header = [
            FAT_LOG_MAGIC.to_owned(),
            format!(
                "adapter {} serial {} function {}",
                identity.model,
                identity.serial,
                if identity.function.is_vf() { "vf" } else { "pf" }
            ),
            format!("firmware running {} boot {}", self.running_version(), self.boot_outcome().name()),
        ];
        let log = render(&header, &self.events.snapshot(), self.events.dropped());
        self.fat.insert(log)
    }

    /// The log the last QUERY rendered (rendered now if none was).
    pub(crate) fn fat_log(&mut self) -> &[u8] {
        if self.fat.is_none() {
            self.render_fat_log();
        }
        self.fat.as_deref().unwrap_or_default()
    }
}

/// The log bytes: the count dword, `header` lines, the events line and the newest `events` that
/// fit in [`FAT_LOG_MAX_LEN`] (`dropped` older ones were already gone).
fn render(header: &[String], events: &[Event], dropped: u64) -> Vec<u8> {
    let mut head = String::new();
    for line in header {
        head.push_str(line);
        head.push('\n');
    }
    // Event lines newest first until the room is used; room for the events line is kept.
    let room = FAT_LOG_MAX_LEN.saturating_sub(4 + head.len() + 64);
    let mut lines: Vec<String> = Vec::new();
    let mut used = 0;
    for (i, event) in events.iter().enumerate().rev() {
        let line = format!("{} {event}\n", dropped + i as u64);
        if used + line.len() > room {
            break;
        }
        used += line.len();
        lines.push(line);
    }
    let left_out = dropped + (events.len() - lines.len()) as u64;
    let _ = writeln!(head, "events {} shown, {left_out} older dropped", lines.len());
    let mut out = Vec::with_capacity(4 + head.len() + used);
    out.extend_from_slice(&(lines.len() as u32).to_le_bytes());
    out.extend_from_slice(head.as_bytes());
    for line in lines.iter().rev() {
        out.extend_from_slice(line.as_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::SignatureKind;

    #[test]
    fn the_log_is_a_count_then_header_and_numbered_event_lines() {
        let events = [Event::Signature { kind: SignatureKind::FwInit }, Event::ChipReset];
        let log = render(&["H1".into(), "H2".into()], &events, 5);
        assert_eq!(log[..4], 2u32.to_le_bytes());
        let text = std::str::from_utf8(&log[4..]).unwrap();
        assert_eq!(text, "H1\nH2\nevents 2 shown, 5 older dropped\n5 fw_init signature\n6 chip soft reset\n");
    }

    #[test]
    fn a_long_log_keeps_the_newest_lines_within_the_limit() {
        let events: Vec<Event> = (0..10_000).map(|value| Event::WriteWhileBusy { value }).collect();
        let log = render(&[FAT_LOG_MAGIC.into()], &events, 0);
        assert!(log.len() <= FAT_LOG_MAX_LEN, "{}", log.len());
        let shown = u32::from_le_bytes(log[..4].try_into().unwrap()) as usize;
        assert!(shown > 1000 && shown < events.len(), "{shown}");
        let text = std::str::from_utf8(&log[4..]).unwrap();
        assert!(text.contains(&format!("events {shown} shown, {} older dropped\n", events.len() - shown)));
        assert!(text.ends_with("9999 doorbell write 0x0000270f while not ready: ignored\n"), "the newest is kept");
        assert_eq!(text.lines().count(), 2 + shown);
    }
}
