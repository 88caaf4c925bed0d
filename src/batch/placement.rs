//! Placement: where a call's pixels (and a motion compensation's source) are for the GPU, and
//! at which level it runs ([`GpuBatch::place`]).

use super::call::{block_in, Area, Op, Origin};
use super::gpu_batch::{Current, GpuBatch};
use super::levels::{Access, Block, Need, MAX_LEVELS};
use crate::gpu::stream::{MAX_SETS, MAX_SLOTS};
use crate::kernels::itx;
use crate::regions::{self, Placement, Region};
use crate::stats::{self, Reason, COUNTERS};
use std::sync::Arc;

/// Where a call's pixels are for the GPU.
pub(super) enum Target {
    InPlace { slot: u8, pixel: u32, stride: i32 },
    Copied { staging: usize },
}

/// Where a motion compensation's source is for the GPU: copied into the arena at call time,
/// or read in place from an imported frame (`offset` of the pixel under the block's top-left).
#[derive(Clone, Copy)]
pub(super) enum Source {
    Arena,
    InPlace {
        slot: u8,
        offset: u32,
        stride: isize,
    },
}

/// A call placed in the pending batch.
pub(super) struct Placed {
    pub(super) target: Target,
    pub(super) source: Source,
    pub(super) level: u32,
    /// A transform that FFmpeg's function may redo after the submission.
    pub(super) may_redo: bool,
}

/// Why a call cannot join the pending batch as it is.
pub(super) enum Busy {
    /// Complete the pending batch first, then the call fits.
    Flush(Reason),
    /// Partly inside a registered region: neither path is safe, the CPU is.
    Straddles,
    /// Outside every registered region, and the caller wants such calls run at once.
    Transient,
}

impl GpuBatch {
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
    /// level; records what it touches. Marked inline for its one caller, `Recorder::record`.
    #[inline]
    pub(super) fn place(&mut self, op: &Op, rect: &Area, origin: Origin) -> Result<Placed, Busy> {
        let (lo, hi) = rect.span();
        if hi < lo {
            return Err(Busy::Straddles);
        }
        if self.pending_words >= self.max_words {
            return Err(Busy::Flush(Reason::Full));
        }
        self.follow_registry()?;
        self.find_target(lo, hi, origin)?;
        let (at, stride, w, h) = (rect.at as usize, rect.stride, rect.w, rect.h);
        if stride.unsigned_abs() > i32::MAX as usize {
            self.current = None;
        }
        let (source, source_mark, mut need) = self.mc_source(op)?;
        let (target_slot, dst_mark) = match &self.current {
            Some(r) => {
                let block = block_in(r.id, r.start, r.end, rect);
                let n = self
                    .levels
                    .need(&block, Access::Write)
                    .ok_or(Busy::Flush(Reason::Overlap))?;
                need.level = need.level.max(n.level);
                need.after_cpu_redo |= n.after_cpu_redo;
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
            may_redo: cpu_redo,
        })
    }

    /// The registry as this batch sees it, taken again where it changed (a change that matters
    /// to pending calls completes them first).
    fn follow_registry(&mut self) -> Result<(), Busy> {
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
        Ok(())
    }

    /// The imported region `lo..hi` lies in, as [`GpuBatch::current`]: the last one's, one of
    /// the last few, or the registry's; none where the call's pixels are copied.
    fn find_target(&mut self, lo: usize, hi: usize, origin: Origin) -> Result<(), Busy> {
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
        Ok(())
    }

    /// The source of a motion compensation: in place where it lies in an imported frame
    /// (with the block it reads and the level that needs), else copied into the arena.
    fn mc_source(&mut self, op: &Op) -> Result<(Source, Option<Block>, Need), Busy> {
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
                    let r = &self.regions[index];
                    if let Some(in_place) = &r.in_place {
                        let block = block_in(r.id, r.start, r.end, &win);
                        let offset = (*src as usize - in_place.base()) as u32;
                        let n = self
                            .levels
                            .need(&block, Access::Read)
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
        Ok((source, source_mark, need))
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
}

#[cfg(test)]
mod tests {
    use crate::batch::keys::split_key;
    use crate::batch::testing::{record, recorder, Itx4, Pixels};

    /// A call on the pixels of a pending call goes a level above it; a call elsewhere shares
    /// the first level; the flush gives the reference's pixels in the recorded order.
    #[test]
    fn a_call_on_pending_pixels_goes_a_level_up_and_others_share_one() {
        let mut r = recorder();
        let px = Pixels::new(3);
        let mut want = px.bytes();
        let mut calls = [
            (Itx4::new(21), 8, 8),
            (Itx4::new(22), 8, 8),
            (Itx4::new(23), 40, 120),
        ];
        let mut levels = Vec::new();
        for (itx, row, col) in &mut calls {
            itx.apply_reference(&mut want, *row, *col);
            unsafe { record(&mut r, &itx.op(), &px, *row, *col) };
            let g = r.gpu.as_ref().unwrap();
            let (bucket, _, _) = *g.journal.last().expect("the call's jobs");
            levels.push(split_key(g.keys[bucket as usize]).level);
        }
        assert_eq!(levels, [0, 1, 0]);
        r.flush(crate::stats::Reason::Caller);
        assert_eq!(px.bytes(), want);
    }
}
