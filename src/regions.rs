//! Memory the caller declares long-lived (`daedalus_register_memory`), typically a decoder's
//! frame planes. Where the device can import host pointers, a registered range is imported
//! once and the GPU reads and writes its pixels in place; blocks elsewhere are copied.
//!
//! The registry is shared by all threads. Each entry is reference counted, so a thread that
//! still holds pending work on a range keeps its Vulkan objects alive even if another thread
//! unregisters it meanwhile.

use crate::gpu::{self, memory::Imported};
use once_cell::sync::Lazy;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

pub struct Region {
    pub id: u64,
    pub start: usize,
    pub end: usize,
    /// The pages of the range, imported; `None` where import is impossible.
    pub imported: Option<Imported>,
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
        if let Some(i) = reg
            .regions
            .iter()
            .position(|r| r.start < end && ptr < r.end)
        {
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
    let imported = gpu::get().and_then(|g| match Imported::new(g, ptr, len) {
        Ok(i) => Some(i),
        Err(e) => {
            crate::log::once(
                crate::log::Level::Info,
                "import-failed",
                format_args!("host memory not imported ({e}); its blocks are copied"),
            );
            None
        }
    });
    let region = Arc::new(Region {
        id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
        start: ptr,
        end,
        imported,
    });
    let mut reg = REGISTRY.write().unwrap_or_else(|p| p.into_inner());
    // Another thread may have registered meanwhile (the import ran unlocked).
    if let Some(i) = reg
        .regions
        .iter()
        .position(|r| r.start < end && ptr < r.end)
    {
        if reg.regions[i].start == ptr && reg.regions[i].end == end {
            reg.counts[i] += 1;
            return Ok(()); // our import is dropped
        }
        return Err("a concurrent registration overlaps this range".into());
    }
    let at = reg.regions.partition_point(|r| r.start < ptr);
    reg.regions.insert(at, region);
    reg.counts.insert(at, 1);
    VERSION.fetch_add(1, Ordering::Release);
    Ok(())
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
