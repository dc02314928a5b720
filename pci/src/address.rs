//! `PciAddress`: a PCI function's domain, bus, device and function numbers.

use std::fmt;
use std::str::FromStr;

use crate::PciError;

/// A PCI function address, printed as `DDDD:BB:DD.F` (lower-case hex), as in sysfs.
///
/// Parsing accepts the full form and the short `BB:DD.F` form (domain 0), as `lspci` prints it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PciAddress {
    /// PCI segment (domain), 0..=0xffff.
    pub domain: u16,
    /// Bus number.
    pub bus: u8,
    /// Device number, 0..=31.
    pub device: u8,
    /// Function number, 0..=7.
    pub function: u8,
}

impl PciAddress {
    /// Builds an address, checking the device (≤ 31) and function (≤ 7) ranges.
    pub fn new(domain: u16, bus: u8, device: u8, function: u8) -> Option<Self> {
        (device < 32 && function < 8).then_some(Self { domain, bus, device, function })
    }

    /// The address of function `function` of the same device (another port or protocol of the
    /// same adapter).
    pub fn with_function(self, function: u8) -> Option<Self> {
        Self::new(self.domain, self.bus, self.device, function)
    }

    /// The device/function byte (`devfn`) as the PCI bus encodes it: device << 3 | function.
    pub fn devfn(self) -> u8 {
        (self.device << 3) | self.function
    }
}

impl serde::Serialize for PciAddress {
    /// Serialises as the sysfs form, `"0000:03:00.0"`.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl fmt::Display for PciAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:04x}:{:02x}:{:02x}.{:x}", self.domain, self.bus, self.device, self.function)
    }
}

fn hex_field<T: TryFrom<u32>>(input: &str, part: &str, max_len: usize, what: &'static str) -> Result<T, PciError> {
    let bad = || PciError::BadAddress { input: input.to_owned(), reason: what };
    if part.is_empty() || part.len() > max_len || !part.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(bad());
    }
    let value = u32::from_str_radix(part, 16).map_err(|_| bad())?;
    T::try_from(value).map_err(|_| bad())
}

impl FromStr for PciAddress {
    type Err = PciError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = |reason| PciError::BadAddress { input: s.to_owned(), reason };
        let (rest, function) = s.rsplit_once('.').ok_or_else(|| bad("missing '.F'"))?;
        let parts: Vec<&str> = rest.split(':').collect();
        let (domain, bus, device) = match parts.as_slice() {
            [bus, device] => (0u16, *bus, *device),
            [domain, bus, device] => (hex_field(s, domain, 4, "domain is not 1-4 hex digits")?, *bus, *device),
            _ => return Err(bad("expected DDDD:BB:DD.F or BB:DD.F")),
        };
        let bus: u8 = hex_field(s, bus, 2, "bus is not 1-2 hex digits")?;
        let device: u8 = hex_field(s, device, 2, "device is not 1-2 hex digits")?;
        let function: u8 = hex_field(s, function, 1, "function is not one hex digit")?;
        if device > 31 {
            return Err(bad("device number is above 0x1f"));
        }
        if function > 7 {
            return Err(bad("function number is above 7"));
        }
        Ok(Self { domain, bus, device, function })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_full_and_short_forms() {
        let full: PciAddress = "0000:03:00.0".parse().unwrap();
        let short: PciAddress = "03:00.0".parse().unwrap();
        assert_eq!(full, short);
        assert_eq!(full, PciAddress { domain: 0, bus: 3, device: 0, function: 0 });
        let odd: PciAddress = "abcd:ff:1f.7".parse().unwrap();
        assert_eq!(odd, PciAddress { domain: 0xabcd, bus: 0xff, device: 0x1f, function: 7 });
        assert_eq!(odd.devfn(), 0xff);
    }

    #[test]
    fn prints_the_sysfs_form() {
        let a: PciAddress = "3:0.1".parse().unwrap();
        assert_eq!(a.to_string(), "0000:03:00.1");
        let b: PciAddress = "ABCD:0A:1F.7".parse().unwrap();
        assert_eq!(b.to_string(), "abcd:0a:1f.7");
        assert_eq!(b.to_string().parse::<PciAddress>().unwrap(), b);
    }

    #[test]
    fn rejects_malformed_addresses() {
        for bad in [
            "",
            "emu",
            "03:00",
            "03:00.8",
            "03:20.0",
            "0000:03:00.0.1",
            "00000:03:00.0",
            "03:000.0",
            "g3:00.0",
            "03:00.x",
            ":03:00.0",
            "1:2:3:4.0",
            "03:00.",
            "+3:00.0",
            "03:00.00",
        ] {
            let err = bad.parse::<PciAddress>().unwrap_err();
            assert!(matches!(err, PciError::BadAddress { .. }), "{bad}: {err}");
            assert!(err.to_string().contains("DDDD:BB:DD.F"), "{bad}: {err}");
        }
    }
}
