//! Numeric codes and bit masks as the device sends them: `code_enum!` (one variant per documented
//! value, unknown values kept as `Unknown(raw)`, style.md rule 9) and `bit_flags!` (a newtype with
//! named bits, style.md rule 6). Used by the status codes and by every command type.

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

pub(crate) use {bit_flags, code_enum};
