//! The blocks' residuals on the frame path (`shaders/vp9_inter_residual.comp`,
//! `vp9_itx.glsl`), after the inter blocks' prediction ([`super::inter`]): each transform block
//! with coefficients gets its inverse transform, an inter block's added to the predicted
//! pixels as FFmpeg's `inter_recon` adds it, an intra block's kept in the frame data's residual
//! area for its prediction, which follows on the wavefront ([`super::intra`]): computed
//! here all at once, a transform never waits on the wavefront's levels (on lavapipe they were
//! three fifths of the intra blocks' time, a few lanes at a time). Transform blocks of one
//! block cover pixels of their own, so their order does not matter.
//!
//! The host lists them where it lists a frame's jobs, by size, from the end-of-block positions
//! the decoder stored: a workgroup of 32 invocations takes a group of [`SLOTS`] transform
//! blocks, as many of one size as it has room for (8 of 4x4, 4 of 8x8, 2 of 16x16, one
//! 32x32; N invocations each, a column each), the rest of the group [`NONE`]. So no invocation
//! walks a block's transform blocks for the others, and a group of small blocks keeps every
//! invocation busy. The CPU reference of the transforms is [`crate::kernels::itx`].
//!
//! The decoder packs the coefficients ([`super::records`]): the host, walking the blocks in
//! the decoder's order, gives each transform block where its first coefficient is, and the
//! workgroup puts them back in place by the transform's scan order before it transforms.
//!
//! A group: [`SLOTS`] job words, then the [`SLOTS`] transform blocks' first coefficients (an
//! index into the packed coefficients). Job word: the record (bits 10-31), the plane (8-9),
//! the transform block's index in the block's grid of the plane (0-7: raster order over the
//! part of the block inside the frame).

use super::records::{size8, BlockRecord, Run, BLOCK_SKIP, BLOCK_UNPREDICTED};
use crate::kernels::RESIDUAL_GROUP;

/// Words per workgroup (the job area has room for them: [`super::records::Layout`]; the
/// engine splits a dispatch by them).
pub const GROUP: usize = RESIDUAL_GROUP;

/// Transform blocks a group has room for.
pub const SLOTS: usize = GROUP / 2;

/// A group's word past its transform blocks.
pub const NONE: u32 = u32::MAX;

/// Records the job word can name.
pub const MAX_RECORDS: u32 = 1 << 22;

/// The frame's size in 8x8 blocks (FFmpeg's `cols`, `rows`) and chroma's subsampling: what
/// cuts a block's grid of transform blocks at the frame's edge.
#[derive(Clone, Copy, Debug)]
pub struct Frame {
    pub cols: u32,
    pub rows: u32,
    pub ss_h: u32,
    pub ss_v: u32,
}

/// The lists a frame's residual jobs are made in, kept from frame to frame: their memory is
/// reused rather than allocated and its pages faulted in again, frame after frame (on
/// lavapipe's host 5 % less of the host's time submitting a 1080p frame).
#[derive(Default)]
pub struct Lists {
    /// (job word, first coefficient) by size
    by_size: [Vec<(u32, u32)>; 4],
    words: Vec<u32>,
    /// A frame's job words by size, band after band ([`super::levels`]).
    pub by_band: [Vec<u32>; 4],
}

/// The job groups of the blocks among `records` (the frame's, by index) of the runs `runs`:
/// for each transform block, `eob(plane, at, wide)` gives its end-of-block position, `at` its
/// place in the plane's end-of-block array and `wide` that FFmpeg stores it in 16 bits (16x16
/// and up); those with coefficients are listed, with where their first is. Smallest
/// transforms first; with the words of each size's groups (a kernel each). Made in `lists`.
pub fn jobs<'a>(
    lists: &'a mut Lists,
    records: &[BlockRecord],
    runs: &[Run],
    frame: Frame,
    mut eob: impl FnMut(usize, usize, bool) -> u32,
) -> (&'a [u32], [usize; 4]) {
    let by_size = &mut lists.by_size;
    by_size.iter_mut().for_each(Vec::clear);
    for run in runs {
        // The decoder's order: block after block, luma's transform blocks then each chroma
        // plane's, each taking its end-of-block position's count.
        let mut coef = run.first_coef;
        for index in run.first..run.first + run.count {
            let Some(b) = records.get(index as usize) else {
                break;
            };
            // (A frame with more records than the job word names goes to FFmpeg: mod.rs.)
            if b.flags & BLOCK_SKIP != 0 {
                continue;
            }
            // (Not predicted, not reconstructed: its coefficients take their room still.)
            let listed = b.flags & BLOCK_UNPREDICTED == 0;
            for plane in 0..3u32 {
                let size_log2 = if plane == 0 { b.tx } else { b.uvtx }.min(3) as u32;
                let (ss_h, ss_v) = if plane == 0 {
                    (0, 0)
                } else {
                    (frame.ss_h, frame.ss_v)
                };
                let grid = grid(b, frame, ss_h, ss_v, size_log2);
                // FFmpeg's eob array of the plane: 16 bytes per 8x8 luma block's worth
                let eobs = (b.unit as usize * 4) >> (ss_h + ss_v);
                for t in 0..grid.0 * grid.1 {
                    let n = (t as usize) << (2 * size_log2);
                    let end = eob(plane as usize, eobs + n, size_log2 > 1);
                    if end != 0 && listed {
                        let job = index << 10 | plane << 8 | t;
                        by_size[size_log2 as usize].push((job, coef));
                    }
                    coef += end;
                }
            }
        }
    }
    let groups = |s: usize| by_size[s].len().div_ceil(SLOTS >> s);
    let words_by_size = [0, 1, 2, 3].map(|s| groups(s) * GROUP);
    let words = &mut lists.words;
    words.clear();
    words.reserve(words_by_size.iter().sum());
    for (size_log2, list) in by_size.iter().enumerate() {
        for blocks in list.chunks(SLOTS >> size_log2) {
            let jobs = words.len();
            words.extend(blocks.iter().map(|b| b.0));
            words.resize(jobs + SLOTS, NONE);
            words.extend(blocks.iter().map(|b| b.1));
            words.resize(jobs + GROUP, 0);
        }
    }
    (words, words_by_size)
}

/// Transform blocks across and down of a plane of `b` (`vp9_residual.glsl`'s `tx_grid`): the
/// block's 4x4 blocks inside the frame's whole 8x8 blocks, per transform block of its size.
pub(super) fn grid(
    b: &BlockRecord,
    frame: Frame,
    ss_h: u32,
    ss_v: u32,
    size_log2: u32,
) -> (u32, u32) {
    let (w8, h8) = size8(b.bs);
    let across = (2 * frame.cols.saturating_sub(b.col as u32)).min(2 * w8) >> ss_h;
    let down = (2 * frame.rows.saturating_sub(b.row as u32)).min(2 * h8) >> ss_v;
    let step = 1 << size_log2;
    (across.div_ceil(step), down.div_ceil(step))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vp9::frame::records::{test_record as block, BLOCK_INTRA};

    const FRAME: Frame = Frame {
        cols: 16,
        rows: 16,
        ss_h: 1,
        ss_v: 1,
    };

    fn run(first: u32, count: u32, first_coef: u32) -> Run {
        Run {
            first,
            count,
            first_coef,
            coefs: 0,
        }
    }

    /// Every transform block with coefficients, intra blocks' too, in groups of one size
    /// each, the smallest first, each with where its first packed coefficient is; skipped and
    /// unpredicted blocks are left out (the unpredicted one's coefficients take room still).
    #[test]
    fn transform_blocks_grouped_by_size() {
        let records = [
            // 16x16 with 4x4 luma (16 of them), 4x4 chroma (4 each)
            block(0, 0, 6, 0, 0, 0, 0),
            // 64x64 with 32x32 luma (4), 32x32 chroma (1 each)
            block(2, 0, 0, 3, 3, 0, 4),
            block(0, 2, 9, 1, 0, BLOCK_SKIP, 68),
            block(1, 2, 9, 1, 0, BLOCK_UNPREDICTED, 69),
            block(1, 3, 9, 1, 0, BLOCK_INTRA, 70),
        ];
        // every transform block ends at position 1: one coefficient each, from 100 on
        let mut lists = Lists::default();
        let (words, by_size) = jobs(&mut lists, &records, &[run(0, 5, 100)], FRAME, |_, _, _| 1);
        assert_eq!(words.len() % GROUP, 0);
        // (a dispatch per size, of its groups' words)
        assert_eq!(by_size, [4 * GROUP, GROUP, 0, 6 * GROUP]);
        let groups: Vec<(&[u32], &[u32])> =
            words.chunks(GROUP).map(|g| g.split_at(SLOTS)).collect();
        let live = groups.iter().flat_map(|g| g.0).filter(|&&w| w != NONE);
        assert_eq!(live.count(), (16 + 4 + 4) + (1 + 2) + (4 + 1 + 1));
        // 4x4: 26 in 4 groups (the intra block's chroma last); its 8x8 luma alone; 32x32: 6
        // alone
        assert_eq!(groups.len(), 4 + 1 + 6);
        assert!(groups[..3].iter().all(|g| g.0.iter().all(|&w| w != NONE)));
        // record 0: luma 100-115, chroma 116-123; record 1: luma 124-127, chroma 128, 129;
        // record 3 (unpredicted): 130-132; record 4: luma 133, chroma 134, 135
        assert_eq!(groups[0].0[..2], [0, 1]);
        assert_eq!(groups[0].1, [100, 101, 102, 103, 104, 105, 106, 107]);
        assert_eq!(groups[2].0[0], 1 << 8); // record 0's chroma U's first
        assert_eq!(groups[2].1[0], 116);
        assert_eq!(groups[3].0[..3], [4 << 10 | 1 << 8, 4 << 10 | 2 << 8, NONE]);
        assert_eq!(groups[3].1[..3], [134, 135, 0]);
        assert_eq!(groups[4].0[..2], [4 << 10, NONE]);
        assert_eq!(groups[4].1[0], 133);
        for (k, g) in groups[5..].iter().enumerate() {
            assert_eq!(g.0[0] >> 10, 1);
            assert!(g.0[1..].iter().all(|&w| w == NONE));
            assert_eq!(g.1[0], 124 + k as u32);
        }
    }

    /// A block across the frame's edge keeps the transform blocks FFmpeg visits, each at its
    /// end-of-block position: only those with coefficients go out.
    #[test]
    fn edges_and_end_of_block_positions() {
        // 64x64 at column 14 of a 16-column frame: 2 of its 8 8x8 columns inside; 8x8 luma
        let records = [block(14, 0, 0, 1, 0, 0, 3)];
        let mut asked = Vec::new();
        let mut lists = Lists::default();
        let (words, by_size) = jobs(
            &mut lists,
            &records,
            &[run(0, 1, 0)],
            FRAME,
            |plane, at, wide| {
                asked.push((plane, at, wide));
                if plane == 0 && at == 12 + 4 {
                    3
                } else {
                    (plane == 2) as u32
                }
            },
        );
        // luma: 2 x 8 8x8 blocks (indices step 4); chroma: 2 x 8 4x4 blocks each
        assert_eq!(asked.iter().filter(|a| a.0 == 0).count(), 16);
        assert_eq!(asked.iter().filter(|a| a.0 == 1).count(), 16);
        assert!(asked.iter().all(|a| !a.2));
        assert_eq!(asked[0], (0, 12, false));
        assert_eq!(asked[16], (1, 3, false));
        // the V ones (4x4 first), each a coefficient after the luma one's 3; then the luma
        // one (the second visited), from the first
        assert_eq!(words[..2], [2 << 8, 2 << 8 | 1]);
        assert_eq!(words[SLOTS..SLOTS + 2], [3, 4]);
        assert_eq!(words[GROUP + SLOTS + 7], 18);
        let luma = &words[2 * GROUP..];
        assert_eq!(luma[..SLOTS], [1, NONE, NONE, NONE, NONE, NONE, NONE, NONE]);
        assert_eq!(luma[SLOTS], 0);
        assert_eq!(words.len(), 3 * GROUP);
        assert_eq!(by_size, [2 * GROUP, GROUP, 0, 0]);
        // 16x16 and up store 16-bit positions
        let records = [block(0, 0, 3, 2, 1, 0, 0)];
        let mut wide = Vec::new();
        jobs(
            &mut Lists::default(),
            &records,
            &[run(0, 1, 0)],
            FRAME,
            |plane, _, w| {
                wide.push((plane, w));
                0
            },
        );
        wide.dedup();
        assert_eq!(wide, [(0, true), (1, false), (2, false)]);
    }
}
