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
//! A frame's jobs are ranges of records: the blocks of its superblocks, which a decoder that
//! parses every tile column in turn stores as one range, and one that parses tile columns on
//! threads of their own as one range per column.

use super::records::SbBlocks;

/// The record ranges `(first, count)` of the superblocks of rows `rows`, in order, each as
/// long as the records allow.
pub fn record_ranges(sb: &SbBlocks, rows: std::ops::Range<usize>) -> Vec<(u32, u32)> {
    let mut ranges: Vec<(u32, u32)> = Vec::new();
    for row in rows {
        for col in 0..sb.sb_cols {
            let (first, count) = sb.get(row * sb.sb_cols + col);
            if count == 0 {
                continue;
            }
            match ranges.iter_mut().find(|r| r.0 + r.1 == first) {
                Some(r) => r.1 += count,
                None => ranges.push((first, count)),
            }
        }
    }
    ranges
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The decoder's `sb_blocks` words for (first record, count) pairs.
    fn words(pairs: &[(u32, u32)]) -> Vec<u32> {
        pairs.iter().flat_map(|&(f, c)| [f, c]).collect()
    }

    #[test]
    fn one_range_per_region_of_records() {
        // 2 x 2 superblocks: one thread's records in order, 3 blocks each
        let counts = [(0, 3), (3, 3), (6, 3), (9, 3)];
        let w = words(&counts);
        let sb = SbBlocks::new(2, &w);
        assert_eq!(record_ranges(&sb, 0..2), [(0, 12)]);
        assert_eq!(record_ranges(&sb, 1..2), [(6, 6)]);
        // two tile columns parsed apart: column 0's region from 0, column 1's from 128
        let counts = [(0, 3), (128, 2), (3, 4), (130, 1)];
        let w = words(&counts);
        let sb = SbBlocks::new(2, &w);
        assert_eq!(record_ranges(&sb, 0..2), [(0, 7), (128, 3)]);
        // a superblock not parsed (an error before it) is skipped
        let counts = [(0, 3), (3, 3), (6, 2), (0, 0)];
        let w = words(&counts);
        let sb = SbBlocks::new(2, &w);
        assert_eq!(record_ranges(&sb, 0..2), [(0, 8)]);
    }
}
