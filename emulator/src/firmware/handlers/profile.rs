//! Profile commands: GET_FUNC_CONFIG v1 (160), GET_ACTIVE_PROFILE (167), GET_PROFILE_LIST (166),
//! GET_PROFILE_CONFIG v1 (164), SET_PROFILE_CONFIG v1 (165), SET_ACTIVE_PROFILE (168)
//! (spec/protocol.md §5.7–§5.9, §6.4;
//! the model is in [`crate::firmware::profiles`]).

use oce_mailbox::command::Empty;
use oce_mailbox::commands::{
    ActiveProfile, DescriptorFlags, DescriptorVersion, FuncConfig, GetActiveProfile, GetFuncConfig, GetProfileConfig,
    GetProfileList, NicDescriptor, PcieDescriptor, PortDescriptor, ProfileConfig, ProfileList, ProfileListEntry,
    ProfileSelector, ResourceDescriptor, SetActiveProfile, SetProfileConfig,
};
use oce_mailbox::status::{BaseStatus, CompletionStatus};

use super::illegal_field;
use crate::assumptions::{PF_NUM, PROFILES};
use crate::firmware::profiles::{FunctionConfig, definition};
use crate::firmware::{Context, Firmware};

/// GET_FUNC_CONFIG v1: the function's own NIC v1 descriptor, from the active profile
/// (spec/protocol.md §5.7, §8 item 6).
pub(crate) fn get_func_config(
    fw: &mut Firmware,
    _: &Context,
    _: GetFuncConfig,
) -> Result<FuncConfig, CompletionStatus> {
    let nic = fw.card().state.runtime.active.nic_descriptor();
    Ok(FuncConfig { descriptors: of_function(fw, vec![ResourceDescriptor::Nic(nic)]) })
}

/// `descriptors` as function `fw` reports them: its own PCI function number in `pf_num`, its
/// own port in the NIC descriptor's `link_param` and the PORT descriptor's `link_num` (every
/// function of the card runs the card's profile, [`crate::assumptions::card`]).
fn of_function(fw: &Firmware, mut descriptors: Vec<ResourceDescriptor>) -> Vec<ResourceDescriptor> {
    let (pf_num, port) = (fw.function_number(), fw.port());
    for d in &mut descriptors {
        match d {
            ResourceDescriptor::Pcie(d) if d.pf_num == PF_NUM => d.pf_num = pf_num,
            ResourceDescriptor::Nic(d) if d.pf_num == PF_NUM => {
                d.pf_num = pf_num;
                d.link_param = port;
            }
            ResourceDescriptor::Port(d) => d.link_num = port,
            _ => {}
        }
    }
    descriptors
}

/// GET_ACTIVE_PROFILE: the running profile and the one the next POST activates.
pub(crate) fn get_active_profile(
    fw: &mut Firmware,
    _: &Context,
    _: GetActiveProfile,
) -> Result<ActiveProfile, CompletionStatus> {
    let card = fw.card();
    Ok(ActiveProfile {
        active: u16::from(card.state.runtime.active_profile),
        next: u16::from(card.state.nvram.next_profile),
    })
}

/// GET_PROFILE_LIST: the profiles from `start_index` on, each with its list index.
pub(crate) fn get_profile_list(
    _: &mut Firmware,
    _: &Context,
    req: GetProfileList,
) -> Result<ProfileList, CompletionStatus> {
    let entries = PROFILES
        .iter()
        .enumerate()
        .skip(usize::from(req.start_index))
        .map(|(index, p)| ProfileListEntry { id: p.id, index: index as u8, description: p.name.to_owned() })
        .collect();
    Ok(ProfileList { entries })
}

/// GET_PROFILE_CONFIG v1: PCIe, NIC and PORT v1 descriptors of
///
/// - ACTIVE: the running configuration (profile ID 0 or the active profile's ID);
/// - SAVED: the saved configuration of the profile named by the request's ID, or of the
///   next-boot profile when the ID is 0 ("what takes effect after reboot", spec §5.8);
///
/// with QUERY_MODIFIABLE, which fields may change (all ones = modifiable; see
/// [`crate::assumptions`]). An unknown ID, an ACTIVE query for a profile that does not run, or a
/// selector other than SAVED / ACTIVE is ILLEGAL_FIELD.
pub(crate) fn get_profile_config(
    fw: &mut Firmware,
    _: &Context,
    req: GetProfileConfig,
) -> Result<ProfileConfig, CompletionStatus> {
    let card = fw.card();
    let state = &card.state;
    if req.profile_id != 0 && definition(req.profile_id).is_none() {
        return Err(illegal_field());
    }
    let config: FunctionConfig = match req.selector {
        ProfileSelector::Active => {
            if req.profile_id != 0 && req.profile_id != state.runtime.active_profile {
                return Err(illegal_field());
            }
            state.runtime.active
        }
        ProfileSelector::Saved => {
            let id = if req.profile_id == 0 { state.nvram.next_profile } else { req.profile_id };
            *state.nvram.saved.get(&id).ok_or(CompletionStatus::from(BaseStatus::Failed))?
        }
        _ => return Err(illegal_field()),
    };
    drop(card);
    let descriptors = if req.query_modifiable { modifiable(&config) } else { config.profile_descriptors() };
    Ok(ProfileConfig { descriptors: of_function(fw, descriptors) })
}

/// The QUERY_MODIFIABLE answer: NIC counts and bandwidth all ones, everything else zero.
fn modifiable(config: &FunctionConfig) -> Vec<ResourceDescriptor> {
    let pcie = PcieDescriptor { version: DescriptorVersion::V1, pf_num: PF_NUM, ..PcieDescriptor::default() };
    let nic = NicDescriptor {
        pf_num: PF_NUM,
        link_param: 0,
        channel_id_param: 0,
        acpi_params: 0,
        wol_param: 0,
        ..NicDescriptor::unchanged(DescriptorVersion::V1)
    };
    let port = PortDescriptor { nv_flags: 0, ..PortDescriptor::new(config.nic.link_param) };
    vec![ResourceDescriptor::Pcie(pcie), ResourceDescriptor::Nic(nic), ResourceDescriptor::Port(port)]
}

/// SET_ACTIVE_PROFILE: makes `profile_id` the next-boot profile, saved to NVRAM; it becomes
/// active at the next POST (design.md §6). An unknown ID is ILLEGAL_FIELD. The `fd` flag's
/// meaning is not public (spec §5.9) and is ignored.
pub(crate) fn set_active_profile(
    fw: &mut Firmware,
    _: &Context,
    req: SetActiveProfile,
) -> Result<Empty, CompletionStatus> {
    definition(req.profile_id).ok_or_else(illegal_field)?;
    let before = std::mem::replace(&mut fw.card().state.nvram.next_profile, req.profile_id);
    if before != req.profile_id && fw.save().is_err() {
        fw.card().state.nvram.next_profile = before;
        return Err(BaseStatus::Failed.into());
    }
    Ok(Empty)
}

/// SET_PROFILE_CONFIG v1: changes a profile's configuration (spec/protocol.md §5.8).
///
/// The target is the request's profile ID, or the active profile for ID 0 (what be2net sends).
/// Per descriptor, the NOSV flag means "do not save": the change lands in the running
/// configuration only (so the target must be the active profile) and is lost at the next POST.
/// Without NOSV the change is saved, and also applied to the running configuration when IMM is
/// set and the target is active. Every descriptor is checked before anything changes; a rejected
/// one ([`FunctionConfig::apply`]) or an unknown ID is ILLEGAL_FIELD. be2net's unload pair
/// (PCIe + VF-template NIC, IMM | NOSV, num_vfs 0) is accepted and changes no profile.
pub(crate) fn set_profile_config(
    fw: &mut Firmware,
    _: &Context,
    req: SetProfileConfig,
) -> Result<Empty, CompletionStatus> {
    let mut card = fw.card();
    let state = &card.state;
    let target = if req.profile_id == 0 { state.runtime.active_profile } else { req.profile_id };
    let mut saved = *state.nvram.saved.get(&target).ok_or_else(illegal_field)?;
    let is_active = target == state.runtime.active_profile;
    let mut running = state.runtime.active;
    for descriptor in &req.descriptors {
        let flags = descriptor_flags(descriptor);
        let nosv = flags.contains(DescriptorFlags::NOSV);
        if nosv && !is_active {
            return Err(illegal_field());
        }
        if !nosv {
            saved.apply(descriptor).map_err(|_| illegal_field())?;
        }
        if is_active && (nosv || flags.contains(DescriptorFlags::IMM)) {
            running.apply(descriptor).map_err(|_| illegal_field())?;
        }
    }
    let before = (card.state.nvram.saved.insert(target, saved), card.state.runtime.active);
    card.state.runtime.active = running;
    drop(card);
    let changed = before.0 != Some(saved) || before.1 != running;
    if changed && fw.save().is_err() {
        let mut card = fw.card();
        if let Some(old) = before.0 {
            card.state.nvram.saved.insert(target, old);
        }
        card.state.runtime.active = before.1;
        return Err(BaseStatus::Failed.into());
    }
    Ok(Empty)
}

/// The flags byte of a descriptor (0 for kinds the codec does not decode).
fn descriptor_flags(descriptor: &ResourceDescriptor) -> DescriptorFlags {
    match descriptor {
        ResourceDescriptor::Pcie(d) => d.flags,
        ResourceDescriptor::Nic(d) => d.flags,
        ResourceDescriptor::Port(d) => d.flags,
        ResourceDescriptor::Unknown { bytes, .. } => DescriptorFlags(bytes.get(3).copied().unwrap_or(0)),
    }
}
