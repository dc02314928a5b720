//! The Lancer object download's logic: size checks, chunking, offset advance, the zero-progress
//! guard, and `change_status` decisions.

use oce_mailbox::commands::{ChangeStatus, OBJECT_CHUNK};

use super::fake::FakeObject;
use crate::FirmwareError;
use crate::flash::lancer::{self, Activation, MAX_ZERO_PROGRESS_REPLIES, ObjectProgress, object_len};
use crate::flash::{FlashObserver, NoProgress};

#[test]
fn the_file_must_be_a_non_empty_multiple_of_4() {
    assert!(matches!(object_len(&[]), Err(FirmwareError::Empty)));
    assert!(matches!(object_len(&[0; 6]), Err(FirmwareError::ObjectNotAligned { len: 6 })));
    assert_eq!(object_len(&[0; 8]).unwrap(), 8);
    let err = object_len(&[0; 5]).unwrap_err();
    assert_eq!(err.to_string(), "a Lancer firmware file must be a multiple of 4 bytes; this one has 5");
}

#[test]
fn chunks_are_32k_and_advance_by_what_the_firmware_took() {
    let total = (2 * OBJECT_CHUNK + 100) as u32;
    let mut p = ObjectProgress::new(total);
    assert_eq!(p.next_chunk(), Some(0..OBJECT_CHUNK));
    p.advance(OBJECT_CHUNK as u32, 1000).unwrap();
    assert_eq!(p.offset, 1000);
    assert_eq!(p.next_chunk(), Some(1000..1000 + OBJECT_CHUNK), "the next chunk starts where the firmware stopped");
    p.advance(OBJECT_CHUNK as u32, OBJECT_CHUNK as u32).unwrap();
    assert_eq!(p.next_chunk(), Some(1000 + OBJECT_CHUNK..total as usize), "the last chunk is short");
    p.advance(OBJECT_CHUNK as u32 - 900, OBJECT_CHUNK as u32 - 900).unwrap();
    assert_eq!((p.offset, p.next_chunk()), (total, None));
}

#[test]
fn zero_progress_is_retried_then_refused() {
    let mut p = ObjectProgress::new(64);
    for _ in 1..MAX_ZERO_PROGRESS_REPLIES {
        p.advance(64, 0).unwrap();
        assert_eq!(p.next_chunk(), Some(0..64), "the same chunk again");
    }
    let err = p.advance(64, 0).unwrap_err();
    assert!(
        matches!(err, FirmwareError::ObjectNoProgress { offset: 0, replies: MAX_ZERO_PROGRESS_REPLIES }),
        "{err:?}"
    );
    // Progress resets the count.
    let mut p = ObjectProgress::new(64);
    for _ in 0..3 * MAX_ZERO_PROGRESS_REPLIES {
        p.advance(4, 0).and_then(|()| p.advance(4, 0)).unwrap();
        p.advance(4, 1).unwrap();
    }
}

#[test]
fn a_reply_taking_more_than_was_sent_is_an_error() {
    let mut p = ObjectProgress::new(64);
    let err = p.advance(64, 65).unwrap_err();
    assert!(matches!(err, FirmwareError::ObjectOverrun { offset: 0, sent: 64, accepted: 65 }), "{err:?}");
    assert_eq!(p.offset, 0);
}

#[test]
fn change_status_decides_the_activation_and_unknown_values_are_kept() {
    let cases = [
        (0x00, Activation::NoResetNeeded),
        (0x01, Activation::RebootNeeded),
        (0x02, Activation::FirmwareResetNeeded),
        (0x04, Activation::RebootNeeded),
        (0x05, Activation::RebootNeeded),
        (0x03, Activation::RebootNeeded),
        (0xFF, Activation::RebootNeeded),
    ];
    for (raw, activation) in cases {
        assert_eq!(Activation::from_change_status(ChangeStatus::from_raw(raw)), activation, "{raw:#x}");
        let mut dev = FakeObject::new(raw);
        let report = lancer::run(&mut dev, &[7; 16], &mut NoProgress).unwrap();
        assert_eq!((report.change_status, report.activation), (raw, activation));
        assert_eq!(report.reset_required, raw != 0);
        assert_eq!(report.change_status_name.is_none(), raw == 0x03 || raw == 0xFF);
    }
}

#[derive(Default)]
struct Progress(Vec<(u64, u64)>);

impl FlashObserver for Progress {
    fn object_progress(&mut self, sent: u64, total: u64) {
        self.0.push((sent, total));
    }
}

#[test]
fn a_download_with_partial_replies_writes_the_whole_file_then_commits() {
    let file: Vec<u8> = (0..(OBJECT_CHUNK * 2 + 4)).map(|i| i as u8).collect();
    let mut dev = FakeObject::new(0x02);
    dev.takes = vec![0x1000, 0, OBJECT_CHUNK as u32];
    let mut obs = Progress::default();
    let report = lancer::run(&mut dev, &file, &mut obs).unwrap();
    assert_eq!(dev.object, file, "every byte arrived once, in order");
    assert_eq!(dev.commit, Some(file.len() as u32), "EOF commit at the total length");
    assert_eq!(dev.writes[0], (0, OBJECT_CHUNK));
    assert_eq!(dev.writes[1], (0x1000, OBJECT_CHUNK));
    assert_eq!(dev.writes[2], (0x1000, OBJECT_CHUNK), "a zero reply resends the chunk");
    assert_eq!(dev.writes[3], (0x1000 + OBJECT_CHUNK as u32, OBJECT_CHUNK + 4 - 0x1000));
    assert_eq!(dev.writes.len(), 4);
    assert_eq!(report.writes as usize, dev.writes.len());
    assert_eq!(report.activation, Activation::FirmwareResetNeeded);
    assert_eq!(obs.0.last(), Some(&(file.len() as u64, file.len() as u64)));
}

#[test]
fn a_failed_write_names_its_offset_and_does_not_commit() {
    let mut dev = FakeObject::new(0);
    dev.fail_at = Some(OBJECT_CHUNK as u32);
    let err = lancer::run(&mut dev, &vec![1; OBJECT_CHUNK * 2], &mut NoProgress).unwrap_err();
    assert!(matches!(err, FirmwareError::ObjectWriteFailed { offset, .. } if offset == OBJECT_CHUNK as u32), "{err:?}");
    assert_eq!(dev.commit, None);
}
