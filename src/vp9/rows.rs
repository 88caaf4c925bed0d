//! Superblock rows: the row backup for intra prediction deferred like the decoder's calls, a
//! frame submitted in parts while the CPU decodes the rest, rows another frame thread
//! published, and a superblock's loop filter as one call per plane.

use super::attach::DirectFamilies;
use super::per_frame::REGISTERED;
use super::syncs::{Backup, Planes, BACKUP, PLANES, PUBLISHES_ROWS, SPLIT};
use super::{per_call, published};
use crate::batch::{self, Origin};
use crate::config::{FrameSplit, LfCalls};
use crate::kernels::mc::{McFilter, McFunction};
use crate::stats::Reason;
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicBool, Ordering};

/// A superblock's loop filter, one recorded call per plane instead of a call per edge
/// (`DAEDALUS_LF_CALLS`). Declined (FFmpeg then filters it with the table, whose
/// loop-filter entries record or run FFmpeg's own functions as placed) with `edges`, by default
/// on a thread that publishes its rows (frame threads: the threads that wait for a row wait for
/// its chain of superblock passes, which takes the GPU longer than the per-edge calls), and
/// where the filters run on the CPU: the family is placed there, this thread has no device, or
/// the device could not build the superblock kernel.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe extern "C" fn loopfilter_sb(
    ctx: *mut c_void,
    dst: *const *mut u8,
    ls_y: isize,
    ls_uv: isize,
    ss_h: c_int,
    ss_v: c_int,
    row: c_int,
    col: c_int,
    level: *const u8,
    mask: *const u8,
    mblim_lut: *const u8,
    lim_lut: *const u8,
) -> c_int {
    crate::log::guard("loopfilter_sb", 1, || {
        if !per_call(ctx) {
            return 1;
        }
        let on_cpu =
            crate::placement::in_force().of(crate::config::Family::Lf) == crate::config::Place::Cpu;
        // (Asked only where the loop filter is placed on the GPU: with the rows order it
        // builds that kernel.)
        let wanted = || match crate::config::get().lf_calls {
            LfCalls::Edges => false,
            LfCalls::Superblocks => true,
            // With the split order a row's planes no longer chain through the row, and frame
            // threads waiting for a row wait less than for its per-edge calls.
            LfCalls::Auto => batch::lf_passes_split() || !PUBLISHES_ROWS.with(|p| p.get()),
        };
        if on_cpu
            || !wanted()
            || !batch::thread_uses_gpu()
            || !batch::device_has_kernel(crate::kernels::Kernel::LfSb)
        {
            return 1;
        }
        crate::ffi::lf_sb_entry(
            Origin::Ffmpeg,
            dst,
            [ls_y, ls_uv],
            [ss_h, ss_v],
            row,
            col,
            [level, mask, mblim_lut, lim_lut],
        )
    })
}

/// The copy of a row's last lines for the next row's intra prediction, deferred like the
/// decoder's other calls: full-pel `mc` copies, one line high, from the frame (read in place)
/// into the backup buffer (registered for the frame). Ordered after the row's reconstruction
/// and before its loop filter by their cells; an intra block at the top of the next row
/// completes the copies of the columns it reads (`sync`). Declined (the decoder copies, after
/// a flush) on the CPU path, without the frame's planes, or for an unexpected layout.
pub(super) unsafe extern "C" fn backup_row(
    ctx: *mut c_void,
    dst: *const *mut u8,
    src: *const *const u8,
    len: *const usize,
) -> c_int {
    if !per_call(ctx) {
        return 0;
    }
    let taken = crate::log::guard("backup_row", -1, || {
        let decline = || {
            batch::flush_for(Reason::RowDone);
            0
        };
        let planes = PLANES.with(|p| p.get());
        let (Some(planes), false) = (planes, dst.is_null() || src.is_null() || len.is_null())
        else {
            return decline();
        };
        let dst = *(dst as *const [*mut u8; 3]);
        let src = *(src as *const [*const u8; 3]);
        let len = *(len as *const [usize; 3]);
        let stride = (dst[1] as usize).wrapping_sub(dst[0] as usize);
        let layout = stride > 0
            && stride < 1 << 30
            && dst[2] as usize == dst[1] as usize + stride
            && len.iter().all(|&l| l > 0 && l <= stride && l % 4 == 0);
        if !layout || !batch::thread_uses_gpu() {
            return decline();
        }
        let backup = Backup { dst, len, stride };
        match BACKUP.with(|b| b.get()) {
            Some(b) if b == backup => {}
            Some(_) => return decline(),
            None => {
                let start = dst[0] as usize;
                let end = start + 2 * stride + len[2];
                // The patch gives the lines pool memory where the provider makes the pool.
                if !crate::regions::inside_one(start, end) {
                    if let Err(e) = crate::regions::register(start, end - start) {
                        crate::debug!("backup lines not registered: {e}");
                        return decline();
                    }
                    REGISTERED.with(|r| r.borrow_mut().push(start));
                }
                BACKUP.with(|b| b.set(Some(backup)));
            }
        }
        if DirectFamilies::of(&crate::placement::in_force()).mc {
            // Motion compensation is FFmpeg's: the copies are no deferred calls either. The
            // lines are copied now, once what is pending on them has completed (normally
            // nothing: the loop filters pending lie above the row just decoded).
            let line = |at: *mut u8, stride: isize, w: usize| batch::Area {
                at,
                stride,
                w,
                h: 1,
            };
            let reads: [batch::Area; 3] =
                std::array::from_fn(|p| line(src[p] as *mut u8, planes.linesize[p], len[p]));
            let writes: [batch::Area; 3] =
                std::array::from_fn(|p| line(dst[p], stride as isize, len[p]));
            batch::complete_reads_for(Reason::RowDone, &reads, &writes);
            for p in 0..3 {
                std::ptr::copy_nonoverlapping(src[p], dst[p], len[p]);
            }
        } else {
            for p in 0..3 {
                let mut at = 0;
                while at < len[p] {
                    let width = [64, 32, 16, 8, 4]
                        .into_iter()
                        .find(|&w| w <= len[p] - at)
                        .expect("lengths are multiples of 4");
                    let copy = McFunction {
                        width,
                        filter: McFilter::Regular,
                        avg: false,
                        h: false,
                        v: false,
                    };
                    batch::record_backup_copy(
                        copy,
                        dst[p].add(at),
                        stride as isize,
                        src[p].add(at),
                        planes.linesize[p],
                    );
                    at += width;
                }
            }
        }
        split_frame(&planes, &backup, src[0]);
        1
    });
    if taken < 0 {
        // A panic inside: the decoder copies, after everything it reads completes.
        crate::log::guard("backup_row", (), || batch::flush_for(Reason::RowDone));
        return 0;
    }
    taken
}

/// Whether the placement in force defers nothing of the decoder's but loop filters (the row
/// backup is then copied at once): [`DirectFamilies::only_loop_filters_deferred`].
pub(super) fn only_loop_filters_deferred() -> bool {
    DirectFamilies::of(&crate::placement::in_force()).only_loop_filters_deferred()
}

/// Says once per process why `DAEDALUS_FRAME_SPLIT` does not apply: a setting that does
/// nothing should not pass unnoticed.
fn split_not_applied(why: &str) {
    static SAID: AtomicBool = AtomicBool::new(false);
    if !SAID.swap(true, Ordering::Relaxed) {
        crate::warn!("DAEDALUS_FRAME_SPLIT is set but does not apply: {why}");
    }
}

/// Submits the frame's work so far without waiting, on a thread that decodes the frame whole
/// (not one that publishes its rows to other frame threads: those submit every row), so that
/// the GPU runs it while the CPU decodes the rest and the frame's end waits only for what came
/// after. `backup_line` is the last line of the row just decoded. `DAEDALUS_FRAME_SPLIT`:
/// - a per cent: once a frame, when that share of its superblock rows is decoded;
/// - `rows`: at every row where the frame's only deferred calls are loop filters
///   ([`DirectFamilies::only_loop_filters_deferred`]) and the part submitted before has
///   finished (else the part grows by a row). Nothing of the rows below meets them, so a part
///   costs no work on the CPU; the frame's end waits for the last rows' filters alone;
/// - `auto` (the default): `rows` where it applies and the loop filter's passes are split by
///   their masks (`DAEDALUS_LF_ORDER=split`, the default), else nothing, without a warning.
fn split_frame(planes: &Planes, backup: &Backup, backup_line: *const u8) {
    let setting = crate::config::get().frame_split;
    if planes.linesize[0] <= 0 {
        return;
    }
    let publishes_rows = PUBLISHES_ROWS.with(|p| p.get());
    match setting {
        FrameSplit::Off => return,
        // `rows` where it pays, silently elsewhere.
        FrameSplit::Auto => {
            if publishes_rows || !batch::lf_passes_split() || !only_loop_filters_deferred() {
                return;
            }
        }
        _ if publishes_rows => {
            split_not_applied("frame threads submit each row they publish anyway");
            return;
        }
        FrameSplit::Rows => {
            if !only_loop_filters_deferred() {
                split_not_applied(
                    "`rows` applies only where the loop filter alone is deferred \
                     (DAEDALUS_KERNELS=mc=cpu,itx=cpu)",
                );
                return;
            }
        }
        FrameSplit::At(percent) => {
            if SPLIT.with(|s| s.get()) {
                return;
            }
            let y = (backup_line as usize).wrapping_sub(planes.data[0] as usize)
                / planes.linesize[0] as usize;
            let rows_done = y / 64 + 1;
            if rows_done * 100 < percent as usize * planes.sb_rows {
                return;
            }
            // One try a frame: where it cannot go out now (a transform the CPU may redo
            // after the submission, too much to make final), later rows would mostly fail
            // the same way.
            SPLIT.with(|s| s.set(true));
        }
    }
    // What the next row's intra blocks read first.
    let lines: Vec<batch::Area> = (0..3)
        .map(|p| batch::Area {
            at: backup.dst[p],
            stride: backup.stride as isize,
            w: backup.len[p],
            h: 1,
        })
        .collect();
    batch::split_frame(&lines);
}

/// Frame threads: waits for the submission that carried row `sb_row` of another thread's
/// frame (the first one published at or below it), if it is still in flight.
pub(super) unsafe extern "C" fn await_rows(ctx: *mut c_void, frame_data: *const u8, sb_row: c_int) {
    crate::log::guard("await_rows", (), || {
        if !per_call(ctx) {
            return;
        }
        let frame = frame_data as usize;
        // Called before every motion compensation: rows this thread found complete before
        // cost no lock.
        if published::known_complete(frame, sb_row) {
            return;
        }
        if let Some(serial) = published::serial_for(frame, sb_row) {
            batch::await_submission(serial);
        }
        published::note_complete(frame, sb_row);
    })
}
