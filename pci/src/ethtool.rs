//! `ETHTOOL_GDRVINFO`: what a network driver says about itself and its device — the ioctl behind
//! `ethtool -i` (include/uapi/linux/ethtool.h). be2net answers it from what it read at probe,
//! without a firmware command (spec/be2net-driver.md §4.3), so asking costs the adapter nothing.
//!
//! Behind the [`Ethtool`] trait so the code that uses it runs in tests against a double
//! (`fake_sysfs::FakeEthtool`).

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// `SIOCETHTOOL`, the ethtool ioctl (include/uapi/linux/sockios.h).
const SIOCETHTOOL: libc::c_ulong = 0x8946;
/// `ETHTOOL_GDRVINFO`, "get driver info" (include/uapi/linux/ethtool.h).
const ETHTOOL_GDRVINFO: u32 = 0x0000_0003;
/// `IFNAMSIZ`: an interface name and its NUL (include/uapi/linux/if.h).
const IFNAMSIZ: usize = 16;

/// What `ETHTOOL_GDRVINFO` returns, as strings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DriverInfo {
    /// `driver` (`be2net`).
    pub driver: String,
    /// `version`: the driver's version.
    pub version: String,
    /// `fw_version`: be2net's is `"<running>"`, or `"<running> [<on flash>]"` when they differ.
    pub fw_version: String,
    /// `bus_info`: the PCI address.
    pub bus_info: String,
}

/// Asks a network interface's driver about itself.
pub trait Ethtool: std::fmt::Debug {
    /// `ETHTOOL_GDRVINFO` on interface `name`.
    fn driver_info(&self, name: &str) -> io::Result<DriverInfo>;
}

/// The kernel's ethtool ioctl.
#[derive(Debug, Default, Clone, Copy)]
pub struct KernelEthtool;

/// `struct ethtool_drvinfo` (include/uapi/linux/ethtool.h), field for field.
#[doc(alias = "ethtool_drvinfo")]
#[repr(C)]
struct RawDriverInfo {
    cmd: u32,
    driver: [u8; 32],
    version: [u8; 32],
    fw_version: [u8; 32],
    bus_info: [u8; 32],
    erom_version: [u8; 32],
    reserved2: [u8; 12],
    n_priv_flags: u32,
    n_stats: u32,
    testinfo_len: u32,
    eedump_len: u32,
    regdump_len: u32,
}

/// `struct ifreq` with the `ifr_data` member of its union (include/uapi/linux/if.h): the name,
/// then a 24-byte union (its largest member, `struct ifmap`, padded on 64-bit).
#[doc(alias = "ifreq")]
#[repr(C)]
struct IfReqData {
    name: [u8; IFNAMSIZ],
    data: *mut RawDriverInfo,
    _union_rest: [u8; 24 - std::mem::size_of::<*mut RawDriverInfo>()],
}

/// A NUL-terminated C string field as text.
fn c_string(field: &[u8]) -> String {
    let end = field.iter().position(|&b| b == 0).unwrap_or(field.len());
    String::from_utf8_lossy(&field[..end]).into_owned()
}

impl Ethtool for KernelEthtool {
    fn driver_info(&self, name: &str) -> io::Result<DriverInfo> {
        if name.is_empty() || name.len() >= IFNAMSIZ || name.as_bytes().contains(&0) {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("{name:?} is not an interface name")));
        }
        // SAFETY: socket(2) with constant arguments; the result is checked before use.
        let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` is a socket just opened and owned by nothing else; OwnedFd closes it.
        let socket = unsafe { OwnedFd::from_raw_fd(fd) };
        let mut info = RawDriverInfo {
            cmd: ETHTOOL_GDRVINFO,
            driver: [0; 32],
            version: [0; 32],
            fw_version: [0; 32],
            bus_info: [0; 32],
            erom_version: [0; 32],
            reserved2: [0; 12],
            n_priv_flags: 0,
            n_stats: 0,
            testinfo_len: 0,
            eedump_len: 0,
            regdump_len: 0,
        };
        let mut request = IfReqData { name: [0; IFNAMSIZ], data: &mut info, _union_rest: [0; 16] };
        request.name[..name.len()].copy_from_slice(name.as_bytes());
        // SAFETY: SIOCETHTOOL takes a `struct ifreq` whose `ifr_data` points at an ethtool
        // command; `request` and `info` are laid out as the kernel's structs (repr(C), field for
        // field), live and exclusively borrowed for the call. The kernel writes at most
        // sizeof(struct ethtool_drvinfo) bytes to `info`.
        let rc = unsafe { libc::ioctl(socket.as_raw_fd(), SIOCETHTOOL, &mut request as *mut IfReqData) };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(DriverInfo {
            driver: c_string(&info.driver),
            version: c_string(&info.version),
            fw_version: c_string(&info.fw_version),
            bus_info: c_string(&info.bus_info),
        })
    }
}

/// Splits be2net's `fw_version` into (running, stored): `"<running> [<on flash>]"` when they
/// differ, `"<running>"` alone when they are equal (`be_get_drvinfo`, spec/be2net-driver.md §4.3).
pub fn split_fw_version(fw_version: &str) -> (String, String) {
    let text = fw_version.trim();
    if let Some(inner) = text.strip_suffix(']')
        && let Some((running, stored)) = inner.rsplit_once(" [")
    {
        return (running.trim().to_owned(), stored.trim().to_owned());
    }
    (text.to_owned(), text.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_structs_are_the_kernels_size() {
        assert_eq!(std::mem::size_of::<RawDriverInfo>(), 196);
        assert_eq!(std::mem::size_of::<IfReqData>(), 40);
    }

    #[test]
    fn splits_be2nets_firmware_string() {
        assert_eq!(split_fw_version("11.4.1231.6"), ("11.4.1231.6".into(), "11.4.1231.6".into()));
        assert_eq!(split_fw_version("11.4.1231.6 [11.9.300.7]"), ("11.4.1231.6".into(), "11.9.300.7".into()));
        assert_eq!(split_fw_version(" 1.2 [3.4] \n"), ("1.2".into(), "3.4".into()));
    }

    #[test]
    fn asks_the_kernel_and_reports_what_it_says() {
        // The loopback interface exists everywhere and has no driver info: the kernel answers
        // EOPNOTSUPP (or, in a minimal namespace, ENODEV); a made-up interface is ENODEV.
        let err = KernelEthtool.driver_info("ocetool-none0").unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::ENODEV), "{err}");
        let err = KernelEthtool.driver_info("a-name-far-too-long").unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        match KernelEthtool.driver_info("lo") {
            Ok(info) => assert_eq!(info.bus_info, "", "{info:?}"),
            Err(e) => assert!(matches!(e.raw_os_error(), Some(libc::EOPNOTSUPP | libc::ENODEV)), "{e}"),
        }
    }
}
