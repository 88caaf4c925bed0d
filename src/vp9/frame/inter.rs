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
//! A frame's jobs are runs of records: the blocks of its superblocks, which a decoder that
//! parses every tile column in turn stores as one run, and one that parses tile columns on
//! threads of their own as one run per column.

use super::records::{Run, SbBlocks};

/// The runs of records (and of their packed coefficients) of the superblocks of rows `rows`,
/// in order, each as long as the records and coefficients allow.
pub fn record_runs(sb: &SbBlocks, rows: std::ops::Range<usize>) -> Vec<Run> {
    let mut runs: Vec<Run> = Vec::new();
    for row in rows {
        for col in 0..sb.sb_cols {
            let index = row * sb.sb_cols + col;
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
    }
    runs
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
