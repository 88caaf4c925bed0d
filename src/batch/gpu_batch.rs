//! [`GpuBatch`]: the pending work of the GPU path.

use super::call::{block_in, Area, Call};
use super::keys::{KeyHasher, MAX_CALL_WORDS, NO_BUCKET, RECENT_BUCKETS};
use super::levels::Levels;
use super::overlap::Occupancy;
use super::recent::MostRecent;
use crate::gpu::stream::{Dispatch, Stream, MAX_SLOTS};
use crate::regions::{self, Placement, Region};
use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::sync::Arc;

/// A block of the GPU path whose pixels travel through the staging buffer.
pub(super) struct Copied {
    pub(super) rect: Area,
    pub(super) staging: usize,
}

/// The imported region that the last call was in: consecutive calls nearly always share it.
#[derive(Clone, Copy)]
pub(super) struct Current {
    pub(super) id: u64,
    pub(super) start: usize,
    pub(super) end: usize,
    /// Address of byte 0 of the imported buffer.
    pub(super) base: usize,
    pub(super) slot: u8,
}

/// A batch on the GPU: what its completion needs.
pub(super) struct Submitted {
    pub(super) order: Vec<usize>,
    pub(super) dispatches: Vec<Dispatch>,
    pub(super) arena: *const i16,
    pub(super) arena_len: usize,
    pub(super) job_bytes: usize,
}

/// The pending work of the GPU path.
pub(super) struct GpuBatch {
    pub(super) stream: Stream,
    /// Set from submission to completion.
    pub(super) submitted: Option<Submitted>,
    /// A submission not yet retired ([`GpuBatch::retire`]).
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
    /// The slots pending calls write, a bit each.
    pub(super) written_slots: u32,
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
            written_slots: 0,
            journal: Vec::new(),
            copied_mark: 0,
        }
    }

    /// Whether a pending call may read or write a pixel of `areas`: where the cells cannot
    /// tell (blocks copied through the staging buffer, an area across a region's edge, reads
    /// that keep no cells), it may.
    pub(super) fn may_touch(&mut self, areas: &[Area]) -> bool {
        if self.staging_len > 0 {
            return true;
        }
        let mut found = Vec::new();
        for a in areas {
            let (lo, hi) = a.span();
            if hi < lo {
                return true;
            }
            match regions::place(&self.regions, lo, hi) {
                // No call in place there, and no copied one (`staging_len`).
                Placement::Outside => {}
                Placement::Straddles => return true,
                Placement::Inside(index) => {
                    let r = &self.regions[index];
                    if r.in_place.is_none() {
                        continue;
                    }
                    let block = block_in(r.id, r.start, r.end, a);
                    if !self.levels.pending_on(&block, &mut found) || !found.is_empty() {
                        return true;
                    }
                }
            }
        }
        false
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
        self.written_slots = 0;
        self.retire();
        self.submitted = None;
        self.may_redo = false;
        self.journal.clear();
        self.copied_mark = 0;
    }

    /// Tells the device that this batch's submission is done with (see
    /// [`crate::gpu::Gpu::retire`]).
    pub(super) fn retire(&mut self) {
        if let Some(serial) = self.unretired.take() {
            self.stream.gpu().retire(serial);
        }
    }
}
