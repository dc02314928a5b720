//! Opening an adapter for one command: with the device selected and locked (`device.rs`), open
//! the PCI function (emulator, VFIO or sysfs), bring up the bootstrap mailbox, and run a job
//! generic over the function type (design.md §2: monomorphised, no `Box<dyn>`).

use std::sync::Arc;
use std::time::Duration;

use oce_mailbox::{BootstrapMailbox, SystemClock, Timeouts};
use oce_pci::handoff::{Plan, Target};
use oce_pci::{Backend, HandOff, HandOffOptions, KernelSysfs, PciAddress, PciError, PciFunction};
use oce_pci::{SysfsFunction, VfioFunction, backend, signals};

use crate::args::GlobalArgs;
use crate::commands::emulator::state::{open_emulator, print_events};
use crate::device::{DeviceSpec, check_supported, lock_device, select_device};
use crate::error::{CliError, CliResult, ErrorCode, mailbox_error, pci_error, stopped};
use crate::handoff::{HandOffJson, Handed, confirm_unbind, refuse_reset_under_drivers, repair_leftover};

/// An adapter ready for commands.
#[derive(Debug)]
pub struct Session<F: PciFunction> {
    /// The mailbox, after POST, fw_init and FUNCTION_RESET.
    pub mbox: BootstrapMailbox<F>,
    /// The device as selected.
    pub device: DeviceSpec,
}

/// Work that runs on any kind of adapter.
pub trait Job {
    /// What the job returns.
    type Output;
    /// Runs the job on an initialised adapter.
    fn run<F: PciFunction>(self, session: &mut Session<F>) -> CliResult<Self::Output>;

    /// False for a job that must work on an adapter that is not ready (a hung POST, an
    /// unrecoverable error): the session then only maps the BARs and the job brings the firmware
    /// interface up itself. `reset` is that job: it is the remedy.
    fn needs_ready_adapter(&self) -> bool {
        true
    }

    /// True for a job that resets the chip, restarting every function of the card: on a real
    /// adapter it is refused while another function of the card stays on a host driver through
    /// it ([`refuse_reset_under_drivers`]).
    fn resets_the_chip(&self) -> bool {
        false
    }
}

/// Whether a command may take a PCI function from its kernel driver (design.md §5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unbind {
    /// Never: a bound function is refused.
    No,
    /// With `--unbind`: confirmed first (asked on a terminal, `--yes` in a script).
    Ask,
    /// Already confirmed elsewhere (`unbind = true` in `apply`'s configuration).
    Confirmed,
}

/// Selects, locks and opens the device, then runs `job` on it.
pub fn run_job<J: Job>(global: &GlobalArgs, job: J) -> CliResult<Handed<J::Output>> {
    let unbind = if global.unbind { Unbind::Ask } else { Unbind::No };
    run_job_on(global, &select_device(global)?, unbind, job)
}

/// Locks and opens `spec`, then runs `job` on it.
pub fn run_job_on<J: Job>(
    global: &GlobalArgs,
    spec: &DeviceSpec,
    unbind: Unbind,
    job: J,
) -> CliResult<Handed<J::Output>> {
    if let DeviceSpec::Pci(addr) = spec {
        check_supported(&global.roots(), *addr)?;
    }
    let _lock = lock_device(global, spec)?;
    match spec {
        DeviceSpec::Emulator(dir) => {
            let emu = open_emulator(dir)?;
            let out = open_session(emu.clone(), spec.clone(), timeouts(global), job.needs_ready_adapter())
                .and_then(|mut s| job.run(&mut s));
            if global.verbose >= 3 {
                print_events(&emu);
            }
            finish(out).map(Handed::without)
        }
        DeviceSpec::Pci(addr) => run_on_pci(global, *addr, spec, unbind, job),
    }
}

/// The real-hardware path: give back what a killed ocetool's hand-off left on the adapter, choose
/// the backend (VFIO with an IOMMU group, sysfs without), hand the adapter's functions over as
/// that backend needs them (design.md §5), open the function, run the job, and give every
/// function back to its driver on every path.
fn run_on_pci<J: Job>(
    global: &GlobalArgs,
    addr: PciAddress,
    spec: &DeviceSpec,
    unbind: Unbind,
    job: J,
) -> CliResult<Handed<J::Output>> {
    let roots = global.roots();
    let repaired = repair_leftover(&roots, addr)?;
    let choice = backend::choose(&roots, addr, global.backend.request()).map_err(|e| pci_error("", &e))?;
    let target = match choice.backend {
        Backend::Vfio => Target::VfioPci,
        Backend::Sysfs => Target::Detached,
    };
    let plan = Plan::new(addr, &roots, target, unbind != Unbind::No)
        .map_err(|e| pci_error(&format!("cannot take {addr} for ocetool"), &e))?;
    if job.resets_the_chip() {
        refuse_reset_under_drivers(&roots, &plan)?;
    }
    if unbind == Unbind::Ask {
        confirm_unbind(global, &plan)?;
    }
    tracing::info!(%addr, backend = %choice.backend, moves = plan.moves.len(), "handing the adapter over");
    let handoff = HandOff::execute(plan, &roots, HandOffOptions::default().timeout, Arc::new(KernelSysfs))
        .map_err(|e| pci_error(&format!("cannot take {addr} for ocetool"), &e))?;
    let record = HandOffJson::new(&choice, handoff.moved(), repaired);
    let opened = |e: PciError| pci_error(&format!("cannot open {addr} through the {} backend", choice.backend), &e);
    let initialize = job.needs_ready_adapter();
    let out = signals::check().map_err(|e| pci_error("", &e)).and_then(|()| match choice.backend {
        Backend::Vfio => VfioFunction::open(&handoff)
            .map_err(opened)
            .and_then(|func| open_session(func, spec.clone(), timeouts(global), initialize))
            .and_then(|mut session| job.run(&mut session)),
        Backend::Sysfs => SysfsFunction::open(&handoff)
            .map_err(opened)
            .and_then(|func| open_session(func, spec.clone(), timeouts(global), initialize))
            .and_then(|mut session| job.run(&mut session)),
    });
    tracing::info!(%addr, "giving the adapter's functions back to their drivers");
    let restored = handoff.restore().map_err(|e| {
        pci_error(&format!("{addr} could not be given back to its driver"), &e)
            .hint("check `ls -l /sys/bus/pci/devices/ADDR/driver`; `echo ADDR > /sys/bus/pci/drivers_probe` rebinds it")
    });
    match (finish(out), restored) {
        (Ok(v), Ok(())) => Ok(Handed { output: v, handoff: Some(record) }),
        (Err(e), Ok(())) | (Ok(_), Err(e)) => Err(e),
        (Err(mut e), Err(r)) => {
            e.causes.push(r.message);
            Err(e)
        }
    }
}

/// Turns a stop request that arrived while the job ran into exit 130 / 143: the command in
/// flight finished, the adapter is consistent, and rerunning resumes.
fn finish<T>(out: CliResult<T>) -> CliResult<T> {
    match (signals::pending(), out) {
        (Some(signal), Ok(_)) => {
            Err(stopped(signal)
                .hint("the command had finished and the adapter is consistent; check with `ocetool query`"))
        }
        (_, out) => out,
    }
}

/// Stops before a change when a stop request (Ctrl-C, SIGTERM) has arrived: nothing has been
/// written yet, so the adapter is exactly as it was and the command can simply be run again.
pub fn stop_point(what: &str) -> CliResult<()> {
    signals::check()
        .map_err(|e| pci_error("", &e).hint(&format!("nothing was changed; run the command again to {what}")))
}

/// The driver's timeouts, from `--post-timeout` and `--command-timeout`.
pub fn timeouts(global: &GlobalArgs) -> Timeouts {
    let secs = |v: f64, default: Duration| Duration::try_from_secs_f64(v.max(0.0)).unwrap_or(default);
    let d = Timeouts::default();
    Timeouts { post: secs(global.post_timeout, d.post), ready: secs(global.command_timeout, d.ready) }
}

/// Brings up the mailbox on `func`: SLI_INTF check and BAR mapping, then (when `initialize`)
/// POST wait, UE check, fw_init and FUNCTION_RESET.
pub fn open_session<F: PciFunction>(
    func: F,
    device: DeviceSpec,
    timeouts: Timeouts,
    initialize: bool,
) -> CliResult<Session<F>> {
    let mut mbox = BootstrapMailbox::open(func, Arc::new(SystemClock))
        .map_err(|e| mailbox_error("cannot open the adapter", &e))?
        .with_timeouts(timeouts)
        .with_stop_check(|| signals::pending().is_some());
    if initialize {
        mbox.initialize().map_err(|e| mailbox_error("cannot initialise the adapter's firmware interface", &e))?;
    }
    Ok(Session { mbox, device })
}

/// Refuses an operation that changes the adapter when the function is a virtual function: the
/// profile, reset and flash commands belong to the physical function (spec/protocol.md §5.9).
pub fn require_physical_function<F: PciFunction>(session: &Session<F>, what: &str) -> CliResult<()> {
    if session.mbox.is_virtual_function() {
        return Err(CliError::new(
            ErrorCode::UnsupportedDevice,
            format!(
                "{} is a virtual function: {what} works on the adapter's physical function; use the PF's address",
                session.device.describe()
            ),
        ));
    }
    Ok(())
}
