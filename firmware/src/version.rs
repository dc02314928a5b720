//! Firmware version strings as four dotted numbers ("11.1.172.23"), for ordering versions.

use std::cmp::Ordering;
use std::fmt;

/// A version of exactly four dotted decimal numbers, ordered numerically. Linux parses the
/// running firmware version the same way for its NC-SI gate (ufi-firmware.md §2.7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DottedVersion(pub [u32; 4]);

impl DottedVersion {
    /// Parses `"A.B.C.D"`; `None` for anything else.
    pub fn parse(s: &str) -> Option<Self> {
        let mut parts = [0u32; 4];
        let mut fields = s.trim().split('.');
        for part in &mut parts {
            let field = fields.next()?;
            if field.is_empty() || !field.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            *part = field.parse().ok()?;
        }
        fields.next().is_none().then_some(Self(parts))
    }
}

impl fmt::Display for DottedVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [a, b, c, d] = self.0;
        write!(f, "{a}.{b}.{c}.{d}")
    }
}

/// Orders two version strings: equal strings are equal; otherwise both must parse as
/// [`DottedVersion`], else the order is unknown (`None`).
pub fn compare(a: &str, b: &str) -> Option<Ordering> {
    if a == b {
        return Some(Ordering::Equal);
    }
    Some(DottedVersion::parse(a)?.cmp(&DottedVersion::parse(b)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_order() {
        assert_eq!(DottedVersion::parse("11.1.172.23"), Some(DottedVersion([11, 1, 172, 23])));
        assert_eq!(DottedVersion::parse("11.4.1231.6").unwrap().to_string(), "11.4.1231.6");
        for bad in ["", "1.2.3", "1.2.3.4.5", "1.2.3.x", "1..3.4", "1.2.3.+4", "99999999999.1.1.1"] {
            assert_eq!(DottedVersion::parse(bad), None, "{bad:?}");
        }
        assert_eq!(compare("10.6.193.31", "11.1.172.23"), Some(Ordering::Less));
        assert_eq!(compare("11.1.172.23", "11.1.172.3"), Some(Ordering::Greater), "numeric, not lexical");
        assert_eq!(compare("abc", "abc"), Some(Ordering::Equal));
        assert_eq!(compare("abc", "1.2.3.4"), None);
    }
}
