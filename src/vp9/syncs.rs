//! The decoder's syncs: where it reads pixels the pending calls may write (an intra
//! prediction's neighbours, a finished or published row), what of the pending work completes.

use super::context::per_call;
use crate::batch;
use crate::stats::Reason;
use std::ffi::{c_int, c_void};

/// The patch's sync reasons.
const SYNC_ROW_DONE: c_int = 2;
const SYNC_ROW_PUBLISHED: c_int = 3;

/// The patch's `FFVP9IntraEdge` flags: the neighbours an intra prediction reads.
const INTRA_LEFT: c_int = 1;
const INTRA_TOP: c_int = 2;
const INTRA_TOPLEFT: c_int = 4;
const INTRA_TOPRIGHT: c_int = 8;

/// The planes of the frame this thread decodes: where a sync's rectangle lies.
#[derive(Clone, Copy)]
pub(super) struct Planes {
    pub(super) data: [*mut u8; 3],
    pub(super) linesize: [isize; 3],
    pub(super) ss_v: usize,
    pub(super) bytes_per_pixel: usize,
}

impl Planes {
    /// `w` x `h` pixels of `plane` from (`x`, `y`), clipped to the plane's rows as FFmpeg's
    /// buffers hold them (row 0 on, `linesize` bytes each).
    fn area(&self, plane: usize, x: i64, y: i64, w: i64, h: i64) -> Option<batch::Area> {
        let bpp = self.bytes_per_pixel as i64;
        let stride = self.linesize[plane];
        let (x0, y0) = (x.max(0), y.max(0));
        let x1 = (x + w).min(stride as i64 / bpp);
        if stride <= 0 || x1 <= x0 || y + h <= y0 {
            return None;
        }
        let at = self.data[plane].wrapping_offset((y0 * stride as i64 + x0 * bpp) as isize);
        Some(batch::Area {
            at,
            stride,
            w: ((x1 - x0) * bpp) as usize,
            h: (y + h - y0) as usize,
        })
    }

    /// The address of pixel (`x`, `y`) of `plane` (0 outside the plane's first row and
    /// column: no block of the decoder starts there).
    fn pixel_address(&self, plane: usize, x: i64, y: i64) -> usize {
        if x < 0 || y < 0 {
            return 0;
        }
        let offset = y * self.linesize[plane] as i64 + x * self.bytes_per_pixel as i64;
        (self.data[plane] as usize).wrapping_add_signed(offset as isize)
    }

    /// What intra prediction of the `size` x `size` block at (`x`, `y`) of `plane` reads, and
    /// what it writes (the block itself). It reads the neighbours `edges` names (the decoder's
    /// `FFVP9IntraEdge`): its left column, the row above with the top-left and top-right
    /// pixels. At the top of a superblock row the row above comes from the decoder's backup of
    /// it instead, which it copied once the row's calls completed: nothing pends there.
    fn intra(
        &self,
        plane: usize,
        (x, y, size): (i64, i64, i64),
        edges: c_int,
    ) -> (IntraReads, Option<batch::Area>) {
        let block = self.area(plane, x, y, size, size);
        let mut areas = IntraReads::default();
        if edges & INTRA_LEFT != 0 {
            areas.extend(self.area(plane, x - 1, y, 1, size));
        }
        if edges & INTRA_TOP == 0 {
            return (areas, block);
        }
        let x0 = x - (edges & INTRA_TOPLEFT != 0) as i64;
        let x1 = x + size + if edges & INTRA_TOPRIGHT != 0 { 4 } else { 0 };
        if y % self.superblock_height(plane) != 0 {
            areas.extend(self.area(plane, x0, y - 1, x1 - x0, 1));
        }
        (areas, block)
    }

    /// The rows of a superblock row in `plane`: 64, or 32 in a chroma plane with vertical
    /// subsampling.
    fn superblock_height(&self, plane: usize) -> i64 {
        64 >> if plane == 0 { 0 } else { self.ss_v }
    }
}

/// What an intra prediction reads: its left column and the row above, at most two areas,
/// kept on the stack since the decoder syncs before every predicted block.
#[derive(Clone, Copy)]
struct IntraReads {
    areas: [batch::Area; 2],
    len: usize,
}

impl Default for IntraReads {
    fn default() -> IntraReads {
        let none = batch::Area {
            at: std::ptr::null_mut(),
            stride: 0,
            w: 0,
            h: 0,
        };
        IntraReads {
            areas: [none; 2],
            len: 0,
        }
    }
}

impl IntraReads {
    fn extend(&mut self, area: Option<batch::Area>) {
        if let Some(a) = area {
            self.areas[self.len] = a;
            self.len += 1;
        }
    }
}

impl std::ops::Deref for IntraReads {
    type Target = [batch::Area];

    fn deref(&self) -> &[batch::Area] {
        &self.areas[..self.len]
    }
}

thread_local! {
    /// The frame of this thread's `frame_begin`, until its `frame_end`.
    pub(super) static PLANES: std::cell::Cell<Option<Planes>> = const { std::cell::Cell::new(None) };
    /// The pixel address of the block this thread's last intra sync was for (0: none): the
    /// decoder adds that block's transform right after predicting it.
    pub(super) static INTRA_BLOCK: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Completes what the decoder is about to read: a row done on a slice thread (read by the
/// loop-filter thread), or published to other frame threads (which read it once the decoder
/// reports it), completes all pending work.
pub(super) unsafe extern "C" fn sync(
    ctx: *mut c_void,
    reason: c_int,
    _plane: c_int,
    _x: c_int,
    _y: c_int,
    _w: c_int,
    _h: c_int,
) {
    crate::log::guard("sync", (), || {
        if !per_call(ctx) {
            return;
        }
        batch::flush_for(match reason {
            SYNC_ROW_DONE => Reason::RowDone,
            SYNC_ROW_PUBLISHED => Reason::RowPublished,
            _ => Reason::Caller,
        })
    })
}

/// Completes what an intra prediction is about to read and write (`Planes::intra`): the
/// pending work, where a pending call may touch those pixels and this thread began the frame
/// and so knows its planes; elsewhere (slice workers) all pending work. The block's
/// transform, which the decoder adds next, then runs at once (`provider_itx`).
pub(super) unsafe extern "C" fn intra_edges(
    ctx: *mut c_void,
    plane: c_int,
    x: c_int,
    y: c_int,
    size: c_int,
    edges: c_int,
) {
    if !per_call(ctx) {
        return;
    }
    crate::log::guard("intra_edges", (), || match PLANES.with(|p| p.get()) {
        Some(p) if (0..3).contains(&plane) => {
            let (plane, x, y) = (plane as usize, x as i64, y as i64);
            let (reads, block) = p.intra(plane, (x, y, size as i64), edges);
            let areas: Vec<batch::Area> = reads.iter().copied().chain(block).collect();
            batch::complete_for(Reason::Intra, &areas);
            INTRA_BLOCK.with(|b| b.set(p.pixel_address(plane, x, y)));
        }
        _ => {
            batch::flush_for(Reason::Intra);
            INTRA_BLOCK.with(|b| b.set(0));
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Planes of a 4:2:0 frame at made-up addresses (never dereferenced), 8 bits.
    fn planes() -> Planes {
        Planes {
            data: [
                0x10_0000 as *mut u8,
                0x20_0000 as *mut u8,
                0x30_0000 as *mut u8,
            ],
            linesize: [1024, 512, 512],
            ss_v: 1,
            bytes_per_pixel: 1,
        }
    }

    /// `(plane, x, y, w, h)` of each area.
    fn rects(areas: &[batch::Area]) -> Vec<(usize, i64, i64, usize, usize)> {
        let p = planes();
        areas
            .iter()
            .map(|a| {
                let at = a.at as usize;
                let plane = (0..3).rev().find(|&i| at >= p.data[i] as usize).unwrap();
                let offset = (at - p.data[plane] as usize) as i64;
                let stride = p.linesize[plane] as i64;
                assert_eq!(a.stride, p.linesize[plane]);
                (plane, offset % stride, offset / stride, a.w, a.h)
            })
            .collect()
    }

    /// The block an intra sync writes, then the areas it reads.
    fn intra_areas(
        p: &Planes,
        plane: usize,
        xys: (i64, i64, i64),
        edges: c_int,
    ) -> Vec<batch::Area> {
        let (reads, block) = p.intra(plane, xys, edges);
        block.into_iter().chain(reads.iter().copied()).collect()
    }

    #[test]
    fn intra_sync_covers_what_the_mode_reads() {
        let p = planes();
        let all = INTRA_LEFT | INTRA_TOP | INTRA_TOPLEFT | INTRA_TOPRIGHT;
        let at = |plane, xy: (i64, i64), size, edges| {
            rects(&intra_areas(&p, plane, (xy.0, xy.1, size), edges))
        };
        // No neighbour read (DC_128 and the like): the block alone, which it writes.
        assert_eq!(at(0, (16, 8), 8, 0), [(0, 16, 8, 8, 8)]);
        // The left column, read only.
        assert_eq!(
            at(0, (16, 8), 8, INTRA_LEFT),
            [(0, 16, 8, 8, 8), (0, 15, 8, 1, 8)]
        );
        // The row above: just the block's width, then with its corners.
        assert_eq!(
            at(0, (16, 8), 8, INTRA_TOP),
            [(0, 16, 8, 8, 8), (0, 16, 7, 8, 1)]
        );
        assert_eq!(
            at(0, (16, 8), 4, all),
            [(0, 16, 8, 4, 4), (0, 15, 8, 1, 4), (0, 15, 7, 9, 1)]
        );
        // Clipped to the plane's first column and last byte of a row.
        assert_eq!(at(1, (0, 4), 4, all), [(1, 0, 4, 4, 4), (1, 0, 3, 8, 1)]);
        assert_eq!(
            at(1, (508, 4), 4, all),
            [(1, 508, 4, 4, 4), (1, 507, 4, 1, 4), (1, 507, 3, 5, 1)]
        );
        // At the top of a superblock row (64 luma rows, 32 chroma rows in 4:2:0) the row
        // above is the decoder's own copy.
        let left_top = INTRA_LEFT | INTRA_TOP | INTRA_TOPLEFT;
        assert_eq!(
            at(0, (16, 64), 8, left_top),
            [(0, 16, 64, 8, 8), (0, 15, 64, 1, 8)]
        );
        assert_eq!(at(2, (16, 32), 8, INTRA_TOP), [(2, 16, 32, 8, 8)]);
        assert_eq!(
            at(0, (16, 32), 8, INTRA_TOP),
            [(0, 16, 32, 8, 8), (0, 16, 31, 8, 1)]
        );
        // Two bytes a pixel: offsets and widths in bytes.
        let wide = Planes {
            bytes_per_pixel: 2,
            ..planes()
        };
        let areas = intra_areas(&wide, 0, (16, 8, 4), all);
        assert_eq!(
            rects(&areas),
            [(0, 32, 8, 8, 4), (0, 30, 8, 2, 4), (0, 30, 7, 18, 1)]
        );
    }
}
