//! Memory the caller declares long-lived (`daedalus_register_memory`), typically a decoder's
//! frame planes. Where the device can import host pointers, a registered range is imported
//! once and the GPU reads and writes its pixels in place; blocks elsewhere are copied. Frames
//! of the pool (device memory the decoder uses as its frame buffers, `vp9/per_frame.rs`) are registered
//! for as long as they exist, with their own buffer.
//!
//! The registry is shared by all threads. Each entry is reference counted, so a thread that
//! still holds pending work on a range keeps its Vulkan objects alive even if another thread
//! unregisters it meanwhile.

use crate::gpu::memory::{DeviceBuffer, HostBuffer, Imported, InPlace, OwnImport};
use crate::gpu::{self};
use once_cell::sync::Lazy;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

pub struct Region {
    pub id: u64,
    pub start: usize,
    pub end: usize,
    /// The buffer the GPU accesses the range through: an import of its pages, or the pool
    /// frame it is; `None` where import is impossible (its blocks are then copied).
    pub in_place: Option<InPlace>,
    /// The frame path's copy of `in_place` in device-local memory, where it keeps frames
    /// there (`vp9::frame::copies`).
    pub device_copy: Mutex<Option<DeviceCopy>>,
}

/// A region's copy in device-local memory, byte for byte from byte 0 of its buffer.
pub struct DeviceCopy {
    pub buffer: Arc<DeviceBuffer>,
    /// Whether it holds the frame the region holds now (the GPU reconstructed it there, or it
    /// was copied there since), as far as the device's queue goes.
    pub current: bool,
}

impl Region {
    /// Whether it shares a byte with `start .. end`.
    fn overlaps(&self, start: usize, end: usize) -> bool {
        self.start < end && start < self.end
    }
}

struct Registry {
    /// Sorted by `start`, never overlapping.
    regions: Vec<Arc<Region>>,
    /// How many registrations each region has (same index).
    counts: Vec<usize>,
}

static REGISTRY: Lazy<RwLock<Registry>> = Lazy::new(|| {
    RwLock::new(Registry {
        regions: Vec::new(),
        counts: Vec::new(),
    })
});
/// Bumped on every change, so that threads know when their snapshot is stale.
static VERSION: AtomicU64 = AtomicU64::new(1);
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

pub fn version() -> u64 {
    VERSION.load(Ordering::Acquire)
}

pub fn snapshot() -> Vec<Arc<Region>> {
    REGISTRY
        .read()
        .unwrap_or_else(|p| p.into_inner())
        .regions
        .clone()
}

/// Whether the decoder's frames (and its row backup) come from the pool: device memory of
/// ours that the GPU works on in place on any device (the portable path), where import is
/// impossible or `DAEDALUS_TEST_MEMORY=pool` asks for it. Nothing is imported then, so that
/// the forced path is the one a device without import runs.
pub fn frames_from_pool() -> bool {
    let config = crate::config::get();
    if config.mode != crate::config::Mode::Gpu {
        return false;
    }
    crate::gpu::get()
        .is_some_and(|g| config.testing.frame_pool || g.info.host_import_alignment.is_none())
}

/// Whether `lo .. hi` lies inside one registered range.
pub fn inside_one(lo: usize, hi: usize) -> bool {
    let reg = REGISTRY.read().unwrap_or_else(|p| p.into_inner());
    matches!(place(&reg.regions, lo, hi), Placement::Inside(_))
}

/// The registered range that holds the byte at `ptr`, kept alive while the caller holds it.
pub fn containing(ptr: usize) -> Option<Arc<Region>> {
    let reg = REGISTRY.read().unwrap_or_else(|p| p.into_inner());
    match place(&reg.regions, ptr, ptr + 1) {
        Placement::Inside(i) => Some(reg.regions[i].clone()),
        _ => None,
    }
}

/// Registers `ptr .. ptr + len`. Registering the same range again counts once more; a range
/// that overlaps another registered range is refused.
pub fn register(ptr: usize, len: usize) -> Result<(), String> {
    if ptr == 0 || len == 0 {
        return Err("null or empty range".into());
    }
    let end = ptr
        .checked_add(len)
        .ok_or("range wraps around the address space")?;
    {
        let mut reg = REGISTRY.write().unwrap_or_else(|p| p.into_inner());
        if let Some(i) = reg.regions.iter().position(|r| r.overlaps(ptr, end)) {
            let r = &reg.regions[i];
            if r.start == ptr && r.end == end {
                reg.counts[i] += 1;
                return Ok(());
            }
            return Err(format!(
                "overlaps the registered range {:#x}..{:#x}",
                r.start, r.end
            ));
        }
    }
    let gpu = gpu::get().filter(|_| !frames_from_pool());
    let imported = gpu.and_then(|g| match Imported::new(g, ptr, len) {
        Ok(i) => {
            crate::stats::add(&crate::stats::COUNTERS.imports, 1);
            Some(InPlace::Imported(i))
        }
        Err(e) => {
            crate::log::once(
                crate::log::Level::Info,
                "import-failed",
                format_args!("host memory not imported ({e}); its blocks are copied"),
            );
            None
        }
    });
    let mut reg = REGISTRY.write().unwrap_or_else(|p| p.into_inner());
    // Another thread may have registered meanwhile (the import ran unlocked).
    if let Some(i) = reg.regions.iter().position(|r| r.overlaps(ptr, end)) {
        if reg.regions[i].start == ptr && reg.regions[i].end == end {
            reg.counts[i] += 1;
            return Ok(()); // our import is dropped
        }
        return Err("a concurrent registration overlaps this range".into());
    }
    insert(&mut reg, ptr, end, imported);
    Ok(())
}

/// Adds a region, counted once, where no registered range overlaps `start .. end`.
fn insert(reg: &mut Registry, start: usize, end: usize, in_place: Option<InPlace>) {
    let region = Arc::new(Region {
        id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
        start,
        end,
        in_place,
        device_copy: Mutex::new(None),
    });
    let at = reg.regions.partition_point(|r| r.start < start);
    reg.regions.insert(at, region);
    reg.counts.insert(at, 1);
    VERSION.fetch_add(1, Ordering::Release);
}

/// Registers a frame of the pool: the whole buffer, accessed through itself.
pub fn register_pool_frame(buffer: HostBuffer) -> Result<(), String> {
    let start = buffer.ptr as usize;
    let end = start + buffer.size as usize;
    register_own(start, end, InPlace::Pool(buffer))
}

/// Registers a frame buffer of ours in host memory, imported for its whole life, until
/// `unregister`.
pub fn register_own_import(own: OwnImport, len: usize) -> Result<(), String> {
    let start = own.ptr() as usize;
    register_own(start, start + len, InPlace::Own(own))
}

fn register_own(start: usize, end: usize, in_place: InPlace) -> Result<(), String> {
    let mut reg = REGISTRY.write().unwrap_or_else(|p| p.into_inner());
    if reg.regions.iter().any(|r| r.overlaps(start, end)) {
        // A mapping of new memory cannot overlap memory registered before; never happens.
        return Err("a pool frame overlaps a registered range".into());
    }
    insert(&mut reg, start, end, Some(in_place));
    Ok(())
}

/// Set where a decoder attached on decisions kept from earlier runs (VP9's choosing decoders,
/// AV1's CDEF rows): the device is set up when the GPU first takes work, not at the attach.
static DEVICE_DEFERRED: AtomicBool = AtomicBool::new(false);

/// The device is set up when the GPU first takes work; returns whether frames allocated until
/// then can be imported then ([`frames_imported_later`]). Where they cannot, a frame's
/// allocation sets the device up (or the caller does at once), and the mark has no effect.
pub fn defer_device() -> bool {
    DEVICE_DEFERRED.store(true, Ordering::Relaxed);
    frames_imported_later()
}

/// Set where a device that no earlier run set up is deferred ([`defer_unknown_device`]).
static IMPORT_UNKNOWN: AtomicBool = AtomicBool::new(false);

/// [`defer_device`] for a device's first decode: its frames are allocated for an import
/// whether or not the device turns out to import host memory. One that does not leaves them
/// to FFmpeg (a frame outside the memory the GPU reaches), and as FFmpeg's frame pool keeps
/// its buffers, that decode stays FFmpeg's; a later run, which knows, allocates the frames on
/// the device from the start.
pub fn defer_unknown_device() {
    IMPORT_UNKNOWN.store(true, Ordering::Relaxed);
    defer_device();
}

/// Whether the decoders' frames are to be memory of ours that the device imports when it is
/// set up (`frame_alloc`, [`alloc_import_later`]): a decoder deferred the device, it is not
/// set up yet, and an earlier run found that it imports host memory, or none set it up
/// (else frames are allocated on the device, which sets it up: the portable path needs it
/// from the start).
pub fn frames_imported_later() -> bool {
    static IMPORTS: once_cell::sync::OnceCell<bool> = once_cell::sync::OnceCell::new();
    DEVICE_DEFERRED.load(Ordering::Relaxed)
        && matches!(gpu::state(), gpu::State::NotSetUp)
        && !crate::config::get().testing.frame_pool
        && *IMPORTS.get_or_init(|| match crate::decisions::get("host-import").as_deref() {
            Some(imports) => imports == "yes",
            None => IMPORT_UNKNOWN.load(Ordering::Relaxed),
        })
}

/// Frame buffers of ours allocated before the device was set up ([`defer_device`]), by start
/// and length, and whether their import failed: imported when the GPU first works on a frame
/// in one (VP9's frame path, AV1's CDEF rows), and registered from then on.
static IMPORTED_LATER: Mutex<Vec<(usize, usize, bool)>> = Mutex::new(Vec::new());

/// Alignment of [`IMPORTED_LATER`]'s memory: whatever a device turns out to ask of an import
/// (4 KiB on the devices measured), 64 KiB covers.
const LATER_ALIGN: usize = 64 * 1024;

/// A frame buffer of `len` zeroed bytes, imported when the GPU first needs it.
pub fn alloc_import_later(len: usize) -> Result<*mut u8, String> {
    let ptr = crate::gpu::memory::zeroed_pages(len, LATER_ALIGN)?;
    lock(&IMPORTED_LATER).push((ptr as usize, len, false));
    Ok(ptr)
}

/// Imports and registers the buffer of [`alloc_import_later`] that holds the byte at `ptr`;
/// `None` where none does (or it is registered already), there is no device, or the import
/// fails (the buffer then stays unimported, and the frames in it are FFmpeg's to decode).
pub fn import_later_frame(ptr: usize) -> Option<()> {
    let mut later = lock(&IMPORTED_LATER);
    let i = later
        .iter()
        .position(|&(start, len, _)| start <= ptr && ptr < start + len)?;
    let (start, len, failed) = later[i];
    let gpu = gpu::get().filter(|_| !failed)?;
    let padded = len.div_ceil(LATER_ALIGN) * LATER_ALIGN;
    // The check and the insertion under one lock: were the registration refused after the
    // import, dropping the import would free memory the decoder still uses. (Nothing
    // registered overlaps memory of ours, but nothing here depends on it.)
    let mut reg = REGISTRY.write().unwrap_or_else(|p| p.into_inner());
    if reg.regions.iter().any(|r| r.overlaps(start, start + len)) {
        later[i].2 = true;
        return None;
    }
    // Safety: the memory is ours (`alloc_import_later`); once imported, the import owns it.
    match unsafe { OwnImport::adopt(gpu, start as *mut u8, padded) } {
        Ok(own) => {
            later.swap_remove(i);
            insert(&mut reg, start, start + len, Some(InPlace::Own(own)));
            crate::stats::add(&crate::stats::COUNTERS.imports, 1);
            crate::stats::add(&crate::stats::COUNTERS.imports_late, 1);
            Some(())
        }
        Err(e) => {
            later[i].2 = true;
            crate::log::once(
                crate::log::Level::Info,
                "late import failed",
                format_args!("a frame allocated before the device was set up: {e}"),
            );
            None
        }
    }
}

/// Imports the buffers of [`alloc_import_later`] allocated so far, one after another until
/// `stop` says to stop; the regions of those imported.
pub fn import_all_later(stop: impl Fn() -> bool) -> Vec<Arc<Region>> {
    let starts: Vec<usize> = lock(&IMPORTED_LATER)
        .iter()
        .filter(|&&(_, _, failed)| !failed)
        .map(|&(start, _, _)| start)
        .collect();
    let mut imported = Vec::new();
    for start in starts {
        if stop() {
            break;
        }
        if import_later_frame(start).is_some() {
            imported.extend(containing(start));
        }
    }
    imported
}

/// Whether the byte at `ptr` is in a buffer of [`alloc_import_later`] not imported yet (or
/// whose import failed).
pub fn imports_later(ptr: usize) -> bool {
    lock(&IMPORTED_LATER)
        .iter()
        .any(|&(start, len, _)| start <= ptr && ptr < start + len)
}

/// Frees a buffer of [`alloc_import_later`] never imported; false if `ptr` starts none.
pub fn free_unimported(ptr: usize) -> bool {
    let mut later = lock(&IMPORTED_LATER);
    let Some(i) = later.iter().position(|&(start, _, _)| start == ptr) else {
        return false;
    };
    later.swap_remove(i);
    unsafe { libc::free(ptr as *mut libc::c_void) };
    true
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Ends one registration of the range that starts at `ptr`; false if there is none.
pub fn unregister(ptr: usize) -> bool {
    let mut reg = REGISTRY.write().unwrap_or_else(|p| p.into_inner());
    let Some(i) = reg.regions.iter().position(|r| r.start == ptr) else {
        return false;
    };
    reg.counts[i] -= 1;
    if reg.counts[i] == 0 {
        reg.regions.remove(i);
        reg.counts.remove(i);
        VERSION.fetch_add(1, Ordering::Release);
    }
    true
}

/// Where a byte range lies relative to the registered ranges.
pub enum Placement {
    /// Inside the region of this index in the snapshot.
    Inside(usize),
    Outside,
    /// Partly inside a registered range: neither copied nor imported safely.
    Straddles,
}

/// Finds the placement of `lo .. hi` in a sorted snapshot.
pub fn place(regions: &[Arc<Region>], lo: usize, hi: usize) -> Placement {
    // The last region starting at or before `lo`, and the first one after it.
    let at = regions.partition_point(|r| r.start <= lo);
    if at > 0 {
        let r = &regions[at - 1];
        if hi <= r.end {
            return Placement::Inside(at - 1);
        }
        if lo < r.end {
            return Placement::Straddles;
        }
    }
    match regions.get(at) {
        Some(next) if next.start < hi => Placement::Straddles,
        _ => Placement::Outside,
    }
}
