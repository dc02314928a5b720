//! `/run/reboot-required`: raised when a command leaves the adapter needing a reset, lowered when
//! a reset (or `apply`) activates everything; never touched for the emulator unless asked. The
//! tests ask with `OCETOOL_REBOOT_REQUIRED` (the flag's path) and keep ocetool's list in a
//! temporary `OCETOOL_RUN_DIR`.

mod common;

use std::path::{Path, PathBuf};

use common::{Run, fresh};
use oce_firmware::build::ImageBuilder;

struct Host {
    flag: PathBuf,
    run_dir: PathBuf,
}

impl Host {
    fn new(dir: &Path) -> Self {
        Self { flag: dir.join("reboot-required"), run_dir: dir.join("run") }
    }

    fn ocetool(&self, args: &[&str]) -> Run {
        let run: Run = common::command()
            .env("OCETOOL_REBOOT_REQUIRED", &self.flag)
            .env("OCETOOL_RUN_DIR", &self.run_dir)
            .args(args)
            .output()
            .unwrap()
            .into();
        assert_eq!(run.code, 0, "{args:?}: {run:?}");
        assert!(!run.stderr.contains("warning"), "{}", run.stderr);
        run
    }

    fn pkgs(&self) -> Option<String> {
        std::fs::read_to_string(self.flag.with_extension("pkgs")).ok()
    }

    fn raised(&self) -> bool {
        let raised = self.flag.exists();
        assert_eq!(raised, self.pkgs().is_some_and(|p| p.lines().any(|l| l == "ocetool")), "{:?}", self.pkgs());
        raised
    }
}

#[test]
fn set_profile_raises_it_and_the_reset_lowers_it() {
    let (d, dev) = fresh();
    let host = Host::new(d.path());
    host.ocetool(&["--device", &dev, "set-profile", "roce", "--dry-run"]);
    assert!(!host.raised(), "a dry run changes nothing");
    host.ocetool(&["--device", &dev, "set-profile", "roce", "--yes"]);
    assert!(host.raised());
    assert_eq!(std::fs::read_to_string(&host.flag).unwrap(), "*** System restart required ***\n");
    assert_eq!(host.pkgs().as_deref(), Some("ocetool\n"));
    host.ocetool(&["--device", &dev, "reset", "--yes"]);
    assert!(!host.raised());
    assert!(!host.flag.with_extension("pkgs").exists());
}

#[test]
fn asking_for_the_running_profile_again_lowers_it() {
    let (d, dev) = fresh();
    let host = Host::new(d.path());
    host.ocetool(&["--device", &dev, "set-profile", "roce", "--yes"]);
    assert!(host.raised());
    host.ocetool(&["--device", &dev, "set-profile", "nic", "--yes"]);
    assert!(!host.raised(), "nothing is pending any more");
}

#[test]
fn a_firmware_update_raises_it_and_apply_with_a_reset_lowers_it() {
    let (d, dev) = fresh();
    let host = Host::new(d.path());
    let image = d.path().join("new.ufi");
    std::fs::write(&image, ImageBuilder::new("11.2.0.0").build().unwrap()).unwrap();
    host.ocetool(&["--device", &dev, "fw", "update", image.to_str().unwrap(), "--yes"]);
    assert!(host.raised());
    let config = d.path().join("ocetool.toml");
    std::fs::write(&config, "[[adapter]]\nmatch = { all = true }\nprofile = \"roce\"\n").unwrap();
    host.ocetool(&["--device", &dev, "apply", "--config", config.to_str().unwrap()]);
    assert!(host.raised(), "activate = \"next-boot\" leaves it pending");
    std::fs::write(&config, "[[adapter]]\nmatch = { all = true }\nprofile = \"roce\"\nactivate = \"reset\"\n").unwrap();
    host.ocetool(&["--device", &dev, "apply", "--config", config.to_str().unwrap()]);
    assert!(!host.raised());
}

#[test]
fn another_package_s_flag_stays() {
    let (d, dev) = fresh();
    let host = Host::new(d.path());
    std::fs::write(&host.flag, "*** System restart required ***\n").unwrap();
    std::fs::write(host.flag.with_extension("pkgs"), "linux-image-amd64\n").unwrap();
    host.ocetool(&["--device", &dev, "set-profile", "roce", "--yes"]);
    assert_eq!(host.pkgs().as_deref(), Some("linux-image-amd64\nocetool\n"));
    host.ocetool(&["--device", &dev, "reset", "--yes"]);
    assert_eq!(host.pkgs().as_deref(), Some("linux-image-amd64\n"));
    assert!(host.flag.exists(), "the kernel's flag is not ocetool's to lower");
}

#[test]
fn the_emulator_leaves_the_host_s_flag_alone_unless_asked() {
    let (d, dev) = fresh();
    let before = std::fs::read("/run/reboot-required").ok();
    let run = common::command()
        .env("OCETOOL_RUN_DIR", d.path().join("run"))
        .args(["--device", &dev, "set-profile", "roce", "--yes"])
        .output()
        .unwrap();
    assert!(run.status.success());
    assert_eq!(std::fs::read("/run/reboot-required").ok(), before, "/run/reboot-required untouched");
    assert!(!d.path().join("run").exists(), "and nothing of ocetool's recorded");
}
