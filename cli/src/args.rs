//! The command line: global device and output flags, and one subcommand per job (design.md §7).

use std::path::PathBuf;

use clap::{Args, Subcommand};

use crate::help;

/// What `ocetool --help` begins with.
pub const ABOUT: &str = "Daemon-free toolkit for the Emulex OneConnect OCe14000 (Skyhawk): query the adapter, switch it \
to a RoCE profile, and inspect and flash firmware — on real hardware through VFIO, or on the built-in emulator";

/// The parsed command line: the global options and the subcommand.
///
/// The clap definition is assembled by hand rather than derived, so that start-up can build only
/// the subcommand a process runs (`crate::parse`); [`Cli::command`] is the whole tree (help,
/// completions, man pages).
#[derive(Debug)]
pub struct Cli {
    pub global: GlobalArgs,
    pub command: Command,
}

impl Cli {
    /// The top of the command line: name, version, about, the global options, and what
    /// `ocetool --help` ends with; no subcommands.
    pub fn root() -> clap::Command {
        let top = clap::Command::new("ocetool")
            .version(env!("CARGO_PKG_VERSION"))
            .max_term_width(100)
            .after_help(AFTER_HELP)
            .subcommand_required(true)
            .arg_required_else_help(true);
        // After the global options: their derive sets the command's about from their doc.
        GlobalArgs::augment_args(top).about(ABOUT).long_about(None)
    }
}

impl clap::CommandFactory for Cli {
    /// The whole command line, every option shown wherever it is accepted (completions, man
    /// pages).
    fn command() -> clap::Command {
        crate::parse::whole(Self::root(), crate::parse::Copies::Shown)
    }

    fn command_for_update() -> clap::Command {
        Self::command()
    }
}

impl clap::FromArgMatches for Cli {
    fn from_arg_matches(matches: &clap::ArgMatches) -> Result<Self, clap::Error> {
        Self::from_arg_matches_mut(&mut matches.clone())
    }

    fn from_arg_matches_mut(matches: &mut clap::ArgMatches) -> Result<Self, clap::Error> {
        Ok(Self { global: crate::parse::global_args(matches)?, command: Command::from_arg_matches_mut(matches)? })
    }

    fn update_from_arg_matches(&mut self, matches: &clap::ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

impl clap::Parser for Cli {}

/// What `ocetool --help` ends with: examples, and the exit codes scripts rely on.
pub const AFTER_HELP: &str = "\
Examples:
  ocetool list                                  find adapters and whether ocetool can drive them
  ocetool --device 03:00.0 query                firmware, profile, RoCE state, ports
  ocetool --device 03:00.0 --unbind set-profile roce && ocetool --device 03:00.0 --unbind reset
  ocetool fw verify image.ufi --device 03:00.0  would `fw update` accept this image there?
  ocetool apply --dry-run                       what /etc/ocetool/ocetool.toml would change
  ocetool --device emu query --json             rehearse on the built-in emulator

Exit codes:
  0 success (also: nothing to change)   1 the operation failed (device or firmware)
  2 usage (bad arguments, config or file)   3 no such or unsupported device
  4 refused by a safety check (no --yes, incompatible image, downgrade, driver bound,
    a file or directory someone else could change)
  5 device busy (another ocetool)   130 / 143 stopped by SIGINT / SIGTERM

With --json every result and error is one JSON document on stdout with \"schema\": \"ocetool/1\";
an error names its kind and its code (error.code: `man ocetool`, EXIT STATUS). JSON Schemas of
every document: /usr/share/ocetool/schemas/.";

/// Flags every subcommand accepts: defined on the top level and copied into every subcommand
/// (`crate::parse`), so they go before or after the subcommand; the hidden ones (fake trees for
/// tests) only before it.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Global options")]
pub struct GlobalArgs {
    /// The adapter: a PCI address (0000:03:00.0 or 03:00.0), `emu` for the emulator in the
    /// default state directory, or `emu:DIR` for an emulator with its state in DIR.
    #[arg(long, short = 'd', env = "OCETOOL_DEVICE", value_name = "DEVICE")]
    pub device: Option<String>,
    /// Print one JSON document on stdout (errors too), and nothing else.
    #[arg(long)]
    pub json: bool,
    /// Print nothing but errors: on success no report on stdout and nothing on stderr (no
    /// warnings, no progress); with --json the document is printed as ever.
    #[arg(long, short = 'q', conflicts_with = "verbose")]
    pub quiet: bool,
    /// Answer yes to confirmations (required for changes when stdin is not a terminal).
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// Take the function from its kernel driver (e.g. be2net) for the duration of the command —
    /// with VFIO, every function of the adapter in its IOMMU group, to vfio-pci — and give each
    /// back afterwards; the confirmation names what goes down.
    #[arg(long)]
    pub unbind: bool,
    /// How to reach a real adapter: `vfio` (through vfio-pci; needs the IOMMU), `sysfs` (BARs
    /// through /sys/bus/pci/devices/*/resourceN and DMA to physical addresses of a huge page:
    /// for hosts without an IOMMU; root only, and the adapter's DMA is not confined), or `auto`:
    /// VFIO when the function has an IOMMU group, sysfs otherwise. `ocetool list` shows which
    /// each function would use, and why.
    #[arg(long, value_enum, value_name = "BACKEND", default_value = "auto")]
    pub backend: BackendArg,
    /// Root of the sysfs tree (tests point it at a fake tree; hidden from --help).
    #[arg(long, value_name = "DIR", default_value = "/sys", hide = true)]
    pub sysfs_root: PathBuf,
    /// Root of the device nodes (`/dev/vfio/...`; tests point it at a fake tree; hidden from
    /// --help).
    #[arg(long, value_name = "DIR", default_value = "/dev", hide = true)]
    pub dev_root: PathBuf,
    /// Seconds to wait for another ocetool working on the same adapter before giving up.
    #[arg(long, value_name = "SECS", default_value_t = 3.0)]
    pub wait: f64,
    /// Seconds to wait for the adapter's firmware to finish POST (after a reset, or on an
    /// adapter that is still booting).
    #[arg(long, value_name = "SECS", default_value_t = 60.0)]
    pub post_timeout: f64,
    /// Seconds to wait for the firmware at each step of a mailbox command (long commands such as
    /// flash writes always get at least their own, longer limit).
    #[arg(long, value_name = "SECS", default_value_t = 4.0)]
    pub command_timeout: f64,
    /// More detail on stderr: `-v` the cause chain of errors and the steps taken (lock, driver
    /// hand-off, POST wait, firmware initialisation, reset, ...); `-vv` also one line per
    /// firmware command (subsystem, opcode, name, version, lengths, statuses, time); `-vvv` on an
    /// emulated adapter also its event log (every command it executed, resets, faults that
    /// fired).
    #[arg(long, short = 'v', action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// Append every firmware command (with its arguments and result) and every step to FILE as
    /// JSON lines, for support bundles and boot hooks; a file that cannot be written, a symbolic
    /// link or another user's file costs a warning, never the operation.
    #[arg(long, value_name = "FILE")]
    pub log_file: Option<PathBuf>,
    /// Root of the procfs tree (`doctor`, the sysfs backend and `list` read /proc; tests point it
    /// at a fake tree).
    #[arg(long, value_name = "DIR", default_value = "/proc", hide = true)]
    pub proc_root: PathBuf,
}

impl GlobalArgs {
    /// The sysfs, /dev and /proc roots (fake trees in tests), and the runtime folder where a
    /// driver hand-off is recorded while it lasts: `$OCETOOL_RUN_DIR` (the boot hook's
    /// variable; its report lives there too), else `/run/ocetool`.
    pub fn roots(&self) -> oce_pci::Roots {
        let run = std::env::var_os("OCETOOL_RUN_DIR")
            .filter(|v| !v.is_empty())
            .map_or_else(|| PathBuf::from(oce_pci::sysfs::RUN_DIR), PathBuf::from);
        oce_pci::Roots::new(&self.sysfs_root, &self.dev_root).with_proc(&self.proc_root).with_run(run)
    }
}

/// The values of `--backend`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum BackendArg {
    /// VFIO when the function has an IOMMU group, sysfs otherwise.
    Auto,
    /// Through vfio-pci, the IOMMU confining the adapter's DMA.
    Vfio,
    /// Through sysfs resourceN and physical addresses, for hosts without an IOMMU (root only).
    Sysfs,
}

impl BackendArg {
    /// The library's request.
    pub fn request(self) -> oce_pci::backend::Request {
        use oce_pci::backend::Request;
        match self {
            Self::Auto => Request::Auto,
            Self::Vfio => Request::Force(oce_pci::Backend::Vfio),
            Self::Sysfs => Request::Force(oce_pci::Backend::Sysfs),
        }
    }
}

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum Command {
    /// Find every OneConnect function in sysfs, grouped by adapter, and say which ocetool can
    /// drive (and why not).
    List {
        /// Also list PCI functions that are not OneConnect (e.g. IOMMU group members).
        #[arg(long)]
        all: bool,
    },
    /// Report firmware (with the boot code, UNDI and NC-SI versions), model, serial, VPD, ports,
    /// function mode, RoCE state and profiles.
    #[command(after_help = help::QUERY)]
    Query {
        /// Every adapter ocetool can see, in one report: each OneConnect adapter in sysfs (by its
        /// first physical function) and the emulators (the default one once created, and the one
        /// --device emu:DIR names). An adapter that fails gets its error (with its code) in its
        /// entry and does not stop the others; exit 1 when one did.
        #[arg(long)]
        all: bool,
    },
    /// List the adapter's profiles and which one is active and next.
    Profiles,
    /// Choose the profile the adapter runs after its next reset (nic, roce, or a profile ID).
    #[command(after_help = help::SET_PROFILE)]
    SetProfile(SetProfileArgs),
    /// Chip soft reset: the adapter reboots its firmware, activating a pending profile or
    /// firmware. Every PCI function of the adapter restarts.
    #[command(after_help = help::RESET)]
    Reset {
        /// Show what the reset would activate, and change nothing.
        #[arg(long)]
        dry_run: bool,
        /// Reset even when the flash would not boot (neither boot section of its directory
        /// passes its CRC); the adapter then fails POST.
        #[arg(long)]
        force: bool,
    },
    /// Check the chain from the host to the adapter: IOMMU, vfio-pci, IOMMU group, lockdown,
    /// locked memory, drivers, pending changes, boot sections, RoCE, PFC and NFS over RDMA. Exit 0 when no check
    /// fails, 1 when one does (the report is printed either way).
    #[command(after_help = help::DOCTOR)]
    Doctor,
    /// Show the adapter's DCBX configuration (operational and administrative) as ocrdma reads
    /// it: PFC priorities and sync, the RoCE application priority, the RoCE priority in force.
    Dcb,
    /// Save the firmware's diagnostic dump (what `ethtool -w` returns on be2net) to a file.
    Dump {
        /// Where to write the dump (replaced atomically).
        #[arg(long, short = 'o', value_name = "FILE")]
        output: PathBuf,
    },
    /// Show the port this function drives: link, PHY, speeds, the transceiver module, the locate
    /// LED; on an emulated adapter's cable, the peer's MAC.
    Port,
    /// Switch the port's locate LED (beacon) on or off.
    Locate {
        /// Start blinking.
        #[arg(long, conflicts_with = "off", required_unless_present = "off")]
        on: bool,
        /// Stop blinking.
        #[arg(long)]
        off: bool,
    },
    /// Send any firmware command and print the statuses and the response bytes. A command that
    /// is not a known read-only query is confirmed like every change (--yes in a script).
    #[command(after_help = help::RAW)]
    Raw(RawArgs),
    /// Firmware images (.ufi): inspect, verify, update the adapter, build a synthetic image.
    Fw {
        #[command(subcommand)]
        action: FwAction,
    },
    /// Bring every adapter to the state the configuration asks for (firmware, profile,
    /// activation), idempotently; what runs at boot before be2net. Never asks: the
    /// configuration is the confirmation. With --device, only that adapter.
    #[command(after_help = help::APPLY)]
    Apply {
        /// The configuration file. It, the images it names and every directory above them must
        /// be writable by no one but root (or you); a relative image path is the file's
        /// directory's.
        #[arg(long, value_name = "FILE", default_value = "/etc/ocetool/ocetool.toml")]
        config: PathBuf,
        /// Show what would change, and change nothing.
        #[arg(long)]
        dry_run: bool,
        /// Start a firmware flash only when its worst case (40 s per 32 KiB chunk, the
        /// protocol's WRITE_FLASHROM timeout) fits in what is left of SECS, counted from the
        /// start of `apply`; defer (and report) one that does not. 0 defers every flash: the
        /// modprobe hook's setting, whose time udev bounds.
        #[arg(long, value_name = "SECS")]
        firmware_budget: Option<u64>,
    },
    /// Give back the functions an ocetool that was killed (SIGKILL, a crash) left with vfio-pci
    /// or held unbound: every driver hand-off still recorded in /run/ocetool is undone (with
    /// --device, that adapter's only), each under its adapter's lock. Every command that opens
    /// an adapter does this for it first; the boot hook runs this after a killed run.
    RestoreDrivers,
    /// Print the shell completion script for bash, zsh, fish, elvish or powershell. Besides
    /// subcommands and options it offers `nic|roce` for set-profile, the fault names for
    /// emulator fault set|clear, and for --device the OneConnect functions in sysfs and `emu`
    /// (bash, zsh, fish; listed when the shell completes).
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Write the man pages into a directory: ocetool.8, one section 8 page per subcommand
    /// (ocetool-apply.8 also documents the boot hook and the unit) and ocetool.toml.5.
    Manpage {
        /// Where to write them.
        #[arg(long, value_name = "DIR")]
        out_dir: PathBuf,
    },
    /// Create, show, power-cycle, fault or serve an emulated adapter.
    Emulator {
        #[command(subcommand)]
        action: EmulatorAction,
    },
}

/// Arguments of `ocetool set-profile`.
#[derive(Debug, Args)]
pub struct SetProfileArgs {
    /// `nic` (the plain NIC profile), `roce` (a NIC+RoCE profile; RoCE-2 when there are
    /// several), or a profile ID from `ocetool profiles`.
    #[arg(value_name = "nic|roce|ID")]
    pub target: oce_mailbox::adapter::ProfileTarget,
    /// Show what would change, and change nothing.
    #[arg(long)]
    pub dry_run: bool,
}

/// Arguments of `ocetool raw`.
#[derive(Debug, Args)]
pub struct RawArgs {
    /// Subsystem number (1 = COMMON, 3 = ETH).
    #[arg(long, value_parser = parse_u8)]
    pub subsystem: u8,
    /// Opcode.
    #[arg(long, value_parser = parse_u8)]
    pub opcode: u8,
    /// Command version.
    #[arg(long, value_parser = parse_u8, default_value = "0")]
    pub version: u8,
    /// Send the command in a separate DMA buffer (one SGE) instead of inside the WRB.
    #[arg(long, requires = "length")]
    pub non_embedded: bool,
    /// Command buffer length in bytes, header included (default: 236 embedded).
    #[arg(long, value_parser = parse_len)]
    pub length: Option<usize>,
    /// Request body after the 16-byte header, as hex (spaces and colons allowed).
    #[arg(long, value_name = "HEX")]
    pub payload: Option<String>,
    /// Header domain byte (0 = this function, n + 1 = its VF n).
    #[arg(long, value_parser = parse_u8, default_value = "0")]
    pub domain: u8,
    /// Seconds the firmware may take.
    #[arg(long, default_value_t = 4)]
    pub timeout: u64,
}

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum FwAction {
    /// Show what an image holds, check it, and list the problems found. No adapter needed.
    Inspect {
        /// The .ufi file.
        file: PathBuf,
    },
    /// Is this image flashable (and, with --device, would `fw update` accept it there)? Exit 0
    /// for yes, 4 for no, with the reasons.
    #[command(after_help = help::FW_VERIFY)]
    Verify {
        /// The .ufi file.
        file: PathBuf,
        /// Count an image older than the firmware on flash as acceptable, as `fw update
        /// --allow-downgrade` would.
        #[arg(long)]
        allow_downgrade: bool,
    },
    /// Flash an image: compatibility and version checks first, then only the sections whose CRC
    /// differs from the adapter's. The new firmware runs after the next reset.
    #[command(after_help = help::FW_UPDATE)]
    Update {
        /// The .ufi file.
        file: PathBuf,
        /// Show the plan (which sections would be written, and why), and change nothing.
        #[arg(long)]
        dry_run: bool,
        /// Allow an image older than the firmware on flash.
        #[arg(long)]
        allow_downgrade: bool,
        /// Rewrite every section, even those the adapter already holds, and flash even when no
        /// write order keeps a bootable firmware on flash at every step.
        #[arg(long)]
        force: bool,
    },
    /// Build a synthetic Skyhawk image (for tests, and to rehearse `fw update` on the emulator).
    Build {
        /// The firmware version the image carries (A.B.C.D).
        #[arg(long)]
        version: String,
        /// Where to write the image.
        #[arg(long, short = 'o', value_name = "FILE")]
        output: PathBuf,
        /// Section sizes: `small` (about 1.4 MiB) or `full` (a 16 MiB flash image).
        #[arg(long, value_enum, default_value = "small")]
        layout: LayoutArg,
        /// The ASIC revision the image targets (`asic_type_rev`).
        #[arg(long, value_parser = parse_u8, default_value = "0x10")]
        asic_type_rev: u8,
    },
}

/// Image layouts `fw build` offers.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum LayoutArg {
    /// About 1.4 MiB: quick tests.
    Small,
    /// A whole 16 MiB flash.
    Full,
}

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum EmulatorAction {
    /// Create a factory-fresh emulated OCe14102 in the state directory (refuses to overwrite).
    Init {
        /// Emulate a virtual function (10df:0728) instead of the physical function.
        #[arg(long)]
        vf: bool,
    },
    /// Show the emulated adapter's identity, flash, profiles and state directory.
    Show,
    /// Cold-boot the emulated adapter: runtime state is lost, POST runs, the next-boot profile
    /// and the firmware on flash become active.
    PowerCycle,
    /// Set, clear or list faults (kept in the state directory until cleared). While `emulator
    /// serve` holds the adapter, the change goes to the running server.
    Fault {
        #[command(subcommand)]
        action: FaultAction,
    },
    /// Serve the emulated adapter to a virtual machine over vfio-user, as a PCI Express device
    /// (10df:0720) a guest's kernel drives; in the foreground, until the VM disconnects or
    /// SIGINT/SIGTERM.
    #[command(after_long_help = SERVE_HELP)]
    Serve {
        /// The Unix socket to listen on: created mode 0600 (only this user may attach), removed
        /// when the server ends; a stale socket left by a killed server is replaced, anything
        /// else at the path is refused. QEMU connects to it as `vfio-user-pci`'s socket. Repeat
        /// it to serve several NIC functions of the one card: the N-th --socket (from 0) serves
        /// PCI function N, on port N (at most one per port: 2 on the emulated OCe14102).
        #[arg(long, value_name = "PATH", required = true)]
        socket: Vec<PathBuf>,
        /// Plug a port into a cable: an AF_UNIX datagram socket bound at PATH, one raw Ethernet
        /// frame a datagram, sent to --wire-peer (QEMU's `-netdev dgram` format, so the peer is
        /// another served adapter or a QEMU NIC). A stale socket at PATH is replaced; one a live
        /// process is bound to is refused. Repeated, the N-th --wire (with the N-th --wire-peer)
        /// cables function N's port; functions past the last --wire have no cable.
        #[arg(long, value_name = "PATH", requires = "wire_peer")]
        wire: Vec<PathBuf>,
        /// The peer's datagram socket, where the port's frames go; it may appear later (frames
        /// wait, and the guest is held back, until it does). One per --wire, in the same order.
        #[arg(long, value_name = "PATH", requires = "wire")]
        wire_peer: Vec<PathBuf>,
        /// Record every frame that crosses the cable, both ways, in FILE (pcap format, for
        /// tcpdump -r or Wireshark); FILE is created or truncated. The N-th --wire-pcap records
        /// the N-th --wire's cable.
        #[arg(long, value_name = "FILE", requires = "wire")]
        wire_pcap: Vec<PathBuf>,
    },
}

/// The end of `ocetool emulator serve --help`: how to attach a VM, and what the server does.
const SERVE_HELP: &str = "\
Attaching QEMU (10.1 or newer, with vfio-user-pci; the server must listen before QEMU starts):

  ocetool --device emu:/var/tmp/oce emulator serve --socket /tmp/oce.sock &
  qemu-system-x86_64 -machine q35,memory-backend=mem -m 1G \\
    -object memory-backend-memfd,id=mem,size=1G,share=on \\
    -device intel-iommu,caching-mode=on \\
    -device '{\"driver\":\"vfio-user-pci\",\"socket\":{\"type\":\"unix\",\"path\":\"/tmp/oce.sock\"}}' ...

- Guest RAM must be a shared memfd (memory-backend-memfd,share=on): the device then reaches
  guest memory directly. Without it DMA goes by message, slowly.
- With intel-iommu, caching-mode=on is required (QEMU aborts without it).
- In the guest: 10df:0720 with BAR0 16 KiB, BAR4 64 KiB, MSI-X (32 vectors) and INTx; bind it
  to vfio-pci and run ocetool there, or let a driver take it.

The server holds the adapter's lock for its whole life: any other ocetool on the same state
directory gets \"device busy\" (exit 5), except `emulator fault set|clear|list`, which reach the
running server through its control socket (beside the lock file), and `query` and `port`, which
ask the server what it knows without the VM's mailbox (\"source\": \"server\"; the link, its
speed and, on a cable, the peer's MAC). State is saved as the guest
changes it (profiles, flash, faults), so the same directory works with --device emu:DIR after
the VM is gone.

The server owns its socket through a lock file beside it (PATH.lock): a second server on the
same path says so and exits 5 without touching the live one's session; a socket whose lock
nobody holds was left by a server that died, and is replaced. The VM cannot keep the server:
SIGINT/SIGTERM stop it within a second whatever the VM does, a DMA reply or a read of the
server's replies the VM withholds for 5 s fails, at most 32768 DMA mappings are taken
(max_dma_maps), guest memory the VM can shrink is copied rather than mapped, and refused
messages are logged at most 10 a second, with a count of the rest.

Two adapters on one wire: each server plugs its port into a datagram socket and names the
other's (--wire, --wire-peer); a QEMU NIC can be the other end with
-netdev dgram,id=n,local.type=unix,local.path=B,remote.type=unix,remote.path=A:

  ocetool --device emu:/var/tmp/a emulator serve --socket /tmp/a.sock --wire /tmp/a.wire --wire-peer /tmp/b.wire &
  ocetool --device emu:/var/tmp/b emulator serve --socket /tmp/b.sock --wire /tmp/b.wire --wire-peer /tmp/a.wire &

The link follows the peer: every 200 ms each server checks, sending nothing, that a live socket
is bound at --wire-peer; a peer that is absent, dies or comes back is link down, then up (the
driver gets its link-state event), and what was queued for it or is sent while down is dropped.
While the link is up the cable loses nothing: while the peer's queue is full, frames wait and
the guest's TX ring is held back (its requests stay posted). Datagrams longer than 9216 bytes are
counted and dropped; runts reach the adapter, which counts and drops them. --wire-pcap FILE
records both directions for tcpdump -r or Wireshark.

One card, several functions: repeat --socket to serve the card's NIC functions, each on its own
socket, all over one card (one flash, one profile state, one POST: a chip reset through function
0 restarts function 1 too), each with its own queues, MAC and port; the N-th --wire and
--wire-peer cable function N's port. QEMU attaches them as functions 0 and 1 of one slot, with
multifunction on each (QEMU sets the header's multi-function bit only where told, and the guest
reads it per function). Behind a PCIe root port Linux gives each Skyhawk-R function an IOMMU
group of its own (its ACS quirk for 10df:0720, as on a real card); behind a bridge without ACS
(pcie-pci-bridge) they share one:

  ocetool --device emu:/var/tmp/oce emulator serve --socket /tmp/f0.sock --socket /tmp/f1.sock &
  qemu-system-x86_64 ... -device pcie-root-port,id=rp0,chassis=1,slot=1 \
    -device '{\"driver\":\"vfio-user-pci\",\"bus\":\"rp0\",\"addr\":\"0.0\",\"multifunction\":true,\"socket\":{\"type\":\"unix\",\"path\":\"/tmp/f0.sock\"}}' \
    -device '{\"driver\":\"vfio-user-pci\",\"bus\":\"rp0\",\"addr\":\"0.1\",\"multifunction\":true,\"socket\":{\"type\":\"unix\",\"path\":\"/tmp/f1.sock\"}}'

The server ends when every function's VM connection has gone (or at SIGINT/SIGTERM). More
--wire-peer or --wire-pcap than --wire, more --wire than --socket, the same path twice, or more
--socket than the card has ports is a usage error (exit 2), before anything is bound.

Exit codes: 0 when the VM disconnects; 130 / 143 when SIGINT / SIGTERM stops the server (the
session closed, the adapter's state saved); 1 when the VM broke the protocol; 3 for an unusable
state directory; 5 when the adapter is busy, or a live server owns the socket, or a live process
is bound to the --wire socket; 1 when the wire's socket or pcap file cannot be created otherwise.";

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum FaultAction {
    /// Set one or more faults, e.g. `post-stuck=0x0002`, `gone`, `status=1:168:3`,
    /// `slow=1:167:500`, `flash-fail-at=3`, `power-loss-at=3`, `no-offset-mode`, `pfc-unsync`,
    /// `link-down` (see /usr/share/doc/ocetool/reliability.md for the whole list).
    Set {
        /// Fault specs.
        #[arg(required = true, value_name = "SPEC")]
        specs: Vec<String>,
    },
    /// Clear faults by name (`post-stuck`, `status`, ...), or all of them with --all.
    Clear {
        /// Fault names.
        #[arg(value_name = "NAME", required_unless_present = "all")]
        names: Vec<String>,
        /// Clear every fault.
        #[arg(long)]
        all: bool,
    },
    /// List the faults that are set.
    List,
}

/// Parses a byte given in decimal or 0x-prefixed hex.
pub fn parse_u8(s: &str) -> Result<u8, String> {
    let v = parse_number(s)?;
    u8::try_from(v).map_err(|_| format!("{s} does not fit in a byte (0..=255)"))
}

fn parse_len(s: &str) -> Result<usize, String> {
    let v = parse_number(s)?;
    usize::try_from(v).map_err(|_| format!("{s} is too large"))
}

fn parse_number(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let parsed = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => t.parse::<u64>(),
    };
    parsed.map_err(|_| format!("{s:?} is not a number (decimal, or hex with 0x)"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn numbers_in_decimal_and_hex() {
        assert_eq!(parse_u8("35"), Ok(35));
        assert_eq!(parse_u8("0x3a"), Ok(58));
        assert!(parse_u8("256").is_err());
        assert!(parse_u8("x").is_err());
    }
}
