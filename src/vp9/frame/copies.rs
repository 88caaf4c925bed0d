//! Frames in device-local memory (on a discrete GPU; `DAEDALUS_TEST_MEMORY=copies` anywhere):
//! the decoder's frame buffers are host memory, which a discrete GPU reaches across its bus at
//! a microsecond or more a read. The wavefront's intra blocks and loop filter read and write a
//! superblock after the one before it, so that latency adds up level after level.
//! Instead each frame buffer the GPU reconstructs into has a copy in device-local memory
//! (`crate::regions::DeviceCopy`): the kernels work there, the frame's submission ends by
//! copying the planes back into the decoder's buffer, and a reference stays there for the
//! frames that read it. A reference FFmpeg reconstructed on the CPU (a fallback) is uploaded
//! once, by the first frame that reads it.

use super::header::Planes;
use crate::gpu::engine::Copy;
use crate::gpu::memory::{BufferRef, DeviceBuffer};
use crate::gpu::{Gpu, GpuResult};
use crate::regions::{DeviceCopy, Region};
use ash::vk;
use std::sync::Arc;

/// The region's device-local copy, made where it has none yet.
pub fn of(gpu: &'static Gpu, region: &Region) -> GpuResult<BufferRef> {
    let in_place = region
        .in_place
        .as_ref()
        .ok_or("a frame outside GPU memory")?;
    let mut copy = region.device_copy.lock().unwrap_or_else(|p| p.into_inner());
    if copy.is_none() {
        let start = std::time::Instant::now();
        let buffer = DeviceBuffer::new(gpu, in_place.size())?;
        super::report::note_object_made(start);
        *copy = Some(DeviceCopy {
            buffer: Arc::new(buffer),
            current: false,
        });
    }
    Ok(DeviceBuffer::as_ref(
        &copy.as_ref().expect("made above").buffer,
    ))
}

/// Whether the region's copy holds the frame the region holds now.
pub fn current(region: &Region) -> bool {
    let copy = region.device_copy.lock().unwrap_or_else(|p| p.into_inner());
    copy.as_ref().is_some_and(|c| c.current)
}

/// Marks the region's copy as holding its frame (the copy or reconstruction is on the queue)
/// or not (a new frame begins in the region, or FFmpeg reconstructs it on the CPU).
pub fn set_current(region: &Region, current: bool) {
    let mut copy = region.device_copy.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(c) = copy.as_mut() {
        c.current = current;
    }
}

/// The buffer at `data0` holds a frame its copy does not: a new one begins there, or FFmpeg
/// reconstructs it on the CPU.
pub fn forget(data0: usize) {
    if let Some(region) = crate::regions::containing(data0) {
        set_current(&region, false);
    }
}

/// The byte ranges of a frame's planes, `rows` of each (stride included).
fn plane_regions(planes: Planes, rows: [u32; 3]) -> Vec<vk::BufferCopy> {
    (0..3)
        .map(|p| {
            let (offset, stride) = planes[p];
            vk::BufferCopy::default()
                .src_offset(offset as u64)
                .dst_offset(offset as u64)
                .size(stride as u64 * rows[p] as u64)
        })
        .filter(|c| c.size > 0)
        .collect()
}

/// The copy of a frame's planes from the decoder's buffer into the device-local copy.
pub fn upload(region: &Region, planes: Planes, rows: [u32; 3]) -> Option<Copy> {
    let in_place = region.in_place.as_ref()?;
    let size = in_place.size();
    let copy = region.device_copy.lock().unwrap_or_else(|p| p.into_inner());
    let mut regions = plane_regions(planes, rows);
    // (Never past the buffer: a last row may end before its stride does.)
    for r in &mut regions {
        r.size = r.size.min(size.saturating_sub(r.src_offset));
    }
    Some(Copy {
        from: in_place.as_ref().buffer,
        to: copy.as_ref()?.buffer.buffer,
        regions,
    })
}

/// The copy of a frame's planes from the device-local copy back into the decoder's buffer.
pub fn copy_back(region: &Region, planes: Planes, rows: [u32; 3]) -> Option<Copy> {
    let up = upload(region, planes, rows)?;
    Some(Copy {
        from: up.to,
        to: up.from,
        regions: up.regions,
    })
}

/// Rows of each plane of a frame `height` luma rows high, subsampled vertically by `ss_v`.
pub fn plane_rows(height: u32, ss_v: u32) -> [u32; 3] {
    let chroma = (height + ss_v) >> ss_v;
    [height, chroma, chroma]
}
