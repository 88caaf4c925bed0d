//! Intra prediction on the frame path (`shaders/vp9_intra.comp`, `vp9_ipred.glsl`): FFmpeg
//! predicts each intra transform block from its left column, the row above and the top-left
//! pixel (the top-right of a 4x4 stays inside its block's width), after the one before it in
//! decode order. A workgroup per plane of a superblock walks the superblock's blocks in that
//! order, a transform block at a time; superblocks go out as a wavefront, a dispatch level per
//! diagonal (column + row), since a superblock reads only those left of it, above it and above
//! left of it. Only superblocks with an intra block are in the jobs. The CPU reference of the
//! predictors is [`crate::kernels::ipred`].
//!
//! Job word: the superblock, its plane at bit 24, and at bit 30 that the row above it was
//! reconstructed by an earlier part (and loop filtered since): its last line then comes from
//! the line saved before its loop filter (`vp9_lines.comp`), as FFmpeg's `intra_pred_data`.

use super::records::{BlockRecord, SbBlocks, BLOCK_INTRA};

/// The row above was loop filtered: read the saved line.
pub const ABOVE_SAVED: u32 = 1 << 30;

/// The jobs of the superblocks of `rows` that hold an intra block, by wavefront level (in
/// order of level; each level's jobs a superblock's three planes after another's).
/// `rows` is a part's: the row above its first, if any, is read from the saved line.
pub fn levels(
    sb: &SbBlocks,
    records: &[BlockRecord],
    rows: std::ops::Range<usize>,
) -> Vec<Vec<u32>> {
    let first_row = rows.start;
    let mut levels: Vec<Vec<u32>> = Vec::new();
    for row in rows {
        for col in 0..sb.sb_cols {
            let index = row * sb.sb_cols + col;
            let (first, count) = sb.get(index);
            let blocks = records
                .get(first as usize..(first + count) as usize)
                .unwrap_or(&[]);
            if !blocks.iter().any(|b| b.flags & BLOCK_INTRA != 0) {
                continue;
            }
            let level = row - first_row + col;
            if levels.len() <= level {
                levels.resize(level + 1, Vec::new());
            }
            let saved = if row == first_row && row > 0 {
                ABOVE_SAVED
            } else {
                0
            };
            for plane in 0..3u32 {
                levels[level].push(index as u32 | plane << 24 | saved);
            }
        }
    }
    levels.retain(|l| !l.is_empty());
    levels
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The decoder's `sb_blocks` words for (first record, count) pairs.
    fn words(pairs: &[(u32, u32)]) -> Vec<u32> {
        pairs.iter().flat_map(|&(f, c)| [f, c]).collect()
    }

    fn block(flags: u8) -> BlockRecord {
        BlockRecord {
            flags,
            ..Default::default()
        }
    }

    #[test]
    fn superblocks_with_intra_blocks_by_diagonal() {
        // 3 x 2 superblocks, a block each; intra at (col 0, row 0), (2, 0), (1, 1)
        let records = [BLOCK_INTRA, 0, BLOCK_INTRA, 0, BLOCK_INTRA, 0].map(block);
        let counts: Vec<(u32, u32)> = (0..6).map(|i| (i, 1)).collect();
        let w = words(&counts);
        let sb = SbBlocks::new(3, &w);
        let l = levels(&sb, &records, 0..2);
        let sbs = |level: &Vec<u32>| -> Vec<u32> {
            level.iter().step_by(3).map(|j| j & 0xffffff).collect()
        };
        // (0,0) at level 0, (2,0) and (1,1) at level 2; level 1 had none
        assert_eq!(l.len(), 2);
        assert_eq!(sbs(&l[0]), [0]);
        assert_eq!(sbs(&l[1]), [2, 4]);
        assert!(l.iter().flatten().all(|j| j & ABOVE_SAVED == 0));
        // a part from row 1 reads the row above from the saved line
        let l = levels(&sb, &records, 1..2);
        assert_eq!(sbs(&l[0]), [4]);
        assert!(l[0].iter().all(|j| j & ABOVE_SAVED != 0));
        assert_eq!(
            l[0].iter().map(|j| j >> 24 & 3).collect::<Vec<_>>(),
            [0, 1, 2]
        );
    }
}
