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

/// What became of the cache file, for the stats line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Every pipeline came from the file.
    Loaded,
    /// Some were compiled; the file was written with them.
    Written,
    /// The driver keeps no compiled code in pipeline caches (its data is a bare header).
    Empty,
    /// No cache directory, or it could not be read or written: compiled every time.
    Unavailable,
}

impl Outcome {
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Loaded => "loaded",
            Outcome::Written => "written",
            Outcome::Empty => "empty",
            Outcome::Unavailable => "unavailable",
        }
    }
}

pub struct DiskCache {
    pub cache: vk::PipelineCache,
    path: Option<PathBuf>,
    /// The driver data handed to `vkCreatePipelineCache` (empty when none fit).
    loaded: Vec<u8>,
}

/// Names the embedded shaders and this library's version: a new build starts a new cache.
fn shaders_tag() -> [u8; 16] {
    let mut named = env!("CARGO_PKG_VERSION").as_bytes().to_vec();
    for (stem, spirv) in shaders::SHADERS {
        named.extend_from_slice(stem.as_bytes());
        named.extend_from_slice(spirv);
    }
    let mut tag = *b"daedpipe\0\0\0\0\0\0\0\0";
    tag[8..].copy_from_slice(&crate::calibrate::fnv1a(&named).to_le_bytes());
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
        let tag = shaders_tag();
        let loaded = path
            .as_ref()
            .and_then(|p| std::fs::read(p).ok())
            .filter(|f| f.len() > tag.len() && f[..tag.len()] == tag)
            .map(|f| f[tag.len()..].to_vec())
            .filter(|d| header_fits(d, props))
            .unwrap_or_default();
        let create = |data: &[u8]| {
            device.create_pipeline_cache(
                &vk::PipelineCacheCreateInfo::default().initial_data(data),
                None,
            )
        };
        // A driver may still refuse data it wrote itself: then start empty.
        let (cache, loaded) = match create(&loaded) {
            Ok(c) => (c, loaded),
            Err(_) => (create(&[]).unwrap_or(vk::PipelineCache::null()), Vec::new()),
        };
        DiskCache {
            cache,
            path,
            loaded,
        }
    }

    /// Writes the cache back if the driver added to it (to a temporary file, renamed, so a
    /// concurrent process never reads half a file), and destroys it.
    ///
    /// # Safety
    /// `device` is the device the cache was opened on; no pipeline creation is using it.
    pub unsafe fn close(self, device: &ash::Device) -> Outcome {
        if self.cache == vk::PipelineCache::null() {
            return Outcome::Unavailable;
        }
        let data = device
            .get_pipeline_cache_data(self.cache)
            .unwrap_or_default();
        device.destroy_pipeline_cache(self.cache, None);
        if data.len() <= 32 {
            return Outcome::Empty;
        }
        if !self.loaded.is_empty() && data == self.loaded {
            return Outcome::Loaded;
        }
        let Some(path) = self.path else {
            return Outcome::Unavailable;
        };
        let result = (|| -> std::io::Result<()> {
            std::fs::create_dir_all(path.parent().expect("has a parent"))?;
            let mut file = shaders_tag().to_vec();
            file.extend_from_slice(&data);
            let tmp = path.with_extension(format!("tmp{}", std::process::id()));
            std::fs::write(&tmp, file)?;
            std::fs::rename(&tmp, &path)
        })();
        match result {
            Ok(()) => Outcome::Written,
            Err(e) => {
                crate::debug!("pipelines not cached in {}: {e}", path.display());
                Outcome::Unavailable
            }
        }
    }
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
