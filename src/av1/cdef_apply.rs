//! AV1's CDEF by superblock rows on the GPU: a row's record
//! ([`crate::kernels::cdef_row::GpuRecord`]) and two levels of dispatches, the copy of the
//! row's rows (`shaders/cdef_row_copy.comp`) and then its blocks (`shaders/cdef_row.comp`).

use crate::gpu::memory::HostBuffer;
use crate::gpu::once::run_once;
use crate::gpu::GpuResult;
use crate::kernels::cdef_row::GpuRecord;
use crate::kernels::{CDEF_ROW_COPY_KERNEL, CDEF_ROW_KERNEL};

/// Filters one row on the GPU, alone, and waits: for the tests of the kernels against the
/// CPU reference. `pixels` are the frame's bytes, its planes where the record says; returns
/// them filtered.
pub fn filter_row_once(record: &GpuRecord, pixels: &[u8]) -> GpuResult<Vec<u8>> {
    let gpu = crate::gpu::get().ok_or("no usable Vulkan device")?;
    let data = HostBuffer::coherent_zeroed(gpu, (record.words.len() * 4) as u64)?;
    let frame = HostBuffer::coherent_zeroed(gpu, pixels.len().max(4) as u64)?;
    // SAFETY: each buffer holds at least these bytes, and no GPU work uses them yet.
    unsafe {
        std::ptr::copy_nonoverlapping(
            record.words.as_ptr(),
            data.ptr as *mut u32,
            record.words.len(),
        );
        std::ptr::copy_nonoverlapping(pixels.as_ptr(), frame.ptr, pixels.len());
    }
    run_once(
        &[
            (CDEF_ROW_COPY_KERNEL, record.copy_jobs),
            (CDEF_ROW_KERNEL, record.block_jobs),
        ],
        [&data, &frame, &data, &data, &data],
    )?;
    frame.invalidate(0..frame.size)?;
    // SAFETY: inside the buffer, which the GPU no longer writes.
    Ok(unsafe { std::slice::from_raw_parts(frame.ptr, pixels.len()).to_vec() })
}
