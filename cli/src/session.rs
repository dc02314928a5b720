//! Opening an adapter for one command: select the device, take its lock, open the PCI function
//! (emulator or VFIO), bring up the bootstrap mailbox, and run a job generic over the function
//! type (design.md §2: monomorphised, no `Box<dyn>`).

use std::sync::Arc;
use std::time::Duration;

use oce_mailbox::{BaseStatus, BootstrapMailbox, MailboxError, SystemClock, Timeouts};
use oce_pci::PciFunction;

use crate::args::GlobalArgs;
use crate::device::{DeviceLock, DeviceSpec, lock_path};
use crate::emulator::open_emulator;
use crate::error::{CliError, CliResult, ErrorKind};

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
}

/// The device the user selected with `--device` / `OCETOOL_DEVICE`.
pub fn select_device(global: &GlobalArgs) -> CliResult<DeviceSpec> {
    match &global.device {
        Some(s) => DeviceSpec::parse(s),
        None => Err(CliError::new(
            ErrorKind::NoDevice,
            "no adapter selected: pass --device 0000:BB:DD.F (see `ocetool list`), or --device emu to use the emulator",
        )),
    }
}

/// Takes the device's lock for the length of the command.
pub fn lock_device(global: &GlobalArgs, spec: &DeviceSpec) -> CliResult<DeviceLock> {
    let wait = Duration::try_from_secs_f64(global.wait.max(0.0)).unwrap_or(Duration::ZERO);
    DeviceLock::acquire(&lock_path(spec), wait, &spec.describe())
}

/// Selects, locks and opens the device, then runs `job` on it.
pub fn run_job<J: Job>(global: &GlobalArgs, job: J) -> CliResult<J::Output> {
    let spec = select_device(global)?;
    let _lock = lock_device(global, &spec)?;
    match &spec {
        DeviceSpec::Emulator(dir) => {
            let emu = open_emulator(dir)?;
            let mut session = open_session(emu, spec.clone(), timeouts(global))?;
            job.run(&mut session)
        }
        DeviceSpec::Pci(addr) => Err(CliError::new(
            ErrorKind::NoDevice,
            format!(
                "{addr}: real PCI adapters are not supported yet by this build (the VFIO backend is not wired in); use --device emu"
            ),
        )),
    }
}

/// The driver's timeouts, with the POST wait from `--post-timeout`.
pub fn timeouts(global: &GlobalArgs) -> Timeouts {
    let post = Duration::try_from_secs_f64(global.post_timeout.max(0.0)).unwrap_or(Timeouts::default().post);
    Timeouts { post, ..Timeouts::default() }
}

/// Brings up the mailbox on `func`: SLI_INTF check, BAR mapping, POST wait, fw_init, FUNCTION_RESET.
pub fn open_session<F: PciFunction>(func: F, device: DeviceSpec, timeouts: Timeouts) -> CliResult<Session<F>> {
    let mut mbox = BootstrapMailbox::open(func, Arc::new(SystemClock))
        .map_err(|e| mailbox_error("cannot open the adapter", &e))?
        .with_timeouts(timeouts);
    mbox.initialize().map_err(|e| mailbox_error("cannot initialise the adapter's firmware interface", &e))?;
    Ok(Session { mbox, device })
}

/// Refuses an operation that changes the adapter when the function is a virtual function: the
/// profile, reset and flash commands belong to the physical function (spec/protocol.md §5.9).
pub fn require_physical_function<F: PciFunction>(session: &Session<F>, what: &str) -> CliResult<()> {
    if session.mbox.is_virtual_function() {
        return Err(CliError::new(
            ErrorKind::NoDevice,
            format!(
                "{} is a virtual function: {what} works on the adapter's physical function; use the PF's address",
                session.device.describe()
            ),
        ));
    }
    Ok(())
}

/// Turns a mailbox error into a one-line CLI error with advice.
pub fn mailbox_error(context: &str, e: &MailboxError) -> CliError {
    let hint = match e {
        MailboxError::DeviceGone { .. } | MailboxError::ConfigGone => {
            Some("check that the adapter is still present (lspci) and power-cycle it")
        }
        MailboxError::NotReady { .. } => {
            Some("the firmware is hung or busy: run `ocetool reset`, or power-cycle the adapter")
        }
        MailboxError::PostTimeout { .. } | MailboxError::PostError { .. } => {
            Some("the firmware did not boot: power-cycle the adapter; if it persists, the flash may need recovery")
        }
        MailboxError::UnrecoverableError { .. } => {
            Some("the adapter needs a reset: run `ocetool reset` or power-cycle it")
        }
        MailboxError::InvalidCompletion { .. } | MailboxError::TagMismatch { .. } | MailboxError::Malformed { .. } => {
            Some("the firmware answered out of protocol; retry, and reset the adapter if it persists")
        }
        MailboxError::CommandFailed { status, .. } if status.base == BaseStatus::UnauthorizedRequest => {
            Some("this PCI function may not do that (a virtual function?): use the adapter's physical function")
        }
        MailboxError::CommandFailed { status, .. } if status.base == BaseStatus::IllegalRequest => {
            Some("the adapter's firmware does not implement this command")
        }
        _ => None,
    };
    let err = CliError::from_error(ErrorKind::Failed, context, e);
    match hint {
        Some(h) => err.hint(h),
        None => err,
    }
}
