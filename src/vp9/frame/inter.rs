//! Inter blocks on the frame path, in two levels over the same records: a workgroup per block
//! predicts every plane from its references (`shaders/vp9_inter.comp`, `vp9_mc.glsl`), read
//! clamped to their visible size as FFmpeg's emulated edges do (scaled references as FFmpeg's
//! scaled functions); then their transform blocks' residuals are added, several of one size
//! a workgroup ([`super::residuals`]). The stats line times them apart
//! (`gpu_ms_by_stage` `inter`, `residuals`). Intra blocks are left to the intra stage, which
//! runs after these: every inter block is then complete before an intra block reads it. The
//! per-call path's references of the same arithmetic are [`crate::kernels::mc`] and
//! [`crate::kernels::itx`].
//!
//! A frame's prediction jobs are its inter blocks' records, listed by band of superblocks
//! ([`super::together`]); its residuals' go by runs of records: the blocks of its
//! superblocks, which a decoder that parses every tile column in turn stores as one run, and
//! one that parses tile columns on threads of their own as one run per column.

use super::records::{size8, BlockRecord, Run, SbBlocks, BLOCK_COMP};
use super::together::Rect;

/// The runs of records (and of their packed coefficients) of the superblocks of rows `rows`,
/// in order, each as long as the records and coefficients allow.
pub fn record_runs(sb: &SbBlocks, rows: std::ops::Range<usize>) -> Vec<Run> {
    let cols = sb.sb_cols;
    runs_of(sb, rows.flat_map(|row| row * cols..(row + 1) * cols))
}

/// The runs of the superblocks `indices` (raster order), in that order.
pub fn runs_of(sb: &SbBlocks, indices: impl Iterator<Item = usize>) -> Vec<Run> {
    let mut runs: Vec<Run> = Vec::new();
    for index in indices {
        let (first, count) = sb.get(index);
        if count == 0 {
            continue;
        }
        let (first_coef, coefs) = sb.coefs(index);
        let follows =
            |r: &&mut Run| r.first + r.count == first && r.first_coef + r.coefs == first_coef;
        match runs.iter_mut().find(follows) {
            Some(r) => {
                r.count += count;
                r.coefs += coefs;
            }
            None => runs.push(Run {
                first,
                count,
                first_coef,
                coefs,
            }),
        }
    }
    runs
}

/// Pixels around what a vector points at that a block's prediction may read: the 8-tap
/// filters' 3 before and 4 after, twice that in luma's pixels for a subsampled chroma plane,
/// and the word a window row begins on.
const READ_MARGIN: i32 = 16;

/// The superblocks of each reference (`[last, golden, altref]`) that inter block `b`'s
/// prediction reads, in a frame `sb_cols` by `sb_rows` superblocks (a reference of the
/// frame's size): its place moved by each of its vectors (chroma's, of a block under 8x8,
/// are their average, inside the same range), widened by [`READ_MARGIN`], clamped as FFmpeg's
/// emulated edges clamp the reads.
pub fn reads(b: &BlockRecord, sb_cols: usize, sb_rows: usize) -> [Option<Rect>; 3] {
    let mut reads: [Option<Rect>; 3] = [None; 3];
    let (w8, h8) = size8(b.bs);
    let refs = if b.flags & BLOCK_COMP != 0 { 2 } else { 1 };
    for which in 0..refs {
        let Some(slot) = reads.get_mut(b.reference[which] as usize) else {
            continue;
        };
        let x = |i: usize| b.mv[i][which][0] as i32 >> 3;
        let y = |i: usize| b.mv[i][which][1] as i32 >> 3;
        let (min_x, max_x) =
            (0..4).fold((i32::MAX, i32::MIN), |(a, z), i| (a.min(x(i)), z.max(x(i))));
        let (min_y, max_y) =
            (0..4).fold((i32::MAX, i32::MIN), |(a, z), i| (a.min(y(i)), z.max(y(i))));
        let sb_of = |px: i32, count: usize| (px.max(0) as usize / 64).min(count - 1);
        let (x0, y0) = (8 * b.col as i32, 8 * b.row as i32);
        let rect = Rect {
            rows: (
                sb_of(y0 + min_y - READ_MARGIN, sb_rows),
                sb_of(y0 + 8 * h8 as i32 - 1 + max_y + READ_MARGIN, sb_rows),
            ),
            cols: (
                sb_of(x0 + min_x - READ_MARGIN, sb_cols),
                sb_of(x0 + 8 * w8 as i32 - 1 + max_x + READ_MARGIN, sb_cols),
            ),
        };
        *slot = Some(slot.map_or(rect, |r| r.union(rect)));
    }
    reads
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The decoder's `sb_blocks` words for (first record, count) pairs, each record with 10
    /// coefficients packed after the ones before it in its region (a record region's start
    /// times 10).
    fn words(pairs: &[(u32, u32)]) -> Vec<u32> {
        pairs
            .iter()
            .flat_map(|&(f, c)| [f, c, 10 * f, 10 * c])
            .collect()
    }

    fn run(first: u32, count: u32) -> Run {
        Run {
            first,
            count,
            first_coef: 10 * first,
            coefs: 10 * count,
        }
    }

    fn rect(rows: (usize, usize), cols: (usize, usize)) -> Option<Rect> {
        Some(Rect { rows, cols })
    }

    /// What a block reads: its place moved by its vectors (each of a block under 8x8's four),
    /// 16 pixels around, clamped to the frame; a compound block's second reference by its
    /// second vectors.
    #[test]
    fn a_block_reads_where_its_vectors_point() {
        use crate::vp9::frame::records::test_record;
        // a 64x64 block at superblock (1, 1) of 4 x 3, moved 64 pixels right and 8 up
        let mut b = test_record(8, 8, 0, 0, 0, 0, 0);
        b.mv = [[[64 * 8, -8 * 8], [0, 0]]; 4];
        assert_eq!(reads(&b, 4, 3), [rect((0, 2), (1, 3)), None, None]);
        // exactly on its place: 16 pixels into each neighbour
        b.mv = [[[0, 0], [0, 0]]; 4];
        assert_eq!(reads(&b, 4, 3), [rect((0, 2), (0, 2)), None, None]);
        // far outside, clamped
        b.mv = [[[-4000 * 8, 4000 * 8], [0, 0]]; 4];
        assert_eq!(reads(&b, 4, 3), [rect((2, 2), (0, 0)), None, None]);
        // a 4x4 block's four vectors, its second reference golden's; at (0, 0)
        let mut b = test_record(3, 3, 12, 0, 0, BLOCK_COMP, 0);
        b.reference = [0, 1];
        b.mv = [[[0, 0], [0, 0]]; 4];
        b.mv[2][0] = [100 * 8, 0];
        b.mv[1][1] = [0, 50 * 8];
        assert_eq!(
            reads(&b, 4, 3),
            [rect((0, 0), (0, 2)), rect((0, 1), (0, 0)), None]
        );
    }

    #[test]
    fn one_run_per_region_of_records() {
        // 2 x 2 superblocks: one thread's records in order, 3 blocks each
        let counts = [(0, 3), (3, 3), (6, 3), (9, 3)];
        let w = words(&counts);
        let sb = SbBlocks::new(2, &w);
        assert_eq!(record_runs(&sb, 0..2), [run(0, 12)]);
        assert_eq!(record_runs(&sb, 1..2), [run(6, 6)]);
        // two tile columns parsed apart: column 0's region from 0, column 1's from 128
        let counts = [(0, 3), (128, 2), (3, 4), (130, 1)];
        let w = words(&counts);
        let sb = SbBlocks::new(2, &w);
        assert_eq!(record_runs(&sb, 0..2), [run(0, 7), run(128, 3)]);
        // a superblock not parsed (an error before it) is skipped
        let counts = [(0, 3), (3, 3), (6, 2), (0, 0)];
        let w = words(&counts);
        let sb = SbBlocks::new(2, &w);
        assert_eq!(record_runs(&sb, 0..2), [run(0, 8)]);
    }
}
