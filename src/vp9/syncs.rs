//! The decoder's syncs: where it reads pixels the pending calls may write (an intra
//! prediction's neighbours, a finished or published row), what of the pending work completes.

use super::rows::only_loop_filters_deferred;
use super::{per_call, published};
use crate::batch;
use crate::stats::{self, Reason, COUNTERS};
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
    /// Superblock rows of the frame.
    pub(super) sb_rows: usize,
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
    /// it instead: there, from `backup` where this provider made it (else the decoder copied
    /// it: nothing pends).
    fn intra(
        &self,
        backup: Option<Backup>,
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
        } else if let Some(b) = backup {
            let bpp = self.bytes_per_pixel as i64;
            let first = (x0.max(0) * bpp) as usize;
            let end = ((x1 * bpp).max(0) as usize).min(b.len[plane]);
            if first < end {
                areas.extend(Some(batch::Area {
                    at: b.dst[plane].wrapping_add(first),
                    stride: b.stride as isize,
                    w: end - first,
                    h: 1,
                }));
            }
        }
        (areas, block)
    }

    /// The rows of a superblock row in `plane`: 64, or 32 in a chroma plane with vertical
    /// subsampling.
    fn superblock_height(&self, plane: usize) -> i64 {
        64 >> if plane == 0 { 0 } else { self.ss_v }
    }

    /// Whether intra prediction of a block starting on row `y` of `plane` reads and writes
    /// only rows of the block's own superblock row: all but the first row of a superblock
    /// row's blocks read the row above inside it, and the first reads the decoder's backup
    /// of the row above instead (`Planes::intra`).
    fn intra_stays_in_row(&self, plane: usize, y: i64, edges: c_int) -> bool {
        edges & INTRA_TOP == 0 || y % self.superblock_height(plane) != 0
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

/// The decoder's backup lines for intra prediction (`intra_pred_data`), registered for the
/// frame: plane `p` is `len[p]` bytes at `dst[p]`, the planes `stride` bytes apart.
#[derive(Clone, Copy, PartialEq)]
pub(super) struct Backup {
    pub(super) dst: [*mut u8; 3],
    pub(super) len: [usize; 3],
    pub(super) stride: usize,
}

thread_local! {
    /// The frame of this thread's `frame_begin`, until its `frame_end`.
    pub(super) static PLANES: std::cell::Cell<Option<Planes>> = const { std::cell::Cell::new(None) };
    /// Its backup lines, once this provider copies them.
    pub(super) static BACKUP: std::cell::Cell<Option<Backup>> = const { std::cell::Cell::new(None) };
    /// The pixel address of the block this thread's last intra sync was for (0: none): the
    /// decoder adds that block's transform right after predicting it.
    pub(super) static INTRA_BLOCK: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// Whether this thread published a row to other threads (frame threads do, each row).
    pub(super) static PUBLISHES_ROWS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Whether the first part of this thread's frame went to the GPU (`split_frame`).
    pub(super) static SPLIT: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Completes what the decoder is about to read: a row done on a slice thread (read by the
/// loop-filter thread) completes all pending work. A row published to other frame threads is
/// submitted and left running: they wait for it in `await_rows`.
pub(super) unsafe extern "C" fn sync(
    ctx: *mut c_void,
    reason: c_int,
    _plane: c_int,
    _x: c_int,
    y: c_int,
    _w: c_int,
    _h: c_int,
) {
    crate::log::guard("sync", (), || {
        if !per_call(ctx) {
            return;
        }
        let planes = PLANES.with(|p| p.get());
        if reason == SYNC_ROW_PUBLISHED {
            PUBLISHES_ROWS.with(|p| p.set(true));
        }
        match (reason, planes) {
            (SYNC_ROW_DONE, _) => batch::flush_for(Reason::RowDone),
            (SYNC_ROW_PUBLISHED, Some(p)) => {
                // Submitted, not waited for: readers wait in `await_rows`.
                let serial = batch::publish();
                published::add(p.data[0] as usize, y / 64, serial);
            }
            (SYNC_ROW_PUBLISHED, None) => batch::flush_for(Reason::RowPublished),
            _ => batch::flush_for(Reason::Caller),
        }
    })
}

/// Completes what an intra prediction is about to read and write (`Planes::intra`): only the
/// pending calls on those pixels and what they depend on (of what it only reads, where it
/// can, only those pixels: `batch::complete_reads_for`), where this thread began the frame
/// and so knows its planes; elsewhere (slice workers) all pending work. The block's
/// transform, which the decoder adds next, then runs at once (`provider_itx`). Where only
/// loop filters are deferred, a block inside its superblock row returns at once: their work
/// lies above it.
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
            if p.intra_stays_in_row(plane, y, edges) && only_loop_filters_deferred() {
                // The pending loop filters are of the rows above (each filters its own
                // superblock row and the 8 lines above it), and the row backup was copied at
                // once (`backup_row`): nothing here meets them.
                stats::add(&COUNTERS.intra_syncs_in_row, 1);
            } else {
                let backup = BACKUP.with(|b| b.get());
                let (reads, block) = p.intra(backup, plane, (x, y, size as i64), edges);
                batch::complete_reads_for(Reason::Intra, &reads, block.as_slice());
            }
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
            sb_rows: 4,
        }
    }

    /// `(plane, x, y, w, h)` of each area, where it lies in a plane; `(9, offset, 0, w, h)`
    /// in the backup lines.
    fn rects(
        areas: &[batch::Area],
        backup: Option<Backup>,
    ) -> Vec<(usize, i64, i64, usize, usize)> {
        let p = planes();
        areas
            .iter()
            .map(|a| {
                let at = a.at as usize;
                if let Some(b) = backup.filter(|b| at >= b.dst[0] as usize) {
                    return (9, (at - b.dst[0] as usize) as i64, 0, a.w, a.h);
                }
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
        backup: Option<Backup>,
        plane: usize,
        xys: (i64, i64, i64),
        edges: c_int,
    ) -> Vec<batch::Area> {
        let (reads, block) = p.intra(backup, plane, xys, edges);
        block.into_iter().chain(reads.iter().copied()).collect()
    }

    #[test]
    fn intra_sync_covers_what_the_mode_reads() {
        let p = planes();
        let all = INTRA_LEFT | INTRA_TOP | INTRA_TOPLEFT | INTRA_TOPRIGHT;
        let at = |plane, xy: (i64, i64), size, edges| {
            rects(
                &intra_areas(&p, None, plane, (xy.0, xy.1, size), edges),
                None,
            )
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
        // above is the decoder's own copy when this provider did not make one.
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
        // Else its columns of the backup lines.
        let backup = Backup {
            dst: [
                0x40_0000 as *mut u8,
                0x40_1000 as *mut u8,
                0x40_2000 as *mut u8,
            ],
            len: [1024, 512, 512],
            stride: 0x1000,
        };
        let areas = intra_areas(&p, Some(backup), 0, (16, 64, 4), all);
        assert_eq!(
            rects(&areas, Some(backup)),
            [(0, 16, 64, 4, 4), (0, 15, 64, 1, 4), (9, 15, 0, 9, 1)]
        );
        let (reads, _) = p.intra(Some(backup), 1, (8, 32, 8), INTRA_TOP);
        let areas = intra_areas(&p, Some(backup), 1, (8, 32, 8), INTRA_TOP);
        assert_eq!(
            rects(&areas, Some(backup)),
            [(1, 8, 32, 8, 8), (9, 0x1008, 0, 8, 1)]
        );
        assert!(reads.iter().all(|a| a.stride == 0x1000));
        // Whether a block reads and writes only its own superblock row: all but the first
        // row of a superblock row's blocks, and those when they read nothing above.
        assert!(p.intra_stays_in_row(0, 8, all));
        assert!(p.intra_stays_in_row(0, 64, INTRA_LEFT));
        assert!(!p.intra_stays_in_row(0, 64, INTRA_TOP));
        assert!(!p.intra_stays_in_row(0, 128, all));
        assert!(p.intra_stays_in_row(1, 16, all));
        assert!(!p.intra_stays_in_row(1, 32, all));
        assert!(p.intra_stays_in_row(1, 32, INTRA_LEFT | INTRA_TOPLEFT));
        // Two bytes a pixel: offsets and widths in bytes.
        let wide = Planes {
            bytes_per_pixel: 2,
            ..planes()
        };
        let areas = intra_areas(&wide, None, 0, (16, 8, 4), all);
        assert_eq!(
            rects(&areas, None),
            [(0, 32, 8, 8, 4), (0, 30, 8, 2, 4), (0, 30, 7, 18, 1)]
        );
    }
}
