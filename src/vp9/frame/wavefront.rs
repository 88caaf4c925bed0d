//! The order of a frame's intra blocks and loop filter: one wavefront over its superblocks, a
//! dispatch level each step, where a level holds the intra blocks of some superblocks and the
//! loop filter of others side by side. A level costs the GPU the latency of its slowest
//! workgroup and a barrier, so the wavefront has as few levels as the two stages' orders allow.
//!
//! The intra blocks: FFmpeg predicts a superblock from pixels not yet loop filtered (the
//! column left of it, the line above and the pixel above left), after the inter blocks
//! (finished by then), so a superblock's intra blocks follow those of the superblocks left,
//! above and above left only: a superblock goes one level after the latest of those that have
//! intra blocks, the first level where none has. An inter frame's few intra superblocks take
//! a few levels; an intra frame's, one per diagonal `col + row`.
//!
//! The loop filter follows the superblocks left of it and above it ([`super::loopfilter`]), and
//! the intra blocks of every superblock whose pixels it changes or reads before they are
//! final: its own; the one right of it (which reads its last column, and whose last lines'
//! left edge it filters: the corner handoff); the one above right (which reads the last column
//! of the one above, whose last lines it filters); the ones below and below right (which read
//! its last line: FFmpeg keeps that line from before its loop filter, `intra_pred_data`). The
//! others it reaches (left, above) it follows already, through their own loop filter. Within
//! that, each superblock's loop filter takes the first level it may, beside other superblocks'
//! intra blocks: an intra frame's wavefront has about one level per diagonal (where one for
//! its intra blocks, then one for its loop filter, were two), and an inter frame's loop filter
//! starts beside its first intra blocks.

use std::ops::Range;

/// What a superblock needs: its intra jobs (none where it has no intra block), and whether it
/// is loop filtered.
#[derive(Clone, Debug, Default)]
pub struct Superblock {
    pub intra: Vec<u32>,
    pub filtered: bool,
}

/// A level of the wavefront: the intra jobs and loop-filter jobs that run side by side.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Level {
    pub intra: Vec<u32>,
    pub lf: Vec<u32>,
}

/// A wavefront: its levels in the order they run, none empty, and the level each is (counting
/// the empty ones left out); per superblock (raster order over its rows) the levels of its
/// intra blocks and of its loop filter, where it has them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Wave {
    pub levels: Vec<Level>,
    pub at: Vec<usize>,
    pub superblocks: Vec<(Option<usize>, Option<usize>)>,
}

/// The wavefront of the superblocks of rows `rows`, `sb_cols` across; `of(row, col)` says
/// what each needs (asked in raster order), `earliest(row, col)` the first level its jobs
/// may take (where the pixels they meet are ready: [`super::together`]).
pub fn levels(
    sb_cols: usize,
    rows: Range<usize>,
    mut of: impl FnMut(usize, usize) -> Superblock,
    earliest: impl Fn(usize, usize) -> usize,
) -> Wave {
    let (first_row, sb_rows) = (rows.start, rows.len());
    let mut levels: Vec<Level> = Vec::new();
    // Each superblock's intra level plus one (0: no intra block), and whether it is filtered.
    let mut intra_level = vec![0usize; sb_cols * sb_rows];
    let mut filtered = vec![false; sb_cols * sb_rows];
    for (r, row) in rows.enumerate() {
        for col in 0..sb_cols {
            let sb = of(row, col);
            let i = r * sb_cols + col;
            filtered[i] = sb.filtered;
            if sb.intra.is_empty() {
                continue;
            }
            let mut level = earliest(row, col);
            if col > 0 {
                level = level.max(intra_level[i - 1]);
            }
            if r > 0 {
                level = level.max(intra_level[i - sb_cols]);
                if col > 0 {
                    level = level.max(intra_level[i - sb_cols - 1]);
                }
            }
            intra_level[i] = level + 1;
            level_at(&mut levels, level).intra.extend(sb.intra);
        }
    }
    // Each superblock's loop-filter level (unfiltered ones too: the order passes through them).
    let mut lf_level = vec![0usize; sb_cols * sb_rows];
    let intra = |r: usize, c: usize| {
        if r < sb_rows && c < sb_cols {
            intra_level[r * sb_cols + c]
        } else {
            0
        }
    };
    for r in 0..sb_rows {
        for col in 0..sb_cols {
            let i = r * sb_cols + col;
            // (r - 1 wraps past every row where r is 0: no superblock there.)
            let mut level = intra(r, col)
                .max(intra(r, col + 1))
                .max(intra(r.wrapping_sub(1), col + 1))
                .max(intra(r + 1, col))
                .max(intra(r + 1, col + 1))
                .max(earliest(first_row + r, col));
            if col > 0 {
                level = level.max(lf_level[i - 1] + 1);
            }
            if r > 0 {
                level = level.max(lf_level[i - sb_cols] + 1);
            }
            lf_level[i] = level;
            if filtered[i] {
                let jobs = super::loopfilter::jobs((first_row + r) * sb_cols + col);
                level_at(&mut levels, level).lf.extend(jobs);
            }
        }
    }
    // Levels left empty go.
    let at = (0..levels.len())
        .filter(|&l| !levels[l].intra.is_empty() || !levels[l].lf.is_empty())
        .collect();
    levels.retain(|level| !level.intra.is_empty() || !level.lf.is_empty());
    let superblocks = (0..sb_cols * sb_rows)
        .map(|i| {
            let intra = intra_level[i].checked_sub(1);
            (intra, filtered[i].then_some(lf_level[i]))
        })
        .collect();
    Wave {
        levels,
        at,
        superblocks,
    }
}

/// Level `level` of `levels`, made (with those before it) where there is none yet.
pub(super) fn level_at<T: Clone + Default>(levels: &mut Vec<T>, level: usize) -> &mut T {
    if levels.len() <= level {
        levels.resize(level + 1, T::default());
    }
    &mut levels[level]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The level of superblock (row, col)'s jobs of one stage (`part`) in `levels`, if any (a
    /// loop-filter job names its superblock with its first plane).
    fn level_of(
        levels: &[Level],
        part: fn(&Level) -> &Vec<u32>,
        cols: usize,
        row: usize,
        col: usize,
    ) -> Option<usize> {
        let sb = (row * cols + col) as u32;
        levels.iter().position(|level| part(level).contains(&sb))
    }

    fn intra_part(level: &Level) -> &Vec<u32> {
        &level.intra
    }

    fn lf_part(level: &Level) -> &Vec<u32> {
        &level.lf
    }

    /// The levels of a frame alone (every superblock free from level 0) of rows `rows`,
    /// `cols` across: a superblock where `intra(row, col)` has an intra job (its index), and
    /// is loop filtered where `filtered(row, col)`.
    fn alone(
        cols: usize,
        rows: Range<usize>,
        intra: impl Fn(usize, usize) -> bool,
        filtered: impl Fn(usize, usize) -> bool,
    ) -> Vec<Level> {
        let of = |row: usize, col: usize| Superblock {
            intra: if intra(row, col) {
                vec![(row * cols + col) as u32]
            } else {
                Vec::new()
            },
            filtered: filtered(row, col),
        };
        levels(cols, rows, of, |_, _| 0).levels
    }

    /// Where superblocks meet, FFmpeg's order holds: each superblock's intra blocks after
    /// those left, above and above left of it; each loop filter after the loop filter left
    /// and above (the one above right hands it the corner it reaches: `super::loopfilter`),
    /// and after the intra blocks of the superblocks whose pixels it changes or reads before
    /// they are final (itself, right, above right, below, below right), never in their level.
    #[test]
    fn superblocks_keep_ffmpegs_order_where_they_meet() {
        let (cols, rows) = (6, 4);
        // intra blocks in every superblock but (1, 3), (2, 2) and (3, 0): (2, 3) reads only the
        // one above left
        let has_intra = |r: usize, c: usize| !matches!((r, c), (1, 3) | (2, 2) | (3, 0));
        let levels = alone(cols, 0..rows, has_intra, |_, _| true);
        let intra = |r: usize, c: usize| level_of(&levels, intra_part, cols, r, c);
        let lf = |r: usize, c: usize| level_of(&levels, lf_part, cols, r, c).expect("filtered");
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
                let mut readers = vec![(r, c), (r, c + 1), (r + 1, c), (r + 1, c + 1)];
                if r > 0 {
                    readers.push((r - 1, c + 1));
                }
                for (rr, cc) in readers
                    .into_iter()
                    .filter(|&(rr, cc)| rr < rows && cc < cols)
                {
                    assert!(
                        intra(rr, cc).is_none_or(|x| x < l),
                        "{rr} {cc} before {r} {c}"
                    );
                }
            }
        }
        // an intra superblock's blocks: one level per diagonal col + row
        assert_eq!(intra(3, 5), Some(8));
        // the loop filter at the first level its order allows: (0, 0) after the intra blocks
        // of (1, 1), at level 2; (3, 5) after the loop filter of (2, 5) and (3, 4), at 10;
        // some levels hold both stages
        assert_eq!(lf(0, 0), 3);
        assert_eq!(lf(3, 5), 11);
        assert!(levels
            .iter()
            .any(|l| !l.intra.is_empty() && !l.lf.is_empty()));
        // 9 levels of intra blocks and 9 diagonals of loop filter: 12 levels, where one stage
        // after the other took 18
        assert_eq!(levels.len(), 12);
    }

    /// An inter frame's intra superblocks that read no other's go together in the first level.
    #[test]
    fn scattered_intra_superblocks_share_a_level() {
        let (cols, rows) = (8, 6);
        let scattered = |row: usize, col: usize| (row + col) % 3 == 0 && col % 2 == 0;
        let levels = alone(cols, 0..rows, scattered, |_, _| false);
        assert_eq!(levels.len(), 1);
        assert_eq!(levels[0].intra.len(), 8);
        assert!(levels[0].lf.is_empty());
    }

    /// Without intra blocks the loop filter takes one level per diagonal col + row.
    #[test]
    fn an_inter_frames_loop_filter_goes_by_diagonals() {
        let (cols, rows) = (5, 3);
        let levels = alone(cols, 0..rows, |_, _| false, |_, _| true);
        assert_eq!(levels.len(), cols + rows - 1);
        for r in 0..rows {
            for c in 0..cols {
                assert_eq!(level_of(&levels, lf_part, cols, r, c), Some(r + c));
            }
        }
    }

    /// A frame parsed past its last filtered row (a damaged frame): the row parsed but not
    /// filtered has no loop-filter jobs, and still orders the loop filter above it after its
    /// intra blocks.
    #[test]
    fn a_row_parsed_but_not_filtered_still_orders_the_loop_filter() {
        let (cols, rows) = (4, 3);
        let has_intra = |row: usize, col: usize| row == 2 || (row, col) == (0, 0);
        let levels = alone(cols, 0..rows, has_intra, |row, _| row < 2);
        let intra = |r: usize, c: usize| level_of(&levels, intra_part, cols, r, c);
        let lf = |r: usize, c: usize| level_of(&levels, lf_part, cols, r, c);
        for c in 0..cols {
            assert_eq!(lf(2, c), None);
            let l = lf(1, c).expect("filtered");
            assert!(intra(2, c).expect("intra") < l);
            assert!(c + 1 == cols || intra(2, c + 1).expect("intra") < l);
        }
        // the row's intra blocks, one level per column: the loop filter of row 1 after them
        assert_eq!(intra(2, 3), Some(3));
        assert_eq!(lf(1, 0), Some(2));
        assert_eq!(lf(1, 3), Some(5));
    }

    #[test]
    fn empty_levels_are_left_out() {
        // one superblock with neither intra blocks nor a loop filter: no level at all
        let one = alone(3, 2..3, |_, _| false, |_, col| col == 2);
        assert_eq!(
            one,
            [Level {
                intra: Vec::new(),
                lf: super::super::loopfilter::jobs(8).to_vec(),
            }]
        );
        let none = levels(3, 2..2, |_, _| unreachable!(), |_, _| 0).levels;
        assert!(none.is_empty());
    }
}
