//! Run-ahead: pending calls whose pixels a reader only reads run on the CPU and stay in the
//! batch, where the GPU running them again gives the same values ([`GpuBatch::complete_reads`]).

use super::buckets::{split_key, BucketKey};
use super::call::{spans_meet, Area, Job, MAY_REDO, NO_SPAN};
use super::early::Stop;
use super::gpu_batch::GpuBatch;
use crate::gpu::stream::MAX_SLOTS;
use crate::kernels::itx::ItxJob;
use crate::kernels::mc::McJob;
use crate::kernels::{JobHeader, Kernel};
use crate::stats::{self, COUNTERS};

/// What a reader's calls to run ahead are checked with ([`GpuBatch::plan_ahead`]), kept from
/// one reader to the next: the calls that ran ahead before which they depend on
/// (`boundary`); what each of their jobs does to which pixels, in order; per slot and stride
/// the rectangle of those pixels; and per pixel of the rectangles a bit: written by one of the
/// jobs, read as a source before any wrote it.
#[derive(Default)]
pub(super) struct AheadScratch {
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

/// Whether jobs of `kernel` may run ahead on the CPU and stay in the batch: predictions and
/// transforms only ([`GpuBatch::plan_ahead`]).
fn may_run_ahead(kernel: Kernel) -> bool {
    matches!(kernel, Kernel::Itx(_) | Kernel::Mc)
}

/// The source pixels a motion-compensation job reads: its tile's, and the filter's reach.
fn mc_window(job: &Job, source: *const u8) -> Area {
    let job = McJob::from_words(job);
    let win = job.function().0.window();
    let stride = job.src_stride as isize;
    Area {
        at: source
            .wrapping_add(job.src as usize)
            .wrapping_offset(-(win.above as isize) * stride - win.left as isize)
            as *mut u8,
        stride,
        w: win.width(job.tile_cols()),
        h: win.height(job.tile_rows()),
    }
}

impl GpuBatch {
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
    pub(super) fn complete_reads(
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
            if key.kernel == Kernel::Mc
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
        let size = key.kernel.job_words();
        let at = c.first_word as usize + k * size;
        let mut job = Job::default();
        job[..size].copy_from_slice(&self.buckets[c.bucket as usize][at..at + size]);
        let (rows, cols) = match key.kernel {
            Kernel::Mc => {
                let mc = McJob::from_words(&job);
                (mc.tile_rows(), mc.tile_cols())
            }
            Kernel::Itx(k) => (k.size().n(), k.size().n()),
            // Never run ahead (`may_run_ahead`).
            Kernel::Lf
            | Kernel::Cdef
            | Kernel::LfSb
            | Kernel::LfRow
            | Kernel::Vp9Inter
            | Kernel::Vp9Intra
            | Kernel::Vp9Lines
            | Kernel::Vp9Lf
            | Kernel::Vp9IpredCheck
            | Kernel::CdefRowCopy
            | Kernel::CdefRow => (0, 0),
        };
        let header = JobHeader::of(&job);
        let pixels = Area {
            at: (self.slot_base(key.slot) + header.pixel as usize) as *mut u8,
            stride: header.stride as isize,
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
            if !may_run_ahead(key.kernel) {
                return None;
            }
            list_slots |= 1 << key.slot;
        }
        // Reads of a source only matter where these calls may write it.
        let tracked = |key: &BucketKey| {
            key.kernel == Kernel::Mc && key.source != 0 && list_slots & 1 << key.source != 0
        };
        // Adds what call `i`'s jobs do, in order (`RanAhead` for their writes if it ran
        // ahead), to `touches`.
        let add_touches = |i: usize, ran_ahead: bool, touches: &mut Vec<(usize, Touch, Area)>| {
            if !may_run_ahead(key_of(i).kernel) {
                return None;
            }
            for k in 0..self.calls[i].jobs as usize {
                let (key, job, pixels, source) = self.job_of(i, k, arena);
                let itx = matches!(key.kernel, Kernel::Itx(_));
                if itx && ItxJob::from_words(&job).flags & MAY_REDO != 0 {
                    return None;
                }
                if tracked(&key) {
                    touches.push((key.source, Touch::Reads, mc_window(&job, source)));
                }
                let touch = if ran_ahead {
                    Touch::RanAhead
                } else if itx || McJob::from_words(&job).function().0.avg {
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
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The words `for_each_word` visits, in order, hold exactly bits `start..start + len`,
    /// each once; a visit that returns `false` stops it.
    #[test]
    fn the_words_of_a_bit_range_hold_its_bits_once() {
        for start in 0..130 {
            for len in [0, 1, 2, 53, 63, 64, 65, 127, 128, 129, 190] {
                let mut bits = [0u64; 6];
                let mut last = None;
                assert!(for_each_word(start, len, |w, mask| {
                    assert!(last < Some(w));
                    last = Some(w);
                    assert_eq!(bits[w] & mask, 0);
                    bits[w] |= mask;
                    true
                }));
                for b in 0..6 * 64 {
                    let set = bits[b / 64] >> (b % 64) & 1 == 1;
                    assert_eq!(set, (start..start + len).contains(&b), "{start}+{len}: {b}");
                }
            }
        }
        let mut visits = 0;
        assert!(!for_each_word(10, 200, |_, _| {
            visits += 1;
            visits < 2
        }));
        assert_eq!(visits, 2);
    }

    /// A box sees an area's rows at its stride: a row that runs past the stride goes on at the
    /// start of the next one; widening takes in every segment; an area that starts before the
    /// slot's first byte is refused. (The addresses are never read.)
    #[test]
    fn a_box_splits_rows_at_its_stride_and_refuses_an_area_before_its_slot() {
        let origin = 0x1000;
        let mut b = PixelBox {
            slot: 1,
            origin,
            stride: 16,
            rows: (usize::MAX, 0),
            cols: (usize::MAX, 0),
            first_word: 0,
            row_words: 0,
        };
        let a = Area {
            at: (origin + 2 * 16 + 12) as *mut u8,
            stride: 16,
            w: 8,
            h: 2,
        };
        let mut segments = Vec::new();
        assert!(b.segments(&a, |row, col, len| {
            segments.push((row, col, len));
            true
        }));
        assert_eq!(segments, [(2, 12, 4), (3, 0, 4), (3, 12, 4), (4, 0, 4)]);
        assert!(b.widen(&a));
        assert_eq!((b.rows, b.cols), ((2, 5), (0, 16)));
        assert_eq!(b.span(), (origin + 2 * 16, origin + 4 * 16 + 16));
        (b.first_word, b.row_words) = (3, 1);
        assert_eq!(b.bit(3, 5), 64 * (3 + 1) + 5);
        let before = Area {
            at: (origin - 1) as *mut u8,
            stride: 16,
            w: 4,
            h: 1,
        };
        assert!(!b.widen(&before));
    }
}
