//! The decoder's superblock loop-filter planes, placed by their superblock's position instead
//! of their cells ([`GpuBatch::place_by_position`]).

use super::api::device_has_kernel;
use super::call::{spans_meet, SbPosition};
use super::gpu_batch::GpuBatch;
use super::placement::Busy;
use crate::gpu;
use crate::kernels::{lf_sb, Kernel};
use crate::levels::MAX_LEVELS;
use crate::stats::Reason;

impl GpuBatch {
    /// Whether `span` meets the bytes of a loop-filter plane placed by position.
    pub(super) fn meets_lf_passes(&self, span: (usize, usize)) -> bool {
        self.lf_spans.iter().any(|&s| spans_meet(s, span))
    }

    /// Places a plane of FFmpeg's superblock loop filter by the superblock's position instead
    /// of its cells (a plane's footprint is about 600 cells; a call per superblock is only
    /// cheaper if placing it is). The decoder filters superblock row `r` after reconstructing
    /// it, superblocks in raster order, each plane's columns pass before its rows pass. Then
    /// the plane of (r, c) must follow those of (r, c - 1), into which its columns pass
    /// reaches, and of (r - 1, c) and (r - 1, c + 1), into which its rows pass reaches (the
    /// columns pass of (r - 1, c + 1) filters the last columns of (r - 1, c)). A job per
    /// pass on the wavefront, the columns pass's at level `2 (r + c)` and the rows pass's at
    /// the next, would order them all, planes side by side, above every call placed by cells
    /// so far; [`lf_sb::SplitPlacer`] places them so, split where a plane's masks allow, each
    /// part after what it reads, so that the chain breaks at every split. (With
    /// `DAEDALUS_LF_ORDER=rows` a row's planes all take level `r` instead, one job each, and
    /// `lf_row.comp` runs a plane's bucket of them in one workgroup in the recorded order.)
    /// Later calls placed by cells must not touch these bytes (they
    /// know nothing of them): `place` completes the batch first where one would, as it does
    /// where a pass comes out of raster order, and early completions of these bytes complete
    /// the batch instead (`complete_areas`). In the decoder neither happens: what it
    /// reconstructs and reads after filtering a row lies below that row.
    pub(super) fn place_by_position(
        &mut self,
        sb: SbPosition,
        span: (usize, usize),
        shape: (Option<u32>, bool),
    ) -> Result<(u32, bool, Option<lf_sb::SplitJobs>), Busy> {
        if self.may_redo || self.lf_ends_batch {
            // A transform that FFmpeg's function may redo after the submission would undo the
            // filter, or the plane before reached out of its superblock: complete the batch
            // first.
            return Err(Busy::Flush(Reason::Overlap));
        }
        let (column_split, reaches_out) = shape;
        match self.lf_last {
            // Out of the decoder's order (or another frame's): complete the batch first.
            Some(last) if sb <= last => return Err(Busy::Flush(Reason::Overlap)),
            Some(_) => {}
            None => self.lf_first_row = sb.row,
        }
        let base = self.cell_level_max.map_or(0, |l| l + 1);
        let by_rows = lf_passes_by_rows();
        if !by_rows {
            let continues = self.lf_last.is_some();
            let jobs =
                self.lf_split
                    .place((sb.plane, sb.row, sb.col), base, column_split, continues);
            let last = jobs.jobs().iter().map(|j| j.0).max().expect("jobs");
            if last >= MAX_LEVELS {
                return Err(Busy::Flush(Reason::Full));
            }
            self.lf_last = Some(sb);
            self.lf_ends_batch = reaches_out;
            let s = &mut self.lf_spans[sb.plane.min(2) as usize];
            *s = (s.0.min(span.0), s.1.max(span.1));
            let first = jobs.before.min(jobs.after);
            return Ok((first, false, Some(jobs)));
        }
        // A level per superblock row: its planes (of a plane, or of planes sharing a buffer)
        // are one bucket, which one workgroup runs in the decoder's order (so a pass that
        // reaches into the superblocks after it needs nothing more).
        let level = base + (sb.row - self.lf_first_row);
        if level + 1 >= MAX_LEVELS {
            return Err(Busy::Flush(Reason::Full));
        }
        self.lf_last = Some(sb);
        // A plane's superblocks lie in one span: the rows filtered so far (with the padding at
        // their ends, which nothing touches).
        let s = &mut self.lf_spans[sb.plane.min(2) as usize];
        *s = (s.0.min(span.0), s.1.max(span.1));
        Ok((level, by_rows, None))
    }
}

/// [`lf_passes_by_rows`] for the stats line: builds nothing, so a kernel never wanted counts
/// as usable.
pub fn lf_row_not_failed() -> bool {
    crate::config::get().lf_order == crate::config::LfOrder::Rows
        && gpu::set_up().is_some_and(|g| !g.pipelines.failed(Kernel::LfRow))
}

/// Whether the decoder's superblock loop-filter passes go to the GPU a superblock row per
/// workgroup (`DAEDALUS_LF_ORDER=rows`, where the device built that kernel) rather than split
/// by their masks: the same for every batch of the process.
pub fn lf_passes_by_rows() -> bool {
    crate::config::get().lf_order == crate::config::LfOrder::Rows
        && device_has_kernel(Kernel::LfRow)
}

/// Whether the decoder's superblock loop-filter passes go to the GPU split where their masks
/// allow and placed by them ([`lf_sb::SplitPlacer`]): with `DAEDALUS_LF_ORDER=split`, and
/// with `rows` where the device lacks that kernel.
pub fn lf_passes_split() -> bool {
    !lf_passes_by_rows()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::testing::recorder;

    fn sb(row: u32, col: u32) -> SbPosition {
        SbPosition { row, col, plane: 0 }
    }

    /// Planes come in the decoder's raster order: one out of it, or one after a transform
    /// that FFmpeg's function may redo (which would undo the filter), completes the batch
    /// first.
    #[test]
    fn a_plane_out_of_order_or_after_a_redo_completes_the_batch_first() {
        let mut r = recorder();
        let g = r.gpu.as_mut().unwrap();
        let (span, shape) = ((0x1000, 0x2000), (None, false));
        assert!(g.place_by_position(sb(0, 1), span, shape).is_ok());
        assert!(g.place_by_position(sb(0, 2), span, shape).is_ok());
        let out_of_order = g.place_by_position(sb(0, 0), span, shape);
        assert!(matches!(out_of_order, Err(Busy::Flush(Reason::Overlap))));
        assert!(g.place_by_position(sb(1, 0), span, shape).is_ok());
        g.may_redo = true;
        let after_redo = g.place_by_position(sb(1, 1), span, shape);
        assert!(matches!(after_redo, Err(Busy::Flush(Reason::Overlap))));
        assert!(g.meets_lf_passes((0x1800, 0x1801)) && !g.meets_lf_passes((0x2000, 0x2001)));
    }
}
