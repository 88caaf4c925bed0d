//! [`RecordedCounts`]: a thread's counts of recorded calls, folded into the shared counters.

use super::call::Op;
use crate::stats::{self, COUNTERS};

/// Counts of the calls a thread recorded, kept with its recorder and added to the shared
/// counters at each flush: an atomic add per call would cost more than recording it, above
/// all with frame threads on many cores.
#[derive(Default)]
pub(super) struct RecordedCounts {
    itx: u64,
    mc: u64,
    lf: u64,
    lf_sb: u64,
    cdef: u64,
    pub(super) mc_source_in_place: u64,
}

impl RecordedCounts {
    pub(super) fn count(&mut self, op: &Op) {
        match op {
            Op::Itx { .. } => self.itx += 1,
            Op::Mc { .. } => self.mc += 1,
            Op::Lf { .. } => self.lf += 1,
            Op::LfSb { .. } => self.lf_sb += 1,
            Op::Cdef { .. } => self.cdef += 1,
        }
    }

    pub(super) fn fold(&mut self) {
        let c = std::mem::take(self);
        stats::add(&COUNTERS.deferred, c.itx + c.mc + c.lf + c.lf_sb + c.cdef);
        stats::add(&COUNTERS.deferred_lf_sb, c.lf_sb);
        stats::add(&COUNTERS.deferred_cdef, c.cdef);
        stats::add(&COUNTERS.deferred_itx, c.itx);
        stats::add(&COUNTERS.deferred_mc, c.mc);
        stats::add(&COUNTERS.deferred_lf, c.lf);
        stats::add(&COUNTERS.mc_source_in_place, c.mc_source_in_place);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::itx::{Transform, Tx1d, TxSize};

    /// Each call counts under its family; folding hands the counts over and starts from
    /// nothing.
    #[test]
    fn calls_count_by_family_and_folding_starts_over() {
        let mut counts = RecordedCounts::default();
        let itx = Op::Itx {
            tx: Transform::new(TxSize::T8, Tx1d::Dct, Tx1d::Dct),
            block: std::ptr::null_mut(),
            eob: 1,
        };
        let lf = Op::Lf {
            f: crate::kernels::lf::LfFunction::all()[0],
            e: 1,
            i: 1,
            h: 1,
        };
        counts.count(&itx);
        counts.count(&itx);
        counts.count(&lf);
        assert_eq!((counts.itx, counts.lf, counts.mc), (2, 1, 0));
        counts.fold();
        assert_eq!((counts.itx, counts.lf), (0, 0));
    }
}
