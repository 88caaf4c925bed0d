//! Buffers the host and the GPU share.
//!
//! [`HostBuffer`]: memory of ours, mapped once. The memory type is chosen from what the
//! device offers (host-visible, preferably cached and coherent); where it is not coherent,
//! writes are flushed and reads invalidated over ranges aligned to `nonCoherentAtomSize`.
//! Nothing assumes a particular driver's memory types.
//!
//! [`Imported`]: the caller's own memory made visible to the GPU with
//! VK_EXT_external_memory_host, so the GPU reads and writes pixels in place.
//!
//! [`InPlace`]: memory the GPU and the host both address, either of those: a frame imported,
//! or a frame of the pool (a [`HostBuffer`] in coherent memory that the decoder writes into).

use super::{vkerr, Gpu, GpuResult};
use ash::vk;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};

/// Identifies a buffer for the lifetime of the process. Vulkan handles are not enough to
/// recognise a buffer: a driver may hand out a destroyed buffer's handle value again.
fn next_buffer_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// A buffer as a descriptor set refers to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BufferRef {
    pub buffer: vk::Buffer,
    pub id: u64,
}

/// Points the storage-buffer bindings 0, 1, ... of `set` at `buffers`, each whole.
///
/// # Safety
/// `set` is a set of `device` that no pending command buffer uses.
pub(crate) unsafe fn point_set_at(
    device: &ash::Device,
    set: vk::DescriptorSet,
    buffers: &[BufferRef],
) {
    let infos: Vec<[vk::DescriptorBufferInfo; 1]> = buffers
        .iter()
        .map(|b| {
            [vk::DescriptorBufferInfo::default()
                .buffer(b.buffer)
                .offset(0)
                .range(vk::WHOLE_SIZE)]
        })
        .collect();
    let writes: Vec<vk::WriteDescriptorSet> = infos
        .iter()
        .enumerate()
        .map(|(binding, info)| {
            vk::WriteDescriptorSet::default()
                .dst_set(set)
                .dst_binding(binding as u32)
                .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                .buffer_info(info)
        })
        .collect();
    device.update_descriptor_sets(&writes, &[]);
}

type Flags = vk::MemoryPropertyFlags;

/// Host-visible memory types in order of preference for buffers the CPU writes and reads.
const HOST_PREFERENCES: [Flags; 4] = [
    Flags::from_raw(
        Flags::HOST_VISIBLE.as_raw() | Flags::HOST_COHERENT.as_raw() | Flags::HOST_CACHED.as_raw(),
    ),
    Flags::from_raw(Flags::HOST_VISIBLE.as_raw() | Flags::HOST_CACHED.as_raw()),
    Flags::from_raw(Flags::HOST_VISIBLE.as_raw() | Flags::HOST_COHERENT.as_raw()),
    Flags::HOST_VISIBLE,
];

/// The first memory type in `type_bits` that has all of one preference's flags (in order)
/// and a heap large enough for `size`.
pub fn find_memory_type(
    props: &vk::PhysicalDeviceMemoryProperties,
    type_bits: u32,
    preferences: &[Flags],
    size: u64,
) -> Option<u32> {
    preferences.iter().find_map(|&want| {
        (0..props.memory_type_count).find(|&i| {
            let t = props.memory_types[i as usize];
            type_bits & (1 << i) != 0
                && t.property_flags.contains(want)
                && props.memory_heaps[t.heap_index as usize].size >= size
        })
    })
}

/// A host buffer's uses. (Copied from and to: the frame path's device-local copies.)
const BUFFER_USAGE: vk::BufferUsageFlags = vk::BufferUsageFlags::from_raw(
    vk::BufferUsageFlags::STORAGE_BUFFER.as_raw()
        | vk::BufferUsageFlags::TRANSFER_SRC.as_raw()
        | vk::BufferUsageFlags::TRANSFER_DST.as_raw(),
);

/// Coherent host-visible types, cached first: for frames that the host reads and writes
/// through its own pointer, with no flush or invalidate between it and the GPU.
const FRAME_PREFERENCES: [Flags; 2] = [
    Flags::from_raw(
        Flags::HOST_VISIBLE.as_raw() | Flags::HOST_COHERENT.as_raw() | Flags::HOST_CACHED.as_raw(),
    ),
    Flags::from_raw(Flags::HOST_VISIBLE.as_raw() | Flags::HOST_COHERENT.as_raw()),
];

/// A buffer of `size` bytes with `usage`, not bound yet, its memory's requirements, and the
/// first memory type that meets one of `preferences` (`kind` names them in the error).
fn unbound_buffer(
    gpu: &'static Gpu,
    size: u64,
    usage: vk::BufferUsageFlags,
    preferences: &[Flags],
    kind: &str,
) -> GpuResult<(vk::Buffer, vk::MemoryRequirements, u32)> {
    let d = &gpu.device;
    unsafe {
        let buffer = d
            .create_buffer(
                &vk::BufferCreateInfo::default()
                    .size(size)
                    .usage(usage)
                    .sharing_mode(vk::SharingMode::EXCLUSIVE),
                None,
            )
            .map_err(vkerr("vkCreateBuffer"))?;
        let req = d.get_buffer_memory_requirements(buffer);
        match find_memory_type(&gpu.memory, req.memory_type_bits, preferences, req.size) {
            Some(type_index) => Ok((buffer, req, type_index)),
            None => {
                d.destroy_buffer(buffer, None);
                Err(format!(
                    "no suitable {kind} memory type for a {size}-byte buffer"
                ))
            }
        }
    }
}

/// A buffer of `size` bytes with `usage`, bound to new memory of the first type that meets
/// one of `preferences` (`kind` names them in the error); returns the memory's flags too.
fn bound_buffer(
    gpu: &'static Gpu,
    size: u64,
    usage: vk::BufferUsageFlags,
    preferences: &[Flags],
    kind: &str,
) -> GpuResult<(vk::Buffer, vk::DeviceMemory, Flags)> {
    let d = &gpu.device;
    let (buffer, req, type_index) = unbound_buffer(gpu, size, usage, preferences, kind)?;
    unsafe {
        let flags = gpu.memory.memory_types[type_index as usize].property_flags;
        let memory = match d.allocate_memory(
            &vk::MemoryAllocateInfo::default()
                .allocation_size(req.size)
                .memory_type_index(type_index),
            None,
        ) {
            Ok(m) => m,
            Err(e) => {
                d.destroy_buffer(buffer, None);
                return Err(format!("vkAllocateMemory of {} bytes: {e}", req.size));
            }
        };
        if let Err(e) = d.bind_buffer_memory(buffer, memory, 0) {
            d.destroy_buffer(buffer, None);
            d.free_memory(memory, None);
            return Err(format!("vkBindBufferMemory: {e}"));
        }
        Ok((buffer, memory, flags))
    }
}

pub struct HostBuffer {
    gpu: &'static Gpu,
    pub buffer: vk::Buffer,
    pub id: u64,
    memory: vk::DeviceMemory,
    pub ptr: *mut u8,
    pub size: u64,
    coherent: bool,
    /// In the device's own memory: its shaders read it without crossing a bus.
    pub device_local: bool,
}

// The mapping stays valid for the buffer's life and the handles are plain values; who writes
// which bytes when is ordered by the batches (a pool frame is shared by the decoder's threads).
unsafe impl Send for HostBuffer {}
unsafe impl Sync for HostBuffer {}

impl HostBuffer {
    pub fn new(gpu: &'static Gpu, size: u64) -> GpuResult<HostBuffer> {
        Self::with_preferences(gpu, size, &HOST_PREFERENCES)
    }

    /// A zeroed buffer in coherent memory for a decoder's frame (the pool).
    pub fn for_frame(gpu: &'static Gpu, size: u64) -> GpuResult<HostBuffer> {
        // FFmpeg's own frame pool hands out zeroed memory; so does this one.
        Self::coherent_zeroed(gpu, size)
    }

    /// A zeroed buffer in coherent memory, which the host writes and reads through its own
    /// pointer with no flush or invalidate between it and the GPU: a decoder's frame.
    pub fn coherent_zeroed(gpu: &'static Gpu, size: u64) -> GpuResult<HostBuffer> {
        let b = Self::coherent(gpu, size)?;
        unsafe { std::ptr::write_bytes(b.ptr, 0, size as usize) };
        Ok(b)
    }

    /// The same left as the driver hands it out, for data whose every byte is written before
    /// it is read: the frame path's parsed data (zeroing its 43 MB at 2160p took the H100's
    /// host 8-9 ms, on the frame threads' chain of set-ups).
    pub fn coherent(gpu: &'static Gpu, size: u64) -> GpuResult<HostBuffer> {
        if size > gpu.info.max_storage_buffer_range {
            return Err(format!("{size} bytes exceed maxStorageBufferRange"));
        }
        Self::with_preferences(gpu, size, &FRAME_PREFERENCES)
    }

    /// Whether [`HostBuffer::coherent`]'s memory for `size` bytes is the device's own (where
    /// the GPU works on it in place), found without allocating any.
    pub fn coherent_is_device_local(gpu: &'static Gpu, size: u64) -> GpuResult<bool> {
        let (buffer, _, type_index) =
            unbound_buffer(gpu, size, BUFFER_USAGE, &FRAME_PREFERENCES, "host-visible")?;
        unsafe { gpu.device.destroy_buffer(buffer, None) };
        let flags = gpu.memory.memory_types[type_index as usize].property_flags;
        Ok(flags.contains(Flags::DEVICE_LOCAL))
    }

    fn with_preferences(
        gpu: &'static Gpu,
        size: u64,
        preferences: &[Flags],
    ) -> GpuResult<HostBuffer> {
        let d = &gpu.device;
        let (buffer, memory, flags) =
            bound_buffer(gpu, size, BUFFER_USAGE, preferences, "host-visible")?;
        match unsafe { d.map_memory(memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty()) } {
            Ok(ptr) => Ok(HostBuffer {
                gpu,
                buffer,
                id: next_buffer_id(),
                memory,
                ptr: ptr as *mut u8,
                size,
                coherent: flags.contains(Flags::HOST_COHERENT),
                device_local: flags.contains(Flags::DEVICE_LOCAL),
            }),
            Err(e) => {
                unsafe {
                    d.destroy_buffer(buffer, None);
                    d.free_memory(memory, None);
                }
                Err(format!("mapping a host buffer: {e}"))
            }
        }
    }

    fn atom_range(&self, bytes: Range<u64>) -> vk::MappedMemoryRange<'static> {
        let atom = self.gpu.info.non_coherent_atom_size;
        let start = bytes.start / atom * atom;
        let end = bytes.end.div_ceil(atom) * atom;
        // The mapping covers the whole allocation; past our `size` use WHOLE_SIZE.
        let size = if end >= self.size {
            vk::WHOLE_SIZE
        } else {
            end - start
        };
        vk::MappedMemoryRange::default()
            .memory(self.memory)
            .offset(start)
            .size(size)
    }

    /// Makes host writes in `bytes` visible to the device.
    pub fn flush(&self, bytes: Range<u64>) -> GpuResult<()> {
        if self.coherent || bytes.is_empty() {
            return Ok(());
        }
        let r = [self.atom_range(bytes)];
        unsafe { self.gpu.device.flush_mapped_memory_ranges(&r) }
            .map_err(vkerr("vkFlushMappedMemoryRanges"))
    }

    /// Makes device writes in `bytes` visible to the host.
    pub fn invalidate(&self, bytes: Range<u64>) -> GpuResult<()> {
        if self.coherent || bytes.is_empty() {
            return Ok(());
        }
        let r = [self.atom_range(bytes)];
        unsafe { self.gpu.device.invalidate_mapped_memory_ranges(&r) }
            .map_err(vkerr("vkInvalidateMappedMemoryRanges"))
    }
}

impl HostBuffer {
    pub fn as_ref(&self) -> BufferRef {
        BufferRef {
            buffer: self.buffer,
            id: self.id,
        }
    }
}

impl Drop for HostBuffer {
    fn drop(&mut self) {
        unsafe {
            self.gpu.device.destroy_buffer(self.buffer, None);
            self.gpu.device.free_memory(self.memory, None);
        }
    }
}

/// A buffer in the device's own memory, which only the GPU reads and writes: a submission's
/// job data copied there once ([`super::stream::Stream`]), the frame path's copies of its data
/// and frames.
pub struct DeviceBuffer {
    gpu: &'static Gpu,
    pub buffer: vk::Buffer,
    pub id: u64,
    memory: vk::DeviceMemory,
    pub size: u64,
}

impl DeviceBuffer {
    pub fn new(gpu: &'static Gpu, size: u64) -> GpuResult<DeviceBuffer> {
        let usage = vk::BufferUsageFlags::STORAGE_BUFFER
            | vk::BufferUsageFlags::TRANSFER_DST
            | vk::BufferUsageFlags::TRANSFER_SRC;
        let (buffer, memory, _) =
            bound_buffer(gpu, size, usage, &[Flags::DEVICE_LOCAL], "device-local")?;
        Ok(DeviceBuffer {
            gpu,
            buffer,
            id: next_buffer_id(),
            memory,
            size,
        })
    }

    pub fn as_ref(&self) -> BufferRef {
        BufferRef {
            buffer: self.buffer,
            id: self.id,
        }
    }
}

impl Drop for DeviceBuffer {
    fn drop(&mut self) {
        unsafe {
            self.gpu.device.destroy_buffer(self.buffer, None);
            self.gpu.device.free_memory(self.memory, None);
        }
    }
}

/// Host memory of the caller's, imported so that the GPU accesses it in place.
pub struct Imported {
    gpu: &'static Gpu,
    pub buffer: vk::Buffer,
    pub id: u64,
    memory: vk::DeviceMemory,
    /// Address that byte 0 of `buffer` corresponds to (the import is page aligned).
    pub base: usize,
    pub size: u64,
}

impl Imported {
    /// Imports the pages covering `ptr .. ptr + len`.
    pub fn new(gpu: &'static Gpu, ptr: usize, len: usize) -> GpuResult<Imported> {
        let (Some(align), Some(ext)) = (gpu.info.host_import_alignment, gpu.host_import.as_ref())
        else {
            return Err("the device cannot import host memory".into());
        };
        let align = align as usize;
        let base = ptr / align * align;
        let end = (ptr + len).div_ceil(align) * align;
        let size = (end - base) as u64;
        if size > gpu.info.max_storage_buffer_range {
            return Err(format!("{size} bytes exceed maxStorageBufferRange"));
        }
        let handle = vk::ExternalMemoryHandleTypeFlags::HOST_ALLOCATION_EXT;
        let d = &gpu.device;
        unsafe {
            let mut host_props = vk::MemoryHostPointerPropertiesEXT::default();
            (ext.fp().get_memory_host_pointer_properties_ext)(
                ext.device(),
                handle,
                base as *const _,
                &mut host_props,
            )
            .result()
            .map_err(vkerr("vkGetMemoryHostPointerPropertiesEXT"))?;
            let mut external = vk::ExternalMemoryBufferCreateInfo::default().handle_types(handle);
            let buffer = d
                .create_buffer(
                    &vk::BufferCreateInfo::default()
                        .size(size)
                        .usage(
                            vk::BufferUsageFlags::STORAGE_BUFFER
                                | vk::BufferUsageFlags::TRANSFER_SRC
                                | vk::BufferUsageFlags::TRANSFER_DST,
                        )
                        .sharing_mode(vk::SharingMode::EXCLUSIVE)
                        .push_next(&mut external),
                    None,
                )
                .map_err(vkerr("vkCreateBuffer (import)"))?;
            let req = d.get_buffer_memory_requirements(buffer);
            // The host reads the pixels through its own pointer: only coherent types will do.
            let coherent = [Flags::HOST_VISIBLE | Flags::HOST_COHERENT];
            let bits = req.memory_type_bits & host_props.memory_type_bits;
            let Some(type_index) = find_memory_type(&gpu.memory, bits, &coherent, 0) else {
                d.destroy_buffer(buffer, None);
                return Err("no coherent memory type accepts this host pointer".into());
            };
            let mut import = vk::ImportMemoryHostPointerInfoEXT::default()
                .handle_type(handle)
                .host_pointer(base as *mut _);
            let memory = match d.allocate_memory(
                &vk::MemoryAllocateInfo::default()
                    .allocation_size(size)
                    .memory_type_index(type_index)
                    .push_next(&mut import),
                None,
            ) {
                Ok(m) => m,
                Err(e) => {
                    d.destroy_buffer(buffer, None);
                    return Err(format!("importing {size} bytes of host memory: {e}"));
                }
            };
            if let Err(e) = d.bind_buffer_memory(buffer, memory, 0) {
                d.destroy_buffer(buffer, None);
                d.free_memory(memory, None);
                return Err(format!("vkBindBufferMemory (import): {e}"));
            }
            Ok(Imported {
                gpu,
                buffer,
                id: next_buffer_id(),
                memory,
                base,
                size,
            })
        }
    }
}

impl Imported {
    pub fn as_ref(&self) -> BufferRef {
        BufferRef {
            buffer: self.buffer,
            id: self.id,
        }
    }
}

impl Drop for Imported {
    fn drop(&mut self) {
        unsafe {
            self.gpu.device.destroy_buffer(self.buffer, None);
            self.gpu.device.free_memory(self.memory, None);
        }
    }
}

/// Zeroed host memory of ours that stays imported for its whole life: a decoder's frame
/// buffer on a device that imports host memory. Importing pins and maps the pages (about a
/// third of a millisecond per buffer on NVIDIA's driver), so a frame is imported once when
/// allocated rather than at every frame that decodes into it or reads it.
pub struct OwnImport {
    /// Released before the memory it imports.
    import: std::mem::ManuallyDrop<Imported>,
    ptr: *mut u8,
}

// The allocation stays valid until drop; who writes which bytes when is ordered by the
// batches, as for the pool's buffers.
unsafe impl Send for OwnImport {}
unsafe impl Sync for OwnImport {}

impl OwnImport {
    pub fn new(gpu: &'static Gpu, size: usize) -> GpuResult<OwnImport> {
        let align = gpu
            .info
            .host_import_alignment
            .ok_or("the device cannot import host memory")?
            .max(4096) as usize;
        let ptr = zeroed_pages(size, align)?;
        unsafe { OwnImport::adopt(gpu, ptr, size.div_ceil(align) * align) }
            .inspect_err(|_| unsafe { libc::free(ptr as *mut libc::c_void) })
    }

    /// Imports `padded` bytes at `ptr`, memory of [`zeroed_pages`], and owns it from now on,
    /// freeing it with the import; where the import fails it stays the caller's.
    ///
    /// # Safety
    /// `ptr` must come from [`zeroed_pages`] with a size that `padded` covers, and be owned
    /// by nothing else once this succeeds.
    pub unsafe fn adopt(gpu: &'static Gpu, ptr: *mut u8, padded: usize) -> GpuResult<OwnImport> {
        let aligned = gpu
            .info
            .host_import_alignment
            .is_some_and(|a| (ptr as usize) % a as usize == 0 && padded % a as usize == 0);
        if !aligned {
            return Err("memory not aligned as the device imports it".into());
        }
        Ok(OwnImport {
            import: std::mem::ManuallyDrop::new(Imported::new(gpu, ptr as usize, padded)?),
            ptr,
        })
    }

    pub fn ptr(&self) -> *mut u8 {
        self.ptr
    }
}

/// `size` bytes, rounded up to whole `align`s, aligned to `align`, zeroed as FFmpeg's own frame
/// pool hands out its memory; freed with `libc::free`.
pub fn zeroed_pages(size: usize, align: usize) -> GpuResult<*mut u8> {
    let padded = size.div_ceil(align) * align;
    let mut ptr: *mut libc::c_void = std::ptr::null_mut();
    if size == 0 || unsafe { libc::posix_memalign(&mut ptr, align, padded) } != 0 {
        return Err(format!("cannot allocate {size} bytes of host memory"));
    }
    unsafe { std::ptr::write_bytes(ptr as *mut u8, 0, padded) };
    Ok(ptr as *mut u8)
}

impl Drop for OwnImport {
    fn drop(&mut self) {
        unsafe {
            std::mem::ManuallyDrop::drop(&mut self.import);
            libc::free(self.ptr as *mut libc::c_void);
        }
    }
}

/// Memory that the GPU reads and writes in place and the host addresses directly.
pub enum InPlace {
    Imported(Imported),
    /// A frame of the pool: our allocation, which the decoder uses as its frame buffer.
    Pool(HostBuffer),
    /// A frame buffer of ours in host memory, imported for its whole life.
    Own(OwnImport),
}

impl InPlace {
    /// The host address of byte 0 of the buffer.
    pub fn base(&self) -> usize {
        match self {
            InPlace::Imported(i) => i.base,
            InPlace::Pool(b) => b.ptr as usize,
            InPlace::Own(o) => o.import.base,
        }
    }

    /// Its size in bytes, from byte 0.
    pub fn size(&self) -> u64 {
        match self {
            InPlace::Imported(i) => i.size,
            InPlace::Pool(b) => b.size,
            InPlace::Own(o) => o.import.size,
        }
    }

    pub fn as_ref(&self) -> BufferRef {
        match self {
            InPlace::Imported(i) => i.as_ref(),
            InPlace::Pool(b) => b.as_ref(),
            InPlace::Own(o) => o.import.as_ref(),
        }
    }
}
