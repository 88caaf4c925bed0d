//! The per-thread recorder.
//!
//! A call copies what it reads besides its pixels into the thread's arena (the stream's mapped
//! upload buffer on the GPU path): a transform's coefficients (zeroing the caller's block as
//! FFmpeg does), a motion compensation's source window. It records its jobs; [`flush`]
//! executes everything the thread recorded and returns with the pixels in place.
//!
//! On the GPU path each call is placed as it is recorded, while its data is at hand: which
//! pixel buffer it addresses (an imported region in place, or the staging buffer for a copied
//! block), and which pixels it claims. Its job goes into the bucket of its (kernel, pixel
//! buffer), so that a flush only copies the buckets into the job buffer, records one dispatch
//! per bucket into one command buffer, and submits it once.
//!
//! The pending batch is kept free of conflicts, which is what makes running its calls in
//! parallel equal to FFmpeg running them one after the other. A call completes the pending
//! batch first (one extra submission) when it would touch a pixel that a pending call touches
//! (see `overlap`), when the pixel buffers one submission can address or the arena run out;
//! a call partly inside a registered region, or with a stride smaller than its block, runs at
//! once on the CPU after the pending batch.
//!
//! How pixels reach the GPU: blocks inside a registered region in place (imported, or a frame
//! of the pool) are read and written in place; all other blocks are copied into the stream's
//! staging buffer before the submission and copied back after it.
//!
//! A reader that needs only some pixels (a decoder's intra prediction: [`complete_for`]) does
//! not wait for the whole batch: the pending calls on those pixels and the calls they depend
//! on (see `levels`) run on the CPU at once, in recorded order, and their jobs stay in the
//! batch marked [`SKIP_JOB`], so the GPU later runs only the rest. A reader that only reads
//! ([`complete_reads_for`]) gets, where the order allows it, those calls run ahead on the CPU
//! while they stay in the batch: the GPU writes their pixels again, with the same final values
//! but passing through earlier ones (a prediction before its transform) while the submission
//! runs.

mod call;
mod cpu;

pub use call::{Area, Job, Op, Origin, SbPosition, SKIP_JOB};
pub use cpu::{FFMPEG_DSP, FFMPEG_ITX};

use crate::gpu::stream::{Buf, Dispatch, Stream, MAX_SETS, MAX_SLOTS};
use crate::gpu::{self, GpuResult};
use crate::kernels::cdef::{self, CdefCall};
use crate::kernels::itx::{self, GpuJob, ItxKernel, Transform, TxSize};
use crate::kernels::lf::{LfDir, LfFunction};
use crate::kernels::lf_sb::{self, SbPlane};
use crate::kernels::mc::{self, McFunction};
use crate::kernels::{job_words, CDEF_KERNEL, LF_KERNEL, LF_ROW_KERNEL, LF_SB_KERNEL, MC_KERNEL};
use crate::levels::{Access, Deps, Levels, Need, MAX_LEVELS};
use crate::overlap::Occupancy;
use crate::regions::{self, Placement, Region};
use crate::spans::Spans;
use crate::stats::{self, Reason, COUNTERS};
use call::{block_in, job_eob, job_flags, spans_meet, Call, Captured, KERNELS, MAY_REDO, NO_SPAN};
use cpu::{move_and_zero, run_ffmpeg, run_job_fast, run_job_on_cpu, run_transient, RegionView};
use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::ptr;
use std::sync::Arc;
use std::time::Instant;

/// Where recorded coefficients and source windows go: the stream's mapped upload buffer on
/// the GPU path, a vector on the CPU path.
struct Arena {
    ptr: *mut i16,
    /// In coefficients.
    capacity: usize,
    /// Coefficients used.
    len: usize,
}

/// A block of the GPU path whose pixels travel through the staging buffer.
struct Copied {
    rect: Area,
    staging: usize,
}

/// The last few values a lookup found, most recent first: the regions a batch's calls were
/// in lately.
struct MostRecent<T: Copy> {
    items: [Option<T>; 4],
}

impl<T: Copy> Default for MostRecent<T> {
    fn default() -> Self {
        MostRecent { items: [None; 4] }
    }
}

impl<T: Copy> MostRecent<T> {
    /// The most recent value `hit` accepts, moved to the front.
    fn find(&mut self, mut hit: impl FnMut(&T) -> bool) -> Option<T> {
        let k = self
            .items
            .iter()
            .position(|v| v.as_ref().is_some_and(&mut hit))?;
        self.items[..=k].rotate_right(1);
        self.items[0]
    }

    /// Puts `value` in front, forgetting the oldest.
    fn put(&mut self, value: T) {
        self.items.rotate_right(1);
        self.items[0] = Some(value);
    }

    fn clear(&mut self) {
        self.items = [None; 4];
    }
}

/// The imported region that the last call was in: consecutive calls nearly always share it.
#[derive(Clone, Copy)]
struct Current {
    id: u64,
    start: usize,
    end: usize,
    /// Address of byte 0 of the imported buffer.
    base: usize,
    slot: u8,
}

/// Counts of the calls a thread recorded, kept with its recorder and added to the shared
/// counters at each flush: an atomic add per call would cost more than recording it, above
/// all with frame threads on many cores.
#[derive(Default)]
struct RecordedCounts {
    itx: u64,
    mc: u64,
    lf: u64,
    lf_sb: u64,
    /// Of the superblock planes, those run a superblock row per workgroup (`lf_row`).
    lf_sb_by_rows: u64,
    lf_sb_by_masks: u64,
    lf_sb_split: u64,
    cdef: u64,
    mc_source_in_place: u64,
    /// The calls of inter frames (frames with references) among them, and how many of
    /// those completed early on the CPU.
    inter: u64,
    inter_completed_early: u64,
    inter_run_ahead: u64,
}

impl RecordedCounts {
    fn count(&mut self, op: &Op, inter_frame: bool) {
        match op {
            Op::Itx { .. } => self.itx += 1,
            Op::Mc { .. } => self.mc += 1,
            Op::Lf { .. } => self.lf += 1,
            Op::LfSb { .. } => self.lf_sb += 1,
            Op::Cdef { .. } => self.cdef += 1,
        }
        self.inter += inter_frame as u64;
    }

    fn fold(&mut self) {
        let c = std::mem::take(self);
        stats::add(&COUNTERS.deferred, c.itx + c.mc + c.lf + c.lf_sb + c.cdef);
        stats::add(&COUNTERS.deferred_lf_sb, c.lf_sb);
        stats::add(&COUNTERS.lf_sb_by_rows, c.lf_sb_by_rows);
        stats::add(&COUNTERS.lf_sb_by_masks, c.lf_sb_by_masks);
        stats::add(&COUNTERS.lf_sb_split, c.lf_sb_split);
        stats::add(&COUNTERS.deferred_cdef, c.cdef);
        stats::add(&COUNTERS.deferred_itx, c.itx);
        stats::add(&COUNTERS.deferred_mc, c.mc);
        stats::add(&COUNTERS.deferred_lf, c.lf);
        stats::add(&COUNTERS.mc_source_in_place, c.mc_source_in_place);
        stats::add(&COUNTERS.inter_deferred, c.inter);
        stats::add(&COUNTERS.inter_completed_early, c.inter_completed_early);
        stats::add(&COUNTERS.inter_run_ahead, c.inter_run_ahead);
    }
}

/// Where a call's pixels are for the GPU.
enum Target {
    InPlace { slot: u8, pixel: u32, stride: i32 },
    Copied { staging: usize },
}

/// Where a motion compensation's source is for the GPU: copied into the arena at call time,
/// or read in place from an imported frame (`offset` of the pixel under the block's top-left).
#[derive(Clone, Copy)]
enum Source {
    Arena,
    InPlace {
        slot: u8,
        offset: u32,
        stride: isize,
    },
}

/// A call placed in the pending batch.
struct Placed {
    target: Target,
    source: Source,
    level: u32,
    serial: u32,
    /// A transform that FFmpeg's function may redo after the submission.
    may_redo: bool,
    /// See `Need::unknown_readers`.
    unknown_readers: bool,
    /// A superblock plane placed by its row (`DAEDALUS_LF_ORDER=rows`): the `lf_row` kernel's.
    by_rows: bool,
    /// A superblock plane on the wavefront (see [`GpuBatch::place_by_position`]): a job for
    /// its columns pass at `level`, one for its rows pass at the next.
    passes_apart: bool,
    /// A superblock plane placed by its masks (`DAEDALUS_LF_ORDER=split`): its jobs.
    split: Option<lf_sb::SplitJobs>,
}

/// Most work (in [`call_cost`] units) a sync completes early on the CPU; beyond it, the whole
/// batch goes to the GPU instead.
const EARLY_COST_LIMIT: usize = 4096;

/// A call of the pending batch as the early completion sees it: where its jobs are, what it
/// costs on the CPU, and the calls it must come after (`deps[deps_at..deps_end]`).
struct PendingCall {
    bucket: u32,
    first_word: u32,
    jobs: u32,
    cost: u32,
    deps_at: u32,
    deps_end: u32,
    /// It cannot complete early: its pixels travel through the staging buffer, or pending
    /// calls read them that its dependencies do not name (`Need::unknown_readers`).
    batch_only: bool,
    /// Run on the CPU, it would read bytes the batch in flight writes, or write bytes it
    /// touches ([`GpuBatch::cpu_read_waits`]): it may run there only once that batch is done.
    touches_in_flight: bool,
}

/// What may keep a pending call from running on the CPU early (see [`PendingCall`]).
#[derive(Clone, Copy)]
struct EarlyLimits {
    batch_only: bool,
    touches_in_flight: bool,
}

/// Why calls cannot complete early on the CPU as asked.
#[derive(Debug, PartialEq)]
enum Stop {
    /// The batch completes as a whole instead.
    Whole,
    /// They touch the pixels of the batch in flight: wait for it, then ask again.
    Settle,
}

/// A call's CPU work in units of about 64 pixels filtered or transformed.
fn call_cost(op: &Op, jobs: usize) -> u32 {
    match *op {
        Op::Itx { tx, .. } => (tx.size.n() * tx.size.n()).div_ceil(64) as u32,
        Op::LfSb { plane, .. } => plane.bits,
        _ => jobs as u32,
    }
}

/// Why a call cannot join the pending batch as it is.
enum Busy {
    /// Complete the pending batch first, then the call fits.
    Flush(Reason),
    /// Partly inside a registered region: neither path is safe, the CPU is.
    Straddles,
    /// Outside every registered region, and the caller wants such calls run at once.
    Transient,
}

/// Calls `tile(row, col, tile_params)` for each 8x8 tile of a motion compensation's `w` x `h`
/// block (the last row and column of tiles may be smaller), row after row: one job each.
fn for_each_mc_tile(w: usize, h: usize, mut tile: impl FnMut(usize, usize, u32)) {
    let mut y = 0;
    while y < h {
        let mut x = 0;
        while x < w {
            tile(y, x, mc::tile_params((h - y).min(8), (w - x).min(8)));
            x += 8;
        }
        y += 8;
    }
}

/// Most job words one call adds (a 64x64 motion compensation: 64 tiles).
const MAX_CALL_WORDS: usize = 64 * 12;

/// Hashes a bucket key with one multiplication: the keys are the recorder's own, so the
/// default hasher's protection against chosen keys only costs time on every call.
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ b as u64).wrapping_mul(0x100_0000_01b3);
        }
    }

    fn write_u32(&mut self, key: u32) {
        // The product's upper half depends on every key bit; folding it down gives the table
        // (which indexes by the low bits and tags by the high ones) well-mixed bits at both.
        let h = (key as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        self.0 = h ^ (h >> 32);
    }
}

/// A bucket's key, ordered as the dispatches run: level, kernel, pixel slot, source.
/// How many buckets a batch remembers as pushed to lately (a power of two).
const RECENT_BUCKETS: usize = 16;

/// No bucket: `bucket_key` gives no key this high.
const NO_BUCKET: (u32, usize) = (u32::MAX, 0);

fn bucket_key(level: u32, kernel: u8, slot: u8, source: u8) -> u32 {
    debug_assert!((slot as usize) < MAX_SLOTS && (source as usize) < MAX_SLOTS);
    level << 16 | (kernel as u32) << 8 | (slot as u32) << 4 | source as u32
}

struct BucketKey {
    level: u32,
    kernel: usize,
    slot: usize,
    source: usize,
}

fn split_key(key: u32) -> BucketKey {
    BucketKey {
        level: key >> 16,
        kernel: (key >> 8 & 0xff) as usize,
        slot: (key >> 4 & 0xf) as usize,
        source: (key & 0xf) as usize,
    }
}

/// A batch on the GPU: what its completion needs.
/// A failed step of a batch's submission, by how much of the batch took effect.
enum Failure {
    /// Nothing reached the GPU: the whole batch may run on the CPU.
    NotRun(String),
    /// The batch was submitted: the GPU may have run any part of it, and the host completed
    /// on the CPU what it could still complete exactly ([`GpuBatch::finish`]). `damaged`:
    /// pixels may be left wrong (written in part in place, or a transform left undone).
    Submitted { why: String, damaged: bool },
}

/// A transform the GPU left to FFmpeg's function (its 16-bit lanes overflowed).
struct Redo {
    tx: Transform,
    dst: *mut u8,
    stride: isize,
    coefs: *const i16,
    eob: i32,
    /// Its pixels are a copied block's.
    copied: bool,
}

struct Submitted {
    serial: u64,
    order: Vec<usize>,
    dispatches: Vec<Dispatch>,
    arena: *const i16,
    arena_len: usize,
    job_bytes: usize,
}

/// What a reader's calls to run ahead are checked with ([`GpuBatch::plan_ahead`]), kept from
/// one reader to the next: the calls that ran ahead before which they depend on
/// (`boundary`); what each of their jobs does to which pixels, in order; per slot and stride
/// the rectangle of those pixels; and per pixel of the rectangles a bit: written by one of the
/// jobs, read as a source before any wrote it.
#[derive(Default)]
struct AheadScratch {
    boundary: Vec<usize>,
    touches: Vec<(usize, Touch, Area)>,
    boxes: Vec<PixelBox>,
    written: Vec<u64>,
    read_first: Vec<u64>,
}

/// What a job does to an area of a slot, for [`GpuBatch::plan_ahead`].
#[derive(Clone, Copy, PartialEq, Eq)]
enum Touch {
    /// Reads it as a source.
    Reads,
    /// Writes every pixel without reading it (a prediction).
    Overwrites,
    /// Reads and writes it (an average, a transform).
    Modifies,
    /// Wrote it, running ahead before (its first writes were predictions).
    RanAhead,
}

/// A rectangle of a slot's pixels at one stride, rows and columns counted from the slot's
/// first byte, and where its bits start (each row on whole words).
#[derive(Clone, Copy)]
struct PixelBox {
    slot: usize,
    origin: usize,
    stride: usize,
    rows: (usize, usize),
    cols: (usize, usize),
    first_word: usize,
    row_words: usize,
}

impl PixelBox {
    /// The box of `slot` at `stride` among `boxes`.
    fn find(boxes: &[PixelBox], slot: usize, stride: isize) -> Option<usize> {
        boxes
            .iter()
            .position(|b| b.slot == slot && b.stride as isize == stride)
    }

    /// The bytes from its first pixel to its last.
    fn span(&self) -> (usize, usize) {
        (
            self.origin + self.rows.0 * self.stride + self.cols.0,
            self.origin + (self.rows.1 - 1) * self.stride + self.cols.1,
        )
    }

    /// Calls `segment(row, col, len)` for the pixels of `a`, a row at a time (two where the
    /// row runs past the stride); `false` where a call does.
    fn segments(&self, a: &Area, mut segment: impl FnMut(usize, usize, usize) -> bool) -> bool {
        (0..a.h).all(|r| {
            let Some(offset) = (a.pixel(r, 0) as usize).checked_sub(self.origin) else {
                return false;
            };
            let (row, col) = (offset / self.stride, offset % self.stride);
            let first = a.w.min(self.stride - col);
            segment(row, col, first) && (first == a.w || segment(row + 1, 0, a.w - first))
        })
    }

    /// Takes `a` in; `false` where it starts before the slot.
    fn widen(&mut self, a: &Area) -> bool {
        let (mut rows, mut cols) = (self.rows, self.cols);
        let inside = self.segments(a, |row, col, len| {
            rows = (rows.0.min(row), rows.1.max(row + 1));
            cols = (cols.0.min(col), cols.1.max(col + len));
            true
        });
        (self.rows, self.cols) = (rows, cols);
        inside
    }

    /// The bit of pixel (`row`, `col`).
    fn bit(&self, row: usize, col: usize) -> usize {
        64 * (self.first_word + (row - self.rows.0) * self.row_words) + col - self.cols.0
    }
}

/// Most words the bit maps of one early completion ahead may take (each).
const MAX_AHEAD_WORDS: usize = 1 << 16;

/// Calls `word(index, mask)` for the words of a bit map that hold bits `start..start + len`.
fn for_each_word(start: usize, len: usize, mut word: impl FnMut(usize, u64) -> bool) -> bool {
    let (mut at, end) = (start, start + len);
    while at < end {
        let (w, bit) = (at / 64, at % 64);
        let n = (64 - bit).min(end - at);
        let mask = if n == 64 {
            u64::MAX
        } else {
            ((1u64 << n) - 1) << bit
        };
        if !word(w, mask) {
            return false;
        }
        at += n;
    }
    true
}

/// The source pixels a motion-compensation job reads: its tile's, and the filter's reach.
fn mc_window(job: &Job, source: *const u8) -> Area {
    let win = McFunction::from_params(job[4]).0.window();
    let stride = job[3] as i32 as isize;
    Area {
        at: source
            .wrapping_add(job[2] as usize)
            .wrapping_offset(-(win.above as isize) * stride - win.left as isize)
            as *mut u8,
        stride,
        w: win.width(mc::tile_cols(job[4])),
        h: win.height(mc::tile_rows(job[4])),
    }
}

/// The pending work of the GPU path.
struct GpuBatch {
    stream: Stream,
    /// Set from submission to completion.
    submitted: Option<Submitted>,
    /// A submission other threads may still wait for ([`GpuBatch::retire`]).
    unretired: Option<u64>,
    /// A job of a transform that FFmpeg's function may have to redo after the submission.
    may_redo: bool,
    /// Job words of the buckets in use (`keys[i]` is the key of `buckets[i]`); the vectors
    /// beyond stay allocated for later batches.
    buckets: Vec<Vec<u32>>,
    keys: Vec<u32>,
    bucket_of: HashMap<u32, usize, BuildHasherDefault<KeyHasher>>,
    /// Buckets pushed to lately, (key, index), by a hash of the key: consecutive calls
    /// mostly share a few (a plane's calls at a level, a reference frame).
    recent_buckets: [(u32, usize); RECENT_BUCKETS],
    /// Calls and job words pending.
    pending: usize,
    pending_words: usize,
    copied: Vec<Copied>,
    /// The jobs on copied pixels, with their host addresses.
    copied_calls: Vec<Call>,
    staging_len: usize,
    /// The imported regions of slots 1.. (slot 0 is the staging buffer).
    slots: Vec<Arc<Region>>,
    current: Option<Current>,
    /// The last few imported regions calls were in (with their slots), most recent first.
    recent_targets: MostRecent<Current>,
    /// The order of calls in place, and the bytes copied blocks claim.
    levels: Levels,
    occupancy: Occupancy,
    /// (pixel slot, source) pairs in use, one descriptor set each.
    pairs: [u64; MAX_SLOTS * MAX_SLOTS / 64],
    pair_count: usize,
    /// The registry as this batch placed its calls; held only while work is pending, so that
    /// no import outlives its registration for longer than the pending batch.
    regions: Vec<Arc<Region>>,
    regions_version: u64,
    /// The indices in `regions` of the last motion compensation sources' regions, most
    /// recent first.
    last_sources: MostRecent<usize>,
    /// Most job words one submission takes (the job buffer's limit).
    max_words: usize,
    /// Per placed call (by its index in `levels`): its jobs and dependencies.
    calls: Vec<PendingCall>,
    deps: Vec<u32>,
    /// What `levels` found for the call being placed.
    found: Deps,
    /// Calls of this batch that completed early on the CPU (out of the batch), and calls
    /// run ahead there for a reader (they stay in the batch: [`GpuBatch::complete_reads`]).
    completed_early: usize,
    run_ahead: usize,
    /// Per call (by index): whether it ran ahead; and those calls.
    ahead: Vec<bool>,
    ahead_list: Vec<usize>,
    /// Per slot: the calls that ran ahead reading it as a source while the batch wrote it,
    /// and the span of bytes each reads there.
    ahead_readers: [Vec<(usize, (usize, usize))>; MAX_SLOTS],
    /// The slots pending calls write, a bit each.
    written_slots: u32,
    ahead_scratch: AheadScratch,
    /// Per call: the last early completion that visited it.
    visited: Vec<u32>,
    visit: u32,
    /// `calls[i]` is the call of serial index `i` in `levels` (cleared with the batch).
    calls_in_step: bool,
    /// The highest level of a call placed by its cells.
    cell_level_max: Option<u32>,
    /// The decoder's superblock loop-filter planes, placed by position (see
    /// [`GpuBatch::place_by_position`]): per plane, the span of the bytes they read and
    /// write; the last one's position; the superblock row of the first.
    lf_spans: [(usize, usize); 3],
    lf_last: Option<SbPosition>,
    lf_first_row: u32,
    /// The levels split planes took (`DAEDALUS_LF_ORDER=split`).
    lf_split: lf_sb::SplitPlacer,
    /// The last plane placed by position reaches into the superblock to its right or below
    /// ([`lf_sb::SbPlane::reaches_out`]): the next one completes the batch first.
    lf_ends_batch: bool,
    /// Per slot: the bytes the calls in place write (and read: their own pixels), those they
    /// read as sources (as a few spans: a slot is a frame of three planes), and how many of the calls writing there the GPU may
    /// still make write values the CPU does not hold (neither run ahead nor completed early).
    /// What the CPU must wait for while this batch is in flight ([`GpuBatch::cpu_read_waits`]).
    slot_writes: [Spans; MAX_SLOTS],
    slot_reads: [Spans; MAX_SLOTS],
    slot_open: [u32; MAX_SLOTS],
    /// A batch submitted before this one may still be in flight: the calls marked
    /// `touches_in_flight` wait for it before they run on the CPU.
    after_in_flight: bool,
    /// The calls that copy the decoder's backup lines ([`record_backup_copy`]).
    backup_copies: Vec<usize>,
    /// The job words the call being placed pushed, (bucket, first word, end), and
    /// `copied_calls.len()` before it: what leaves the batch if placing it panics
    /// ([`Recorder::poison`]).
    journal: Vec<(u32, u32, u32)>,
    copied_mark: usize,
}

/// The dispatch of a job whose 16-bit lanes overflowed, by the job's index in the job buffer
/// (what the transform kernels report). A dispatch's `first` counts in its own job size (each
/// bucket starts at a multiple of it), so an index names one job only among dispatches of one
/// size: only the full transforms' (4-word jobs, and the only kernels that report) are
/// searched, whatever the others' sizes and order.
fn overflowed_dispatch(dispatches: &[Dispatch], index: u32) -> Option<usize> {
    dispatches.iter().position(|d| {
        matches!(KERNELS.get(d.kernel), Some(ItxKernel::Full(_)))
            && (d.first..d.first + d.count).contains(&index)
    })
}

impl GpuBatch {
    fn new(stream: Stream) -> GpuBatch {
        let max_words = stream.max_buffer_bytes() as usize / 4 - 2 * MAX_CALL_WORDS;
        GpuBatch {
            max_words,
            stream,
            submitted: None,
            unretired: None,
            may_redo: false,
            buckets: Vec::new(),
            keys: Vec::new(),
            bucket_of: HashMap::default(),
            recent_buckets: [NO_BUCKET; RECENT_BUCKETS],
            pending: 0,
            pending_words: 0,
            copied: Vec::new(),
            copied_calls: Vec::new(),
            staging_len: 0,
            slots: Vec::new(),
            current: None,
            recent_targets: MostRecent::default(),
            levels: Levels::default(),
            occupancy: Occupancy::default(),
            pairs: [0; MAX_SLOTS * MAX_SLOTS / 64],
            pair_count: 0,
            regions: Vec::new(),
            regions_version: 0,
            last_sources: MostRecent::default(),
            calls: Vec::new(),
            deps: Vec::new(),
            found: Deps::default(),
            completed_early: 0,
            run_ahead: 0,
            ahead: Vec::new(),
            ahead_list: Vec::new(),
            ahead_readers: Default::default(),
            written_slots: 0,
            ahead_scratch: AheadScratch::default(),
            visited: Vec::new(),
            visit: 0,
            calls_in_step: true,
            cell_level_max: None,
            lf_spans: [NO_SPAN; 3],
            lf_last: None,
            lf_first_row: 0,
            lf_split: Default::default(),
            lf_ends_batch: false,
            slot_writes: [Spans::default(); MAX_SLOTS],
            slot_reads: [Spans::default(); MAX_SLOTS],
            slot_open: [0; MAX_SLOTS],
            after_in_flight: false,
            backup_copies: Vec::new(),
            journal: Vec::new(),
            copied_mark: 0,
        }
    }

    /// Whether `span` meets the bytes of a loop-filter plane placed by position.
    fn meets_lf_passes(&self, span: (usize, usize)) -> bool {
        self.lf_spans.iter().any(|&s| spans_meet(s, span))
    }

    /// Places a plane of FFmpeg's superblock loop filter by the superblock's position instead
    /// of its cells (a plane's footprint is about 600 cells; a call per superblock is only
    /// cheaper if placing it is). The decoder filters superblock row `r` after reconstructing
    /// it, superblocks in raster order, each plane's columns pass before its rows pass. Then
    /// the plane of (r, c) must follow those of (r, c - 1), into which its columns pass
    /// reaches, and of (r - 1, c) and (r - 1, c + 1), into which its rows pass reaches (the
    /// columns pass of (r - 1, c + 1) filters the last columns of (r - 1, c)). A job per
    /// pass, the columns pass's at level `2 (r + c)` and the rows pass's at the next, orders
    /// them all, planes side by side, above every call placed by cells so far: a chain of
    /// `2 (rows + columns)` levels, where one job per plane at level `2 r + c` would chain
    /// `2 (2 rows + columns)` passes, each a round trip to the frame's memory. (With
    /// `DAEDALUS_LF_ORDER=rows` a row's planes all take level `r` instead, one job each, and
    /// `lf_row.comp` runs a plane's bucket of them in one workgroup in the recorded order.)
    /// Later calls placed by cells must not touch these bytes (they
    /// know nothing of them): `place` completes the batch first where one would, as it does
    /// where a pass comes out of raster order, and early completions of these bytes complete
    /// the batch instead (`complete_areas`). In the decoder neither happens: what it
    /// reconstructs and reads after filtering a row lies below that row.
    fn place_by_position(
        &mut self,
        sb: SbPosition,
        span: (usize, usize),
        shape: (Option<u32>, bool),
    ) -> Result<(u32, bool, Option<lf_sb::SplitJobs>), Busy> {
        if self.may_redo || self.lf_ends_batch {
            // A transform that FFmpeg's function may redo after the submission would undo the
            // filter, or the plane before reached out of its superblock: complete the batch
            // first.
            return Err(Busy::Flush(Reason::Overlap));
        }
        let (column_split, reaches_out) = shape;
        match self.lf_last {
            // Out of the decoder's order (or another frame's): complete the batch first.
            Some(last) if sb <= last => return Err(Busy::Flush(Reason::Overlap)),
            Some(_) => {}
            None => self.lf_first_row = sb.row,
        }
        let base = self.cell_level_max.map_or(0, |l| l + 1);
        let by_rows = lf_passes_by_rows();
        if lf_passes_split() {
            let continues = self.lf_last.is_some();
            let jobs =
                self.lf_split
                    .place((sb.plane, sb.row, sb.col), base, column_split, continues);
            let last = jobs.jobs().iter().map(|j| j.0).max().expect("jobs");
            if last >= MAX_LEVELS {
                return Err(Busy::Flush(Reason::Full));
            }
            self.lf_last = Some(sb);
            self.lf_ends_batch = reaches_out;
            let s = &mut self.lf_spans[sb.plane.min(2) as usize];
            *s = (s.0.min(span.0), s.1.max(span.1));
            let first = jobs.before.min(jobs.after);
            return Ok((first, false, Some(jobs)));
        }
        let level = if by_rows {
            // A level per superblock row: its planes (of a plane, or of planes sharing a
            // buffer) are one bucket, which one workgroup runs in this order.
            base + (sb.row - self.lf_first_row)
        } else {
            base + 2 * (sb.row - self.lf_first_row + sb.col)
        };
        if level + 1 >= MAX_LEVELS {
            return Err(Busy::Flush(Reason::Full));
        }
        self.lf_last = Some(sb);
        // The wavefront's order, like the split one, assumes that no pass reaches into the
        // superblocks after it; one that does ends the batch (a row per workgroup runs the
        // decoder's order itself).
        self.lf_ends_batch = reaches_out && !by_rows;
        // A plane's superblocks lie in one span: the rows filtered so far (with the padding at
        // their ends, which nothing touches).
        let s = &mut self.lf_spans[sb.plane.min(2) as usize];
        *s = (s.0.min(span.0), s.1.max(span.1));
        Ok((level, by_rows, None))
    }

    /// The slot of an imported region in this batch, taking a new one if there is room.
    /// Takes the slots alone, so that `r` may be borrowed from the batch's snapshot (no
    /// reference count taken per call).
    fn slot_in(slots: &mut Vec<Arc<Region>>, r: &Arc<Region>) -> Result<u8, Busy> {
        match slots.iter().position(|s| Arc::ptr_eq(s, r)) {
            Some(p) => Ok(p as u8 + 1),
            None if slots.len() + 1 < MAX_SLOTS => {
                slots.push(r.clone());
                Ok(slots.len() as u8)
            }
            None => Err(Busy::Flush(Reason::Full)),
        }
    }

    /// Decides where a call's pixels (and a motion compensation's source) go, and at which
    /// level; records what it touches.
    fn place(&mut self, op: &Op, rect: &Area, origin: Origin) -> Result<Placed, Busy> {
        let (lo, hi) = rect.span();
        if hi < lo {
            return Err(Busy::Straddles);
        }
        self.found.clear();
        let by_position = match *op {
            Op::LfSb { sb: Some(sb), .. } => Some(sb),
            _ => None,
        };
        if self.pending_words >= self.max_words {
            return Err(Busy::Flush(Reason::Full));
        }
        let version = regions::version();
        if version != self.regions_version && self.pending > 0 && self.registry_change_matters() {
            return Err(Busy::Flush(Reason::Registry));
        }
        if version != self.regions_version {
            self.regions = regions::snapshot();
            self.regions_version = version;
            self.current = None;
            self.recent_targets.clear();
            let live: Vec<u64> = self.regions.iter().map(|r| r.id).collect();
            self.levels.retain_regions(|id| live.contains(&id));
        }
        let inside = |r: &Current| r.start <= lo && hi <= r.end;
        let cached = self.current.as_ref().is_some_and(inside);
        if !cached {
            // A frame's planes may be regions of their own, which calls take in turn.
            if let Some(c) = self.recent_targets.find(inside) {
                self.current = Some(c);
            } else {
                self.current = match regions::place(&self.regions, lo, hi) {
                    Placement::Straddles => return Err(Busy::Straddles),
                    Placement::Outside if origin == Origin::Ffmpeg => return Err(Busy::Transient),
                    Placement::Outside => None,
                    Placement::Inside(index) => {
                        let r = &self.regions[index];
                        match &r.in_place {
                            Some(in_place) => Some(Current {
                                id: r.id,
                                start: r.start,
                                end: r.end,
                                base: in_place.base(),
                                slot: Self::slot_in(&mut self.slots, r)?,
                            }),
                            // Registered but not importable: copied like other memory.
                            None => None,
                        }
                    }
                };
                if let Some(c) = self.current {
                    self.recent_targets.put(c);
                }
            }
        }
        let (at, stride, w, h) = (rect.at as usize, rect.stride, rect.w, rect.h);
        if stride.unsigned_abs() > i32::MAX as usize {
            self.current = None;
        }
        let by_position = by_position.filter(|_| self.current.is_some());
        if by_position.is_none() && self.meets_lf_passes((lo, hi)) {
            // Pixels of passes placed by position, which the cells do not know.
            return Err(Busy::Flush(Reason::Overlap));
        }

        // The source of a motion compensation: in place where it lies in an imported frame.
        let mut source = Source::Arena;
        let mut source_mark = None;
        let mut need = Need::default();
        if let (
            Op::Mc {
                src, src_stride, ..
            },
            Some(win),
        ) = (op, op.source())
        {
            let (lo, hi) = win.span();
            // Most sources lie in one of the last few regions a source did: a reference
            // frame's planes.
            let snapshot = &self.regions;
            let inside = |&i: &usize| {
                snapshot
                    .get(i)
                    .is_some_and(|r| r.start <= lo && hi <= r.end)
            };
            let placement = match self.last_sources.find(inside) {
                Some(index) => Placement::Inside(index),
                None => {
                    let placement = regions::place(snapshot, lo, hi);
                    if let Placement::Inside(index) = placement {
                        self.last_sources.put(index);
                    }
                    placement
                }
            };
            match placement {
                Placement::Inside(index) if src_stride.unsigned_abs() <= i32::MAX as usize => {
                    if self.meets_lf_passes((lo, hi)) {
                        return Err(Busy::Flush(Reason::Overlap));
                    }
                    let r = &self.regions[index];
                    if let Some(in_place) = &r.in_place {
                        let block = block_in(r.id, r.start, r.end, &win);
                        let offset = (*src as usize - in_place.base()) as u32;
                        let n = self
                            .levels
                            .need(&block, Access::Read, &mut self.found)
                            .ok_or(Busy::Flush(Reason::Overlap))?;
                        need = n;
                        source = Source::InPlace {
                            slot: Self::slot_in(&mut self.slots, &self.regions[index])?,
                            offset,
                            stride: *src_stride,
                        };
                        source_mark = Some(block);
                    }
                }
                // Partly in a region whose pending calls may write it: complete them first.
                Placement::Straddles if self.pending > 0 => {
                    return Err(Busy::Flush(Reason::Overlap))
                }
                _ => {}
            }
        }
        let mut by_rows = false;
        let mut split = None;
        let (target_slot, dst_mark) = match &self.current {
            Some(r) if by_position.is_some() => {
                let slot = r.slot;
                let sb = by_position.expect("placed by position");
                let shape = match op {
                    Op::LfSb { plane, .. } => (
                        plane.column_split().filter(|_| lf_passes_split()),
                        plane.reaches_out(),
                    ),
                    _ => (None, false),
                };
                (need.level, by_rows, split) = self.place_by_position(sb, (lo, hi), shape)?;
                (slot, None)
            }
            Some(r) => {
                let block = block_in(r.id, r.start, r.end, rect);
                let n = self
                    .levels
                    .need(&block, Access::Write, &mut self.found)
                    .ok_or(Busy::Flush(Reason::Overlap))?;
                need.level = need.level.max(n.level);
                need.after_cpu_redo |= n.after_cpu_redo;
                need.unknown_readers |= n.unknown_readers;
                (r.slot, Some(block))
            }
            None => (0, None),
        };
        if need.after_cpu_redo {
            // After a transform that FFmpeg's function may redo once the submission is back.
            return Err(Busy::Flush(Reason::Overlap));
        }
        if need.level >= MAX_LEVELS {
            return Err(Busy::Flush(Reason::Full));
        }
        let source_slot = match source {
            Source::Arena => 0,
            Source::InPlace { slot, .. } => slot,
        };
        let pair = target_slot as usize * MAX_SLOTS + source_slot as usize;
        let new_pair = self.pairs[pair / 64] & 1 << (pair % 64) == 0;
        if new_pair && self.pair_count == MAX_SETS {
            return Err(Busy::Flush(Reason::Full));
        }
        let target = match &self.current {
            Some(r) => Target::InPlace {
                slot: r.slot,
                pixel: (at - r.base) as u32,
                stride: stride as i32,
            },
            None => {
                if self.staging_len + w * h > self.stream.max_buffer_bytes() as usize {
                    return Err(Busy::Flush(Reason::Full));
                }
                if !self.occupancy.claim_anywhere(at, stride, w, h) {
                    return Err(Busy::Flush(Reason::Overlap));
                }
                let staging = self.staging_len;
                self.staging_len += w * h;
                Target::Copied { staging }
            }
        };
        // Placed: record what it touches.
        if new_pair {
            self.pairs[pair / 64] |= 1 << (pair % 64);
            self.pair_count += 1;
        }
        // A transform of FFmpeg's decoder may have to be redone by FFmpeg's function after the
        // submission, unless its coefficients prove that it cannot overflow a 16-bit lane.
        let cpu_redo = match *op {
            Op::Itx { tx, block, eob } if origin == Origin::Ffmpeg && !tx.is_dc_only_call(eob) => {
                !unsafe { itx::block_lanes_cannot_overflow(tx, block) }
            }
            _ => false,
        };
        if cpu_redo {
            stats::add(&COUNTERS.itx_redo_possible, 1);
        }
        let serial = self.levels.new_serial();
        if by_position.is_none() {
            self.cell_level_max = Some(
                self.cell_level_max
                    .map_or(need.level, |l| l.max(need.level)),
            );
        }
        if let Some(block) = dst_mark {
            self.levels
                .mark(&block, Access::Write, need.level, cpu_redo, serial);
        }
        if let Some(block) = source_mark {
            self.levels
                .mark(&block, Access::Read, need.level, false, serial);
        }
        Ok(Placed {
            target,
            source,
            level: need.level,
            serial,
            may_redo: cpu_redo,
            unknown_readers: need.unknown_readers,
            by_rows,
            passes_apart: by_position.is_some() && !by_rows && split.is_none(),
            split,
        })
    }

    /// Registrations changed under pending work. A byte's path (in place or copied) and its
    /// levels must not change within a batch: that holds unless the batch copies blocks (a new
    /// registration could cover them) or one of its regions is gone (a registration of the
    /// same range would be another import of the same pages). Other threads registering
    /// their own frames change neither.
    fn registry_change_matters(&self) -> bool {
        if self.staging_len > 0 {
            return true;
        }
        let live = regions::snapshot();
        self.slots
            .iter()
            .any(|s| !live.iter().any(|r| Arc::ptr_eq(r, s)))
    }

    /// The bucket of the jobs of `kernel` at `level` on pixel slot `slot` and source
    /// `source`, made if new.
    fn bucket_index(&mut self, level: u32, kernel: u8, slot: u8, source: u8) -> usize {
        let key = bucket_key(level, kernel, slot, source);
        // Direct-mapped by the key's high product bits (Fibonacci hashing).
        let line = (key.wrapping_mul(0x9E37_79B1) >> (32 - RECENT_BUCKETS.ilog2())) as usize;
        if self.recent_buckets[line].0 == key {
            return self.recent_buckets[line].1;
        }
        let index = match self.bucket_of.get(&key) {
            Some(&i) => i,
            None => {
                let i = self.keys.len();
                self.keys.push(key);
                if self.buckets.len() == i {
                    self.buckets.push(Vec::new());
                }
                self.bucket_of.insert(key, i);
                i
            }
        };
        self.recent_buckets[line] = (key, index);
        index
    }

    /// Appends the jobs of a motion compensation whose pixels are in place, one per tile
    /// ([`for_each_mc_tile`]), to their bucket at once: the words a job shares are computed
    /// once and each tile's are written straight into the bucket. `first` holds the job
    /// words of the block's top-left tile (its tile parameters left out). Returns the bucket,
    /// the first job's first word there and the number of jobs.
    fn push_mc_tiles(
        &mut self,
        level: u32,
        slot: u8,
        source: u8,
        first: &Job,
        rect: &Area,
    ) -> (u32, u32, u32) {
        const WORDS: usize = 12;
        debug_assert_eq!(job_words(MC_KERNEL), WORDS);
        let index = self.bucket_index(level, MC_KERNEL as u8, slot, source);
        let (pixel, stride, src, src_stride) = (first[0], first[1], first[2], first[3]);
        let bucket = &mut self.buckets[index];
        let at = bucket.len();
        let tiles = rect.w.div_ceil(8) * rect.h.div_ceil(8);
        bucket.reserve(tiles * WORDS);
        let mut out = at;
        for_each_mc_tile(rect.w, rect.h, |row, col, tile| {
            let job: Job = [
                pixel.wrapping_add((row as i64 * stride as i32 as i64 + col as i64) as u32),
                stride,
                src.wrapping_add((row as i64 * src_stride as i32 as i64 + col as i64) as u32),
                src_stride,
                first[4] | tile,
                first[5],
                first[6],
                first[7],
                first[8],
                0,
                0,
                0,
            ];
            // SAFETY: `reserve` made room for every tile's words after `at`; the length
            // covers them once all are written.
            unsafe { ptr::write(bucket.as_mut_ptr().add(out) as *mut Job, job) };
            out += WORDS;
        });
        debug_assert_eq!(out, at + tiles * WORDS);
        // SAFETY: the words up to `out` were written above.
        unsafe { bucket.set_len(out) };
        self.pending_words += tiles * WORDS;
        self.journal.push((index as u32, at as u32, out as u32));
        (index as u32, at as u32, tiles as u32)
    }

    /// Appends a job to its bucket; returns the bucket and the job's first word there.
    fn push(&mut self, level: u32, kernel: u8, slot: u8, source: u8, job: &Job) -> (u32, u32) {
        let index = self.bucket_index(level, kernel, slot, source);
        let words = job_words(kernel as usize);
        debug_assert!(words <= job.len());
        let bucket = &mut self.buckets[index];
        let at = bucket.len();
        // The whole job array at once (a fixed-size copy, no call to memmove), of which the
        // bucket keeps `words`.
        bucket.reserve(job.len());
        // SAFETY: `reserve` made room for `job.len()` words after `at`, and the first `words`
        // of them are written before the length covers them.
        unsafe {
            ptr::copy_nonoverlapping(job.as_ptr(), bucket.as_mut_ptr().add(at), job.len());
            bucket.set_len(at + words);
        }
        let at = at as u32;
        self.pending_words += words;
        self.journal.push((index as u32, at, at + words as u32));
        (index as u32, at)
    }

    /// A call is about to be placed: nothing of it is in the batch yet.
    fn journal_start(&mut self) {
        self.journal.clear();
        self.copied_mark = self.copied_calls.len();
    }

    /// Takes the jobs of the call being placed out of the batch again (after a panic while
    /// placing it): its pushed jobs are skipped, its copied calls forgotten.
    fn take_out_journaled(&mut self) {
        for &(bucket, from, to) in &self.journal {
            let key = split_key(self.keys[bucket as usize]);
            let words = job_words(key.kernel);
            let jobs = &mut self.buckets[bucket as usize][from as usize..to as usize];
            for job in jobs.chunks_exact_mut(words) {
                job[0] = SKIP_JOB;
            }
        }
        self.journal.clear();
        self.copied_calls.truncate(self.copied_mark);
    }

    /// Notes the call just placed (with serial `serial`): its jobs (`jobs` from word
    /// `first_word` of `bucket`) and what it depends on.
    fn note_call(
        &mut self,
        serial: u32,
        bucket: u32,
        first_word: u32,
        jobs: u32,
        cost: u32,
        limits: EarlyLimits,
    ) {
        // Serials and calls are made together in `place` and `record`; were they ever out of
        // step, early completion must not trust the table (it completes the batch instead).
        if self.levels.pending_index(serial) != Some(self.calls.len()) {
            debug_assert!(false, "call table out of step with the levels");
            self.calls_in_step = false;
        }
        self.written_slots |= 1 << split_key(self.keys[bucket as usize]).slot;
        let all = &mut self.found.all;
        all.sort_unstable();
        all.dedup();
        let deps_at = self.deps.len() as u32;
        self.deps.extend_from_slice(all);
        self.calls.push(PendingCall {
            bucket,
            first_word,
            jobs,
            cost,
            deps_at,
            deps_end: self.deps.len() as u32,
            batch_only: limits.batch_only,
            touches_in_flight: limits.touches_in_flight,
        });
    }

    /// Notes the bytes a call in place in `slot` writes (`rect`) and reads as its source in
    /// slot `source` (0: none in place), for [`GpuBatch::cpu_read_waits`].
    fn note_touch(&mut self, slot: u8, rect: &Area, source: u8, source_area: Option<&Area>) {
        self.slot_writes[slot as usize].add(rect.span());
        self.slot_open[slot as usize] += 1;
        if let (s @ 1.., Some(a)) = (source, source_area) {
            self.slot_reads[s as usize].add(a.span());
        }
    }

    /// Pending call `i` leaves the batch: the GPU will not touch its pixels.
    fn note_settled(&mut self, i: usize) {
        let slot = split_key(self.keys[self.calls[i].bucket as usize]).slot;
        self.slot_open[slot] = self.slot_open[slot].saturating_sub(1);
    }

    /// While this batch is in flight: whether the CPU must wait for it before reading `a`.
    /// (A slot whose calls all left the batch is not the GPU's: `slot_open`. Calls that ran
    /// ahead stay: the GPU writes their pixels again, passing through earlier values.)
    fn cpu_read_waits(&self, a: &Area) -> bool {
        let span = a.span();
        self.staging_len > 0
            || span.1 < span.0
            || (1..self.slots.len() + 1)
                .any(|s| self.slot_open[s] > 0 && self.slot_writes[s].meets(span))
    }

    /// While this batch is in flight: whether the CPU must wait for it before writing `a`.
    fn cpu_write_waits(&self, a: &Area) -> bool {
        let span = a.span();
        self.staging_len > 0
            || span.1 < span.0
            || (1..self.slots.len() + 1).any(|s| {
                (self.slot_open[s] > 0 && self.slot_writes[s].meets(span))
                    || self.slot_reads[s].meets(span)
            })
    }

    /// Whether pending call `i` left the batch (its jobs are skipped).
    fn taken_out(&self, i: usize) -> bool {
        let c = &self.calls[i];
        self.buckets[c.bucket as usize][c.first_word as usize] == SKIP_JOB
    }

    /// Whether every pending call completed early (nothing left for the GPU).
    fn all_completed_early(&self) -> bool {
        self.completed_early == self.pending && self.staging_len == 0
    }

    /// Completes early, on the CPU, the pending calls `roots` and every pending call they
    /// depend on, in recorded order, and takes their jobs out of the batch. Does nothing where
    /// that is more than `limit` work or includes a copied block (`Stop::Whole`), or touches
    /// the pixels of the batch in flight (`Stop::Settle`).
    fn complete_early(
        &mut self,
        roots: &mut Vec<u32>,
        limit: usize,
        arena: *const i16,
    ) -> Result<(), Stop> {
        let list = self.closure(roots, limit, None)?;
        self.run_early(&list, arena);
        Ok(())
    }

    /// The indices of the pending calls `roots` and every pending call they depend on, in
    /// recorded order; `Stop::Whole` where that is more than `limit` work or includes a call
    /// that cannot complete early, `Stop::Settle` where it includes a call that must wait for
    /// the batch in flight. With `ahead`, a call that ran ahead goes there instead and what
    /// it depends on is not followed: all of that ran ahead with it.
    fn closure(
        &mut self,
        roots: &mut Vec<u32>,
        limit: usize,
        mut ahead: Option<&mut Vec<usize>>,
    ) -> Result<Vec<usize>, Stop> {
        if !self.calls_in_step {
            return Err(Stop::Whole);
        }
        self.visit = self.visit.wrapping_add(1);
        if self.visit == 0 {
            self.visited.fill(0);
            self.visit = 1;
        }
        self.visited.resize(self.calls.len(), 0);
        let mut list = Vec::new();
        let mut cost = 0usize;
        while let Some(serial) = roots.pop() {
            let Some(i) = self.levels.pending_index(serial) else {
                continue;
            };
            if self.visited[i] == self.visit {
                continue;
            }
            self.visited[i] = self.visit;
            if let Some(ahead) = ahead.as_deref_mut().filter(|_| self.ran_ahead(i)) {
                ahead.push(i);
                continue;
            }
            let c = &self.calls[i];
            cost += c.cost as usize;
            if c.batch_only || cost > limit {
                return Err(Stop::Whole);
            }
            if c.touches_in_flight && self.after_in_flight {
                return Err(Stop::Settle);
            }
            list.push(i);
            roots.extend_from_slice(&self.deps[c.deps_at as usize..c.deps_end as usize]);
        }
        list.sort_unstable();
        if let Some(ahead) = ahead {
            ahead.sort_unstable();
        }
        Ok(list)
    }

    fn ran_ahead(&self, i: usize) -> bool {
        self.ahead.get(i).is_some_and(|&a| a)
    }

    /// Runs pending call `i`'s jobs on the CPU where its pixels are.
    fn run_call(&self, i: usize, arena: *const i16) {
        let c = &self.calls[i];
        let key = split_key(self.keys[c.bucket as usize]);
        let size = job_words(key.kernel);
        let base = self.slot_base(key.slot);
        let source = self.source_base(key.source, arena);
        let bucket = &self.buckets[c.bucket as usize];
        for k in 0..c.jobs as usize {
            let at = c.first_word as usize + k * size;
            let mut job = Job::default();
            job[..size].copy_from_slice(&bucket[at..at + size]);
            let dst = (base + job[0] as usize) as *mut u8;
            unsafe {
                run_job_fast(
                    key.kernel as u8,
                    dst,
                    job[1] as i32 as isize,
                    &job,
                    arena,
                    source,
                )
            };
        }
    }

    /// Takes pending call `i` out of the batch: its jobs are skipped, it is done.
    fn take_out(&mut self, i: usize) {
        self.note_settled(i);
        let c = &self.calls[i];
        let size = job_words(split_key(self.keys[c.bucket as usize]).kernel);
        let bucket = &mut self.buckets[c.bucket as usize];
        for k in 0..c.jobs as usize {
            bucket[c.first_word as usize + k * size] = SKIP_JOB;
        }
        let serial = self.levels.serial_of(i);
        self.levels.set_done(serial);
    }

    /// Runs the calls `list` (a [`GpuBatch::closure`]) on the CPU and takes their jobs out of
    /// the batch.
    fn run_early(&mut self, list: &[usize], arena: *const i16) {
        if list.iter().any(|&i| self.ran_ahead(i)) {
            self.commit_ahead();
        }
        let mut ran = 0;
        for &i in list {
            if !self.ran_ahead(i) {
                self.run_call(i, arena);
                self.take_out(i);
                ran += 1;
            }
        }
        self.completed_early += ran;
        stats::add(&COUNTERS.completed_early, ran as u64);
        stats::add(&COUNTERS.cpu_calls, ran as u64);
    }

    /// Takes every call that ran ahead out of the batch (their pixels are final already),
    /// before calls among them complete early: left in, the GPU would run a chain again from
    /// its prediction that calls taken out had built on, or without a part taken out.
    fn commit_ahead(&mut self) {
        let list = std::mem::take(&mut self.ahead_list);
        // (A backup copy may have left already: `Recorder::split`.)
        let (taken, _) = self.take_out_list(&list);
        stats::add(&COUNTERS.cpu_calls, taken as u64);
        self.ahead_list = list;
        self.ahead_list.clear();
        self.ahead_readers.iter_mut().for_each(Vec::clear);
    }

    /// Takes the calls of `list` still in the batch out of it, as completed early (their
    /// pixels are final on the CPU, or dead); returns how many, and how many of those ran
    /// ahead.
    fn take_out_list(&mut self, list: &[usize]) -> (usize, usize) {
        let (mut taken, mut ran) = (0, 0);
        for &i in list {
            if !self.taken_out(i) {
                self.take_out(i);
                taken += 1;
                ran += self.ran_ahead(i) as usize;
            }
        }
        self.completed_early += taken;
        stats::add(&COUNTERS.completed_early, taken as u64);
        (taken, ran)
    }

    /// Completes early every pending call that touches `areas` (and what those depend on), if
    /// that is at most `limit` work; else does nothing (see [`Stop`]).
    fn complete_areas(
        &mut self,
        areas: &[Area],
        limit: usize,
        arena: *const i16,
    ) -> Result<(), Stop> {
        let mut roots = self.pending_on(areas, true).ok_or(Stop::Whole)?;
        self.complete_early(&mut roots, limit, arena)
    }

    /// The pending calls that touch `areas`; `None` where the cells cannot tell or (with
    /// `lf_passes`) a loop-filter plane placed by position meets them.
    fn pending_on(&mut self, areas: &[Area], lf_passes: bool) -> Option<Vec<u32>> {
        if self.staging_len > 0 {
            return None;
        }
        let mut roots = Vec::new();
        for a in areas {
            let (lo, hi) = a.span();
            if hi < lo || (lf_passes && self.meets_lf_passes((lo, hi))) {
                return None;
            }
            match regions::place(&self.regions, lo, hi) {
                // No call in place there, and no copied one (`staging_len`).
                Placement::Outside => {}
                Placement::Straddles => return None,
                Placement::Inside(index) => {
                    let r = &self.regions[index];
                    if r.in_place.is_none() {
                        continue;
                    }
                    let block = block_in(r.id, r.start, r.end, a);
                    if !self.levels.pending_on(&block, &mut roots) {
                        return None;
                    }
                }
            }
        }
        Some(roots)
    }

    /// Gives a reader the pixels of `reads`, which it reads but does not write, if that is at
    /// most `limit` work; else does nothing (see [`Stop`]).
    ///
    /// Where it can, this runs the pending calls on those pixels (and what they depend on)
    /// ahead on the CPU where their pixels are, and leaves them in the batch: the GPU later
    /// runs them again and writes the same values. That holds where the first pending call
    /// on each pixel they write overwrites it without reading it (a prediction, not an
    /// average, a transform or a read of the pixel as a source): the GPU then runs that
    /// pixel's calls from the same start ([`GpuBatch::plan_ahead`]). Elsewhere (a transform on
    /// pixels made another way, a loop filter) the calls complete early as a whole
    /// ([`GpuBatch::complete_areas`]). A later reader of calls that ran ahead finds their
    /// pixels final and runs nothing again.
    fn complete_reads(
        &mut self,
        reads: &[Area],
        limit: usize,
        arena: *const i16,
    ) -> Result<(), Stop> {
        let mut roots = self.pending_on(reads, true).ok_or(Stop::Whole)?;
        let mut scratch = std::mem::take(&mut self.ahead_scratch);
        let list = self.closure(&mut roots, limit, Some(&mut scratch.boundary));
        let planned = match &list {
            Ok(list) if !list.is_empty() => self.plan_ahead(list, &mut scratch, arena),
            _ => Some(()), // nothing, or all of it ran ahead before
        };
        scratch.boundary.clear();
        self.ahead_scratch = scratch;
        let list = list?;
        if planned.is_none() {
            // As a whole, with what it depends on that ran ahead.
            let mut roots = self.pending_on(reads, true).ok_or(Stop::Whole)?;
            return self.complete_early(&mut roots, limit, arena);
        }
        self.ahead.resize(self.calls.len(), false);
        for &i in &list {
            self.run_call(i, arena);
            self.ahead[i] = true;
            // Its source reads, where later calls to run ahead may write: the GPU runs it
            // again on those bytes as they are then.
            let key = split_key(self.keys[self.calls[i].bucket as usize]);
            if key.kernel == MC_KERNEL
                && key.source != 0
                && self.written_slots & 1 << key.source != 0
            {
                let mut span = NO_SPAN;
                for k in 0..self.calls[i].jobs as usize {
                    let (_, job, _, source) = self.job_of(i, k, arena);
                    let (lo, hi) = mc_window(&job, source).span();
                    span = (span.0.min(lo), span.1.max(hi));
                }
                self.ahead_readers[key.source].push((i, span));
            }
        }
        self.ahead_list.extend_from_slice(&list);
        self.run_ahead += list.len();
        stats::add(&COUNTERS.run_ahead, list.len() as u64);
        Ok(())
    }

    /// A job of pending call `i`: its kernel, words, pixels and source (the arena or an
    /// imported frame).
    fn job_of(&self, i: usize, k: usize, arena: *const i16) -> (BucketKey, Job, Area, *const u8) {
        let c = &self.calls[i];
        let key = split_key(self.keys[c.bucket as usize]);
        let size = job_words(key.kernel);
        let at = c.first_word as usize + k * size;
        let mut job = Job::default();
        job[..size].copy_from_slice(&self.buckets[c.bucket as usize][at..at + size]);
        let (rows, cols) = if key.kernel == MC_KERNEL {
            (mc::tile_rows(job[4]), mc::tile_cols(job[4]))
        } else if key.kernel < MC_KERNEL {
            let n = KERNELS[key.kernel].size().n();
            (n, n)
        } else {
            (0, 0) // never run ahead
        };
        let pixels = Area {
            at: (self.slot_base(key.slot) + job[0] as usize) as *mut u8,
            stride: job[1] as i32 as isize,
            w: cols,
            h: rows,
        };
        let source = self.source_base(key.source, arena);
        (key, job, pixels, source)
    }

    /// Whether the calls `list` (a [`GpuBatch::closure`], recorded order) may run ahead on the
    /// CPU and stay in the batch ([`GpuBatch::complete_reads`]): they are predictions and
    /// transforms that FFmpeg will not redo, and on every byte they write the first pending
    /// call overwrites it; no pending call reads it as a source before. `s.boundary`: the
    /// calls that ran ahead before which they depend on (their bytes passed this check then).
    fn plan_ahead(&self, list: &[usize], s: &mut AheadScratch, arena: *const i16) -> Option<()> {
        let key_of = |i: usize| split_key(self.keys[self.calls[i].bucket as usize]);
        let mut list_slots = 0u32;
        for &i in list {
            let key = key_of(i);
            if key.kernel > MC_KERNEL {
                return None;
            }
            list_slots |= 1 << key.slot;
        }
        // Reads of a source only matter where these calls may write it.
        let tracked = |key: &BucketKey| {
            key.kernel == MC_KERNEL && key.source != 0 && list_slots & 1 << key.source != 0
        };
        // Adds what call `i`'s jobs do, in order (`RanAhead` for their writes if it ran
        // ahead), to `touches`.
        let add_touches = |i: usize, ran_ahead: bool, touches: &mut Vec<(usize, Touch, Area)>| {
            if key_of(i).kernel > MC_KERNEL {
                return None;
            }
            for k in 0..self.calls[i].jobs as usize {
                let (key, job, pixels, source) = self.job_of(i, k, arena);
                let itx = key.kernel < MC_KERNEL;
                if itx && job[3] & MAY_REDO != 0 {
                    return None;
                }
                if tracked(&key) {
                    touches.push((key.source, Touch::Reads, mc_window(&job, source)));
                }
                let touch = if ran_ahead {
                    Touch::RanAhead
                } else if itx || McFunction::from_params(job[4]).0.avg {
                    Touch::Modifies
                } else {
                    Touch::Overwrites
                };
                touches.push((key.slot, touch, pixels));
            }
            Some(())
        };
        // What the jobs do, in order, and the span each slot's writes cover.
        s.touches.clear();
        for &i in list {
            add_touches(i, false, &mut s.touches)?;
        }
        let mut write_spans = [NO_SPAN; MAX_SLOTS];
        for (slot, _, a) in s.touches.iter().filter(|t| t.1 != Touch::Reads) {
            let (span, (lo, hi)) = (&mut write_spans[*slot], a.span());
            *span = (span.0.min(lo), span.1.max(hi));
        }
        // Calls that ran ahead and read what these write, though the walk back did not meet
        // them (a later write to their cells took their place there).
        for (slot, readers) in self.ahead_readers.iter().enumerate() {
            if list_slots & 1 << slot != 0 {
                let meet = readers
                    .iter()
                    .filter(|r| spans_meet(r.1, write_spans[slot]));
                s.boundary.extend(meet.map(|r| r.0));
            }
        }
        s.boundary.sort_unstable();
        s.boundary.dedup();
        // Those that ran ahead come first: what these depend on among them ran before them,
        // and the rest touch other bytes.
        let own = s.touches.len();
        for &i in &s.boundary {
            add_touches(i, true, &mut s.touches)?;
        }
        s.touches.rotate_left(own);
        // A box per slot and stride (a frame's luma and chroma planes); a slot's areas lie in
        // its region.
        s.boxes.clear();
        for &(slot, _, a) in &s.touches {
            if a.stride <= 0 || a.w > a.stride as usize || a.w == 0 || a.h == 0 {
                return None;
            }
            let b = match PixelBox::find(&s.boxes, slot, a.stride) {
                Some(i) => &mut s.boxes[i],
                None => {
                    s.boxes.push(PixelBox {
                        slot,
                        origin: self.slot_base(slot),
                        stride: a.stride as usize,
                        rows: (usize::MAX, 0),
                        cols: (usize::MAX, 0),
                        first_word: 0,
                        row_words: 0,
                    });
                    s.boxes.last_mut().expect("just pushed")
                }
            };
            if !b.widen(&a) {
                return None;
            }
        }
        // Boxes of one slot at two strides must not share a byte: each byte has one bit.
        for (i, a) in s.boxes.iter().enumerate() {
            if s.boxes[i + 1..]
                .iter()
                .any(|b| b.slot == a.slot && spans_meet(a.span(), b.span()))
            {
                return None;
            }
        }
        let mut words = 0;
        for b in s.boxes.iter_mut() {
            b.first_word = words;
            b.row_words = (b.cols.1 - b.cols.0).div_ceil(64);
            words += b.row_words * (b.rows.1 - b.rows.0);
            if words > MAX_AHEAD_WORDS {
                return None;
            }
        }
        s.written.clear();
        s.written.resize(words, 0);
        s.read_first.clear();
        s.read_first.resize(words, 0);
        let (written, read_first) = (&mut s.written, &mut s.read_first);
        for (slot, touch, a) in &s.touches {
            let b = s.boxes[PixelBox::find(&s.boxes, *slot, a.stride).expect("its box")];
            let fine = b.segments(a, |row, col, len| {
                for_each_word(b.bit(row, col), len, |w, m| match touch {
                    Touch::Reads => {
                        read_first[w] |= m & !written[w];
                        true
                    }
                    Touch::RanAhead => {
                        written[w] |= m;
                        true
                    }
                    Touch::Overwrites => {
                        written[w] |= m;
                        read_first[w] & m == 0
                    }
                    Touch::Modifies => written[w] & m == m,
                })
            });
            if !fine {
                return None;
            }
        }
        Some(())
    }

    /// The buckets in use, in the order they run.
    fn run_order(&self) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.keys.len()).collect();
        order.sort_unstable_by_key(|&i| self.keys[i]);
        order
    }

    /// The host address of byte 0 of a source: the arena, or a slot's imported frame.
    fn source_base(&self, source: usize, arena: *const i16) -> *const u8 {
        match source {
            0 => arena as *const u8,
            k => self.slot_base(k) as *const u8,
        }
    }

    /// The host address of byte 0 of pixel slot `slot` (1..: an imported region).
    fn slot_base(&self, slot: usize) -> usize {
        self.slots[slot - 1]
            .in_place
            .as_ref()
            .expect("slots are in place")
            .base()
    }

    /// Submits the pending batch and waits for it. `arena_len`: coefficients in the arena.
    fn execute(&mut self, arena: *const i16, arena_len: usize) -> Result<(), Failure> {
        self.submit(arena, arena_len).map_err(Failure::NotRun)?;
        self.finish()
    }

    /// Whether the batch may run while its thread goes on: nothing for the host to do after
    /// it (no copied blocks to copy back, no transform FFmpeg's function may have to redo).
    fn runs_unattended(&self) -> bool {
        self.staging_len == 0 && !self.may_redo
    }

    /// Submits the pending batch without waiting; [`GpuBatch::finish`] completes it.
    fn submit(&mut self, arena: *const i16, arena_len: usize) -> GpuResult<()> {
        let packing = Instant::now();
        let order = self.run_order();
        let stream = &mut self.stream;
        // Each bucket starts at a multiple of its job size, so that `first` counts its jobs.
        let mut layout = Vec::with_capacity(order.len());
        let mut words = 0usize;
        for &b in &order {
            let size = job_words(split_key(self.keys[b]).kernel);
            words = words.next_multiple_of(size);
            layout.push(words);
            words += self.buckets[b].len();
        }
        let job_bytes = 4 * words;
        stream.grow(Buf::Jobs, job_bytes as u64)?;
        stream.grow(Buf::Staging, self.staging_len as u64)?;
        stream.grow(Buf::Overflow, 4 * (self.pending_words as u64 + 1))?;

        let jobs = stream.jobs.ptr as *mut u32;
        let mut dispatches = Vec::with_capacity(order.len());
        for (&b, &start) in order.iter().zip(&layout) {
            let bucket = &self.buckets[b];
            let key = split_key(self.keys[b]);
            let size = job_words(key.kernel);
            unsafe { ptr::copy_nonoverlapping(bucket.as_ptr(), jobs.add(start), bucket.len()) };
            dispatches.push(Dispatch {
                level: key.level,
                kernel: key.kernel,
                slot: key.slot,
                source: key.source,
                first: (start / size) as u32,
                count: (bucket.len() / size) as u32,
            });
        }
        let stage = stream.staging.ptr;
        for c in &self.copied {
            for row in 0..c.rect.h {
                unsafe {
                    ptr::copy_nonoverlapping(
                        c.rect.pixel(row, 0),
                        stage.add(c.staging + row * c.rect.w),
                        c.rect.w,
                    )
                };
            }
        }
        stream.jobs.flush(0..job_bytes as u64)?;
        stream.coefs.flush(0..arena_len as u64 * 2)?;
        stream.staging.flush(0..self.staging_len as u64)?;
        let mut pixels = vec![stream.staging.as_ref()];
        pixels.extend(
            self.slots
                .iter()
                .map(|r| r.in_place.as_ref().expect("slots are in place").as_ref()),
        );
        let serial = stream.submit(&dispatches, &pixels, job_bytes as u64, arena_len as u64 * 2)?;
        self.unretired = Some(serial);
        stats::add_time(&COUNTERS.pack_ns, packing);
        self.submitted = Some(Submitted {
            serial,
            order,
            dispatches,
            arena,
            arena_len,
            job_bytes,
        });
        Ok(())
    }

    /// Waits for the submitted batch and does what is left for the host: copying copied
    /// blocks back, redoing transforms whose lanes overflowed. The batch stays to be cleared.
    ///
    /// A failure comes after the host did on the CPU what it could still do exactly: where
    /// the GPU's results cannot be read back, the calls on copied blocks run on the CPU from
    /// their pixels, which nothing has touched yet; what cannot be made exact is reported as
    /// damage ([`Failure::Submitted`]), never redone over pixels the GPU may have written.
    fn finish(&mut self) -> Result<(), Failure> {
        let Some(Submitted {
            serial: _,
            order,
            dispatches,
            arena,
            arena_len,
            job_bytes,
        }) = self.submitted.take()
        else {
            return Ok(());
        };
        if let Err(why) = self.stream.finish() {
            // The GPU may have written any part of the batch in place; copied blocks wait in
            // the staging buffer, their own pixels untouched.
            let exact = self.run_copied_on_cpu(arena);
            let damaged = !exact || self.has_jobs_in_place();
            return Err(Failure::Submitted { why, damaged });
        }

        let unpacking = Instant::now();
        // The GPU ran the whole batch. Read the list of transforms it left to the host first:
        // copied blocks are copied back only where it could be read, so that their pixels stay
        // untouched otherwise.
        let mut failed = None;
        let mut damaged = false;
        let redo = match self.overflowed_transforms(&order, &dispatches, arena) {
            Ok(redo) => redo,
            Err(why) => {
                // Transforms in place whose coefficients did not prove them safe may have been
                // left undone.
                damaged |= self.may_redo;
                failed = Some(why);
                Vec::new()
            }
        };
        let copied_back = failed.is_none()
            && match self.stream.read_staging(self.staging_len) {
                Ok(()) => true,
                Err(why) => {
                    failed = Some(why);
                    false
                }
            };
        if copied_back {
            let stage = self.stream.staging.ptr;
            for c in &self.copied {
                for row in 0..c.rect.h {
                    unsafe {
                        ptr::copy_nonoverlapping(
                            stage.add(c.staging + row * c.rect.w),
                            c.rect.pixel(row, 0),
                            c.rect.w,
                        )
                    };
                }
            }
        }
        // After the copies back, which left their pixels unchanged. No call of the batch comes
        // after them on their pixels (`Need::after_cpu_redo`).
        for r in redo.iter().filter(|r| copied_back || !r.copied) {
            let coefs = unsafe { std::slice::from_raw_parts(r.coefs, r.tx.coefs()) };
            unsafe { run_ffmpeg(r.tx, r.dst, r.stride, coefs, r.eob) };
        }
        if !copied_back {
            damaged |= !self.run_copied_on_cpu(arena);
        }
        stats::add_time(&COUNTERS.pack_ns, unpacking);
        let on_gpu = (self.pending - self.completed_early) as u64;
        stats::add(&COUNTERS.gpu_calls, on_gpu);
        stats::max(&COUNTERS.max_calls_per_submission, on_gpu);
        stats::add(&COUNTERS.pixel_bytes_copied, 2 * self.staging_len as u64);
        stats::add(
            &COUNTERS.bytes_to_device,
            (job_bytes + self.staging_len + 2 * arena_len) as u64,
        );
        stats::add(&COUNTERS.bytes_from_device, self.staging_len as u64);
        match failed {
            None => Ok(()),
            Some(why) => Err(Failure::Submitted { why, damaged }),
        }
    }

    /// The transforms of FFmpeg's decoder whose 16-bit lanes overflowed in the submission:
    /// the GPU left their pixels for FFmpeg's own function.
    fn overflowed_transforms(
        &self,
        order: &[usize],
        dispatches: &[Dispatch],
        arena: *const i16,
    ) -> GpuResult<Vec<Redo>> {
        let mut redo = Vec::new();
        for index in self.stream.overflowed_jobs()? {
            let n = overflowed_dispatch(dispatches, index)
                .ok_or("an overflowed job outside the submission's transforms")?;
            let d = &dispatches[n];
            let size = job_words(d.kernel);
            let at = (index - d.first) as usize * size;
            let words = &self.buckets[order[n]][at..at + size];
            let job = GpuJob {
                pixel_offset: words[0],
                stride: words[1] as i32,
                coef: words[2],
                reserved: words[3],
            };
            let Some(ItxKernel::Full(tx)) = KERNELS.get(d.kernel).copied() else {
                return Err("a job other than a full transform reported a lane overflow".into());
            };
            let (dst, stride) = if d.slot == 0 {
                let c = self
                    .copied_calls
                    .iter()
                    .find(|c| c.kernel as usize == d.kernel && c.job[0] == job.pixel_offset);
                let c = c.ok_or("an overflowed copied job without its block")?;
                (c.dst, c.stride)
            } else {
                let base = self.slot_base(d.slot);
                (
                    (base + job.pixel_offset as usize) as *mut u8,
                    job.stride as isize,
                )
            };
            if d.slot != 0 && job.reserved & MAY_REDO == 0 {
                // Calls after it on its pixels already ran: the bound of `itx` failed.
                crate::log::once(
                    crate::log::Level::Error,
                    "unproven-overflow",
                    format_args!("a transform whose coefficients proved no 16-bit overflow overflowed; the frame may differ from FFmpeg's (please report)"),
                );
            }
            redo.push(Redo {
                tx,
                dst,
                stride,
                coefs: unsafe { arena.add(job.coef as usize) },
                eob: job_eob(job.reserved),
                copied: d.slot == 0,
            });
        }
        Ok(redo)
    }

    /// Whether jobs in place are pending (not completed early on the CPU).
    fn has_jobs_in_place(&self) -> bool {
        (0..self.keys.len()).any(|b| {
            let key = split_key(self.keys[b]);
            key.slot != 0
                && self.buckets[b]
                    .chunks_exact(job_words(key.kernel))
                    .any(|words| words[0] != SKIP_JOB)
        })
    }

    /// Runs the calls on copied blocks with the CPU reference, in level order, from their
    /// own pixels (after a failure that left the staging buffer unread). Returns whether that
    /// is exact: not where a call reads a slot the batch writes in place, whose pixels the
    /// GPU may have moved past what the call was to read.
    fn run_copied_on_cpu(&self, arena: *const i16) -> bool {
        let mut calls: Vec<&Call> = self.copied_calls.iter().collect();
        calls.sort_by_key(|c| c.level); // stable: recorded order within a level
        let mut exact = true;
        for c in calls {
            exact &= c.source == 0 || self.written_slots & 1 << c.source == 0;
            let source = self.source_base(c.source as usize, arena);
            unsafe { run_job_on_cpu(c.kernel, c.dst, c.stride, &c.job, arena, source) };
        }
        stats::add(&COUNTERS.cpu_calls, self.copied_calls.len() as u64);
        exact
    }

    /// After a failed step of the batch's submission: the device is not used again; a batch
    /// that never reached the GPU runs on the CPU reference, and one that may have left
    /// pixels wrong is reported, so that the decoder fails its frame ([`damaged_batches`]).
    /// Nothing is applied twice.
    fn recover(&mut self, failure: Failure, arena: *const i16) {
        let (why, damaged) = match failure {
            Failure::NotRun(why) => {
                self.run_on_cpu(arena);
                (why, false)
            }
            Failure::Submitted { why, damaged } => (why, damaged),
        };
        self.stream.gpu().mark_lost(&why);
        if damaged {
            stats::add(&COUNTERS.damaged_batches, 1);
            crate::log::once(
                crate::log::Level::Error,
                "damaged-batch",
                format_args!("the device failed while its work may have written pixels in place; those frames are reported as failed to the decoder"),
            );
        }
        self.retire();
    }

    /// Runs the pending batch with the CPU reference (after a GPU failure), level by level,
    /// which gives the sequential result.
    fn run_on_cpu(&self, arena: *const i16) {
        let mut jobs: Vec<(u32, u8, *mut u8, isize, Job, *const u8)> = Vec::new();
        for b in self.run_order() {
            let key = split_key(self.keys[b]);
            if key.slot == 0 {
                continue; // copied blocks: below, from their own record
            }
            let base = self.slot_base(key.slot);
            let source = self.source_base(key.source, arena);
            for words in self.buckets[b].chunks_exact(job_words(key.kernel)) {
                if words[0] == SKIP_JOB {
                    continue; // completed early
                }
                let mut job = Job::default();
                job[..words.len()].copy_from_slice(words);
                let dst = (base + job[0] as usize) as *mut u8;
                jobs.push((
                    key.level,
                    key.kernel as u8,
                    dst,
                    job[1] as i32 as isize,
                    job,
                    source,
                ));
            }
        }
        for c in &self.copied_calls {
            let source = self.source_base(c.source as usize, arena);
            jobs.push((c.level, c.kernel, c.dst, c.stride, c.job, source));
        }
        jobs.sort_by_key(|j| j.0); // stable: recorded order within a level
        for (_, kernel, dst, stride, job, source) in jobs {
            unsafe { run_job_on_cpu(kernel, dst, stride, &job, arena, source) };
        }
        stats::add(
            &COUNTERS.cpu_calls,
            (self.pending - self.completed_early) as u64,
        );
    }

    fn clear(&mut self) {
        for i in 0..self.keys.len() {
            self.buckets[i].clear();
        }
        self.keys.clear();
        self.bucket_of.clear();
        self.recent_buckets = [NO_BUCKET; RECENT_BUCKETS];
        self.pending = 0;
        self.pending_words = 0;
        self.copied.clear();
        self.copied_calls.clear();
        self.staging_len = 0;
        self.slots.clear();
        self.current = None;
        self.recent_targets.clear();
        self.levels.clear();
        self.occupancy.clear();
        self.pairs = [0; MAX_SLOTS * MAX_SLOTS / 64];
        self.pair_count = 0;
        self.regions.clear();
        self.regions_version = 0;
        self.calls.clear();
        self.deps.clear();
        self.completed_early = 0;
        self.run_ahead = 0;
        self.ahead.clear();
        self.ahead_list.clear();
        self.ahead_readers.iter_mut().for_each(Vec::clear);
        self.written_slots = 0;
        self.calls_in_step = true;
        self.retire();
        self.submitted = None;
        self.may_redo = false;
        self.cell_level_max = None;
        self.lf_spans = [NO_SPAN; 3];
        self.lf_last = None;
        self.lf_split = Default::default();
        self.lf_ends_batch = false;
        self.slot_writes.iter_mut().for_each(Spans::clear);
        self.slot_reads.iter_mut().for_each(Spans::clear);
        self.slot_open = [0; MAX_SLOTS];
        self.after_in_flight = false;
        self.backup_copies.clear();
        self.journal.clear();
        self.copied_mark = 0;
    }

    /// Tells threads waiting for this batch's submission that its pixels are final (see
    /// [`crate::gpu::Gpu::retire`]).
    fn retire(&mut self) {
        if let Some(serial) = self.unretired.take() {
            self.stream.gpu().retire(serial);
        }
    }
}

struct Recorder {
    arena: Arena,
    /// The coefficient storage of the CPU path.
    host_coefs: Vec<i16>,
    backend_chosen: bool,
    /// The CPU path's pending jobs.
    calls: Vec<Call>,
    cpu_calls: usize,
    cpu_regions: RegionView,
    /// The bytes pending calls may write lie in `written.0 .. written.1` (both paths): a
    /// source window read at call time must not meet them.
    written: (usize, usize),
    /// The GPU path; `None` on the CPU path.
    gpu: Option<GpuBatch>,
    /// A batch submitted without waiting (a published row), and a batch to record into next
    /// while one is in flight.
    in_flight: Option<GpuBatch>,
    spare: Option<GpuBatch>,
    counts: RecordedCounts,
    /// The thread decodes an inter frame ([`note_frame`]).
    inter_frame: bool,
    /// The index of the call the last `record` placed in the GPU batch, if it did.
    last_placed: Option<usize>,
    /// `record` is placing a call: only its own jobs (journaled) and coefficients
    /// (`moved_coefs`) changed the pending work, and `calls` held `cpu_mark` jobs before it.
    placing: bool,
    cpu_mark: usize,
    moved_coefs: Option<Moved>,
    /// A panic while recording left this thread's calls to run at once on the CPU.
    poisoned: bool,
}

/// Where `capture` moved a transform's coefficients from the decoder's block.
#[derive(Clone, Copy)]
enum Moved {
    /// Into the arena, at this index.
    Arena(usize),
    /// A DC-only call's one value.
    Dc(i16),
}

thread_local! {
    static RECORDER: RefCell<Recorder> = RefCell::new(Recorder::new());
}

impl Recorder {
    fn new() -> Recorder {
        Recorder {
            arena: Arena {
                ptr: ptr::null_mut(),
                capacity: 0,
                len: 0,
            },
            host_coefs: Vec::new(),
            backend_chosen: false,
            calls: Vec::new(),
            cpu_calls: 0,
            cpu_regions: RegionView::default(),
            written: (usize::MAX, 0),
            gpu: None,
            in_flight: None,
            spare: None,
            counts: RecordedCounts::default(),
            inter_frame: false,
            last_placed: None,
            placing: false,
            cpu_mark: 0,
            moved_coefs: None,
            poisoned: false,
        }
    }

    fn choose_backend(&mut self) {
        self.backend_chosen = true;
        if let Some(g) = gpu::get() {
            match Stream::new(g) {
                Ok(s) => self.gpu = Some(GpuBatch::new(s)),
                // This thread only (out of memory, say): the device may serve the others.
                Err(e) => crate::log::once(
                    crate::log::Level::Warn,
                    "stream",
                    format_args!("cannot set up a GPU stream for a thread ({e}); it runs on the CPU reference"),
                ),
            }
        }
        self.sync_arena();
    }

    /// Leaves the GPU path for good. The stream and the imports it used are leaked, not
    /// destroyed: after a failure the GPU may still be using them, and freeing memory in use
    /// is not allowed.
    fn drop_gpu(&mut self) {
        debug_assert!(self.in_flight.is_none(), "settle first");
        if let Some(g) = self.gpu.take() {
            std::mem::forget(g);
        }
        self.spare = None;
        self.sync_arena();
    }

    /// Waits for the batch in flight, if any: afterwards the thread may touch any pixel on
    /// the CPU. If the device failed, the batch in flight and the pending one run on the CPU
    /// reference, and the thread goes on there.
    fn settle(&mut self) {
        let Some(mut a) = self.in_flight.take() else {
            return;
        };
        if let Some(g) = &mut self.gpu {
            g.after_in_flight = false;
        }
        match a.finish() {
            Ok(()) => {
                a.clear();
                self.spare = Some(a);
            }
            Err(failure) => {
                let arena = a.stream.coefs.ptr as *const i16;
                a.recover(failure, arena);
                std::mem::forget(a); // the GPU may still use its objects
                if let Some(g) = &mut self.gpu {
                    g.run_on_cpu(self.arena.ptr);
                }
                self.drop_gpu();
                self.arena.len = 0;
                self.written = (usize::MAX, 0);
            }
        }
    }

    /// Submits the pending batch for a row other frame threads may now read, and goes on
    /// without waiting for it where nothing is left for the host to do after it; else
    /// completes it. Returns the serial readers wait for ([`await_submission`]), 0 when
    /// everything is complete.
    fn publish(&mut self, reason: Reason) -> u64 {
        self.counts.fold();
        if self.pending() == 0 {
            // Nothing new: readers wait for the batch in flight, if any.
            return self
                .in_flight
                .as_ref()
                .and_then(|a| a.unretired)
                .unwrap_or(0);
        }
        let unattended = matches!(&self.gpu, Some(g) if g.pending > 0 && g.runs_unattended());
        if !unattended {
            self.flush(reason);
            return 0;
        }
        // One batch in flight at a time: the previous row's is done by now, mostly.
        self.settle();
        let next = match self.spare.take() {
            Some(b) => Ok(b),
            None => match &self.gpu {
                Some(g) => Stream::new(g.stream.gpu()).map(GpuBatch::new),
                None => Err("no GPU path".into()),
            },
        };
        let Ok(next) = next else {
            self.flush(reason);
            return 0;
        };
        let Some(g) = self.gpu.as_mut() else {
            self.spare = Some(next);
            self.flush(reason);
            return 0;
        };
        if g.all_completed_early() {
            self.spare = Some(next);
            self.flush(reason);
            return 0;
        }
        stats::count_flush(reason);
        let arena = self.arena.ptr;
        match g.submit(arena, self.arena.len) {
            Ok(()) => {
                let serial = g.submitted.as_ref().map_or(0, |s| s.serial);
                self.in_flight = self.gpu.replace(next);
                if let Some(g) = &mut self.gpu {
                    g.after_in_flight = true;
                }
                self.arena.len = 0;
                self.written = (usize::MAX, 0);
                self.sync_arena();
                stats::add(&COUNTERS.unattended_submissions, 1);
                serial
            }
            Err(e) => {
                g.recover(Failure::NotRun(e), arena);
                drop(next); // never submitted
                self.drop_gpu();
                self.arena.len = 0;
                self.written = (usize::MAX, 0);
                0
            }
        }
    }

    /// Submits the pending batch without waiting, as the first part of a frame this thread
    /// decodes whole, where the GPU can run it unattended: the CPU goes on decoding while the
    /// GPU runs it. `next_reads` (the backup lines the next row's intra blocks read) is made
    /// final on the CPU first, so that those reads need not wait for the part in flight.
    /// Returns whether the part went out.
    fn split(&mut self, next_reads: &[Area]) -> bool {
        if !crate::config::get().reads_ahead {
            return false;
        }
        // One part in flight at a time; one still running keeps this part growing.
        match &self.in_flight {
            Some(a) if !a.stream.is_done() => return false,
            Some(_) => self.settle(),
            None => {}
        }
        let arena = self.arena.ptr;
        let Some(g) = self
            .gpu
            .as_mut()
            .filter(|g| g.pending > 0 && g.runs_unattended())
        else {
            return false;
        };
        // No pending call may read them as a source: the copies leave the batch below.
        let read_as_source = next_reads
            .iter()
            .any(|a| g.slot_reads.iter().any(|r| r.meets(a.span())));
        if read_as_source {
            return false;
        }
        let (early, ahead) = (g.completed_early, g.run_ahead);
        let made_final = g.complete_reads(next_reads, 4 * EARLY_COST_LIMIT, arena);
        if self.inter_frame {
            self.counts.inter_completed_early += (g.completed_early - early) as u64;
            self.counts.inter_run_ahead += (g.run_ahead - ahead) as u64;
        }
        if made_final.is_err() {
            return false;
        }
        // The CPU now holds the last copy's lines. The GPU would write every row's copy
        // again, one after the other, while the next row's intra blocks read the lines: take
        // them all out (each row's copy covers the same bytes, and the last one is final), so
        // that the part in flight leaves the lines alone.
        let copies = std::mem::take(&mut g.backup_copies);
        let (taken, ran) = g.take_out_list(&copies);
        if self.inter_frame {
            self.counts.inter_completed_early += taken as u64;
        }
        // Those that did not run ahead are dead: the last copy overwrote them.
        stats::add(&COUNTERS.cpu_calls, ran as u64);
        // (Where nothing is left for the GPU, this clears the batch.)
        let went = self.publish(Reason::FrameSplit) != 0;
        if went {
            stats::add(&COUNTERS.frame_splits, 1);
        }
        went
    }

    /// Points the arena at the current path's coefficient storage.
    fn sync_arena(&mut self) {
        let (ptr, capacity) = match &mut self.gpu {
            Some(g) => (
                g.stream.coefs.ptr as *mut i16,
                g.stream.coefs.size as usize / 2,
            ),
            None => (self.host_coefs.as_mut_ptr(), self.host_coefs.len()),
        };
        self.arena.ptr = ptr;
        self.arena.capacity = capacity;
    }

    fn pending(&self) -> usize {
        self.cpu_calls + self.gpu.as_ref().map_or(0, |g| g.pending)
    }

    /// Makes room for `count` more coefficients: on the GPU path by completing the pending
    /// batch and taking a larger buffer for next time; on the CPU path by growing the vector.
    fn ensure_room(&mut self, count: usize) {
        // A loop: completing the batch may lose the device, and then the CPU path needs room.
        while self.arena.len + count > self.arena.capacity {
            match &mut self.gpu {
                None => {
                    let size = (self.arena.len + count)
                        .max(2 * self.host_coefs.len())
                        .max(1 << 16);
                    self.host_coefs.resize(size, 0);
                }
                Some(g) => {
                    // Full: complete the pending batch, then take a larger buffer so that the
                    // next batch of this size fits.
                    if self.arena.len > 0 {
                        crate::debug!(
                            "coefficient buffer full ({} bytes): flushing early",
                            g.stream.coefs.size
                        );
                        self.flush(Reason::Full);
                    }
                    let Some(g) = &mut self.gpu else { continue };
                    let s = &mut g.stream;
                    let want = (s.coefs.size * 2)
                        .max(count as u64 * 2)
                        .min(s.max_buffer_bytes());
                    if want < count as u64 * 2 {
                        crate::warn!("a coefficient block exceeds the buffer limit; running on the CPU reference");
                        self.drop_gpu();
                    } else if let Err(e) = s.grow(Buf::Coefs, want) {
                        crate::warn!("cannot grow the coefficient buffer ({e}); running on the CPU reference");
                        self.drop_gpu();
                    }
                }
            }
            self.sync_arena();
        }
    }

    /// Takes `count` coefficients of arena (room was ensured).
    fn take(&mut self, count: usize) -> usize {
        self.ensure_room(count);
        let at = self.arena.len;
        self.arena.len += count;
        at
    }

    /// Copies what the call reads besides its pixels into the arena: a transform's
    /// coefficients (zeroing them as FFmpeg does; for a DC-only call the word is the DC value
    /// itself), a motion compensation's source window (the word is the arena byte of the
    /// source pixel under the block's top-left pixel). Returns that word.
    unsafe fn capture(&mut self, op: &Op) -> u32 {
        match *op {
            Op::Itx { tx, block, eob } => {
                if tx.is_dc_only_call(eob) {
                    let v = ptr::read_unaligned(block);
                    ptr::write_unaligned(block, 0);
                    self.moved_coefs = Some(Moved::Dc(v));
                    return v as i32 as u32;
                }
                let at = self.take(tx.coefs());
                let to = self.arena.ptr.add(at) as *mut u8;
                let from = block as *mut u8;
                match tx.size {
                    TxSize::T4 => move_and_zero::<32>(from, to),
                    TxSize::T8 => move_and_zero::<128>(from, to),
                    TxSize::T16 => move_and_zero::<512>(from, to),
                    TxSize::T32 => move_and_zero::<2048>(from, to),
                }
                self.moved_coefs = Some(Moved::Arena(at));
                at as u32
            }
            Op::Mc { f, .. } => {
                let win = op.source().expect("MC has a source");
                let at = self.take((win.w * win.h).div_ceil(2));
                let to = self.arena.ptr.add(at) as *mut u8;
                for row in 0..win.h {
                    ptr::copy_nonoverlapping(win.pixel(row, 0), to.add(row * win.w), win.w);
                }
                let w = f.window();
                (2 * at + w.above * win.w + w.left) as u32
            }
            Op::Lf { .. } => 0,
            Op::LfSb { plane, .. } => {
                let at = self.take(lf_sb::RECORD_BYTES / 2);
                plane.write_record(self.arena.ptr.add(at) as *mut u8);
                at as u32
            }
            Op::Cdef { call } => {
                let at = self.take(cdef::WINDOW_LEN);
                call.window(&mut *(self.arena.ptr.add(at) as *mut [i16; cdef::WINDOW_LEN]));
                at as u32
            }
        }
    }

    /// The words every job of a motion compensation shares, as its top-left tile's job has
    /// them: source word and stride, parameters (without the tile's), the packed filters;
    /// words 0 and 1 (pixel and stride) are left to the caller.
    fn mc_job(op: &Op, captured: Captured) -> Job {
        let Op::Mc { f, mx, my, .. } = *op else {
            unreachable!("a motion compensation");
        };
        let [h0, h1] = mc::packed_taps(f.filter, mx);
        let [v0, v1] = mc::packed_taps(f.filter, my);
        [
            0,
            0,
            captured.word,
            captured.stride as u32,
            f.params(mx, my),
            h0,
            h1,
            v0,
            v1,
            0,
            0,
            0,
        ]
    }

    /// Calls `job(row, col, kernel, words)` for each job of a call, at its position in the
    /// call's [`Area`]; words 0 and 1 (pixel and stride) are left to the caller.
    fn for_each_job(
        op: &Op,
        captured: Captured,
        rect: &Area,
        origin: Origin,
        mut job: impl FnMut(usize, usize, u8, Job),
    ) {
        match *op {
            Op::Itx { tx, eob, .. } => {
                let kernel = ItxKernel::for_call(tx, tx.is_dc_only_call(eob)).index() as u8;
                job(
                    0,
                    0,
                    kernel,
                    [
                        0,
                        0,
                        captured.word,
                        job_flags(origin, eob),
                        0,
                        0,
                        0,
                        0,
                        0,
                        0,
                        0,
                        0,
                    ],
                );
            }
            Op::Mc { .. } => {
                let first = Self::mc_job(op, captured);
                for_each_mc_tile(rect.w, rect.h, |y, x, tile| {
                    let src = captured.word as i64 + y as i64 * captured.stride as i64 + x as i64;
                    let mut words = first;
                    words[2] = src as u32;
                    words[4] |= tile;
                    job(y, x, MC_KERNEL as u8, words);
                });
            }
            Op::Lf { f, e, i, h } => {
                let reach = f.reach();
                for (n, half) in f.halves(e, i, h).into_iter().enumerate() {
                    let (y, x) = match f.dir() {
                        LfDir::H => (8 * n, reach),
                        LfDir::V => (reach, 8 * n),
                    };
                    job(
                        y,
                        x,
                        LF_KERNEL as u8,
                        [0, 0, half.params(f.dir()), 0, 0, 0, 0, 0, 0, 0, 0, 0],
                    );
                }
            }
            Op::LfSb { plane, .. } => {
                // One job at the superblock's first pixel, inside the call's area.
                let (row, col) = ((-plane.top) as usize, (-plane.left) as usize);
                let words = [0, 0, plane.params, captured.word, 0, 0, 0, 0, 0, 0, 0, 0];
                job(row, col, LF_SB_KERNEL as u8, words);
            }
            Op::Cdef { call } => {
                let params = cdef::job_params(&call.strengths, call.size, call.two_bytes);
                let words = [0, 0, captured.word, params, 0, 0, 0, 0, 0, 0, 0, 0];
                job(0, 0, CDEF_KERNEL as u8, words);
            }
        }
    }

    /// Whether a call's source window, read on the CPU now, may hold pixels the batch in
    /// flight writes: it meets a region that batch placed calls in (all it writes).
    fn source_may_be_in_flight(&self, op: &Op) -> bool {
        let (Some(win), Some(a)) = (op.source(), &self.in_flight) else {
            return false;
        };
        let (lo, hi) = win.span();
        hi < lo || !matches!(regions::place(&a.regions, lo, hi), Placement::Outside)
    }

    fn note_written(&mut self, rect: &Area) {
        let (lo, hi) = rect.span();
        self.written = (self.written.0.min(lo), self.written.1.max(hi));
    }

    unsafe fn record(&mut self, op: Op, dst: *mut u8, stride: isize, origin: Origin) {
        self.last_placed = None;
        if self.poisoned {
            op.run_at_once(dst, stride, origin);
            stats::add(&COUNTERS.immediate, 1);
            return;
        }
        if !self.backend_chosen {
            self.choose_backend();
        }
        if origin == Origin::Ffmpeg && op.placed_on_cpu() {
            return self.run_in_order(op, dst, stride);
        }
        if self.gpu.is_some() && op.optional_kernel().is_some_and(|k| !device_has_kernel(k)) {
            // The decoders' hooks decline such calls (VP9's superblock hook, dav1d's CDEF
            // attach), so these come from the public API: at once, on the CPU.
            return self.run_now(op, dst, stride, origin);
        }
        let rect = op.rect(dst, stride);
        if stride.unsigned_abs() < rect.w {
            // Rows overlap: only FFmpeg's sequential order gives its result.
            return self.run_now(op, dst, stride, origin);
        }
        let source_area = op.source();
        if let Some(src) = &source_area {
            let read = src.span();
            if read.1 < read.0 || spans_meet(read, rect.span()) {
                // Reads what it writes: only FFmpeg's order gives its result.
                return self.run_now(op, dst, stride, origin);
            }
            if self.pending() > 0 && spans_meet(read, self.written) {
                // Its source may be written by pending calls: complete them first.
                self.flush(Reason::Overlap);
            }
        }
        if let Op::Cdef { call } = &op {
            // Its window is taken now, on the CPU: pending calls that write what it reads
            // complete first (in dav1d's order there are none). The CPU path runs it at once.
            if self.gpu.is_none() {
                return self.run_now(op, dst, stride, origin);
            }
            let (read, count) = call.read_areas();
            let areas = read.map(|(at, stride, w, h)| Area {
                at: at as *mut u8,
                stride,
                w,
                h,
            });
            // A window's read is no decoder sync: not counted as one.
            self.complete_early_where_possible(Reason::Overlap, &areas[..count]);
            if self.gpu.is_none() {
                return self.run_now(op, dst, stride, origin); // the device failed
            }
        }
        // First: completing a full batch here may lose the device, and decide the path.
        self.ensure_room(op.room());
        if self.gpu.is_none() {
            if origin == Origin::Ffmpeg {
                let (lo, hi) = rect.span();
                match self.cpu_regions.place(lo, hi) {
                    Placement::Inside(_) => {}
                    Placement::Outside => return run_transient(&op, dst, stride),
                    Placement::Straddles => return self.run_now(op, dst, stride, origin),
                }
            }
            self.cpu_mark = self.calls.len();
            self.moved_coefs = None;
            self.placing = true;
            let captured = Captured::of(&op, self.capture(&op));
            let calls = &mut self.calls;
            Self::for_each_job(&op, captured, &rect, origin, |row, col, kernel, job| {
                calls.push(Call {
                    dst: rect.pixel(row, col),
                    stride,
                    kernel,
                    job,
                    level: 0,
                    source: 0,
                })
            });
            self.cpu_calls += 1;
            self.placing = false;
            self.note_written(&rect);
            self.counts.count(&op, self.inter_frame);
            return;
        }
        // Place the call; a call that cannot join completes the pending batch first (which
        // empties it and the arena, so the second try succeeds and the room ensured above
        // remains).
        let mut placed = None;
        for _ in 0..2 {
            let g = self.gpu.as_mut().expect("GPU path");
            g.journal_start();
            self.moved_coefs = None;
            self.placing = true;
            let tried = g.place(&op, &rect, origin);
            self.placing = tried.is_ok();
            match tried {
                Ok(p) => {
                    placed = Some(p);
                    break;
                }
                Err(Busy::Flush(reason)) => self.flush(reason),

                Err(Busy::Straddles) => break,
                Err(Busy::Transient) => return run_transient(&op, dst, stride),
            }
            if self.gpu.is_none() {
                break; // the flush lost the device: record on the CPU path
            }
        }
        let Some(Placed {
            target,
            source,
            level,
            serial,
            may_redo,
            unknown_readers,
            by_rows,
            passes_apart,
            split,
        }) = placed
        else {
            if self.gpu.is_none() {
                return self.record(op, dst, stride, origin);
            }
            return self.run_now(op, dst, stride, origin);
        };
        let (captured, source_slot) = match source {
            Source::Arena => {
                if self.in_flight.is_some() && self.source_may_be_in_flight(&op) {
                    self.placing = false;
                    self.settle();
                    if self.gpu.is_none() {
                        // The device failed: this call too goes to the CPU path.
                        return self.record(op, dst, stride, origin);
                    }
                    self.placing = true;
                }
                (Captured::of(&op, self.capture(&op)), 0)
            }
            Source::InPlace {
                slot,
                offset,
                stride,
            } => {
                self.counts.mc_source_in_place += 1;
                (
                    Captured {
                        word: offset,
                        stride,
                    },
                    slot,
                )
            }
        };
        // Run on the CPU while the batch in flight is, it would write its pixels and read its
        // source there.
        let touches_in_flight = self.in_flight.as_ref().is_some_and(|a| {
            a.cpu_write_waits(&rect) || source_area.as_ref().is_some_and(|s| a.cpu_read_waits(s))
        });
        self.counts.lf_sb_by_rows += by_rows as u64;
        self.counts.lf_sb_by_masks += split.is_some() as u64;
        self.counts.lf_sb_split += split.is_some_and(|s| s.at != 0) as u64;
        let g = self.gpu.as_mut().expect("GPU path");
        if let Target::InPlace { slot, .. } = target {
            g.note_touch(slot, &rect, source_slot, source_area.as_ref());
        }
        let mut first = None;
        let mut jobs = 0usize;
        let copied = matches!(target, Target::Copied { .. });
        match target {
            Target::InPlace {
                slot,
                pixel,
                stride,
            } if matches!(op, Op::Mc { .. }) => {
                let mut job = Self::mc_job(&op, captured);
                job[0] = pixel;
                job[1] = stride as u32;
                let (bucket, at, tiles) = g.push_mc_tiles(level, slot, source_slot, &job, &rect);
                first = Some((bucket, at));
                jobs = tiles as usize;
            }
            Target::InPlace {
                slot,
                pixel,
                stride,
            } => Self::for_each_job(&op, captured, &rect, origin, |row, col, kernel, mut job| {
                let offset = row as i64 * stride as i64 + col as i64;
                job[0] = pixel.wrapping_add(offset as u32);
                job[1] = stride as u32;
                if may_redo && matches!(op, Op::Itx { .. }) {
                    job[3] |= MAY_REDO;
                    g.may_redo = true;
                }
                // A row's planes run in one workgroup, in this order.
                let kernel = if by_rows { LF_ROW_KERNEL as u8 } else { kernel };
                if let Some(split) = split {
                    // Only the first job is the call's for early completion (`jobs`): the
                    // decoder's planes complete as a batch.
                    for (level, params) in split.jobs() {
                        let mut part = job;
                        part[2] |= params;
                        let at = g.push(level, kernel, slot, source_slot, &part);
                        first.get_or_insert(at);
                    }
                    jobs += 1;
                    return;
                }
                if passes_apart {
                    // The rows pass's job, in the next level's bucket, is not the call's for
                    // early completion (`jobs`): the decoder's planes complete as a batch.
                    let mut rows = job;
                    rows[2] |= lf_sb::ROWS_ONLY;
                    job[2] |= lf_sb::COLUMNS_ONLY;
                    g.push(level + 1, kernel, slot, source_slot, &rows);
                }
                let at = g.push(level, kernel, slot, source_slot, &job);
                first.get_or_insert(at);
                jobs += 1;
            }),
            Target::Copied { staging } => {
                Self::for_each_job(&op, captured, &rect, origin, |row, col, kernel, mut job| {
                    job[0] = (staging + row * rect.w + col) as u32;
                    job[1] = rect.w as u32;
                    let at = g.push(level, kernel, 0, source_slot, &job);
                    first.get_or_insert(at);
                    jobs += 1;
                    g.copied_calls.push(Call {
                        dst: rect.pixel(row, col),
                        stride,
                        kernel,
                        job,
                        level,
                        source: source_slot,
                    });
                });
                g.copied.push(Copied { rect, staging });
                // Source windows copied at call time must not meet these pixels.
                self.note_written(&rect);
            }
        }
        if crate::gpu::testing::take_panic_while_placing() {
            panic!("a panic injected by a test while placing a call");
        }
        if let Some(g) = &mut self.gpu {
            let (bucket, first_word) = first.expect("a call has jobs");
            let cost = call_cost(&op, jobs);
            // A plane split in two jobs registers only its first: it must never complete early
            // (nothing it is placed by names it, and a reader meeting its bytes completes the
            // batch whole), which this keeps so should either change.
            let batch_only = copied || unknown_readers || passes_apart || split.is_some();
            g.note_call(
                serial,
                bucket,
                first_word,
                jobs as u32,
                cost,
                EarlyLimits {
                    batch_only,
                    touches_in_flight,
                },
            );
            g.pending += 1;
            self.last_placed = Some(g.calls.len() - 1);
        }
        self.placing = false;
        self.counts.count(&op, self.inter_frame);
    }

    /// After a panic in `record`: this thread's calls run at once on the CPU from now on, and
    /// nothing pending is lost or applied twice. Where the panic struck while a call was being
    /// placed, that call's jobs leave the batch, its coefficients go back to the decoder's
    /// block, the batch completes on the CPU reference and the call runs after it, in
    /// FFmpeg's order. Elsewhere (inside a completion the call needed) what took effect is
    /// unknown: the pending work is dropped and counted damaged, so the decoder fails the
    /// frame rather than hand it out silently wrong.
    unsafe fn poison(&mut self, op: Op, dst: *mut u8, stride: isize, origin: Origin) {
        let placing = std::mem::take(&mut self.placing);
        self.poisoned = true;
        crate::log::once(
            crate::log::Level::Error,
            "recorder-poisoned",
            format_args!("internal error while recording a call (a bug: please report it); this thread's calls run at once on the CPU from now on"),
        );
        let arena = self.arena.ptr;
        if placing {
            if let Some(g) = &mut self.gpu {
                g.take_out_journaled();
            }
            self.calls.truncate(self.cpu_mark);
            if let (Op::Itx { tx, block, .. }, Some(moved)) = (op, self.moved_coefs.take()) {
                match moved {
                    Moved::Dc(v) => ptr::write_unaligned(block, v),
                    Moved::Arena(at) => ptr::copy_nonoverlapping(arena.add(at), block, tx.coefs()),
                }
            }
        }
        self.settle();
        let pending = self.pending() > 0;
        if placing {
            if let Some(g) = &mut self.gpu {
                g.run_on_cpu(self.arena.ptr);
                g.retire();
            } else {
                for c in &self.calls {
                    run_job_on_cpu(c.kernel, c.dst, c.stride, &c.job, arena, arena as *const u8);
                }
                stats::add(&COUNTERS.cpu_calls, self.cpu_calls as u64);
            }
            op.run_at_once(dst, stride, origin);
            stats::add(&COUNTERS.immediate, 1);
        } else if pending {
            stats::add(&COUNTERS.damaged_batches, 1);
        }
        self.calls.clear();
        self.cpu_calls = 0;
        self.drop_gpu();
        self.arena.len = 0;
        self.written = (usize::MAX, 0);
    }

    /// Runs a call of FFmpeg's decoder whose family is placed on the CPU: its own function at
    /// once, after the pending calls on the pixels it reads and writes (and what they depend
    /// on) complete.
    unsafe fn run_in_order(&mut self, op: Op, dst: *mut u8, stride: isize) {
        let rect = op.rect(dst, stride);
        let source = op.source();
        // A batch in flight (a row published to other frame threads, a part of a frame) is
        // waited for only where it touches these pixels.
        self.settle_for(source.as_slice(), &[rect]);
        if self.pending() > 0 {
            match source {
                Some(src) => self.complete(Reason::Immediate, &[rect, src]),
                None => self.complete(Reason::Immediate, &[rect]),
            }
        }
        op.run_at_once(dst, stride, Origin::Ffmpeg);
        stats::add(&COUNTERS.placed_on_cpu, 1);
    }

    /// Runs the transform of an intra block at once with FFmpeg's function on the GPU path:
    /// the decoder's next prediction reads its pixels right away, so deferring it would only
    /// add its recording to its early completion. Pending calls on its pixels (normally none:
    /// the block's intra sync completed them) complete first. The CPU path, and transforms
    /// placed on the CPU, take the usual way.
    unsafe fn run_intra_transform(&mut self, op: Op, dst: *mut u8, stride: isize) {
        if !self.backend_chosen {
            self.choose_backend();
        }
        if self.gpu.is_none() || op.placed_on_cpu() {
            return self.record(op, dst, stride, Origin::Ffmpeg);
        }
        let rect = op.rect(dst, stride);
        self.settle_for(&[], &[rect]);
        if self.pending() > 0 {
            // Not a decoder sync: not counted as one.
            self.complete_early_where_possible(Reason::Immediate, &[rect]);
        }
        op.run_at_once(dst, stride, Origin::Ffmpeg);
        stats::add(&COUNTERS.intra_itx_at_once, 1);
        if self.inter_frame {
            stats::add(&COUNTERS.inter_intra_itx_at_once, 1);
        }
    }

    /// Completes the pending batch, then runs this call on the CPU at once: FFmpeg's own
    /// function for its decoder's transforms, else the reference.
    unsafe fn run_now(&mut self, op: Op, dst: *mut u8, stride: isize, origin: Origin) {
        self.flush(Reason::Immediate);
        op.run_at_once(dst, stride, origin);
        stats::add(&COUNTERS.immediate, 1);
    }

    /// Completes what a reader of `areas` needs: on the GPU path, the pending calls there
    /// and what they depend on, on the CPU when that is little work; else the whole batch.
    fn complete(&mut self, reason: Reason, areas: &[Area]) {
        if self.complete_early_where_possible(reason, areas) {
            stats::add(&COUNTERS.early_completions, 1);
        }
    }

    /// Completes what a reader needs who reads `reads` (and does not write them) and reads
    /// and writes `writes`: the calls on `writes` early as a whole, then on the GPU path only
    /// the pixels of `reads` where that gives the same result
    /// ([`GpuBatch::complete_reads`]); else the whole batch.
    fn complete_reads(&mut self, reason: Reason, reads: &[Area], writes: &[Area]) {
        if !crate::config::get().reads_ahead {
            return self.complete(reason, &[reads, writes].concat());
        }
        // The reader reads and writes on the CPU right after.
        self.settle_for(reads, writes);
        for _ in 0..2 {
            if self.pending() == 0 {
                return;
            }
            let arena = self.arena.ptr;
            let Some(g) = self.gpu.as_mut().filter(|g| g.pending > 0) else {
                break;
            };
            let (early, ahead) = (g.completed_early, g.run_ahead);
            let outcome = g
                .complete_areas(writes, EARLY_COST_LIMIT, arena)
                .and_then(|()| g.complete_reads(reads, EARLY_COST_LIMIT, arena));
            if self.inter_frame {
                self.counts.inter_completed_early += (g.completed_early - early) as u64;
                self.counts.inter_run_ahead += (g.run_ahead - ahead) as u64;
            }
            match outcome {
                Ok(()) => {
                    stats::add(&COUNTERS.early_completions, 1);
                    return;
                }
                Err(Stop::Settle) => self.settle_for_calls(),
                Err(Stop::Whole) => break,
            }
        }
        self.flush(reason);
    }

    /// Waits for the batch in flight where the CPU is about to read `reads` or write
    /// `writes` and that batch touches them ([`GpuBatch::cpu_read_waits`]).
    fn settle_for(&mut self, reads: &[Area], writes: &[Area]) {
        let waits = self.in_flight.as_ref().is_some_and(|a| {
            reads.iter().any(|r| a.cpu_read_waits(r)) || writes.iter().any(|w| a.cpu_write_waits(w))
        });
        if waits {
            stats::add(&COUNTERS.in_flight_waits, 1);
            self.settle();
        }
    }

    /// Waits for the batch in flight because pending calls to run on the CPU touch its
    /// pixels.
    fn settle_for_calls(&mut self) {
        stats::add(&COUNTERS.in_flight_waits, 1);
        self.settle();
    }

    /// [`Recorder::complete`] without counting the sync; `true` where the calls completed
    /// early (none may have been needed), `false` where the batch completed as a whole or
    /// nothing was pending.
    fn complete_early_where_possible(&mut self, reason: Reason, areas: &[Area]) -> bool {
        // The reader may write them.
        self.settle_for(&[], areas);
        for _ in 0..2 {
            if self.pending() == 0 {
                return false;
            }
            let arena = self.arena.ptr;
            let Some(g) = self.gpu.as_mut().filter(|g| g.pending > 0) else {
                break;
            };
            let before = g.completed_early;
            match g.complete_areas(areas, EARLY_COST_LIMIT, arena) {
                Ok(()) => {
                    if self.inter_frame {
                        self.counts.inter_completed_early += (g.completed_early - before) as u64;
                    }
                    return true;
                }
                Err(Stop::Settle) => self.settle_for_calls(),
                Err(Stop::Whole) => break,
            }
        }
        self.flush(reason);
        false
    }

    fn flush(&mut self, reason: Reason) {
        self.counts.fold();
        self.settle();
        if self.pending() == 0 {
            if let Some(g) = &mut self.gpu {
                g.clear(); // what a call that did not join left behind
            }
            return;
        }
        stats::count_flush(reason);
        crate::debug!(
            "flush ({reason:?}): {} calls, {} coefficients",
            self.pending(),
            self.arena.len
        );
        self.written = (usize::MAX, 0);
        let arena = self.arena.ptr;
        if let Some(g) = &mut self.gpu {
            if g.all_completed_early() {
                g.clear();
                self.arena.len = 0;
                return;
            }
            if let Err(failure) = g.execute(arena, self.arena.len) {
                g.recover(failure, arena);
                self.drop_gpu();
                self.arena.len = 0;
                self.sync_arena();
                return;
            }
            g.clear();
        } else {
            for c in &self.calls {
                unsafe {
                    run_job_on_cpu(c.kernel, c.dst, c.stride, &c.job, arena, arena as *const u8)
                };
            }
            stats::add(&COUNTERS.cpu_calls, self.cpu_calls as u64);
            self.calls.clear();
            self.cpu_calls = 0;
        }
        self.arena.len = 0;
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        // A batch still in flight (a published row) must not be freed under the GPU.
        self.settle();
        // A thread that ends with pending calls: complete them rather than lose them.
        if self.pending() > 0 {
            crate::debug!("thread exit: completing {} pending calls", self.pending());
            self.flush(Reason::ThreadExit);
        }
        self.counts.fold();
    }
}

/// Records one call of the calling thread (or runs it at once when the thread has no
/// recorder any more).
///
/// # Safety
/// As FFmpeg's function for the call: its pixels and inputs must be valid, and the pixels
/// must stay valid and untouched until the thread's next [`flush`].
unsafe fn record_op(op: Op, dst: *mut u8, stride: isize, origin: Origin) {
    record_op_then(op, dst, stride, origin, |_| {})
}

/// [`record_op`], then `then` with the recorder, in the same borrow.
unsafe fn record_op_then(
    op: Op,
    dst: *mut u8,
    stride: isize,
    origin: Origin,
    then: impl FnOnce(&mut Recorder),
) {
    let recorded = RECORDER.try_with(|r| match r.try_borrow_mut() {
        Ok(mut r) => {
            let recording = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                r.record(op, dst, stride, origin)
            }));
            match recording {
                Ok(()) => then(&mut r),
                Err(_) => r.poison(op, dst, stride, origin),
            }
            true
        }
        Err(_) => false,
    });
    if recorded != Ok(true) {
        // The thread is exiting (or re-entered): no recorder, so do it now.
        op.run_at_once(dst, stride, origin);
        stats::add(&COUNTERS.immediate, 1);
    }
}

/// Records one transform call of the calling thread.
///
/// # Safety
/// As FFmpeg's function: `dst` rows and `block` (`n * n` coefficients) must be valid, and the
/// pixels must stay valid and untouched until the thread's next [`flush`].
pub unsafe fn record_itx(
    tx: Transform,
    dst: *mut u8,
    stride: isize,
    block: *mut i16,
    eob: i32,
    origin: Origin,
) {
    record_op(Op::Itx { tx, block, eob }, dst, stride, origin)
}

/// Runs the transform of an intra block of FFmpeg's decoder at once on the GPU path, after
/// the pending calls on its pixels (see `Recorder::run_intra_transform`); records it on the
/// CPU path.
///
/// # Safety
/// As [`record_itx`].
pub unsafe fn run_intra_transform(
    tx: Transform,
    dst: *mut u8,
    stride: isize,
    block: *mut i16,
    eob: i32,
) {
    let op = Op::Itx { tx, block, eob };
    let ran = RECORDER.try_with(|r| match r.try_borrow_mut() {
        Ok(mut r) => {
            r.run_intra_transform(op, dst, stride);
            true
        }
        Err(_) => false,
    });
    if ran != Ok(true) {
        Op::Itx { tx, block, eob }.run_at_once(dst, stride, Origin::Ffmpeg);
        stats::add(&COUNTERS.immediate, 1);
    }
}

/// Records one motion compensation of the calling thread. A source window inside an imported
/// registered region is read at the flush (ordered after pending writes there); any other is
/// copied during the call. A height outside `1..=64` does nothing (FFmpeg's functions overrun
/// for such).
///
/// # Safety
/// As FFmpeg's function: the block at `dst` and the source window around `src` must be valid,
/// and the block must stay valid and untouched until the thread's next [`flush`].
#[allow(clippy::too_many_arguments)]
pub unsafe fn record_mc(
    f: McFunction,
    dst: *mut u8,
    dst_stride: isize,
    src: *const u8,
    src_stride: isize,
    h: i32,
    mx: i32,
    my: i32,
    origin: Origin,
) {
    if !(1..=mc::MAX_HEIGHT).contains(&h) {
        stats::add(&COUNTERS.rejected, 1);
        return;
    }
    let op = Op::Mc {
        f,
        src,
        src_stride,
        h,
        mx: mx & 15,
        my: my & 15,
    };
    record_op(op, dst, dst_stride, origin)
}

/// Records one loop-filter call of the calling thread.
///
/// # Safety
/// As FFmpeg's function: the pixels on both sides of the edge must be valid, and stay valid
/// and untouched until the thread's next [`flush`].
pub unsafe fn record_lf(
    f: LfFunction,
    dst: *mut u8,
    stride: isize,
    e: i32,
    i: i32,
    h: i32,
    origin: Origin,
) {
    record_op(Op::Lf { f, e, i, h }, dst, stride, origin)
}

/// Records the loop filter of one superblock of the calling thread, as FFmpeg's
/// `ff_vp9_loopfilter_sb` runs it: `dst[p]` is the superblock's first pixel in plane `p`,
/// `strides` the luma and chroma strides, `row` and `col` its position in 8x8 blocks.
///
/// # Safety
/// As FFmpeg's function: every pixel its edges reach must be valid and stay untouched until
/// the thread's next [`flush`], and so must the rectangle bounding the reach of every edge its
/// masks mark (the plane's bound, see [`SbPlane`]), which calls outside registered memory copy
/// back whole.
pub unsafe fn record_lf_sb(
    filter: lf_sb::SbFilter,
    dst: [*mut u8; 3],
    strides: [isize; 2],
    (row, col): (i32, i32),
    (ss_h, ss_v): (usize, usize),
    origin: Origin,
) {
    // Reading the masks has no side effects: should it fail, nothing is recorded and the
    // caller's own filters can still do the whole superblock. Once a plane is recorded the
    // superblock is taken, so a plane that fails does not stop the others (as a failing
    // per-edge call would not stop the next edge): FFmpeg must never filter recorded planes a
    // second time.
    let luma = SbPlane::new(filter, 0, (row, col), 0, 0);
    let chroma = SbPlane::new(filter, (ss_h | ss_v != 0) as usize, (row, col), ss_h, ss_v);
    for (p, plane) in [luma, chroma, chroma].iter().enumerate() {
        if let Some(plane) = plane {
            let stride = strides[(p > 0) as usize];
            let sb = (origin == Origin::Ffmpeg).then_some(SbPosition {
                row: row as u32 >> 3,
                col: col as u32 >> 3,
                plane: p as u32,
            });
            crate::ffi::guard("a superblock loop-filter plane", (), || {
                record_op(Op::LfSb { plane, sb }, dst[p], stride, origin)
            });
        }
    }
}

/// Records one CDEF call (dav1d's `fb[]`) of the calling thread: its input window is taken
/// now, its writes are deferred.
///
/// # Safety
/// As dav1d's function: the block and its neighbours that `edges` names must be valid, and
/// the block must stay valid and untouched until the thread's next [`flush`].
pub unsafe fn record_cdef(call: CdefCall, origin: Origin) {
    record_op(Op::Cdef { call }, call.dst, call.stride, origin)
}

/// Executes the calling thread's pending calls, counting the flush under `reason`.
pub fn flush_for(reason: Reason) {
    let _ = RECORDER.try_with(|r| {
        if let Ok(mut r) = r.try_borrow_mut() {
            r.flush(reason);
        }
    });
}

/// Completes the calling thread's pending calls that `areas` need (and what they depend on),
/// counting a flush under `reason` where the whole batch completes.
pub fn complete_for(reason: Reason, areas: &[Area]) {
    let _ = RECORDER.try_with(|r| {
        if let Ok(mut r) = r.try_borrow_mut() {
            r.complete(reason, areas);
        }
    });
}

/// [`complete_for`] for a reader that only reads `reads` and reads and writes `writes`. The
/// calls that write `reads` (and those they depend on, such as the calls on a frame's last
/// line for its backup) may run ahead on the CPU while they stay pending, and the GPU writes
/// their pixels again when the batch runs. So the calling thread must not write those pixels
/// before a flush or a completion that covers them, and must not read them while a later
/// submission is in flight without completing first, as every reader in this module does
/// (`settle_for`: it waits where the CPU touches that submission's pixels).
pub fn complete_reads_for(reason: Reason, reads: &[Area], writes: &[Area]) {
    let _ = RECORDER.try_with(|r| {
        if let Ok(mut r) = r.try_borrow_mut() {
            r.complete_reads(reason, reads, writes);
        }
    });
}

/// Records a full-pel copy of one line of `f.width` pixels into the decoder's backup lines,
/// and marks it, where it joined the GPU batch, as such a copy: the next row's copy
/// overwrites it whole and no call reads it as a source ([`Recorder::split`]).
///
/// # Safety
/// As [`record_mc`].
pub unsafe fn record_backup_copy(
    f: McFunction,
    dst: *mut u8,
    dst_stride: isize,
    src: *const u8,
    src_stride: isize,
) {
    let op = Op::Mc {
        f,
        src,
        src_stride,
        h: 1,
        mx: 0,
        my: 0,
    };
    record_op_then(op, dst, dst_stride, Origin::Ffmpeg, |r| {
        if let (Some(i), Some(g)) = (r.last_placed.take(), r.gpu.as_mut()) {
            g.backup_copies.push(i);
        }
    })
}

/// See [`Recorder::split`].
pub fn split_frame(next_reads: &[Area]) -> bool {
    RECORDER
        .try_with(|r| r.try_borrow_mut().is_ok_and(|mut r| r.split(next_reads)))
        .unwrap_or(false)
}

/// Submits the calling thread's pending calls for a row that other frame threads may read
/// now; returns the serial they wait for with [`await_submission`] before reading it on the
/// CPU (0: complete already). The GPU work of every later submission comes after it.
pub fn publish() -> u64 {
    RECORDER
        .try_with(|r| match r.try_borrow_mut() {
            Ok(mut r) => r.publish(Reason::RowPublished),
            Err(_) => 0,
        })
        .unwrap_or(0)
}

/// Waits until submission `serial` (of any thread, see [`publish`]) has completed.
pub fn await_submission(serial: u64) {
    if serial == 0 {
        return;
    }
    if let Some(g) = gpu::set_up() {
        let waiting = Instant::now();
        let cpu = stats::thread_cpu_ns();
        match g.wait_for(serial, crate::gpu::stream::HANG_TIMEOUT) {
            Ok(false) => return,
            Ok(true) => {}
            Err(e) => {
                // The owner meets the failure too and redoes its batch on the CPU before it
                // retires the submission: only then are the pixels there.
                g.mark_lost(&e);
                g.wait_retired(serial);
            }
        }
        stats::add(&COUNTERS.awaits_in_flight, 1);
        stats::add_time(&COUNTERS.await_ns, waiting);
        stats::add_cpu_time(&COUNTERS.wait_cpu_ns, cpu);
    }
}

/// Batches of any thread that may have left pixels wrong after the device failed: a
/// decoder fails the frames it decoded meanwhile.
pub fn damaged_batches() -> u64 {
    stats::read(&COUNTERS.damaged_batches)
}

/// Executes every call the calling thread recorded; returns with the pixels in place.
pub fn flush() {
    flush_for(Reason::Caller)
}

/// Notes whether the frame the calling thread decodes from now on is an inter frame (for
/// the `inter_*` counters).
pub fn note_frame(inter: bool) {
    let _ = RECORDER.try_with(|r| {
        if let Ok(mut r) = r.try_borrow_mut() {
            r.inter_frame = inter;
        }
    });
}

/// Adds the calling thread's counts of recorded calls to the shared counters (each thread's
/// flushes do so too).
pub fn fold_counts() {
    let _ = RECORDER.try_with(|r| {
        if let Ok(mut r) = r.try_borrow_mut() {
            r.counts.fold();
        }
    });
}

/// Whether the device (set up already) can run kernel `k`, building it on the first question
/// (see `Pipelines::has`).
pub fn device_has_kernel(k: usize) -> bool {
    gpu::set_up().is_some_and(|g| g.pipelines.has(k))
}

/// [`lf_passes_by_rows`] for the stats line: builds nothing, so a kernel never wanted counts
/// as usable.
pub fn lf_row_not_failed() -> bool {
    crate::config::get().lf_order == crate::config::LfOrder::Rows
        && gpu::set_up().is_some_and(|g| !g.pipelines.failed(LF_ROW_KERNEL))
}

/// Whether the decoder's superblock loop-filter passes go to the GPU a superblock row per
/// workgroup (`DAEDALUS_LF_ORDER=rows`, where the device built that kernel) rather than as a
/// wavefront of passes: the same for every batch of the process.
pub fn lf_passes_by_rows() -> bool {
    crate::config::get().lf_order == crate::config::LfOrder::Rows
        && device_has_kernel(LF_ROW_KERNEL)
}

/// Whether the decoder's superblock loop-filter passes go to the GPU split where their masks
/// allow and placed by them (`DAEDALUS_LF_ORDER=split`, [`lf_sb::SplitPlacer`]).
pub fn lf_passes_split() -> bool {
    crate::config::get().lf_order == crate::config::LfOrder::Split
}

/// Whether this thread's recorder executes on the GPU (choosing the backend if not yet done).
pub fn thread_uses_gpu() -> bool {
    RECORDER
        .try_with(|r| {
            let mut r = r.borrow_mut();
            if !r.backend_chosen {
                r.choose_backend();
            }
            r.gpu.is_some()
        })
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dispatch(kernel: usize, first: u32, count: u32) -> Dispatch {
        Dispatch {
            level: 0,
            kernel,
            slot: 1,
            source: 0,
            first,
            count,
        }
    }

    /// A motion compensation bucket at words 480..540 (its jobs 40..45, counted in 12 words)
    /// and a full transform at word 168 (its job 42, in 4 words): index 42 is the transform's,
    /// whichever dispatch is listed first; a DC-only transform (which cannot overflow) is not
    /// searched.
    #[test]
    fn an_overflowed_index_names_a_full_transform_whatever_the_other_job_sizes() {
        let full = 0;
        let dc_only = Transform::ALL.len();
        assert!(matches!(KERNELS[full], ItxKernel::Full(_)));
        assert!(matches!(KERNELS[dc_only], ItxKernel::DcOnly(_)));
        assert_eq!(job_words(MC_KERNEL), 12);
        let dispatches = [
            dispatch(MC_KERNEL, 40, 5),
            dispatch(dc_only, 30, 20),
            dispatch(full, 42, 1),
        ];
        assert_eq!(overflowed_dispatch(&dispatches, 42), Some(2));
        assert_eq!(overflowed_dispatch(&dispatches, 41), None);
        assert_eq!(overflowed_dispatch(&dispatches[..2], 42), None);
    }
}
