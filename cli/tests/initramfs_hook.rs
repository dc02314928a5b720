//! The boot hook in the initramfs, where be2net usually loads first: what the initramfs builders
//! (`packaging/initramfs-files`, run by the initramfs-tools hook and the dracut module) put in —
//! an accepted configuration and its images within the bound, nothing of a refused one —, the
//! hook's run there (as in an initramfs: the manifest present, the kernel log its log), and
//! ocetool-apply.service after boot, with be2net loaded: nothing left when the initramfs did it
//! all, and a loud line saying what was not done before be2net otherwise. A real Debian initramfs
//! booted in a guest is `tests/initramfs-qemu/run.sh`.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use common::{OCETOOL, fresh};
use serde_json::Value;

fn packaging(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../packaging").join(file)
}

/// The version of the image the configurations here name (the factory firmware is older).
const NEW: &str = "11.2.0.9";

struct Setup {
    dir: tempfile::TempDir,
    dev: String,
}

impl Setup {
    fn new() -> Self {
        let (dir, dev) = fresh();
        std::fs::create_dir(dir.path().join("stage")).unwrap();
        Self { dir, dev }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// /etc/ocetool/ocetool.toml of the root the initramfs is built from.
    fn config(&self) -> PathBuf {
        self.path("ocetool.toml")
    }

    /// Where the builder leaves its results.
    fn stage(&self) -> PathBuf {
        self.path("stage")
    }

    /// A configuration asking for RoCE, activated by a reset, with the image `new.ufi` (next to
    /// it, named relative to it) when `firmware`.
    fn write_config(&self, firmware: bool) {
        let mut rule = "[[adapter]]\nmatch = { all = true }\nprofile = \"roce\"\nactivate = \"reset\"\n".to_owned();
        if firmware {
            let image = oce_firmware::build::ImageBuilder::new(NEW).build().unwrap();
            std::fs::write(self.path("new.ufi"), image).unwrap();
            rule.push_str("firmware = \"new.ufi\"   # the next release\n");
        }
        std::fs::write(self.config(), rule).unwrap();
    }

    /// `initramfs-files STAGE`, as mkinitramfs or dracut runs it; its stderr.
    fn build(&self, bound_mib: Option<u32>) -> String {
        let mut cmd = Command::new("sh");
        cmd.arg(packaging("initramfs-files"))
            .arg(self.stage())
            .env("OCETOOL_CONFIG", self.config())
            .env("OCETOOL_BIN", OCETOOL)
            .env_remove("OCETOOL_DEVICE");
        if let Some(mib) = bound_mib {
            cmd.env("OCETOOL_INITRAMFS_MAX_MIB", mib.to_string());
        }
        let out = cmd.output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stderr).into_owned()
    }

    fn manifest(&self) -> String {
        std::fs::read_to_string(self.stage().join("manifest")).unwrap()
    }

    /// The hook with the run folder, the card and be2net's module of this setup: `args` and
    /// `config` as the caller (modprobe.d or the unit, in the initramfs or the root) has them.
    fn hook(&self, args: &[&str], config: &Path, in_initramfs: bool, be2net_loaded: bool) -> Output {
        let module = self.path("sys-module-be2net");
        if be2net_loaded {
            std::fs::create_dir_all(&module).unwrap();
        }
        let manifest = if in_initramfs { self.stage().join("manifest") } else { self.path("no-manifest") };
        Command::new("sh")
            .arg(packaging("be2net-hook"))
            .args(args)
            .env("OCETOOL_CONFIG", config)
            .env("OCETOOL_BIN", OCETOOL)
            .env("OCETOOL_DEVICE", &self.dev)
            .env("OCETOOL_RUN_DIR", self.path("run"))
            .env("OCETOOL_SERVICE_WANTS", self.path("sysinit.target.wants-ocetool-apply.service"))
            .env("OCETOOL_INITRAMFS_MANIFEST", manifest)
            .env("OCETOOL_KMSG", self.path("kmsg"))
            .env("OCETOOL_BE2NET_MODULE", module)
            .env("OCETOOL_HOOK_TIMEOUT", "4000")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .output()
            .unwrap()
    }

    /// The hook's run in the initramfs (udev loading be2net there), with the initramfs' copy of
    /// the configuration at the configuration's path, as the builders install it (so relative
    /// image paths resolve as there), and the root's own put back afterwards; its line in the
    /// kernel log (none when the run logged nothing).
    fn boot_initramfs(&self) -> String {
        let root_copy = std::fs::read(self.config()).ok();
        let staged = self.stage().join("ocetool.toml");
        let _ = std::fs::remove_file(self.config());
        if staged.exists() {
            std::fs::copy(&staged, self.config()).unwrap();
        }
        let out = self.hook(&[], &self.config(), true, false);
        assert_eq!(out.status.code(), Some(0), "the module load must not fail");
        assert!(String::from_utf8_lossy(&out.stderr).lines().count() <= 1, "{out:?}");
        let _ = std::fs::remove_file(self.config());
        if let Some(bytes) = root_copy {
            std::fs::write(self.config(), bytes).unwrap();
        }
        std::fs::read_to_string(self.path("kmsg")).unwrap_or_default()
    }

    /// ocetool-apply.service after boot, be2net loaded from the initramfs; its log line.
    fn service(&self) -> String {
        log_line(&self.hook(&["--service"], &self.config(), false, true))
    }

    fn report(&self) -> Value {
        serde_json::from_slice(&std::fs::read(self.path("run/last-apply.json")).unwrap()).unwrap()
    }
}

fn log_line(out: &Output) -> String {
    let text = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(text.lines().count(), 1, "one line per run: {text}");
    assert_eq!(out.status.code(), Some(0), "the module load must not fail: {text}");
    text
}

/// The SHA-256 of a file, as sha256sum(1) prints it: a value the builder's own code does not make.
fn sha256(path: &Path) -> String {
    let out = Command::new("sha256sum").arg(path).output().unwrap();
    String::from_utf8_lossy(&out.stdout).split_whitespace().next().unwrap().to_owned()
}

#[test]
fn an_accepted_configuration_goes_in_with_its_images_and_the_initramfs_applies_it_before_be2net() {
    let s = Setup::new();
    s.write_config(true);
    let warnings = s.build(None);
    assert!(warnings.is_empty(), "{warnings}");
    let manifest = s.manifest();
    let image = s.path("new.ufi");
    let size = std::fs::metadata(&image).unwrap().len();
    assert!(manifest.contains("\nconfig-state included\n"), "{manifest}");
    assert!(manifest.contains(&format!("\nconfig-sha256 {}\n", sha256(&s.config()))), "{manifest}");
    assert!(manifest.contains(&format!("\nimage {} {size} {}\n", sha256(&image), image.display())), "{manifest}");
    assert!(manifest.contains("\nbound-mib 32\n"), "{manifest}");
    assert_eq!(std::fs::read_to_string(s.stage().join("images")).unwrap(), format!("{}\n", image.display()));
    assert_eq!(std::fs::read(s.stage().join("ocetool.toml")).unwrap(), std::fs::read(s.config()).unwrap());
    // Root's alone, as apply wants it in the initramfs too.
    let mode = std::fs::metadata(s.stage().join("ocetool.toml")).unwrap().permissions().mode();
    assert_eq!(mode & 0o022, 0, "{mode:o}");

    // In the initramfs: the profile and its reset before be2net, the flash deferred; the line is
    // in the kernel log at notice priority, and the manifest is kept for after boot.
    let kmsg = s.boot_initramfs();
    assert!(kmsg.starts_with("<5>ocetool-apply: applied ") && kmsg.contains("changed=true"), "{kmsg}");
    assert!(kmsg.contains("deferred=true"), "{kmsg}");
    assert_eq!(s.report()["adapters"][0]["roce_enabled"], true);
    assert_eq!(std::fs::read_to_string(s.path("run/initramfs-manifest")).unwrap(), manifest);
    let last_run = std::fs::read_to_string(s.path("run/last-run")).unwrap();
    assert!(last_run.contains("\nwhere=initramfs\nstate=done\nrc=0\n"), "{last_run}");

    // After boot, be2net loaded: the deferred flash is what is left for the unit, and it says
    // that it needs the adapter from be2net for it; here (no be2net holds the emulator) it flashes.
    let line = s.service();
    assert!(line.contains("the hook's run before be2net (initramfs) deferred a firmware flash"), "{line}");
    assert!(line.contains("unbind = true") && line.contains("applied"), "{line}");
    assert_eq!(s.report()["adapters"][0]["firmware"]["stored"], NEW);
}

#[test]
fn after_an_initramfs_run_that_failed_the_service_says_so_before_its_own_apply() {
    let s = Setup::new();
    s.write_config(false);
    s.build(None);
    // SET_ACTIVE_PROFILE refused by the firmware (MCC_STATUS_FAILED) at boot, in the initramfs.
    let fault = common::ocetool(&["--device", &s.dev, "emulator", "fault", "set", "status=1:168:1"]);
    assert_eq!(fault.code, 0, "{}", fault.stderr);
    let kmsg = s.boot_initramfs();
    assert!(kmsg.starts_with("<3>ocetool-apply: apply of ") && kmsg.contains("failed (exit 1;"), "{kmsg}");
    assert_eq!(common::ocetool(&["--device", &s.dev, "emulator", "fault", "clear", "--all"]).code, 0);
    let line = s.service();
    assert!(line.contains("the hook's run before be2net (initramfs) did not apply"), "{line}");
    assert!(line.contains("applied") && line.contains("changed=true"), "{line}");
}

#[test]
fn after_an_initramfs_that_did_everything_the_service_has_nothing_left() {
    let s = Setup::new();
    s.write_config(false);
    s.build(None);
    s.boot_initramfs();
    let report = std::fs::read(s.path("run/last-apply.json")).unwrap();
    let line = s.service();
    assert!(line.contains("the hook applied") && line.contains("(initramfs: applied "), "{line}");
    assert!(line.contains("nothing is left for this unit"), "{line}");
    // No apply of its own: the initramfs' report stays, byte for byte.
    assert_eq!(std::fs::read(s.path("run/last-apply.json")).unwrap(), report);
}

#[test]
fn an_image_above_the_bound_stays_out_the_profile_still_applies_and_the_service_says_so() {
    let s = Setup::new();
    s.write_config(true);
    let image = s.path("new.ufi");
    let warnings = s.build(Some(0));
    assert!(warnings.contains("stays out of the initramfs, above its 0 MiB for images"), "{warnings}");
    let manifest = s.manifest();
    let size = std::fs::metadata(&image).unwrap().len();
    assert!(manifest.contains(&format!("\nleft-out {size} {}\n", image.display())), "{manifest}");
    assert_eq!(std::fs::read_to_string(s.stage().join("images")).unwrap(), "");
    let staged = std::fs::read_to_string(s.stage().join("ocetool.toml")).unwrap();
    assert!(
        staged.contains("\n# left out of the initramfs, above its 0 MiB for images: firmware = \"new.ufi\""),
        "{staged}"
    );

    let kmsg = s.boot_initramfs();
    assert!(kmsg.contains("applied") && kmsg.contains("deferred=false"), "{kmsg}");
    assert_eq!(s.report()["adapters"][0]["roce_enabled"], true, "the profile was set before be2net");

    let line = s.service();
    assert!(line.contains(&format!("{} ({size} bytes) was left out of the initramfs", image.display())), "{line}");
    assert!(line.contains("unbind = true"), "{line}");
    // And the unit ran its own apply, which flashes the image (no be2net holds the emulator).
    let report = s.report();
    assert_eq!(report["adapters"][0]["firmware"]["stored"], NEW, "{report}");
}

#[test]
fn a_refused_configuration_stays_out_and_the_initramfs_says_why_be2net_loads_unconfigured() {
    let s = Setup::new();
    s.write_config(false);
    std::fs::set_permissions(s.config(), std::fs::Permissions::from_mode(0o666)).unwrap();
    let warnings = s.build(None);
    assert!(
        warnings.contains("stays out of the initramfs") && warnings.contains("writable by group and others"),
        "{warnings}"
    );
    let manifest = s.manifest();
    assert!(manifest.contains("\nconfig-state refused\nreason ocetool apply refuses it (exit 4): "), "{manifest}");
    assert!(!s.stage().join("ocetool.toml").exists());

    let kmsg = s.boot_initramfs();
    assert!(kmsg.starts_with("<3>ocetool-apply: this initramfs holds no configuration: "), "{kmsg}");
    assert!(kmsg.contains("writable by group and others") && kmsg.contains("update-initramfs -u"), "{kmsg}");
}

#[test]
fn a_firmware_path_in_a_form_the_builder_does_not_read_keeps_the_configuration_out() {
    let s = Setup::new();
    s.write_config(false);
    // Valid TOML that apply reads, but not the `firmware = "PATH"` line the builder reads.
    let text = "[[adapter]]\nmatch = { all = true }\nprofile = \"roce\"\nfirmware = \"new\\u002eufi\"\n";
    std::fs::write(s.config(), text).unwrap();
    s.build(None);
    let manifest = s.manifest();
    assert!(manifest.contains("\nconfig-state refused\nreason line 4 names a firmware image in a form"), "{manifest}");
    assert!(!s.stage().join("ocetool.toml").exists());
}

#[test]
fn the_service_says_loudly_when_the_initramfs_holds_another_copy_of_the_configuration() {
    let s = Setup::new();
    s.write_config(false);
    s.build(None);
    s.boot_initramfs();
    // Edited after the initramfs was built, and update-initramfs not run.
    std::fs::write(s.config(), "[[adapter]]\nmatch = { all = true }\nprofile = \"nic\"\nactivate = \"reset\"\n")
        .unwrap();
    let line = s.service();
    assert!(line.contains("the initramfs holds another copy of") && line.contains("update-initramfs -u"), "{line}");
    // Then its own apply runs (here it can: no be2net holds the emulated card).
    assert!(line.contains("applied"), "{line}");
}

#[test]
fn the_service_says_loudly_when_be2net_was_loaded_by_an_initramfs_without_the_hook() {
    let s = Setup::new();
    s.write_config(false);
    // No run of the hook this boot, and be2net loaded: an initramfs from before ocetool.
    let line = s.service();
    assert!(line.contains("from an initramfs without ocetool's hook"), "{line}");
    assert!(line.contains("was not applied before be2net: update-initramfs -u"), "{line}");
}

#[test]
fn the_service_says_when_the_initramfs_was_built_without_a_configuration() {
    let s = Setup::new();
    s.build(None);
    assert!(s.manifest().contains("\nconfig-state none\n"));
    // The hook runs in the initramfs, finds nothing to apply there, and says nothing.
    assert_eq!(s.boot_initramfs(), "");
    s.write_config(false);
    let line = s.service();
    assert!(line.contains("the initramfs was built when") && line.contains("did not exist"), "{line}");
}
