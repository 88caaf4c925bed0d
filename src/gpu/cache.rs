//! The compiled pipelines, kept on disk between processes. A driver compiles a compute
//! pipeline from SPIR-V in tens of milliseconds (all of daedalus's took 1.6 s of a 5 s decode
//! on NVIDIA's driver, which keeps no cache of its own there); a `VkPipelineCache` loaded from
//! the last run's data turns that into a lookup.
//!
//! The file is `pipelines-<vendor>-<device>.bin` in daedalus's cache directory: a tag naming
//! this library's shaders, then the driver's own data. Data of other shaders, or whose
//! Vulkan header names another device, driver build (`pipelineCacheUUID`) or layout, is not
//! given to the driver; the cache then starts empty and the file is replaced.

use super::shaders;
use ash::vk;
use std::path::PathBuf;
use std::sync::Mutex;

/// What became of the cache file, for the stats line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Every pipeline built came from the file (or none was built yet).
    Loaded,
    /// Some were compiled; the file was written with them.
    Written,
    /// The driver keeps no compiled code in pipeline caches (its data is a bare header).
    Empty,
    /// No cache directory, or it could not be read or written: compiled every time.
    Unavailable,
    /// Nothing was read from the file, and no pipeline was built yet.
    Unused,
}

impl Outcome {
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Loaded => "loaded",
            Outcome::Written => "written",
            Outcome::Empty => "empty",
            Outcome::Unavailable => "unavailable",
            Outcome::Unused => "unused",
        }
    }
}

pub struct DiskCache {
    pub cache: vk::PipelineCache,
    path: Option<PathBuf>,
    props: vk::PhysicalDeviceProperties,
    /// The size the driver last gave for the cache's data (when opened or last written),
    /// and what became of the file so far.
    state: Mutex<(usize, Outcome)>,
}

/// Names the embedded shaders and this library's version: a new build starts a new cache.
fn shaders_tag() -> [u8; 16] {
    let mut named = env!("CARGO_PKG_VERSION").as_bytes().to_vec();
    for (stem, spirv) in shaders::SHADERS {
        named.extend_from_slice(stem.as_bytes());
        named.extend_from_slice(spirv);
    }
    let mut tag = *b"daedpipe\0\0\0\0\0\0\0\0";
    tag[8..].copy_from_slice(&fnv1a(&named).to_le_bytes());
    tag
}

/// Whether `data` starts with a version-one Vulkan pipeline cache header for this device
/// (the header's fields are stored least significant byte first).
fn header_fits(data: &[u8], props: &vk::PhysicalDeviceProperties) -> bool {
    let word = |i: usize| u32::from_le_bytes(data[i..i + 4].try_into().unwrap());
    data.len() >= 32
        && word(0) >= 32
        && word(4) == vk::PipelineCacheHeaderVersion::ONE.as_raw() as u32
        && word(8) == props.vendor_id
        && word(12) == props.device_id
        && data[16..32] == props.pipeline_cache_uuid
}

/// The driver data the file at `path` holds for this build's shaders and this device, or
/// nothing.
fn read_file(path: Option<&PathBuf>, props: &vk::PhysicalDeviceProperties) -> Vec<u8> {
    let tag = shaders_tag();
    path.and_then(|p| std::fs::read(p).ok())
        .filter(|f| f.len() > tag.len() && f[..tag.len()] == tag)
        .map(|f| f[tag.len()..].to_vec())
        .filter(|d| header_fits(d, props))
        .unwrap_or_default()
}

/// A pipeline cache holding `data` (null where the driver refuses even an empty one).
unsafe fn create(device: &ash::Device, data: &[u8]) -> vk::PipelineCache {
    device
        .create_pipeline_cache(
            &vk::PipelineCacheCreateInfo::default().initial_data(data),
            None,
        )
        .unwrap_or(vk::PipelineCache::null())
}

/// The size of `cache`'s data, asked for without the data.
unsafe fn data_size(device: &ash::Device, cache: vk::PipelineCache) -> Option<usize> {
    let mut size = 0usize;
    let asked = (device.fp_v1_0().get_pipeline_cache_data)(
        device.handle(),
        cache,
        &mut size,
        std::ptr::null_mut(),
    );
    (asked == vk::Result::SUCCESS).then_some(size)
}

impl DiskCache {
    /// # Safety
    /// `device` is a live device of the physical device `props` describes.
    pub unsafe fn open(device: &ash::Device, props: &vk::PhysicalDeviceProperties) -> DiskCache {
        let path = crate::config::cache_dir().map(|d| {
            d.join(format!(
                "pipelines-{:04x}-{:04x}.bin",
                props.vendor_id, props.device_id
            ))
        });
        let loaded = read_file(path.as_ref(), props);
        // A driver may still refuse data it wrote itself: then start empty.
        let (mut cache, mut outcome) = (create(device, &loaded), Outcome::Loaded);
        if loaded.is_empty() || cache == vk::PipelineCache::null() {
            cache = create(device, &[]);
            outcome = Outcome::Unused;
        }
        if cache == vk::PipelineCache::null() || path.is_none() {
            outcome = Outcome::Unavailable;
        }
        let size = data_size(device, cache).unwrap_or(0);
        DiskCache {
            cache,
            path,
            props: *props,
            state: Mutex::new((size, outcome)),
        }
    }

    /// What became of the file so far.
    pub fn outcome(&self) -> Outcome {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).1
    }

    /// Takes in what the file holds now (another process wrote it: [`super::builder`]), so
    /// that pipelines built next come from it. Returns whether it held anything for this
    /// device.
    ///
    /// # Safety
    /// `device` is the device the cache was opened on; no pipeline is created with the cache
    /// meanwhile ([`DiskCache::save`] is kept out by the cache's lock).
    pub unsafe fn take_in_file(&self, device: &ash::Device) -> bool {
        // (Held throughout: `save` reads the cache under it.)
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let on_disk = read_file(self.path.as_ref(), &self.props);
        if on_disk.is_empty() || self.cache == vk::PipelineCache::null() {
            return false;
        }
        let written = create(device, &on_disk);
        if written == vk::PipelineCache::null() {
            return false;
        }
        let merged = device.merge_pipeline_caches(self.cache, &[written]).is_ok();
        device.destroy_pipeline_cache(written, None);
        // (The size last written stays: what this process built before is still written.)
        if merged && state.1 == Outcome::Unused {
            state.1 = Outcome::Loaded;
        }
        merged
    }

    /// Destroys the cache without writing it (a set-up that failed).
    ///
    /// # Safety
    /// `device` is the device the cache was opened on; nothing else uses the cache.
    pub unsafe fn destroy(self, device: &ash::Device) {
        if self.cache != vk::PipelineCache::null() {
            device.destroy_pipeline_cache(self.cache, None);
        }
    }

    /// Writes the cache back if the driver's data grew since it was opened or last written
    /// (only its size is asked for otherwise). What another process wrote to the file
    /// meanwhile is merged in, so that decodes of different kinds do not undo each other's
    /// pipelines; a temporary file, renamed, means no process ever reads half a file.
    /// Returns false where the driver could not be asked (try again later).
    ///
    /// # Safety
    /// `device` is the device the cache was opened on.
    pub unsafe fn save(&self, device: &ash::Device) -> bool {
        let Some(path) = &self.path else {
            return true;
        };
        if self.cache == vk::PipelineCache::null() {
            return true;
        }
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let Some(size) = data_size(device, self.cache) else {
            return false;
        };
        if size <= 32 {
            // A bare header: the driver keeps no compiled code in pipeline caches.
            state.1 = Outcome::Empty;
            return true;
        }
        if size <= state.0 {
            return true;
        }
        // The union of the file as it is now and this process's cache.
        let on_disk = read_file(Some(path), &self.props);
        let merged = if on_disk.is_empty() {
            vk::PipelineCache::null()
        } else {
            create(device, &on_disk)
        };
        let data = if merged == vk::PipelineCache::null() {
            device.get_pipeline_cache_data(self.cache)
        } else {
            let data = device
                .merge_pipeline_caches(merged, &[self.cache])
                .and_then(|()| device.get_pipeline_cache_data(merged));
            device.destroy_pipeline_cache(merged, None);
            data.or_else(|_| device.get_pipeline_cache_data(self.cache))
        };
        let Ok(data) = data else {
            return false;
        };
        let result = (|| -> std::io::Result<()> {
            std::fs::create_dir_all(path.parent().expect("has a parent"))?;
            let mut file = shaders_tag().to_vec();
            file.extend_from_slice(&data);
            let tmp = path.with_extension(format!("tmp{}", std::process::id()));
            std::fs::write(&tmp, file)?;
            std::fs::rename(&tmp, path)
        })();
        state.0 = size;
        match result {
            Ok(()) => state.1 = Outcome::Written,
            Err(e) => {
                crate::debug!("pipelines not cached in {}: {e}", path.display());
                if state.1 != Outcome::Written {
                    state.1 = Outcome::Unavailable;
                }
            }
        }
        true
    }
}

/// A hash that stays the same across builds and Rust versions (64-bit FNV-1a).
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props() -> vk::PhysicalDeviceProperties {
        vk::PhysicalDeviceProperties {
            vendor_id: 0x10de,
            device_id: 0x2330,
            pipeline_cache_uuid: [7; 16],
            ..Default::default()
        }
    }

    fn header(size: u32, version: u32, vendor: u32, device: u32, uuid: [u8; 16]) -> Vec<u8> {
        let mut h = Vec::new();
        for w in [size, version, vendor, device] {
            h.extend_from_slice(&w.to_le_bytes());
        }
        h.extend_from_slice(&uuid);
        h.extend_from_slice(b"driver data");
        h
    }

    #[test]
    fn only_this_devices_header_is_handed_to_the_driver() {
        let p = props();
        assert!(header_fits(&header(32, 1, 0x10de, 0x2330, [7; 16]), &p));
        assert!(!header_fits(&header(32, 1, 0x10de, 0x2330, [8; 16]), &p));
        assert!(!header_fits(&header(32, 1, 0x10de, 0x2331, [7; 16]), &p));
        assert!(!header_fits(&header(32, 1, 0x1002, 0x2330, [7; 16]), &p));
        assert!(!header_fits(&header(32, 2, 0x10de, 0x2330, [7; 16]), &p));
        assert!(!header_fits(&header(16, 1, 0x10de, 0x2330, [7; 16]), &p));
        assert!(!header_fits(
            &header(32, 1, 0x10de, 0x2330, [7; 16])[..31],
            &p
        ));
    }
}
