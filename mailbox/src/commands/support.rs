//! Building blocks shared by the command types: code enums that keep unknown values, bit-flag
//! newtypes with named bits, and absolute-offset jumps for layouts with gaps.

use crate::wire::{Reader, WireError, Writer};

/// Declares an enum for a numeric code: one variant per documented value plus `Unknown(raw)`,
/// so a value no source names is kept, never mapped to a neighbour (style.md rule 9).
macro_rules! code_enum {
    (
        $(#[$meta:meta])*
        $name:ident($raw:ty) { $( $(#[$vmeta:meta])* $variant:ident = $value:expr, $label:literal; )* }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $( $(#[$vmeta])* $variant, )*
            /// A value no public source names; kept as sent.
            Unknown($raw),
        }

        impl $name {
            /// Decodes a raw value.
            pub fn from_raw(raw: $raw) -> Self {
                match raw {
                    $( $value => Self::$variant, )*
                    other => Self::Unknown(other),
                }
            }

            /// The raw value on the wire.
            pub fn raw(self) -> $raw {
                match self {
                    $( Self::$variant => $value, )*
                    Self::Unknown(raw) => raw,
                }
            }

            /// A short human name, `None` for an unknown value.
            pub fn name(self) -> Option<&'static str> {
                match self {
                    $( Self::$variant => Some($label), )*
                    Self::Unknown(_) => None,
                }
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                match self.name() {
                    Some(name) => f.write_str(name),
                    None => write!(f, "unknown ({:#x})", self.raw()),
                }
            }
        }
    };
}

/// Declares a bit-mask newtype (style.md rule 6): the raw value is public and kept whole, each
/// documented bit is an associated constant, and [`names`](Self::names) lists the set bits.
macro_rules! bit_flags {
    (
        $(#[$meta:meta])*
        $name:ident($raw:ty) { $( $(#[$fmeta:meta])* $flag:ident = $value:expr, $label:literal; )* }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
        pub struct $name(pub $raw);

        impl $name {
            $( $(#[$fmeta])* pub const $flag: $raw = $value; )*

            /// Every documented bit with its name, lowest bit first.
            pub const NAMED: &'static [($raw, &'static str)] = &[ $( ($value, $label), )* ];

            /// True when every bit of `mask` is set.
            pub fn contains(self, mask: $raw) -> bool {
                self.0 & mask == mask
            }

            /// True when any bit of `mask` is set.
            pub fn intersects(self, mask: $raw) -> bool {
                self.0 & mask != 0
            }

            /// The names of the documented bits that are set, lowest bit first.
            pub fn names(self) -> Vec<&'static str> {
                Self::NAMED.iter().filter(|(bit, _)| self.0 & bit != 0).map(|&(_, name)| name).collect()
            }

            /// The set bits no source documents (kept, never dropped).
            pub fn unknown_bits(self) -> $raw {
                let known = Self::NAMED.iter().fold(0, |acc, (bit, _)| acc | bit);
                self.0 & !known
            }
        }
    };
}

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

pub(crate) use {bit_flags, code_enum, empty_body};

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
