//! daedalus: VP9 (and AV1) decoder DSP work recorded per call and run as frame-level Vulkan
//! compute dispatches, bit-exact with FFmpeg's (and dav1d's) C code.
//!
//! - [`ffi`]: the C ABI (`include/daedalus.h`).
//! - [`kernels`]: per DSP family, the CPU reference beside the GPU job encoding.
//! - [`placement`]: where each call family runs, once decided.
//! - [`batch`]: the per-thread recorder and flush.
//! - [`gpu`]: the Vulkan runtime.
//! - [`vp9`]: the provider the patched FFmpeg decoder finds at run time.
//! - [`av1`]: the CDEF provider the patched dav1d finds at run time.
//!
//! Lower layers never name higher ones (`tests/layers.rs` keeps the order): settings and
//! counters, then logging, the placement, the kernels; the device; registered memory; the
//! recorder; the C ABI and the calibration; the providers and the stats line.

#[macro_use]
pub mod log;
pub mod av1;
pub mod batch;
pub mod calibrate;
pub mod config;
pub mod ffi;
pub mod gpu;
pub mod kernels;
mod levels;
mod overlap;
pub mod placement;
pub mod regions;
mod spans;
pub mod stats;
#[cfg(test)]
mod testing;
pub mod vp9;
pub mod vp9dsp;
