//! How long the emulated firmware takes, counted in register reads (never wall-clock time, so
//! tests are deterministic and need no sleeps).

use crate::assumptions::{EXEC_DELAY_READS, POST_READS_PER_STAGE, READY_DELAY_READS};

/// Read counts for each busy period of the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    /// Mailbox doorbell reads returning RDY = 0 after a HI write.
    pub ready_delay: u32,
    /// Mailbox doorbell reads returning RDY = 0 after a LO write; the command executes on the
    /// read that follows them.
    pub exec_delay: u32,
    /// Semaphore reads spent at each POST stage (at least 1).
    pub post_reads_per_stage: u32,
}

impl Default for Timing {
    fn default() -> Self {
        Self {
            ready_delay: READY_DELAY_READS,
            exec_delay: EXEC_DELAY_READS,
            post_reads_per_stage: POST_READS_PER_STAGE,
        }
    }
}
