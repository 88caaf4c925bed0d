//! The order of a frame's intra blocks and loop filter: two wavefronts over its superblocks,
//! a dispatch level each step, the intra blocks' first, then the loop filter's. A level costs
//! the GPU the latency of its slowest workgroup and a barrier, so each wavefront has as few
//! levels as its stage's own order allows, and a level holds one stage's workgroups, which
//! take about as long as each other.
//!
//! The intra blocks: FFmpeg predicts a superblock from pixels not yet loop filtered (the
//! column left of it, the line above and the pixel above left), after the inter blocks
//! (finished by then), so a superblock's intra blocks follow those of the superblocks left,
//! above and above left only: a superblock goes one level after the latest of those that have
//! intra blocks, the first level where none has. An inter frame's few intra superblocks take
//! a few levels; an intra frame's, one per diagonal `col + row`. None of them reads a pixel the
//! loop filter changed, since the loop filter comes after all of them.
//!
//! The loop filter follows the superblocks left of it and above it ([`super::loopfilter`]):
//! one level per diagonal `col + row`.

/// What a superblock needs: its intra jobs (none where it has no intra block) and its
/// loop-filter jobs (none where not filtered).
pub struct Superblock {
    pub intra: Vec<u32>,
    pub lf: Vec<u32>,
}

/// A frame's two wavefronts: the jobs of each level, intra blocks ([`super::intra`]), then
/// loop filter ([`super::loopfilter`]). No level is empty.
#[derive(Debug, Default)]
pub struct Wavefronts {
    pub intra: Vec<Vec<u32>>,
    pub lf: Vec<Vec<u32>>,
}

/// The wavefronts of the superblocks of rows `rows`, `sb_cols` across; `of(row, col)` says
/// what each needs.
pub fn levels(
    sb_cols: usize,
    rows: std::ops::Range<usize>,
    mut of: impl FnMut(usize, usize) -> Superblock,
) -> Wavefronts {
    let mut waves = Wavefronts::default();
    // Each superblock's intra level plus one (0: no intra block), row by row.
    let mut intra_level = vec![0usize; sb_cols * rows.len()];
    for (r, row) in rows.enumerate() {
        for col in 0..sb_cols {
            let sb = of(row, col);
            if !sb.intra.is_empty() {
                let at = |r: usize, c: usize| intra_level[r * sb_cols + c];
                let mut level = 0;
                if col > 0 {
                    level = level.max(at(r, col - 1));
                }
                if r > 0 {
                    level = level.max(at(r - 1, col));
                    if col > 0 {
                        level = level.max(at(r - 1, col - 1));
                    }
                }
                intra_level[r * sb_cols + col] = level + 1;
                add(&mut waves.intra, level, sb.intra);
            }
            add(&mut waves.lf, col + r, sb.lf);
        }
    }
    waves.lf.retain(|level| !level.is_empty());
    waves
}

/// A wavefront's stage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    Intra,
    LoopFilter,
}

impl Wavefronts {
    /// Every level in the order they run: the intra blocks' all before the loop filter's.
    pub fn in_order(self) -> impl Iterator<Item = (Stage, Vec<u32>)> {
        let intra = self.intra.into_iter().map(|jobs| (Stage::Intra, jobs));
        intra.chain(self.lf.into_iter().map(|jobs| (Stage::LoopFilter, jobs)))
    }
}

/// Adds `jobs` to level `level` of `wave`.
fn add(wave: &mut Vec<Vec<u32>>, level: usize, jobs: Vec<u32>) {
    if jobs.is_empty() {
        return;
    }
    if wave.len() <= level {
        wave.resize(level + 1, Vec::new());
    }
    wave[level].extend(jobs);
}

/// The job words of a superblock's three planes: the superblock, the plane at bit 24.
pub fn superblock_planes(sb: usize) -> [u32; 3] {
    [0, 1, 2].map(|plane| sb as u32 | plane << 24)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The level of superblock (row, col)'s jobs in `wave`, if any.
    fn level_of(wave: &[Vec<u32>], cols: usize, row: usize, col: usize) -> Option<usize> {
        let sb = (row * cols + col) as u32;
        wave.iter().position(|level| level.contains(&sb))
    }

    /// Where superblocks meet, FFmpeg's order holds: each superblock's intra blocks after
    /// those left, above and above left of it (all intra blocks before any loop filter); each
    /// loop filter after the loop filter left and above (the one above right hands it the
    /// corner it reaches: `super::loopfilter`).
    #[test]
    fn superblocks_keep_ffmpegs_order_where_they_meet() {
        let (cols, rows) = (6, 4);
        // intra blocks in every superblock but (1, 3) and (2, 2): (2, 3) reads only the one
        // above left
        let has_intra = |r: usize, c: usize| !matches!((r, c), (1, 3) | (2, 2));
        let waves = levels(cols, 0..rows, |row, col| Superblock {
            intra: if has_intra(row, col) {
                superblock_planes(row * cols + col).to_vec()
            } else {
                Vec::new()
            },
            lf: superblock_planes(row * cols + col).to_vec(),
        });
        let intra = |r, c| level_of(&waves.intra, cols, r, c);
        let lf = |r, c| level_of(&waves.lf, cols, r, c).expect("filtered");
        for r in 0..rows {
            for c in 0..cols {
                assert_eq!(intra(r, c).is_some(), has_intra(r, c));
                if let Some(l) = intra(r, c) {
                    let before = |rr: usize, cc: usize| intra(rr, cc).is_none_or(|x| x < l);
                    assert!(c == 0 || before(r, c - 1));
                    assert!(r == 0 || before(r - 1, c));
                    assert!(r == 0 || c == 0 || before(r - 1, c - 1));
                }
                let l = lf(r, c);
                assert!(c == 0 || lf(r, c - 1) < l);
                assert!(r == 0 || lf(r - 1, c) < l);
                assert!(r == 0 || c + 1 == cols || lf(r - 1, c + 1) == l);
            }
        }
        // an intra frame's intra blocks: one level per diagonal col + row
        assert_eq!(intra(3, 5), Some(8));
    }

    /// An inter frame's intra superblocks that read no other's go together in the first level.
    #[test]
    fn scattered_intra_superblocks_share_a_level() {
        let (cols, rows) = (8, 6);
        let waves = levels(cols, 0..rows, |row, col| Superblock {
            intra: if (row + col) % 3 == 0 && col % 2 == 0 {
                vec![(row * cols + col) as u32]
            } else {
                Vec::new()
            },
            lf: Vec::new(),
        });
        assert_eq!(waves.intra.len(), 1);
        assert_eq!(waves.intra[0].len(), 8);
        assert!(waves.lf.is_empty());
    }

    /// No intra block reads a pixel the loop filter changed: every loop-filter level runs
    /// after every intra level.
    #[test]
    fn the_loop_filter_runs_after_every_intra_block() {
        let waves = levels(4, 0..3, |row, col| Superblock {
            intra: if (row + col) % 2 == 0 {
                vec![1]
            } else {
                Vec::new()
            },
            lf: vec![2],
        });
        let stages: Vec<Stage> = waves.in_order().map(|(stage, _)| stage).collect();
        let first_lf = stages.iter().position(|&s| s == Stage::LoopFilter);
        assert!(first_lf.is_some_and(|f| stages[f..].iter().all(|&s| s == Stage::LoopFilter)));
        assert!(stages.contains(&Stage::Intra));
    }

    #[test]
    fn empty_levels_are_left_out() {
        // one superblock with neither intra blocks nor a loop filter: no level at all
        let waves = levels(3, 2..3, |_, col| Superblock {
            intra: Vec::new(),
            lf: if col == 2 { vec![7] } else { Vec::new() },
        });
        assert!(waves.intra.is_empty());
        assert_eq!(waves.lf, [vec![7]]);
        let none = levels(3, 2..2, |_, _| unreachable!());
        assert!(none.intra.is_empty() && none.lf.is_empty());
    }
}
