//! The one function the patched dav1d 1.0.0 looks up, alone in its file: cbindgen
//! declares it in the header from here without the rest of the provider.

use std::ffi::c_void;

/// The hooks the patched dav1d 1.0.0 looks up with `dlsym(RTLD_DEFAULT, ...)`: a
/// `DaedalusAv1Provider` as `ffmpeg-patches/dav1d-1.0` defines it. Not meant for other callers.
#[no_mangle]
pub extern "C" fn daedalus_av1_provider() -> *const c_void {
    &super::PROVIDER as *const super::DaedalusAv1Provider as *const c_void
}
