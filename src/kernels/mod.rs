//! One module per DSP family: the CPU reference beside the GPU job encoding.
//!
//! Kernels are numbered for the pipelines and the batch's buckets: the transforms first (by
//! [`itx::ItxKernel::index`]), then motion compensation, the loop filter and CDEF.

pub mod cdef;
pub mod cdef_row;
pub mod ipred;
pub mod itx;
pub mod lf;
pub mod lf_sb;
pub mod mc;

/// The motion-compensation kernel (`shaders/mc.comp`).
pub const MC_KERNEL: usize = itx::ItxKernel::COUNT;
/// The loop-filter kernel (`shaders/lf.comp`).
pub const LF_KERNEL: usize = itx::ItxKernel::COUNT + 1;
/// AV1's CDEF (`shaders/cdef.comp`): one job per block, a workgroup of 64 invocations each.
pub const CDEF_KERNEL: usize = itx::ItxKernel::COUNT + 2;
/// A superblock plane's loop filter (`shaders/lf_sb.comp`): one job per workgroup (a plane's
/// columns pass, its rows pass, or both), an invocation per line.
pub const LF_SB_KERNEL: usize = itx::ItxKernel::COUNT + 3;
/// The decoder's superblock loop-filter planes of a row (`shaders/lf_row.comp`): the jobs of
/// a dispatch are planes that one workgroup runs one after the other, an invocation per line.
pub const LF_ROW_KERNEL: usize = itx::ItxKernel::COUNT + 4;
/// The frame path's kernels (`shaders/vp9_*.comp`, `crate::vp9::frame`): a workgroup of 64
/// invocations per job. Inter blocks (a record each), intra blocks (a superblock plane each),
/// a superblock row's saved line (a plane each), the loop filter (a pass of a superblock
/// plane each), and the intra predictors alone (tests).
pub const VP9_INTER_KERNEL: usize = itx::ItxKernel::COUNT + 5;
pub const VP9_INTRA_KERNEL: usize = itx::ItxKernel::COUNT + 6;
pub const VP9_LINES_KERNEL: usize = itx::ItxKernel::COUNT + 7;
pub const VP9_LF_KERNEL: usize = itx::ItxKernel::COUNT + 8;
pub const VP9_IPRED_CHECK_KERNEL: usize = itx::ItxKernel::COUNT + 9;
/// AV1's CDEF a superblock row at a time (`shaders/cdef_row*.comp`, [`cdef_row`]): the row's
/// rows copied first (a workgroup per 256 bytes of a plane's row), then a workgroup of 64
/// invocations per 8x8 block.
pub const CDEF_ROW_COPY_KERNEL: usize = itx::ItxKernel::COUNT + 10;
pub const CDEF_ROW_KERNEL: usize = itx::ItxKernel::COUNT + 11;
pub const KERNEL_COUNT: usize = itx::ItxKernel::COUNT + 12;

/// 32-bit words of one job of `kernel` in the job buffer (a multiple of 4: `uvec4`s).
pub fn job_words(kernel: usize) -> usize {
    if kernel == MC_KERNEL {
        12
    } else {
        4
    }
}

/// Jobs one workgroup of `kernel` runs, for kernels other than the transforms (whose count
/// depends on the block size): 64 invocations, 8 per job.
pub const MC_LF_JOBS_PER_GROUP: u32 = 8;
