//! Superblock rows: the row backup for intra prediction, rows another frame thread published,
//! and a superblock's loop filter as one call per plane.

use super::context::per_call;
use crate::batch::{self, Origin};
use crate::stats::Reason;
use std::ffi::{c_int, c_void};

/// A superblock's loop filter, one recorded call per plane instead of a call per edge, each
/// placed by the cells it touches. Declined (FFmpeg then filters it with the table, whose
/// loop-filter entries record) where this thread has no device, or the device could not build
/// the superblock kernel.
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
        if !per_call(ctx)
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

/// The copy of a row's last lines for the next row's intra prediction: the decoder copies
/// them, once the pending calls complete (it reads the row just reconstructed).
pub(super) unsafe extern "C" fn backup_row(
    ctx: *mut c_void,
    _dst: *const *mut u8,
    _src: *const *const u8,
    _len: *const usize,
) -> c_int {
    if per_call(ctx) {
        crate::log::guard("backup_row", (), || batch::flush_for(Reason::RowDone));
    }
    0
}

/// Frame threads: another thread's rows are final once it reports them (it completed them at
/// the sync before), so nothing waits here.
pub(super) unsafe extern "C" fn await_rows(
    _ctx: *mut c_void,
    _frame_data: *const u8,
    _sb_row: c_int,
) {
}
