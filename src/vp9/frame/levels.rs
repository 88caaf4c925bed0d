//! A frame's work, in the decoder's order of stages, from what it parsed: the inter blocks'
//! prediction ([`super::inter`]) and every block's residuals ([`super::residuals`]), by band
//! of superblocks ([`super::together`]), then the wavefront ([`super::wavefront`]) of the
//! intra blocks ([`super::intra`]) and the loop filter ([`super::loopfilter`]). The jobs go
//! into the frame's job area as they are made; [`super::together`] places the dispatches
//! among those of the frames submitted with it.

use super::records::{self, BlockRecord, Geometry, SbBlocks, BLOCK_INTRA, BLOCK_UNPREDICTED};
use super::submit::Submitter;
use super::together::{self, Dispatch, Work};
use super::wavefront::Superblock;
use super::{inter, intra, loopfilter, residuals, setup};
use crate::kernels::Kernel;

/// What of a frame decides its stages beside its parsed data.
pub(super) struct Stages {
    /// Its inter prediction's kernel (none in an intra frame), and whether that is the scaled
    /// variant (a reference of another size, whose every pixel a block may read).
    pub prediction: Option<Kernel>,
    pub scaled: bool,
    /// Where its blocks' transform grids end (the frame's size).
    pub edges: residuals::Frame,
    /// Whether it is loop filtered.
    pub loop_filter: bool,
}

/// The frame's work: its inter blocks' prediction and residuals by band
/// ([`together`]), then the wavefront over its superblock rows `rows` (intra blocks, and the
/// loop filter of the rows `filtered`), the jobs pushed into the frame's job area; and the
/// blocks' count.
pub(super) fn of_frame(
    submitter: &mut Submitter,
    stages: Stages,
    g: Geometry,
    rows: std::ops::Range<usize>,
    filtered: std::ops::Range<usize>,
) -> Result<(Work, u64), String> {
    let layout = submitter.layout;
    let kernels = setup::FrameKernels::of(g.bytes_per_pixel);
    // SAFETY: the frame's buffer; the decoder has parsed the rows.
    let (sb_words, records) = unsafe { layout.parsed(submitter.data.ptr) };
    let sb = SbBlocks::new(g.sb_cols, sb_words);
    let (cols, sb_rows) = (g.sb_cols, g.sb_rows);
    let runs = inter::record_runs(&sb, rows.clone());
    if submitter.device_copies() {
        for bytes in layout.bytes_of_rows(records, &runs, rows.clone()) {
            submitter.stage(bytes);
        }
    }
    let bands = together::bands(cols, sb_rows);
    let mut work = Work {
        sb_cols: cols,
        sb_rows,
        inter: vec![Vec::new(); bands],
        residuals: vec![Vec::new(); bands],
        rows: rows.clone(),
        superblocks: Vec::new(),
        loop_filter: Some(kernels.loop_filter),
        intra: Some(kernels.intra),
        wave_first: 0,
        reads: vec![[None; 3]; cols * sb_rows],
        reads_whole: [stages.scaled; 3],
    };
    // Each band's superblocks, in raster order.
    let mut in_band: Vec<Vec<usize>> = vec![Vec::new(); bands];
    for row in rows.clone() {
        for col in 0..cols {
            in_band[together::band(row, col)].push(row * cols + col);
        }
    }
    // (None in an intra frame.)
    if let Some(kernel) = stages.prediction {
        predictions(submitter, &mut work, kernel, &sb, records, &in_band)?;
    }
    let residual_kernels = kernels.residuals;
    residuals_by_band(
        submitter,
        &mut work,
        residual_kernels,
        &sb,
        records,
        &in_band,
        stages.edges,
    )?;
    let blocks = runs.iter().map(|r| r.count as u64).sum::<u64>();
    wavefront_superblocks(submitter, &mut work, &sb, records, &stages, filtered)?;
    Ok((work, blocks))
}

/// The inter blocks' prediction, a job per record, band after band (`in_band`: each band's
/// superblocks); and what each superblock's blocks read.
fn predictions(
    submitter: &mut Submitter,
    work: &mut Work,
    kernel: Kernel,
    sb: &SbBlocks,
    records: &[BlockRecord],
    in_band: &[Vec<usize>],
) -> Result<(), String> {
    let (cols, sb_rows) = (work.sb_cols, work.sb_rows);
    // (A scaled reference counts whole: no block's reads need listing.)
    let list_reads = !work.reads_whole.iter().all(|&whole| whole);
    let mut jobs = Vec::new();
    let mut counts = vec![0u32; in_band.len()];
    for (k, superblocks) in in_band.iter().enumerate() {
        let before = jobs.len();
        for &s in superblocks {
            let (first, count) = sb.get(s);
            for index in first..first + count {
                let Some(b) = records.get(index as usize) else {
                    break;
                };
                if b.flags & (BLOCK_INTRA | BLOCK_UNPREDICTED) != 0 {
                    continue;
                }
                jobs.push(index);
                if !list_reads {
                    continue;
                }
                for (read, r) in work.reads[s].iter_mut().zip(inter::reads(b, cols, sb_rows)) {
                    if let Some(r) = r {
                        *read = Some(read.map_or(r, |x| x.union(r)));
                    }
                }
            }
        }
        counts[k] = (jobs.len() - before) as u32;
    }
    let mut first = submitter.push_jobs(&jobs)?;
    for (k, &count) in counts.iter().enumerate() {
        if count > 0 {
            work.inter[k].push(Dispatch {
                kernel,
                first,
                count,
            });
        }
        first += count;
    }
    Ok(())
}

/// Every block's residuals by transform block, band after band within each size's jobs: a
/// dispatch per size and band. (The lists go back to the submitter for the next frame,
/// unless this one fails.)
fn residuals_by_band(
    submitter: &mut Submitter,
    work: &mut Work,
    kernels: [Kernel; 4],
    sb: &SbBlocks,
    records: &[BlockRecord],
    in_band: &[Vec<usize>],
    edges: residuals::Frame,
) -> Result<(), String> {
    let layout = submitter.layout;
    let mut lists = std::mem::take(&mut submitter.residual_lists);
    // SAFETY: the buffer the layout is of; the decoder wrote the rows' end-of-block positions
    // before it said they were parsed.
    let eobs = unsafe { layout.end_of_block_arrays(submitter.data.ptr) };
    let mut sized = std::mem::take(&mut lists.by_band);
    sized.iter_mut().for_each(Vec::clear);
    let mut spans = vec![[(0u32, 0u32); 4]; in_band.len()];
    for (k, superblocks) in in_band.iter().enumerate() {
        let band_runs = inter::runs_of(sb, superblocks.iter().copied());
        let (words, by_size) =
            residuals::jobs(&mut lists, records, &band_runs, edges, |plane, at, wide| {
                records::end_of_block(eobs[plane], at, wide)
            });
        let mut at = 0;
        for (size_log2, &count) in by_size.iter().enumerate() {
            let list = &mut sized[size_log2];
            spans[k][size_log2] = (list.len() as u32, count as u32);
            list.extend_from_slice(&words[at..at + count]);
            at += count;
        }
    }
    for (size_log2, list) in sized.iter().enumerate() {
        if list.is_empty() {
            continue;
        }
        let first = submitter.push_jobs(list)?;
        for (k, span) in spans.iter().enumerate() {
            let (start, count) = span[size_log2];
            if count > 0 {
                work.residuals[k].push(Dispatch {
                    kernel: kernels[size_log2],
                    first: first + start,
                    count,
                });
            }
        }
    }
    lists.by_band = sized;
    submitter.residual_lists = lists;
    Ok(())
}

/// The wavefront's superblocks: their intra jobs name their orders (words of the frame's
/// data), pushed before the jobs; its levels are made where the frame is placed among those
/// submitted with it ([`together`]), its jobs then written where they are kept here.
fn wavefront_superblocks(
    submitter: &mut Submitter,
    work: &mut Work,
    sb: &SbBlocks,
    records: &[BlockRecord],
    stages: &Stages,
    filtered: std::ops::Range<usize>,
) -> Result<(), String> {
    let (rows, cols) = (work.rows.clone(), work.sb_cols);
    let (mut orders, mut scratch) = (Vec::new(), intra::Scratch::default());
    for row in rows.clone() {
        for col in 0..cols {
            work.superblocks.push(Superblock {
                intra: intra::jobs(
                    sb,
                    records,
                    stages.edges,
                    (row, col),
                    &mut orders,
                    &mut scratch,
                ),
                filtered: stages.loop_filter && filtered.contains(&row),
            });
        }
    }
    // (Only the kernels it runs: a process builds what it uses.)
    if !work.superblocks.iter().any(|sb| sb.filtered) {
        work.loop_filter = None;
    }
    if work.superblocks.iter().all(|sb| sb.intra.is_empty()) {
        work.intra = None;
    }
    let orders_at = submitter.push_jobs(&orders)?;
    let mut words = 0;
    for (i, sb) in work.superblocks.iter_mut().enumerate() {
        sb.intra.iter_mut().for_each(|order| *order += orders_at);
        words += sb.intra.len();
        if sb.filtered {
            words += loopfilter::jobs(rows.start * cols + i).len();
        }
    }
    work.wave_first = submitter.reserve_jobs(words)?;
    Ok(())
}
