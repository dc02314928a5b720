//! The commands known to only read: queries that change nothing on the adapter, so `ocetool raw`
//! may send them without asking (every other command may change the adapter, and is confirmed).
//!
//! The list is closed on purpose: an opcode is here only when a public source shows it as a query
//! (spec/protocol.md §5.0, the opcode table, and the section named beside each). Unknown opcodes,
//! every SET_*, CREATE, DESTROY and write count as changes, and so does MANAGE_FAT, whose one
//! opcode both reads and clears the firmware's log.

use crate::Command;
use crate::commands::{
    GetActiveProfile, GetBeaconState, GetCntlAdditionalAttributes, GetCntlAttributes, GetDcbxConfig, GetFlowControl,
    GetFnPrivileges, GetFuncConfig, GetFwVersion, GetMacList, GetPhyDetails, GetPortName, GetProfileConfig,
    GetProfileList, LinkStatusQuery, QueryFirmwareConfig, ReadFlashrom, ReadTransceiverData,
};
use crate::header::Subsystem;

/// COMMON queries without a command type of their own (spec/protocol.md §5.0).
const NTWK_MAC_QUERY: u8 = 1;
const SEEPROM_READ: u8 = 30;
const GET_EXT_FAT_CAPABILITIES: u8 = 125;
const GET_HSW_CONFIG: u8 = 152;
const GET_IFACE_LIST: u8 = 194;

/// A query ocetool has a type for: its subsystem, opcode and name.
const fn typed<C: Command>() -> (Subsystem, u8, &'static str) {
    (C::SUBSYSTEM, C::OPCODE, C::NAME)
}

/// A COMMON query known only by its number.
const fn common(opcode: u8, name: &'static str) -> (Subsystem, u8, &'static str) {
    (Subsystem::Common, opcode, name)
}

/// Every known read-only query: (subsystem, opcode, name), with its spec/protocol.md section.
pub const READ_ONLY_QUERIES: [(Subsystem, u8, &str); 23] = [
    common(NTWK_MAC_QUERY, "NTWK_MAC_QUERY"),                     // §5.5
    typed::<LinkStatusQuery>(),                                   // §5.16
    typed::<ReadFlashrom>(),                                      // §5.14: reports, never writes
    common(SEEPROM_READ, "SEEPROM_READ"),                         // §5.0
    typed::<GetCntlAttributes>(),                                 // §5.2
    typed::<GetFwVersion>(),                                      // §5.1
    typed::<GetFlowControl>(),                                    // §5.0
    typed::<QueryFirmwareConfig>(),                               // §5.3
    typed::<GetBeaconState>(),                                    // §5.12
    typed::<ReadTransceiverData>(),                               // §5.0
    typed::<GetPortName>(),                                       // §5.10
    typed::<GetPhyDetails>(),                                     // §5.11
    typed::<GetCntlAdditionalAttributes>(),                       // §5.0
    common(GET_EXT_FAT_CAPABILITIES, "GET_EXT_FAT_CAPABILITIES"), // §5.0
    typed::<GetMacList>(),                                        // §5.6
    common(GET_HSW_CONFIG, "GET_HSW_CONFIG"),                     // §5.13
    typed::<GetFuncConfig>(),                                     // §5.7
    typed::<GetProfileConfig>(),                                  // §5.8
    typed::<GetProfileList>(),                                    // §5.9
    typed::<GetActiveProfile>(),                                  // §5.9
    typed::<GetFnPrivileges>(),                                   // §5.19
    common(GET_IFACE_LIST, "GET_IFACE_LIST"),                     // §5.0
    typed::<GetDcbxConfig>(), // subsystem DCBX: reads the DCB state (spec/be2net-driver.md §5.2)
];

/// The name of command (`subsystem`, `opcode`) when it is a known read-only query; `None` for
/// every command that may change the adapter (or that nobody public documents as a query).
pub fn read_only_query(subsystem: u8, opcode: u8) -> Option<&'static str> {
    let subsystem = Subsystem::from_raw(subsystem);
    READ_ONLY_QUERIES.iter().find(|(s, o, _)| (*s, *o) == (subsystem, opcode)).map(|(_, _, name)| *name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::{EnableDisableBeacon, FunctionReset, SetActiveProfile, SetProfileConfig, WriteFlashrom};

    #[test]
    fn queries_are_read_only_and_changes_are_not() {
        assert_eq!(read_only_query(1, 35), Some("GET_FW_VERSION"));
        assert_eq!(read_only_query(1, 167), Some("GET_ACTIVE_PROFILE"));
        assert_eq!(read_only_query(1, 160), Some("GET_FUNC_CONFIG"));
        for opcode in [
            SetActiveProfile::OPCODE,
            SetProfileConfig::OPCODE,
            WriteFlashrom::OPCODE,
            FunctionReset::OPCODE,
            EnableDisableBeacon::OPCODE,
            99, // not in the spec's table
        ] {
            assert_eq!(read_only_query(1, opcode), None, "opcode {opcode}");
        }
        // The same opcode in another subsystem is another command (ETH 4 is GET_STATISTICS).
        assert_eq!(read_only_query(3, GetFwVersion::OPCODE), None);
    }

    #[test]
    fn every_entry_is_a_get_query_or_read() {
        for (subsystem, opcode, name) in READ_ONLY_QUERIES {
            assert!(matches!(subsystem, Subsystem::Common | Subsystem::Dcbx), "{name}");
            let query = [
                "GET_",
                "READ_",
                "QUERY_",
                "NTWK_LINK_STATUS_QUERY",
                "NTWK_MAC_QUERY",
                "SEEPROM_READ",
                "DCBX_GET_CONFIG",
            ];
            assert!(query.iter().any(|q| name.starts_with(q)), "{name} ({opcode})");
        }
    }
}
