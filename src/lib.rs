//! daedalus: VP9 (and AV1) decoder DSP work recorded per call and run as frame-level Vulkan
//! compute dispatches, bit-exact with FFmpeg's (and dav1d's) C code.
//!
//! - [`ffi`]: the C ABI (`include/daedalus.h`).
//! - [`kernels`]: per DSP family, the CPU reference beside the GPU job encoding.
//! - [`paths`]: which path each decoder took, and why.
//! - [`decisions`]: what was measured on a device and kept for later runs.
//! - [`batch`]: the per-thread recorder and flush.
//! - [`gpu`]: the Vulkan runtime.
//! - [`vp9`]: the provider the patched FFmpeg decoder finds at run time.
//! - [`av1`]: the CDEF provider the patched dav1d finds at run time.
//!
//! Lower layers never name higher ones (`tests/layers.rs` keeps the order): settings and
//! counters, then logging, the paths taken, the kernels; the device and the decisions kept;
//! registered memory; the recorder; the C ABI; the providers and the stats line.

#[macro_use]
pub mod log;
pub mod av1;
pub mod batch;
pub mod config;
pub mod decisions;
pub mod ffi;
pub mod gpu;
pub mod kernels;
pub mod paths;
pub mod regions;
pub mod report;
mod spans;
pub mod stats;
#[cfg(test)]
mod testing;
pub mod vp9;
pub mod vp9dsp;
