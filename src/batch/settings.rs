//! What the recorder follows of the settings and of the placement, taken once per batch (at
//! its first call) and passed down rather than looked up per call: every call of a batch is
//! placed by the same rules. (A decision made while a batch is pending, as a program calling
//! the C ABI directly might see, applies from the next batch; either place is exact.)

use crate::config::{Family, Place, Placement};

#[derive(Clone, Copy, Debug)]
pub(super) struct Settings {
    /// Where each call family runs ([`crate::placement::in_force`]).
    placement: Placement,
    /// `DAEDALUS_INTRA_SYNC=ahead`: a reader's calls may run ahead on the CPU while they stay
    /// in the batch.
    pub(super) reads_ahead: bool,
}

impl Settings {
    /// The settings and placement in force now.
    pub(super) fn now() -> Settings {
        Settings {
            placement: crate::placement::in_force(),
            reads_ahead: crate::config::get().reads_ahead,
        }
    }

    /// Whether `DAEDALUS_KERNELS` or a decision places `family` on the CPU.
    pub(super) fn on_cpu(&self, family: Family) -> bool {
        self.placement.of(family) == Place::Cpu
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A batch's settings answer from the placement they were taken with, family by family.
    #[test]
    fn the_settings_place_each_family_as_taken() {
        let mut placement = Placement::ALL_GPU;
        placement.set(Family::Itx, Place::Cpu);
        let settings = Settings {
            placement,
            reads_ahead: false,
        };
        assert!(settings.on_cpu(Family::Itx));
        assert!(!settings.on_cpu(Family::Mc) && !settings.on_cpu(Family::Lf));
    }
}
