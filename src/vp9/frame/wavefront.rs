//! The order of a frame's intra blocks and loop filter: one wavefront over its superblocks, a
//! dispatch level per diagonal `col + 2 row`, each level holding the intra jobs of its
//! diagonal and the loop filter of the diagonal [`LF_LAG`] before it. Levels cost the GPU a
//! barrier each, and on a device whose
//! memory is far away a round trip or more: running the stages side by side on one wavefront
//! takes about half the levels of running them one after the other.
//!
//! The lag keeps FFmpeg's order where superblocks meet. FFmpeg predicts a superblock from
//! pixels not yet loop filtered: its left column (superblock left), its top line (above) and
//! the top-left pixel (above left). The loop filter of a superblock changes its own pixels, 8
//! columns of the one left of it and 8 lines of the one above; so the superblock above left's
//! corner changes with the loop filter of that superblock, of the one above and of the one
//! left, the earliest of which is 3 diagonals before: the loop filter runs 4 diagonals after
//! the intra blocks of a superblock. The loop filter itself follows the superblocks left, above
//! and above right ([`super::loopfilter`]), which `col + 2 row` orders.

/// Diagonals between a superblock's intra blocks and its loop filter.
pub const LF_LAG: usize = 4;

/// A level's jobs: intra prediction ([`super::intra`]), loop filter ([`super::loopfilter`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Level {
    pub intra: Vec<u32>,
    pub lf: Vec<u32>,
}

/// What a superblock needs: its intra jobs (none where it has no intra block) and its
/// loop-filter jobs (none where not filtered).
pub struct Superblock {
    pub intra: Vec<u32>,
    pub lf: Vec<u32>,
}

/// The levels of the superblocks of rows `rows`, `sb_cols` across; `of(row, col)` says what
/// each needs. Empty levels are left out.
pub fn levels(
    sb_cols: usize,
    rows: std::ops::Range<usize>,
    mut of: impl FnMut(usize, usize) -> Superblock,
) -> Vec<Level> {
    let Some(last) = rows.len().checked_sub(1) else {
        return Vec::new();
    };
    let mut levels = vec![Level::default(); sb_cols + 2 * last + LF_LAG];
    for row in rows.clone() {
        for col in 0..sb_cols {
            let d = col + 2 * (row - rows.start);
            let sb = of(row, col);
            levels[d].intra.extend(sb.intra);
            levels[d + LF_LAG].lf.extend(sb.lf);
        }
    }
    levels.retain(|l| !(l.intra.is_empty() && l.lf.is_empty()));
    levels
}

/// The job words of a superblock's three planes: the superblock, the plane at bit 24.
pub fn superblock_planes(sb: usize) -> [u32; 3] {
    [0, 1, 2].map(|plane| sb as u32 | plane << 24)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The level of each superblock's intra and loop-filter jobs.
    fn placed(cols: usize, rows: usize) -> impl Fn(&str, usize, usize) -> usize {
        let l = levels(cols, 0..rows, |row, col| Superblock {
            intra: superblock_planes(row * cols + col).to_vec(),
            lf: superblock_planes(row * cols + col).to_vec(),
        });
        move |stage, row, col| {
            let sb = (row * cols + col) as u32;
            l.iter()
                .position(|lv| {
                    let jobs = match stage {
                        "intra" => &lv.intra,
                        _ => &lv.lf,
                    };
                    jobs.contains(&sb)
                })
                .unwrap_or_else(|| panic!("{stage} of {row},{col} missing"))
        }
    }

    /// Where superblocks meet, FFmpeg's order holds: each superblock's intra blocks after
    /// those left, above and above left of it, and before any loop filter changes the pixels
    /// they read; each loop filter after the intra blocks of every superblock it changes and
    /// after the loop filter left, above and above right.
    #[test]
    fn superblocks_keep_ffmpegs_order_where_they_meet() {
        let (cols, rows) = (6, 4);
        let at = placed(cols, rows);
        for r in 0..rows {
            for c in 0..cols {
                let intra = at("intra", r, c);
                let lf = at("lf", r, c);
                assert!(intra < lf);
                if c > 0 {
                    assert!(at("intra", r, c - 1) < intra);
                    // the left column: the loop filter of the superblock left
                    assert!(intra < at("lf", r, c - 1));
                    assert!(at("lf", r, c - 1) < lf);
                }
                if r > 0 {
                    assert!(at("intra", r - 1, c) < intra);
                    // the top line: the loop filters of the superblock above, above right
                    assert!(intra < at("lf", r - 1, c));
                    if c + 1 < cols {
                        assert!(intra < at("lf", r - 1, c + 1));
                        assert!(at("lf", r - 1, c + 1) < lf);
                    }
                    assert!(at("lf", r - 1, c) < lf);
                    if c > 0 {
                        // the top-left pixel: above left, above and left change it
                        assert!(at("intra", r - 1, c - 1) < intra);
                        assert!(intra < at("lf", r - 1, c - 1));
                    }
                }
            }
        }
    }

    #[test]
    fn empty_levels_are_left_out() {
        // one superblock with neither intra blocks nor a loop filter: no level at all
        let l = levels(3, 2..3, |_, col| Superblock {
            intra: Vec::new(),
            lf: if col == 2 { vec![7] } else { Vec::new() },
        });
        assert_eq!(l.len(), 1);
        assert_eq!(l[0].lf, [7]);
        assert!(levels(3, 2..2, |_, _| unreachable!()).is_empty());
    }
}
