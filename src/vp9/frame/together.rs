//! Frames on the GPU together: the frames that are ready while the GPU is busy go to it in one
//! submission ([`super::batches`]), their dispatch levels interleaved, so that a frame's chain
//! of levels runs beside the chains of the frames before it rather than after them.
//!
//! A frame's superblock reads the frame before only around its own place (its vectors reach a
//! superblock or two below and right of it in nearly every frame of the test clips,
//! `docs/benchmarks-history.md`), and those pixels are final once the frame before's wavefront
//! has passed them. So a frame's inter blocks go in bands of [`BAND`] superblock diagonals,
//! each band (its prediction, then its residuals) in the first level after the levels that
//! write what its blocks read, and each superblock's wavefront jobs
//! ([`super::wavefront`]) in the first level after the bands whose pixels they meet that the
//! wavefront's own order allows. A frame's wavefront then trails the one before by a few
//! levels, not by the whole of it.
//!
//! [`place`] decides the levels from what each frame's work says of itself ([`Work`]: which
//! superblocks of its references its blocks read, its wavefront's superblocks), and gives
//! each frame's wavefront jobs in the order its dispatches read them.

use super::wavefront::{self, level_at, Superblock};
use crate::kernels::Kernel;

/// One dispatch: `count` jobs from `first` of `kernel` (a workgroup each).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dispatch {
    pub kernel: Kernel,
    pub first: u32,
    pub count: u32,
}

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
    /// The wavefront's superblocks ([`wavefront`]): those of rows `rows`, raster order.
    pub rows: std::ops::Range<usize>,
    pub superblocks: Vec<Superblock>,
    /// Its kernels, and where its jobs go in the frame's job area (as many words as its
    /// superblocks' jobs, in the order of its levels once placed).
    pub loop_filter: Option<Kernel>,
    pub intra: Option<Kernel>,
    pub wave_first: u32,
    /// Per superblock and reference: the superblocks of the reference its inter blocks read.
    pub reads: Vec<[Option<Rect>; 3]>,
    /// Per reference: its blocks may read all of it (a reference of another size, scaled).
    pub reads_whole: [bool; 3],
}

/// Where a submission's frames go: levels of (frame, dispatch), and each frame's wavefront
/// jobs in the order its dispatches read them from its `wave_first`.
pub struct Placed {
    pub levels: Vec<Vec<(usize, Dispatch)>>,
    pub wave_jobs: Vec<Vec<u32>>,
}

/// The band of superblock (`row`, `col`).
pub fn band(row: usize, col: usize) -> usize {
    (row + col) / BAND
}

/// The bands of a frame `sb_cols` by `sb_rows` superblocks.
pub fn bands(sb_cols: usize, sb_rows: usize) -> usize {
    (sb_cols + sb_rows).saturating_sub(1).div_ceil(BAND)
}

/// The superblocks the wavefront's jobs at (`row`, `col`) read or write: its intra blocks
/// read the column left and the line above (above left and above right included), its loop
/// filter reaches 8 pixels into the superblocks left and above and, with the corner handoff,
/// right. None below it.
pub fn meets(row: usize, col: usize, sb_cols: usize) -> Rect {
    Rect {
        rows: (row.saturating_sub(1), row),
        cols: (col.saturating_sub(1), (col + 1).min(sb_cols - 1)),
    }
}

/// The superblocks the loop filter at (`row`, `col`) writes: its own, and 8 pixels into those
/// above, left and (the corner handoff) right. (Its intra blocks write only their own.)
fn filter_writes(row: usize, col: usize, sb_cols: usize) -> impl Iterator<Item = (usize, usize)> {
    let left = col.checked_sub(1).map(|c| (row, c));
    let above = row.checked_sub(1).map(|r| (r, col));
    let right = (col + 1 < sb_cols).then_some((row, col + 1));
    [Some((row, col)), left, above, right].into_iter().flatten()
}

/// The levels of frames submitted together, in their order: `refs[f][j]` names the earlier
/// frame among them that frame `f`'s reference `j` is, if any. A dispatch goes in the first
/// level after every level that writes what it reads: a band after the levels that write the
/// superblocks its blocks read, a wavefront job after the bands whose pixels it meets (and
/// after the jobs the wavefront's own order puts before it). Within a level the later frames
/// and stages go first, and a frame's dispatches of one kernel that follow one another in its
/// job area are one.
pub fn place(frames: &[&Work], refs: &[[Option<usize>; 3]]) -> Placed {
    let mut levels: Vec<Vec<(usize, Dispatch)>> = Vec::new();
    let mut wave_jobs = Vec::new();
    // Per frame and superblock: the last level that writes its pixels (none: nothing here
    // writes them); and per frame the last of all.
    let mut finals: Vec<Vec<Option<usize>>> = Vec::new();
    let mut last: Vec<Option<usize>> = Vec::new();
    for (f, work) in frames.iter().enumerate() {
        let (cols, rows) = (work.sb_cols, work.sb_rows);
        let n = bands(cols, rows);
        // The first level each band may run at: after what its blocks read.
        let mut start = vec![0usize; n];
        let reads_others = refs[f].iter().any(Option::is_some);
        for (s, reads) in work.reads.iter().enumerate().filter(|_| reads_others) {
            let k = band(s / cols, s % cols);
            for (j, read) in reads.iter().enumerate() {
                let Some(g) = refs[f][j] else { continue };
                let written = if work.reads_whole[j] {
                    last[g]
                } else if let Some(rect) = read {
                    let g_cols = frames[g].sb_cols;
                    latest_in(*rect, |r, c| {
                        finals[g].get(r * g_cols + c).copied().flatten()
                    })
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
                level_at(&mut levels, start[k]).extend(work.inter[k].iter().map(|&d| (f, d)));
                done[k] = Some(start[k]);
            }
            if residuals {
                let l = start[k] + predicted as usize;
                level_at(&mut levels, l).extend(work.residuals[k].iter().map(|&d| (f, d)));
                done[k] = Some(l);
            }
        }
        // The wavefront: a superblock's jobs after the bands whose pixels they meet.
        let ready = |row: usize, col: usize| {
            latest_in(meets(row, col, cols), |r, c| done[band(r, c)]).map_or(0, |d| d + 1)
        };
        let first_row = work.rows.start;
        let sb_of =
            |row: usize, col: usize| work.superblocks[(row - first_row) * cols + col].clone();
        let wave = wavefront::levels(cols, work.rows.clone(), sb_of, ready);
        let mut jobs: Vec<u32> = Vec::new();
        for (level, &l) in wave.levels.iter().zip(&wave.at) {
            // (The loop filter's dispatch first: on a device that runs a level's dispatches
            // one after the other, as lavapipe does, an intra block it should have waited for
            // shows.)
            for (kernel, part) in [(work.loop_filter, &level.lf), (work.intra, &level.intra)] {
                if let (Some(kernel), false) = (kernel, part.is_empty()) {
                    let first = work.wave_first + jobs.len() as u32;
                    jobs.extend_from_slice(part);
                    let count = part.len() as u32;
                    level_at(&mut levels, l).push((
                        f,
                        Dispatch {
                            kernel,
                            first,
                            count,
                        },
                    ));
                }
            }
        }
        wave_jobs.push(jobs);
        // What writes each superblock last: its band, and the wavefront's jobs that write it.
        let mut fin: Vec<Option<usize>> = (0..cols * rows)
            .map(|s| done[band(s / cols, s % cols)])
            .collect();
        for (i, &(intra, lf)) in wave.superblocks.iter().enumerate() {
            let (row, col) = (first_row + i / cols, i % cols);
            if let Some(level) = intra {
                fin[row * cols + col] = fin[row * cols + col].max(Some(level));
            }
            for (r, c) in lf.into_iter().flat_map(|_| filter_writes(row, col, cols)) {
                fin[r * cols + c] = fin[r * cols + c].max(lf);
            }
        }
        last.push(fin.iter().copied().max().flatten());
        finals.push(fin);
    }
    for level in &mut levels {
        // Later frames first, and a frame's later stages first: where a device runs a level's
        // dispatches one after the other (lavapipe), a dispatch placed beside one it should
        // have waited for then reads what is not yet written, and shows.
        level.sort_by_key(|&(f, d)| std::cmp::Reverse((f, stage_of(d.kernel))));
        merge_following(level);
    }
    levels.retain(|l| !l.is_empty());
    Placed { levels, wave_jobs }
}

/// A kernel's stage: its index in [`super::batches::STAGES`], in a frame's order of stages.
pub(super) fn stage_of(kernel: Kernel) -> Option<usize> {
    match kernel {
        Kernel::Vp9Inter
        | Kernel::Vp9InterScaled
        | Kernel::Vp9InterHigh
        | Kernel::Vp9InterScaledHigh => Some(1),
        Kernel::Vp9InterResidual(_) | Kernel::Vp9InterResidualHigh(_) => Some(2),
        Kernel::Vp9Intra | Kernel::Vp9IntraHigh => Some(3),
        Kernel::Vp9Lf | Kernel::Vp9LfHigh => Some(4),
        Kernel::Itx(_)
        | Kernel::Mc
        | Kernel::Lf
        | Kernel::Cdef
        | Kernel::LfSb
        | Kernel::Vp9IpredCheck
        | Kernel::Vp9ItxHighCheck
        | Kernel::LfFilterCheck
        | Kernel::CdefRowCopy
        | Kernel::CdefRow => None,
    }
}

/// The latest of `level(row, col)` over the superblocks of `rect`.
fn latest_in(rect: Rect, level: impl Fn(usize, usize) -> Option<usize>) -> Option<usize> {
    let mut latest = None;
    for r in rect.rows.0..=rect.rows.1 {
        for c in rect.cols.0..=rect.cols.1 {
            latest = latest.max(level(r, c));
        }
    }
    latest
}

/// Makes one dispatch of a frame's dispatches of a kernel that follow one another in its job
/// area, keeping the level's order otherwise.
fn merge_following(level: &mut Vec<(usize, Dispatch)>) {
    let mut merged: Vec<(usize, Dispatch)> = Vec::with_capacity(level.len());
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
    use crate::vp9::frame::loopfilter;

    fn dispatch(kernel: Kernel, first: u32, count: u32) -> Dispatch {
        Dispatch {
            kernel,
            first,
            count,
        }
    }

    /// An intra job word of the tests' (a loop-filter job's is its superblock's index).
    const INTRA_JOB: u32 = 1 << 20;

    /// A frame `cols` by `rows` with one inter job per superblock (band after band in its
    /// job area), a residual job each, every superblock loop filtered and those of `intra`
    /// with an intra job; its blocks read reference 0 `reach` superblocks around their own.
    fn frame(cols: usize, rows: usize, reach: Option<usize>, intra: &[(usize, usize)]) -> Work {
        let n = bands(cols, rows);
        let mut work = Work {
            sb_cols: cols,
            sb_rows: rows,
            rows: 0..rows,
            loop_filter: Some(Kernel::Vp9Lf),
            intra: Some(Kernel::Vp9Intra),
            wave_first: 2000,
            ..Work::default()
        };
        let mut per_band = vec![0u32; n];
        for r in 0..rows {
            for c in 0..cols {
                per_band[band(r, c)] += 1;
                work.superblocks.push(Superblock {
                    intra: if intra.contains(&(r, c)) {
                        vec![INTRA_JOB + (r * cols + c) as u32]
                    } else {
                        Vec::new()
                    },
                    filtered: true,
                });
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

    /// The level of the dispatch of frame `f` that runs job word `job`.
    fn level_of(placed: &Placed, f: usize, kernel: Kernel, job: u32) -> usize {
        placed
            .levels
            .iter()
            .position(|l| {
                l.iter().any(|&(g, d)| {
                    g == f && d.kernel == kernel && (d.first..d.first + d.count).contains(&job)
                })
            })
            .expect("placed")
    }

    /// The level of the loop filter of superblock (`r`, `c`) of frame `f`, `cols` across.
    fn lf_level(placed: &Placed, f: usize, cols: usize, r: usize, c: usize) -> usize {
        let word = loopfilter::jobs(r * cols + c)[0];
        let at = placed.wave_jobs[f]
            .iter()
            .position(|&w| w == word)
            .expect("its job");
        level_of(placed, f, Kernel::Vp9Lf, 2000 + at as u32)
    }

    /// Alone, a frame's levels are what they were in a submission of its own: every band's
    /// prediction in one dispatch, then its residuals, then its wavefront.
    #[test]
    fn a_frame_alone_keeps_its_three_stages() {
        let w = frame(6, 4, None, &[]);
        let placed = place(&[&w], &[[None; 3]]);
        assert_eq!(placed.levels.len(), 2 + 9);
        assert_eq!(placed.levels[0], [(0, dispatch(Kernel::Vp9Inter, 0, 24))]);
        assert_eq!(
            placed.levels[1],
            [(0, dispatch(Kernel::Vp9InterResidual(0), 1000, 24))]
        );
        assert_eq!(placed.levels[2], [(0, dispatch(Kernel::Vp9Lf, 2000, 3))]);
        assert_eq!(lf_level(&placed, 0, 6, 3, 5), 2 + 8);
        assert_eq!(placed.wave_jobs[0].len(), 24 * 3);
    }

    /// A frame that reads the one before trails it by a few levels: each band after the
    /// levels that write what it reads, each wavefront job after the bands it meets, an intra
    /// superblock of its own (which would go first alone) included; a frame that reads none of
    /// the others starts at once.
    #[test]
    fn a_frame_reading_the_one_before_trails_it() {
        let (cols, rows) = (30, 17);
        let a = frame(cols, rows, None, &[(0, 0)]);
        let b = frame(cols, rows, Some(1), &[(10, 20)]);
        let c = frame(cols, rows, None, &[]);
        let refs = [[None; 3], [Some(0), None, None], [None; 3]];
        let placed = place(&[&a, &b, &c], &refs);
        let end_a = lf_level(&placed, 0, cols, rows - 1, cols - 1);
        let end_b = lf_level(&placed, 1, cols, rows - 1, cols - 1);
        assert!(end_b > end_a && end_b < end_a + 16, "{end_a} {end_b}");
        // c, independent, runs beside a from level 0
        assert_eq!(level_of(&placed, 2, Kernel::Vp9Inter, 0), 0);
        // every dispatch of b after what it reads and what it meets is written
        for k in 0..bands(cols, rows) {
            let first_job = b.inter[k][0].first;
            let li = level_of(&placed, 1, Kernel::Vp9Inter, first_job);
            let lr = level_of(&placed, 1, Kernel::Vp9InterResidual(0), 1000 + first_job);
            assert!(lr > li);
            for r in 0..rows {
                for c in 0..cols {
                    if band(r, c) != k {
                        continue;
                    }
                    // b's band reads a's superblocks up to (r + 1, c + 1), final once a's loop
                    // filter there and right of and below them is
                    let (r1, c1) = ((r + 1).min(rows - 1), (c + 1).min(cols - 1));
                    let (r2, c2) = ((r + 2).min(rows - 1), (c + 2).min(cols - 1));
                    assert!(li > lf_level(&placed, 0, cols, r2, c1), "band {k} at {li}");
                    assert!(li > lf_level(&placed, 0, cols, r1, c2), "band {k} at {li}");
                    // b's wavefront jobs that meet the band come after its residuals: those of
                    // the superblocks on its row and the row below, left to right of it
                    for r2 in r..(r + 2).min(rows) {
                        for c2 in c.saturating_sub(1)..(c + 2).min(cols) {
                            assert!(lf_level(&placed, 1, cols, r2, c2) > lr);
                        }
                    }
                }
            }
        }
        // b's intra superblock after the bands it meets, its loop filter after it
        let word = INTRA_JOB + (10 * cols + 20) as u32;
        let at = placed.wave_jobs[1].iter().position(|&w| w == word).unwrap();
        let intra = level_of(&placed, 1, Kernel::Vp9Intra, 2000 + at as u32);
        let band_done = level_of(&placed, 1, Kernel::Vp9InterResidual(0), {
            let k = band(10, 21);
            1000 + b.inter[k][0].first
        });
        assert!(intra > band_done);
        assert!(lf_level(&placed, 1, cols, 10, 20) > intra);
    }

    /// A reference of another size is read whole: the frame's prediction follows all of it.
    #[test]
    fn a_scaled_reference_is_waited_for_whole() {
        let a = frame(6, 4, None, &[]);
        let mut b = frame(6, 4, Some(0), &[]);
        b.reads_whole[0] = true;
        let placed = place(&[&a, &b], &[[None; 3], [Some(0), None, None]]);
        let end_a = lf_level(&placed, 0, 6, 3, 5);
        assert_eq!(level_of(&placed, 1, Kernel::Vp9Inter, 0), end_a + 1);
    }
}
