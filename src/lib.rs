//! daedalus: VP9 (and AV1) decoder DSP work recorded per call and run as frame-level Vulkan
//! compute dispatches, bit-exact with FFmpeg's (and dav1d's) C code.

pub mod kernels;
pub mod vp9dsp;
