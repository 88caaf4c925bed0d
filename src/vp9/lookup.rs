//! The one function the patched FFmpeg 5.1 VP9 decoder looks up, alone in its file: cbindgen
//! declares it in the header from here without the rest of the provider.

use std::ffi::c_void;

/// The hooks the patched FFmpeg 5.1 VP9 decoder looks up with `dlsym(RTLD_DEFAULT, ...)`: an
/// `FFVP9Provider` as `ffmpeg-patches/ffmpeg-5.1` defines it. Not meant for other callers.
#[no_mangle]
pub extern "C" fn daedalus_vp9_provider() -> *const c_void {
    &super::PROVIDER as *const super::DaedalusVp9Provider as *const c_void
}
