//! Function-level commands: FUNCTION_RESET (61), GET_FW_VERSION (35), GET_CNTL_ATTRIBUTES (32),
//! QUERY_FIRMWARE_CONFIG (58), GET_FN_PRIVILEGES (170), SET_INTERRUPT_ENABLE (89),
//! SET_DRIVER_FUNCTION_CAP (103), GET_CNTL_ADDITIONAL_ATTRIBUTES (121).

use oce_firmware::dir::{ImageType, SectionEntry};
use oce_mailbox::command::Empty;
use oce_mailbox::commands::{
    AdditionalAttributes, CntlAttributes, FirmwareConfig, FnPrivileges, FunctionCaps, FunctionReset, FwVersion,
    GetCntlAdditionalAttributes, GetCntlAttributes, GetFnPrivileges, GetFwVersion, QueryFirmwareConfig,
    SetDriverFunctionCap, SetInterruptEnable, UlpResources,
};
use oce_mailbox::status::CompletionStatus;

use crate::assumptions::{
    ASIC_ID, ASIC_REVISION, CONFIG_NUMBER, DESCRIPTION, DIE_TEMPERATURE, DRIVER_CAPABILITIES, FUNCTION_CAPS, HBA_MTU,
    MANUFACTURER, SUBSYSTEM_ID, SUBSYSTEM_VENDOR_ID,
};
use crate::device::config::VENDOR_ID;
use crate::firmware::{Context, Firmware, Owed};

/// FUNCTION_RESET resets the calling function's firmware state: the queues, interfaces and MAC
/// filters a previous driver created, and its settings (interrupt enable, flow control, logical
/// link) go back to their defaults (spec/protocol.md §5.4). Port-level state (beacon, the
/// physical link) is kept. The logical link is enabled again, which the datapath announces if
/// that changes it.
pub(crate) fn function_reset(
    fw: &mut Firmware,
    _: &Context,
    _: FunctionReset,
) -> Result<(Empty, Owed), CompletionStatus> {
    fw.resources.reset();
    Ok((Empty, Owed { link_event: true, ..Owed::default() }))
}

/// SET_INTERRUPT_ENABLE: host interrupts on or off (spec/protocol.md §5.4); the device raises
/// interrupts only while they, or INT_CTRL's HOSTINTR bit, are on.
pub(crate) fn set_interrupt_enable(
    fw: &mut Firmware,
    _: &Context,
    req: SetInterruptEnable,
) -> Result<Empty, CompletionStatus> {
    fw.resources.host_interrupts = req.enabled;
    Ok(Empty)
}

/// SET_DRIVER_FUNCTION_CAP: grants what the driver asks for of [`DRIVER_CAPABILITIES`] and
/// answers the same valid mask (spec/be2net-driver.md §2 step 9).
pub(crate) fn set_driver_function_cap(
    _: &mut Firmware,
    _: &Context,
    req: SetDriverFunctionCap,
) -> Result<SetDriverFunctionCap, CompletionStatus> {
    let cap_flags = req.cap_flags & req.valid_cap_flags & DRIVER_CAPABILITIES;
    Ok(SetDriverFunctionCap { valid_cap_flags: req.valid_cap_flags, cap_flags })
}

/// GET_CNTL_ADDITIONAL_ATTRIBUTES: the die temperature ([`DIE_TEMPERATURE`]); no IPL file is
/// named (spec/be2net-driver.md §3.7).
pub(crate) fn get_cntl_additional_attributes(
    _: &mut Firmware,
    _: &Context,
    _: GetCntlAdditionalAttributes,
) -> Result<AdditionalAttributes, CompletionStatus> {
    Ok(AdditionalAttributes { on_die_temperature: DIE_TEMPERATURE, ..AdditionalAttributes::default() })
}

/// GET_FW_VERSION: the running version (what the last POST booted) and the on-flash version
/// (`ver_data` of the 0xA0 entry now on flash) (spec/protocol.md §5.1, design.md §6).
pub(crate) fn get_fw_version(fw: &mut Firmware, _: &Context, _: GetFwVersion) -> Result<FwVersion, CompletionStatus> {
    Ok(FwVersion { running: fw.running_version(), on_flash: fw.stored_version().unwrap_or_default() })
}

/// GET_CNTL_ATTRIBUTES: identity, versions and PCI identity (spec/protocol.md §5.2). Versions of
/// the other sections (boot code, PXE ROM, NC-SI) come from the directory on flash.
pub(crate) fn get_cntl_attributes(
    fw: &mut Firmware,
    cx: &Context,
    _: GetCntlAttributes,
) -> Result<CntlAttributes, CompletionStatus> {
    let directory = fw.flash_directory();
    let section = |ty| directory.as_ref().and_then(|d| d.entry(ty)).map(SectionEntry::version).unwrap_or_default();
    let stored = section(ImageType::FirmwareIscsi);
    let identity = fw.card().state.identity.clone();
    let ports = identity.macs.len();
    let first_mac = identity.macs.first().map_or([0; 6], |m| m.0);
    let mut uid = [0u8; 8];
    uid[2..].copy_from_slice(&first_mac);
    Ok(CntlAttributes {
        flashrom_version: stored.clone(),
        manufacturer: MANUFACTURER.to_owned(),
        ncsi_version: section(ImageType::Ncsi),
        model_number: identity.model.clone(),
        description: DESCRIPTION.to_owned(),
        serial_number: CntlAttributes::serial_from_str(&identity.serial),
        firmware_version: fw.running_version(),
        bios_version: section(ImageType::OptionRomPxe),
        redboot_version: section(ImageType::BootCode),
        fw_on_flash_version: stored,
        asic_revision: ASIC_REVISION,
        hba_port_count: ports as u8,
        phy_port: fw.port(),
        firmware_post_status: cx.semaphore,
        hba_mtu: std::array::from_fn(|i| if i < ports { HBA_MTU } else { 0 }),
        asic_generation: (ASIC_ID >> 8) as u8,
        pci_vendor_id: VENDOR_ID,
        pci_device_id: fw.function().device_id(),
        pci_sub_vendor_id: SUBSYSTEM_VENDOR_ID,
        pci_sub_system_id: SUBSYSTEM_ID,
        pci_function_number: fw.function_number(),
        unique_identifier: u64::from_be_bytes(uid),
        ..CntlAttributes::default()
    })
}

/// QUERY_FIRMWARE_CONFIG: `function_mode` of the active profile (0x2 NIC, 0x6 NIC+RDMA), the
/// ASIC revision, port 0, and ULP 0 carrying the same mode with the NIC queue count
/// (spec/protocol.md §5.3, design.md §6).
pub(crate) fn query_firmware_config(
    fw: &mut Firmware,
    _: &Context,
    _: QueryFirmwareConfig,
) -> Result<FirmwareConfig, CompletionStatus> {
    let active = fw.card().state.runtime.active;
    let mode = active.function_mode();
    let ulp0 = UlpResources { ulp_mode: mode, nic_wq_tot: u32::from(active.nic.txq_count), ..UlpResources::default() };
    Ok(FirmwareConfig {
        config_number: CONFIG_NUMBER,
        asic_revision: u32::from(ASIC_REVISION),
        phys_port: u32::from(fw.port()),
        function_mode: mode,
        ulp: [ulp0, UlpResources::default()],
        function_caps: FunctionCaps(FUNCTION_CAPS),
    })
}

/// GET_FN_PRIVILEGES: the PF holds every privilege (0x7FF), a VF the default one (0x1)
/// (spec/protocol.md §5.19, §8 item 6).
pub(crate) fn get_fn_privileges(
    fw: &mut Firmware,
    _: &Context,
    _: GetFnPrivileges,
) -> Result<FnPrivileges, CompletionStatus> {
    Ok(FnPrivileges(fw.function().privileges()))
}
