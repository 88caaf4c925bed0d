//! A frame's dispatch levels, in the decoder's order of stages, from what it parsed: the inter
//! blocks' prediction ([`super::inter`]) in one level and every block's residuals
//! ([`super::residuals`]) in another, then the wavefront ([`super::wavefront`]) of the intra
//! blocks ([`super::intra`]) and the loop filter ([`super::loopfilter`]). The jobs go into the
//! frame's job area as they are made; [`super::submit`] records the levels.

use super::records::{self, Geometry, SbBlocks};
use super::submit::{Dispatch, Levels, Submitter};
use super::wavefront::{self, Superblock};
use super::{inter, intra, residuals, setup};
use crate::kernels::Kernel;

/// What of a frame decides its stages beside its parsed data.
pub(super) struct Stages {
    /// Its inter prediction's kernel (none in an intra frame).
    pub prediction: Option<Kernel>,
    /// Where its blocks' transform grids end (the frame's size).
    pub edges: residuals::Frame,
    /// Whether it is loop filtered.
    pub loop_filter: bool,
}

/// The frame's levels: its inter blocks, then the wavefront over its superblock rows `rows`
/// (intra blocks, and the loop filter of the rows `filtered`), the jobs pushed into the frame's
/// job area; and the inter blocks' count.
pub(super) fn of_frame(
    submitter: &mut Submitter,
    stages: Stages,
    g: Geometry,
    rows: std::ops::Range<usize>,
    filtered: std::ops::Range<usize>,
) -> Result<(Levels, u64), String> {
    let layout = submitter.layout;
    let kernels = setup::FrameKernels::of(g.bytes_per_pixel);
    // SAFETY: the frame's buffer; the decoder has parsed the rows.
    let (sb_words, records) = unsafe { layout.parsed(submitter.data.ptr) };
    let sb = SbBlocks::new(g.sb_cols, sb_words);
    let mut levels: Levels = Vec::new();
    let runs = inter::record_runs(&sb, rows.clone());
    if submitter.device_copies() {
        for bytes in layout.bytes_of_rows(records, &runs, rows.clone()) {
            submitter.stage(bytes);
        }
    }
    // The inter blocks' prediction (none in an intra frame: no workgroup to launch a
    // record), then their residuals by transform block.
    if let Some(kernel) = stages.prediction {
        let prediction = runs.iter().map(|r| Dispatch {
            kernel,
            first: r.first,
            count: r.count,
        });
        levels.push(prediction.collect());
    }
    // (Its lists go back to the submitter for the next frame, unless this one fails.)
    let mut lists = std::mem::take(&mut submitter.residual_lists);
    // SAFETY: the buffer the layout is of; the decoder wrote the rows' end-of-block positions
    // before it said they were parsed.
    let eobs = unsafe { layout.end_of_block_arrays(submitter.data.ptr) };
    let (residual_jobs, by_size) = residuals::jobs(
        &mut lists,
        records,
        &runs,
        stages.edges,
        |plane, at, wide| records::end_of_block(eobs[plane], at, wide),
    );
    if !residual_jobs.is_empty() {
        // A dispatch per transform size, side by side.
        let mut first = submitter.push_jobs(residual_jobs)?;
        let mut level = Vec::new();
        for (size_log2, words) in by_size.into_iter().enumerate() {
            if words > 0 {
                level.push(Dispatch {
                    kernel: kernels.residuals[size_log2],
                    first,
                    count: words as u32,
                });
            }
            first += words as u32;
        }
        levels.push(level);
    }
    submitter.residual_lists = lists;
    let blocks = runs.iter().map(|r| r.count as u64).sum::<u64>();
    // The intra jobs name their orders (words of the frame's data), pushed before the jobs.
    let (mut orders, mut scratch) = (Vec::new(), intra::Scratch::default());
    let waves = wavefront::levels(g.sb_cols, rows.clone(), |row, col| Superblock {
        intra: intra::jobs(
            &sb,
            records,
            stages.edges,
            (row, col),
            &mut orders,
            &mut scratch,
        ),
        filtered: stages.loop_filter && filtered.contains(&row),
    });
    let orders_at = submitter.push_jobs(&orders)?;
    for mut level in waves {
        // (The loop filter's dispatch first: on a device that runs a level's dispatches one
        // after the other, as lavapipe does, an intra block it should have waited for shows.)
        let mut dispatches = Vec::new();
        if !level.lf.is_empty() {
            let first = submitter.push_jobs(&level.lf)?;
            dispatches.push(Dispatch {
                kernel: kernels.loop_filter,
                first,
                count: level.lf.len() as u32,
            });
        }
        if !level.intra.is_empty() {
            level.intra.iter_mut().for_each(|order| *order += orders_at);
            let first = submitter.push_jobs(&level.intra)?;
            dispatches.push(Dispatch {
                kernel: kernels.intra,
                first,
                count: level.intra.len() as u32,
            });
        }
        levels.push(dispatches);
    }
    levels.retain(|l| !l.is_empty());
    Ok((levels, blocks))
}
