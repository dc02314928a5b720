//! The UFI parser and everything built on it (inspect, the flashing walk, the compatibility
//! rules) on arbitrary files: untrusted input must never panic or read out of bounds.
#![no_main]

use libfuzzer_sys::fuzz_target;
use oce_firmware::ufi::UfiImage;

fuzz_target!(|data: &[u8]| {
    let _ = oce_firmware::inspect::inspect(data);
    if let Ok(image) = UfiImage::parse(data) {
        let _ = oce_firmware::walk::walk(&image).count();
        for s in image.sections() {
            let _ = s.check_crc();
            if s.entry.image_type.is_option_rom() {
                let _ = oce_firmware::optionrom::decode(s.data);
            }
        }
    }
});
