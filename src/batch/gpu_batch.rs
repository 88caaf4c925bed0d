//! [`GpuBatch`]: the pending work of the GPU path, and what the CPU must wait for while it is
//! in flight.

use super::ahead::AheadScratch;
use super::buckets::{key_slot, KeyHasher, MAX_CALL_WORDS, NO_BUCKET, RECENT_BUCKETS};
use super::call::{Area, Call, SbPosition, NO_SPAN};
use super::early::PendingCall;
use super::placement::Current;
use super::recent::MostRecent;
use super::submit::Submitted;
use crate::gpu::stream::{Stream, MAX_SLOTS};
use crate::kernels::lf_sb;
use crate::levels::{Deps, Levels};
use crate::overlap::Occupancy;
use crate::regions::Region;
use crate::spans::Spans;
use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::sync::Arc;

/// A block of the GPU path whose pixels travel through the staging buffer.
pub(super) struct Copied {
    pub(super) rect: Area,
    pub(super) staging: usize,
}

/// The pending work of the GPU path.
pub(super) struct GpuBatch {
    pub(super) stream: Stream,
    /// Set from submission to completion.
    pub(super) submitted: Option<Submitted>,
    /// A submission other threads may still wait for ([`GpuBatch::retire`]).
    pub(super) unretired: Option<u64>,
    /// A job of a transform that FFmpeg's function may have to redo after the submission.
    pub(super) may_redo: bool,
    /// Job words of the buckets in use (`keys[i]` is the key of `buckets[i]`); the vectors
    /// beyond stay allocated for later batches.
    pub(super) buckets: Vec<Vec<u32>>,
    pub(super) keys: Vec<u32>,
    pub(super) bucket_of: HashMap<u32, usize, BuildHasherDefault<KeyHasher>>,
    /// Buckets pushed to lately, (key, index), by a hash of the key: consecutive calls
    /// mostly share a few (a plane's calls at a level, a reference frame).
    pub(super) recent_buckets: [(u32, usize); RECENT_BUCKETS],
    /// Calls and job words pending.
    pub(super) pending: usize,
    pub(super) pending_words: usize,
    pub(super) copied: Vec<Copied>,
    /// The jobs on copied pixels, with their host addresses.
    pub(super) copied_calls: Vec<Call>,
    pub(super) staging_len: usize,
    /// The imported regions of slots 1.. (slot 0 is the staging buffer).
    pub(super) slots: Vec<Arc<Region>>,
    pub(super) current: Option<Current>,
    /// The last few imported regions calls were in (with their slots), most recent first.
    pub(super) recent_targets: MostRecent<Current>,
    /// The order of calls in place, and the bytes copied blocks claim.
    pub(super) levels: Levels,
    pub(super) occupancy: Occupancy,
    /// (pixel slot, source) pairs in use, one descriptor set each.
    pub(super) pairs: [u64; MAX_SLOTS * MAX_SLOTS / 64],
    pub(super) pair_count: usize,
    /// The registry as this batch placed its calls; held only while work is pending, so that
    /// no import outlives its registration for longer than the pending batch.
    pub(super) regions: Vec<Arc<Region>>,
    pub(super) regions_version: u64,
    /// The indices in `regions` of the last motion compensation sources' regions, most
    /// recent first.
    pub(super) last_sources: MostRecent<usize>,
    /// Most job words one submission takes (the job buffer's limit).
    pub(super) max_words: usize,
    /// Per placed call (by its index in `levels`): its jobs and dependencies.
    pub(super) calls: Vec<PendingCall>,
    pub(super) deps: Vec<u32>,
    /// What `levels` found for the call being placed.
    pub(super) found: Deps,
    /// Calls of this batch that completed early on the CPU (out of the batch), and calls
    /// run ahead there for a reader (they stay in the batch: [`GpuBatch::complete_reads`]).
    pub(super) completed_early: usize,
    pub(super) run_ahead: usize,
    /// Per call (by index): whether it ran ahead; and those calls.
    pub(super) ahead: Vec<bool>,
    pub(super) ahead_list: Vec<usize>,
    /// Per slot: the calls that ran ahead reading it as a source while the batch wrote it,
    /// and the span of bytes each reads there.
    pub(super) ahead_readers: [Vec<(usize, (usize, usize))>; MAX_SLOTS],
    /// The slots pending calls write, a bit each.
    pub(super) written_slots: u32,
    pub(super) ahead_scratch: AheadScratch,
    /// Per call: the last early completion that visited it.
    pub(super) visited: Vec<u32>,
    pub(super) visit: u32,
    /// `calls[i]` is the call of serial index `i` in `levels` (cleared with the batch).
    pub(super) calls_in_step: bool,
    /// The highest level of a call placed by its cells.
    pub(super) cell_level_max: Option<u32>,
    /// The decoder's superblock loop-filter planes, placed by position (see
    /// [`GpuBatch::place_by_position`]): per plane, the span of the bytes they read and
    /// write; the last one's position; the superblock row of the first.
    pub(super) lf_spans: [(usize, usize); 3],
    pub(super) lf_last: Option<SbPosition>,
    pub(super) lf_first_row: u32,
    /// The levels split planes took (`DAEDALUS_LF_ORDER=split`).
    pub(super) lf_split: lf_sb::SplitPlacer,
    /// The last plane placed by position reaches into the superblock to its right or below
    /// ([`lf_sb::SbPlane::reaches_out`]): the next one completes the batch first.
    pub(super) lf_ends_batch: bool,
    /// Per slot: the bytes the calls in place write (and read: their own pixels), those they
    /// read as sources (as a few spans: a slot is a frame of three planes), and how many of the calls writing there the GPU may
    /// still make write values the CPU does not hold (neither run ahead nor completed early).
    /// What the CPU must wait for while this batch is in flight ([`GpuBatch::cpu_read_waits`]).
    slot_writes: [Spans; MAX_SLOTS],
    pub(super) slot_reads: [Spans; MAX_SLOTS],
    slot_open: [u32; MAX_SLOTS],
    /// A batch submitted before this one may still be in flight: the calls marked
    /// `touches_in_flight` wait for it before they run on the CPU.
    pub(super) after_in_flight: bool,
    /// The calls that copy the decoder's backup lines
    /// ([`record_backup_copy`](super::api::record_backup_copy)).
    pub(super) backup_copies: Vec<usize>,
    /// The job words the call being placed pushed, (bucket, first word, end), and
    /// `copied_calls.len()` before it: what leaves the batch if placing it panics
    /// ([`Recorder::poison`](super::recorder::Recorder::poison)).
    pub(super) journal: Vec<(u32, u32, u32)>,
    pub(super) copied_mark: usize,
}

impl GpuBatch {
    pub(super) fn new(stream: Stream) -> GpuBatch {
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

    /// Notes the bytes a call in place in `slot` writes (`rect`) and reads as its source in
    /// slot `source` (0: none in place), for [`GpuBatch::cpu_read_waits`].
    pub(super) fn note_touch(
        &mut self,
        slot: u8,
        rect: &Area,
        source: u8,
        source_area: Option<&Area>,
    ) {
        self.slot_writes[slot as usize].add(rect.span());
        self.slot_open[slot as usize] += 1;
        if let (s @ 1.., Some(a)) = (source, source_area) {
            self.slot_reads[s as usize].add(a.span());
        }
    }

    /// Pending call `i` leaves the batch: the GPU will not touch its pixels.
    pub(super) fn note_settled(&mut self, i: usize) {
        let slot = key_slot(self.keys[self.calls[i].bucket as usize]);
        self.slot_open[slot] = self.slot_open[slot].saturating_sub(1);
    }

    /// While this batch is in flight: whether the CPU must wait for it before reading `a`.
    /// (A slot whose calls all left the batch is not the GPU's: `slot_open`. Calls that ran
    /// ahead stay: the GPU writes their pixels again, passing through earlier values.)
    pub(super) fn cpu_read_waits(&self, a: &Area) -> bool {
        let span = a.span();
        self.staging_len > 0
            || span.1 < span.0
            || (1..self.slots.len() + 1)
                .any(|s| self.slot_open[s] > 0 && self.slot_writes[s].meets(span))
    }

    /// While this batch is in flight: whether the CPU must wait for it before writing `a`.
    pub(super) fn cpu_write_waits(&self, a: &Area) -> bool {
        let span = a.span();
        self.staging_len > 0
            || span.1 < span.0
            || (1..self.slots.len() + 1).any(|s| {
                (self.slot_open[s] > 0 && self.slot_writes[s].meets(span))
                    || self.slot_reads[s].meets(span)
            })
    }

    /// The host address of byte 0 of a source: the arena, or a slot's imported frame.
    pub(super) fn source_base(&self, source: usize, arena: *const i16) -> *const u8 {
        match source {
            0 => arena as *const u8,
            k => self.slot_base(k) as *const u8,
        }
    }

    /// The host address of byte 0 of pixel slot `slot` (1..: an imported region).
    pub(super) fn slot_base(&self, slot: usize) -> usize {
        self.slots[slot - 1]
            .in_place
            .as_ref()
            .expect("slots are in place")
            .base()
    }

    pub(super) fn clear(&mut self) {
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
    pub(super) fn retire(&mut self) {
        if let Some(serial) = self.unretired.take() {
            self.stream.gpu().retire(serial);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::batch::testing::{copy8, record, recorder, Pixels};
    use crate::stats::Reason;

    /// What the CPU would wait for were this batch in flight (here it is pending, which answers
    /// the same): reading what it writes, writing what it reads or writes; nothing elsewhere,
    /// and nothing of a call that left it.
    #[test]
    fn the_cpu_waits_only_where_the_batch_reads_or_writes() {
        let mut r = recorder();
        let px = Pixels::new(6);
        unsafe { record(&mut r, &copy8(px.at(8, 8)), &px, 24, 40) };
        let (source, dst, elsewhere) = (
            px.area(8, 8, 8, 8),
            px.area(24, 40, 8, 8),
            px.area(40, 120, 4, 4),
        );
        let g = r.gpu.as_ref().unwrap();
        assert!(g.cpu_read_waits(&dst) && g.cpu_write_waits(&dst));
        assert!(!g.cpu_read_waits(&source) && g.cpu_write_waits(&source));
        assert!(!g.cpu_read_waits(&elsewhere) && !g.cpu_write_waits(&elsewhere));
        r.complete(Reason::Immediate, &[dst]);
        let g = r.gpu.as_ref().unwrap();
        assert_eq!(g.completed_early, 1);
        assert!(!g.cpu_read_waits(&dst), "the call left the batch");
    }
}
