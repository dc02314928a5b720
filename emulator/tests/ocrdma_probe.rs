//! ocrdma's probe, its MQ and its teardown against the device, through the ocrdma-like host on
//! top of the be2net-like one (spec/be2net-driver.md §5): RoCE EQs on their own MSI-X vectors,
//! the second MCC queue with its CQ on a RoCE EQ, every MQE completed with its ring index as tag
//! (unknown verbs too), the RDMA subsystem's commands, and nothing left behind.

mod common;

use oce_testhost as be2net_host;

use be2net_host::driver::Nic;
use be2net_host::ocrdma::{Roce, ocrdma_request};
use be2net_host::{Host, HostError};
use common::roce::switch_to_roce;
use oce_emulator::Event;
use oce_mailbox::commands::{AllocPd, AllocPdRange, DeallocPd, DeallocPdRange};
use oce_mailbox::header::Subsystem;
use oce_mailbox::status::{AdditionalStatus, BaseStatus};

/// A RoCE adapter (RoCE-2 active after a power cycle), probed by be2net with `nic_eqs` EQs on
/// MSI-X, then by ocrdma with `roce_eqs`.
fn probed(nic_eqs: u16, roce_eqs: usize) -> (tempfile::TempDir, Host, Nic, Roce) {
    let dir = tempfile::tempdir().unwrap();
    let mut host = Host::new(&dir.path().join("emu"));
    switch_to_roce(&mut host);
    let nic = host.probe(nic_eqs).unwrap();
    assert_eq!(nic.function_mode, 0x6, "be2net sees RDMA");
    let roce = host.ocrdma_add(roce_eqs).unwrap();
    (dir, host, nic, roce)
}

fn no_faults(host: &Host) {
    let events = host.dev.firmware().events();
    assert!(!events.iter().any(|e| matches!(e, Event::DmaFault { .. })), "{events:?}");
    assert!(host.dev.queue_misses().is_empty(), "{:?}", host.dev.queue_misses());
}

#[test]
fn ocrdma_probes_what_the_adapter_reports() {
    let (_d, host, _nic, roce) = probed(2, 2);
    let info = host.dev.info();
    assert_eq!(roce.function_mode, 0x6);
    assert_eq!(Some(roce.fw_ver.clone()), info.firmware.running, "attr.fw_ver is the running firmware");
    assert_eq!(roce.model, info.model, "the model string ocrdma logs");
    assert_eq!(roce.port, 0, "port 0, inside ocrdma's range");
    assert_eq!(roce.phy, (0, 3), "PHY type and interface type from the embedded GET_PHY_DETAILS");
    assert_eq!(roce.ahid, 1);
    let range = roce.pd_range.expect("the PD pool is pre-allocated");
    assert_eq!((range.first.pd_id, range.pd_count), (1, u32::from(roce.config.max_pd)));
    assert_eq!(range.first.dpp_page, None);
    assert_eq!(roce.config.max_dpp_pds, 0);
    assert!(roce.config.max_cq < 2048, "ocrdma BUG()s on CQ ids of 2048 and up");
    assert_eq!(usize::from(roce.config.wqe_strides) * 8, 256);
    assert_eq!(roce.service_level, 3, "PFC in sync on the RoCE priority");
    no_faults(&host);
}

#[test]
fn roce_eqs_get_their_own_vectors_after_be2nets() {
    let (_d, host, _nic, roce) = probed(2, 2);
    let nic: Vec<u16> = host.eqs.iter().map(|e| e.msix_idx).collect();
    let rdma: Vec<u16> = roce.eqs.iter().map(|e| e.msix_idx).collect();
    assert_eq!(nic, [0, 1]);
    assert_eq!(rdma, [2, 3], "ocrdma's vector_list[start_vector..]: never one be2net requests");
    // Every MQ completion so far was signalled on the vector of the EQ the MQ's CQ sits on.
    assert!(!roce.vectors.is_empty());
    assert!(roce.vectors.iter().all(|&v| v == rdma[0]), "{:?}", roce.vectors);
    assert_ne!(roce.mq.0, host.mcc.as_ref().unwrap().0, "a second MCC queue");
    assert_ne!(roce.mq_cq.id, host.mcc_cq.as_ref().unwrap().id);
}

#[test]
fn every_mqe_is_completed_unknown_verbs_with_illegal_request() {
    let (_d, mut host, _nic, mut roce) = probed(1, 1);
    // ALLOC_LKEY (RDMA 11, ocrdma's DMA MR), a CQ_CREATE version 4 and an unknown opcode: no
    // model, a clear status.
    for (opcode, subsystem, version) in [(11, Subsystem::Rdma, 0), (12, Subsystem::Common, 4), (99, Subsystem::Rdma, 0)]
    {
        let req = ocrdma_request(opcode, subsystem, version, 236, 240);
        match host.mq_embedded(&mut roce, &req) {
            Err(HostError::Status(s)) => assert_eq!(s.base, BaseStatus::IllegalRequest, "{opcode}"),
            other => panic!("{opcode}: {other:?}"),
        }
    }
    // The MQ still works, and the tags kept following the ring.
    let (speed, up) = host.ocrdma_link(&mut roce).unwrap();
    assert_eq!((speed, up), (4, true), "10 Gb/s, logical link up");
    no_faults(&host);
}

#[test]
fn pds_come_singly_or_in_ranges_from_one_pool() {
    let (_d, mut host, _nic, mut roce) = probed(1, 1);
    let exhausted = |r: Result<_, HostError>| match r {
        Err(HostError::Status(s)) => (s.base, s.additional),
        other => panic!("{other:?}"),
    };
    // The pool holds every PD: a single one is not to be had until it is given back.
    assert_eq!(
        exhausted(host.mq_cmd(&mut roce, &AllocPd { dpp: false }).map(|_| ())),
        (BaseStatus::Failed, AdditionalStatus::InsufficientResources)
    );
    let range = roce.pd_range.unwrap();
    let back = DeallocPdRange { start_pd_id: range.first.pd_id.into(), pd_count: range.pd_count };
    assert_eq!(
        exhausted(host.mq_cmd(&mut roce, &DeallocPdRange { pd_count: 1, ..back }).map(|_| ())).0,
        BaseStatus::IllegalField,
        "a range goes back whole"
    );
    host.mq_cmd(&mut roce, &back).unwrap();
    // ocrdma without a pool: ALLOC_PD per PD; asked for DPP, it gets a plain PD.
    let pd = host.mq_cmd(&mut roce, &AllocPd { dpp: true }).unwrap();
    assert_eq!((pd.pd_id, pd.dpp_page), (1, None));
    assert_eq!(
        exhausted(host.mq_cmd(&mut roce, &AllocPdRange { dpp: true, pd_count: 1 }).map(|_| ())).1,
        AdditionalStatus::InsufficientResources,
        "no DPP PDs"
    );
    host.mq_cmd(&mut roce, &DeallocPd { pd_id: 1 }).unwrap();
    assert_eq!(exhausted(host.mq_cmd(&mut roce, &DeallocPd { pd_id: 1 }).map(|_| ())).0, BaseStatus::IllegalField);
    roce.pd_range = Some(host.mq_cmd(&mut roce, &AllocPdRange { dpp: false, pd_count: range.pd_count }).unwrap());
    host.ocrdma_remove(roce).unwrap();
}

#[test]
fn remove_and_add_again_start_clean_and_be2net_keeps_working() {
    let (_d, mut host, nic, roce) = probed(2, 2);
    let first = (roce.eqs.iter().map(|e| (e.id, e.msix_idx)).collect::<Vec<_>>(), roce.mq.0, roce.ahid);
    host.ocrdma_remove(roce).unwrap();
    let again = host.ocrdma_add(2).unwrap();
    let second = (again.eqs.iter().map(|e| (e.id, e.msix_idx)).collect::<Vec<_>>(), again.mq.0, again.ahid);
    assert_eq!(first, second, "the same ids and vectors: nothing was left behind");
    host.ocrdma_remove(again).unwrap();
    // be2net unloads on its own MCC as before.
    host.remove(nic).unwrap();
    no_faults(&host);
}

#[test]
fn a_nic_function_answers_no_rdma_command() {
    let dir = tempfile::tempdir().unwrap();
    let mut host = Host::new(&dir.path().join("emu"));
    let nic = host.probe(1).unwrap();
    assert_eq!(nic.function_mode, 0x2);
    match host.mcc(&AllocPdRange { dpp: false, pd_count: 1 }) {
        Err(HostError::Status(s)) => assert_eq!(s.base, BaseStatus::IllegalRequest),
        other => panic!("{other:?}"),
    }
}
