//! Which decoder contexts the per-call hooks take: those of decoders whose DSP table the
//! provider filled with its recording functions.

use std::ffi::c_void;

/// The context of a decoder whose DSP calls the provider takes; it carries no state. (A
/// decoder on the frame path holds a [`frame::Decoder`] instead.)
static ATTACHED: u8 = 0;

pub(super) fn ctx() -> *mut c_void {
    &ATTACHED as *const u8 as *mut c_void
}

/// Whether `ctx` is a decoder's whose DSP calls the provider takes (or none, from a caller that
/// drives the hooks itself): the per-call hooks leave a decoder on the frame path alone (its
/// table is FFmpeg's own).
pub(super) fn per_call(ctx: *mut c_void) -> bool {
    ctx.is_null() || ctx == self::ctx()
}
