//! Building blocks shared by the command types: the code-enum and bit-flag macros (from
//! [`crate::codes`]), bodies with no fields, and absolute-offset jumps for layouts with gaps.

use crate::wire::{Reader, WireError, Writer};

/// Implements [`Wire`](crate::Wire) for a request whose body is all reserved: nothing is written
/// (the command buffer starts zeroed) and nothing is read.
macro_rules! empty_body {
    ($name:ty) => {
        impl $crate::wire::Wire for $name {
            fn encode(&self, _w: &mut $crate::wire::Writer<'_>) -> Result<(), $crate::wire::WireError> {
                Ok(())
            }
            fn decode(_r: &mut $crate::wire::Reader<'_>) -> Result<Self, $crate::wire::WireError> {
                Ok(Self)
            }
        }
    };
}

pub(crate) use crate::codes::{bit_flags, code_enum};
pub(crate) use empty_body;

/// Moves `r` to absolute offset `pos` (a field after a gap in the layout). Past the end of the
/// buffer the reader is parked at `pos`, so the next read fails naming its own field and offset.
pub(crate) fn jump(r: &mut Reader<'_>, pos: usize) {
    *r = Reader::at(r.buffer(), pos);
}

/// Moves `w` to absolute offset `pos`, zero-filling any reserved bytes between the current
/// position and `pos` so the encoding does not depend on what the buffer held before.
pub(crate) fn fill_to(w: &mut Writer<'_>, field: &'static str, pos: usize) -> Result<(), WireError> {
    match pos.checked_sub(w.position()) {
        Some(gap) => w.zeros(field, gap),
        None => w.seek(field, pos),
    }
}

/// A MAC address as `aa:bb:cc:dd:ee:ff`.
pub fn format_mac(mac: &[u8; 6]) -> String {
    mac.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(":")
}

#[cfg(test)]
mod tests {
    use super::*;

    code_enum! {
        /// Test enum.
        Colour(u8) { Red = 1, "red"; Blue = 4, "blue"; }
    }

    bit_flags! {
        /// Test flags.
        Bits(u16) { A = 0x1, "a"; C = 0x4, "c"; }
    }

    #[test]
    fn code_enum_keeps_unknown_values() {
        assert_eq!(Colour::from_raw(4), Colour::Blue);
        assert_eq!(Colour::from_raw(2), Colour::Unknown(2));
        for raw in 0..=u8::MAX {
            assert_eq!(Colour::from_raw(raw).raw(), raw);
        }
        assert_eq!(Colour::Red.to_string(), "red");
        assert_eq!(Colour::Unknown(0x22).to_string(), "unknown (0x22)");
    }

    #[test]
    fn bit_flags_name_known_bits_and_keep_the_rest() {
        let b = Bits(0x8005);
        assert!(b.contains(Bits::A | Bits::C));
        assert!(!Bits(1).contains(Bits::A | Bits::C));
        assert!(Bits(1).intersects(Bits::A | Bits::C));
        assert_eq!(b.names(), ["a", "c"]);
        assert_eq!(b.unknown_bits(), 0x8000);
    }

    #[test]
    fn jump_past_the_end_reports_the_next_field() {
        let buf = [0u8; 8];
        let mut r = Reader::at(&buf, 2);
        jump(&mut r, 40);
        let err = r.u32("crc").unwrap_err();
        assert_eq!((err.field, err.offset, err.needed, err.available), ("crc", 40, 4, 0));
    }

    #[test]
    fn mac_format() {
        assert_eq!(format_mac(&[0, 0, 0xc9, 1, 2, 0xff]), "00:00:c9:01:02:ff");
    }
}
