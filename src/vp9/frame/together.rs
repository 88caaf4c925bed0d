//! Frames on the GPU together: the frames that are ready while the GPU is busy go to it in one
//! submission, their dispatch levels interleaved, so that a frame's chain of levels runs beside
//! the chains of the frames before it rather than after them.
//!
//! A frame's superblock reads the frame before only around its own place (its vectors reach a
//! superblock or two below and right of it in nearly every frame of the test clips,
//! `docs/benchmarks-history.md`), and those pixels are final once the frame before's wavefront
//! has passed them. So a frame's inter blocks go in bands of [`BAND`] superblock diagonals,
//! each band (its prediction, then its residuals) in the first level after the levels that
//! write what its blocks read, and its wavefront ([`super::wavefront`]) starts where every
//! band its jobs meet is done. Its wavefront then trails the one before by a few levels, not
//! by the whole of it.
//!
//! [`place`] decides the levels from what each frame's work says of itself ([`Work`]: which
//! superblocks of its references its blocks read, which superblocks its wavefront's levels
//! meet); [`Together`] gathers the frames and records and submits them. Its thread waits for
//! the GPU, so a frame waiting for the GPU to take it never waits for a decoder's thread.

use crate::kernels::Kernel;

/// One dispatch: `count` jobs from `first` of `kernel` (a workgroup each).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dispatch {
    pub kernel: Kernel,
    pub first: u32,
    pub count: u32,
}

/// A frame's work: levels of dispatches, each level after the one before.
pub type Levels = Vec<Vec<Dispatch>>;

/// Superblock diagonals (`row + column`) of a band of inter blocks: one dispatch of their
/// prediction and one per transform size of their residuals. Fewer diagonals let a frame
/// trail the one before more closely, for more dispatches.
pub const BAND: usize = 4;

/// Superblocks `rows.0..=rows.1` down and `cols.0..=cols.1` across.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rect {
    pub rows: (usize, usize),
    pub cols: (usize, usize),
}

impl Rect {
    /// The rectangle covering both.
    pub fn union(self, other: Rect) -> Rect {
        Rect {
            rows: (self.rows.0.min(other.rows.0), self.rows.1.max(other.rows.1)),
            cols: (self.cols.0.min(other.cols.0), self.cols.1.max(other.cols.1)),
        }
    }
}

/// A frame's work, before it is placed among the other frames of its submission.
#[derive(Clone, Debug, Default)]
pub struct Work {
    pub sb_cols: usize,
    pub sb_rows: usize,
    /// Per band ([`band`]): its inter blocks' prediction and its residuals, the residuals a
    /// level after the prediction.
    pub inter: Vec<Vec<Dispatch>>,
    pub residuals: Vec<Vec<Dispatch>>,
    /// The wavefront's levels, from 0.
    pub wave: Levels,
    /// Per superblock (raster order): the first and last wavefront levels whose jobs read or
    /// write its pixels, where any does.
    pub touched: Vec<Option<(usize, usize)>>,
    /// Per superblock and reference: the superblocks of the reference its inter blocks read.
    pub reads: Vec<[Option<Rect>; 3]>,
    /// Per reference: its blocks may read all of it (a reference of another size, scaled).
    pub reads_whole: [bool; 3],
}

/// The band of superblock (`row`, `col`).
pub fn band(row: usize, col: usize) -> usize {
    (row + col) / BAND
}

/// The bands of a frame `sb_cols` by `sb_rows` superblocks.
pub fn bands(sb_cols: usize, sb_rows: usize) -> usize {
    (sb_cols + sb_rows).saturating_sub(1).div_ceil(BAND)
}

/// The superblocks of a wavefront job at (`row`, `col`) may read or write: its intra blocks
/// read the column left and the line above (above right included), its loop filter reaches 8
/// pixels into the superblocks left and above and, with the corner handoff, right.
pub fn meets(row: usize, col: usize, sb_cols: usize, sb_rows: usize) -> Rect {
    Rect {
        rows: (row.saturating_sub(1), (row + 1).min(sb_rows - 1)),
        cols: (col.saturating_sub(1), (col + 1).min(sb_cols - 1)),
    }
}

/// One frame's dispatch in a submission's levels: the frame (its index among them) and what
/// it runs.
pub type Placed = (usize, Dispatch);

/// The levels of frames submitted together, in their order: `refs[f][j]` names the earlier
/// frame among them that frame `f`'s reference `j` is, if any. A dispatch goes in the first
/// level after every level that writes what it reads; within a level the frames keep their
/// order, and a frame's dispatches of one kernel that follow one another in its job area are
/// one.
pub fn place(frames: &[&Work], refs: &[[Option<usize>; 3]]) -> Vec<Vec<Placed>> {
    let mut levels: Vec<Vec<Placed>> = Vec::new();
    // Per frame and superblock: the last level that writes its pixels (none: nothing here
    // writes them); and per frame the last of all.
    let mut finals: Vec<Vec<Option<usize>>> = Vec::new();
    let mut last: Vec<Option<usize>> = Vec::new();
    for (f, work) in frames.iter().enumerate() {
        let (cols, rows) = (work.sb_cols, work.sb_rows);
        let n = bands(cols, rows);
        // The first level each band may run at: after what its blocks read.
        let mut start = vec![0usize; n];
        for (s, reads) in work.reads.iter().enumerate() {
            let k = band(s / cols, s % cols);
            for (j, read) in reads.iter().enumerate() {
                let Some(g) = refs[f][j] else { continue };
                let written = if work.reads_whole[j] {
                    last[g]
                } else if let Some(rect) = read {
                    latest_in(&finals[g], frames[g].sb_cols, *rect)
                } else {
                    None
                };
                if let Some(l) = written {
                    start[k] = start[k].max(l + 1);
                }
            }
        }
        // A band's residuals follow its prediction; its pixels are done after the later.
        let mut done: Vec<Option<usize>> = vec![None; n];
        for k in 0..n {
            let predicted = work.inter.get(k).is_some_and(|d| !d.is_empty());
            let residuals = work.residuals.get(k).is_some_and(|d| !d.is_empty());
            if predicted {
                at(&mut levels, start[k]).extend(work.inter[k].iter().map(|&d| (f, d)));
                done[k] = Some(start[k]);
            }
            if residuals {
                let l = start[k] + predicted as usize;
                at(&mut levels, l).extend(work.residuals[k].iter().map(|&d| (f, d)));
                done[k] = Some(l);
            }
        }
        // The wavefront starts where every band its levels meet is done.
        let mut offset = 0;
        for (s, touched) in work.touched.iter().enumerate() {
            if let (Some((first, _)), Some(d)) = (touched, done[band(s / cols, s % cols)]) {
                offset = offset.max((d + 1).saturating_sub(*first));
            }
        }
        for (w, level) in work.wave.iter().enumerate() {
            at(&mut levels, offset + w).extend(level.iter().map(|&d| (f, d)));
        }
        let fin: Vec<Option<usize>> = (0..cols * rows)
            .map(|s| {
                let wave = work.touched.get(s).copied().flatten().map(|t| offset + t.1);
                wave.max(done[band(s / cols, s % cols)])
            })
            .collect();
        last.push(fin.iter().copied().max().flatten());
        finals.push(fin);
    }
    for level in &mut levels {
        merge_following(level);
    }
    levels.retain(|l| !l.is_empty());
    levels
}

/// The last level that writes a superblock of `rect` (`finals` of a frame `cols` across).
fn latest_in(finals: &[Option<usize>], cols: usize, rect: Rect) -> Option<usize> {
    let mut latest = None;
    for r in rect.rows.0..=rect.rows.1 {
        for c in rect.cols.0..=rect.cols.1 {
            latest = latest.max(finals.get(r * cols + c).copied().flatten());
        }
    }
    latest
}

fn at(levels: &mut Vec<Vec<Placed>>, level: usize) -> &mut Vec<Placed> {
    if levels.len() <= level {
        levels.resize(level + 1, Vec::new());
    }
    &mut levels[level]
}

/// Makes one dispatch of a frame's dispatches of a kernel that follow one another in its job
/// area, keeping the level's order otherwise.
fn merge_following(level: &mut Vec<Placed>) {
    let mut merged: Vec<Placed> = Vec::with_capacity(level.len());
    for &(f, d) in level.iter() {
        let joins = merged
            .iter_mut()
            .rev()
            .find(|(g, e)| *g == f && e.kernel == d.kernel && e.first + e.count == d.first);
        match joins {
            Some((_, e)) => e.count += d.count,
            None => merged.push((f, d)),
        }
    }
    *level = merged;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dispatch(kernel: Kernel, first: u32, count: u32) -> Dispatch {
        Dispatch {
            kernel,
            first,
            count,
        }
    }

    /// A frame `cols` by `rows` with one inter job per superblock (band after band in its
    /// job area), a residual job each, and a wavefront of a loop-filter level per diagonal;
    /// its blocks read reference 0 `reach` superblocks below and right of their own.
    fn frame(cols: usize, rows: usize, reach: Option<usize>) -> Work {
        let n = bands(cols, rows);
        let mut work = Work {
            sb_cols: cols,
            sb_rows: rows,
            ..Work::default()
        };
        let mut per_band = vec![0u32; n];
        for r in 0..rows {
            for c in 0..cols {
                per_band[band(r, c)] += 1;
            }
        }
        let mut first = 0;
        for &count in &per_band {
            work.inter
                .push(vec![dispatch(Kernel::Vp9Inter, first, count)]);
            work.residuals.push(vec![dispatch(
                Kernel::Vp9InterResidual(0),
                1000 + first,
                count,
            )]);
            first += count;
        }
        for d in 0..cols + rows - 1 {
            work.wave
                .push(vec![dispatch(Kernel::Vp9Lf, 2000 + d as u32, 1)]);
        }
        work.touched = vec![None; cols * rows];
        for r in 0..rows {
            for c in 0..cols {
                let m = meets(r, c, cols, rows);
                for rr in m.rows.0..=m.rows.1 {
                    for cc in m.cols.0..=m.cols.1 {
                        let t = &mut work.touched[rr * cols + cc];
                        let l = r + c;
                        *t = Some(t.map_or((l, l), |(a, b)| (a.min(l), b.max(l))));
                    }
                }
            }
        }
        work.reads = (0..cols * rows)
            .map(|s| {
                let (r, c) = (s / cols, s % cols);
                let read = reach.map(|d| Rect {
                    rows: (r.saturating_sub(d), (r + d).min(rows - 1)),
                    cols: (c.saturating_sub(d), (c + d).min(cols - 1)),
                });
                [read, None, None]
            })
            .collect();
        work
    }

    fn level_of(levels: &[Vec<Placed>], f: usize, kernel: Kernel, job: u32) -> usize {
        levels
            .iter()
            .position(|l| {
                l.iter().any(|&(g, d)| {
                    g == f && d.kernel == kernel && (d.first..d.first + d.count).contains(&job)
                })
            })
            .expect("placed")
    }

    /// Alone, a frame's levels are what they were in a submission of its own: every band's
    /// prediction in one dispatch, then its residuals, then its wavefront.
    #[test]
    fn a_frame_alone_keeps_its_three_stages() {
        let w = frame(6, 4, None);
        let levels = place(&[&w], &[[None; 3]]);
        assert_eq!(levels.len(), 2 + 9);
        assert_eq!(levels[0], [(0, dispatch(Kernel::Vp9Inter, 0, 24))]);
        assert_eq!(
            levels[1],
            [(0, dispatch(Kernel::Vp9InterResidual(0), 1000, 24))]
        );
        assert_eq!(levels[2], [(0, dispatch(Kernel::Vp9Lf, 2000, 1))]);
    }

    /// A frame that reads the one before trails it by a few levels: each band after the
    /// levels that write what it reads, its wavefront after the bands it meets; a frame that
    /// reads none of the others starts at once.
    #[test]
    fn a_frame_reading_the_one_before_trails_it() {
        let (cols, rows) = (30, 17);
        let a = frame(cols, rows, None);
        let b = frame(cols, rows, Some(1));
        let c = frame(cols, rows, None);
        let refs = [[None; 3], [Some(0), None, None], [None; 3]];
        let levels = place(&[&a, &b, &c], &refs);
        // a: 2 + 46 levels; b trails it by far fewer than its 48
        let end_a = level_of(&levels, 0, Kernel::Vp9Lf, 2000 + 45);
        let end_b = level_of(&levels, 1, Kernel::Vp9Lf, 2000 + 45);
        assert_eq!(end_a, 47);
        assert!(end_b > end_a && end_b < end_a + 16, "{end_a} {end_b}");
        // c, independent, runs beside a from level 0
        assert_eq!(level_of(&levels, 2, Kernel::Vp9Inter, 0), 0);
        // every dispatch of b after what it reads and what it meets is written
        let wave_a =
            |r: usize, c: usize| level_of(&levels, 0, Kernel::Vp9Lf, 2000 + (r + c) as u32);
        for k in 0..bands(cols, rows) {
            let first_job = b.inter[k][0].first;
            let li = level_of(&levels, 1, Kernel::Vp9Inter, first_job);
            let lr = level_of(&levels, 1, Kernel::Vp9InterResidual(0), 1000 + first_job);
            assert!(lr > li);
            for r in 0..rows {
                for c in 0..cols {
                    if band(r, c) != k {
                        continue;
                    }
                    // b's band reads a's superblocks around (r, c), final after a's wavefront
                    // passed the superblocks that meet them
                    let rr = (r + 2).min(rows - 1);
                    let cc = (c + 2).min(cols - 1);
                    assert!(li > wave_a(rr, cc), "band {k} at {li}");
                    // b's wavefront jobs that meet the band come after its residuals
                    let m = meets(r, c, cols, rows);
                    for r2 in m.rows.0..=m.rows.1 {
                        for c2 in m.cols.0..=m.cols.1 {
                            let lw = level_of(&levels, 1, Kernel::Vp9Lf, 2000 + (r2 + c2) as u32);
                            assert!(lw > lr);
                        }
                    }
                }
            }
        }
    }

    /// A reference of another size is read whole: the frame's prediction follows all of it.
    #[test]
    fn a_scaled_reference_is_waited_for_whole() {
        let a = frame(6, 4, None);
        let mut b = frame(6, 4, Some(0));
        b.reads_whole[0] = true;
        let levels = place(&[&a, &b], &[[None; 3], [Some(0), None, None]]);
        let end_a = level_of(&levels, 0, Kernel::Vp9Lf, 2000 + 8);
        assert_eq!(level_of(&levels, 1, Kernel::Vp9Inter, 0), end_a + 1);
    }
}
