//! Device choice: `DAEDALUS_DEVICE` (an index into the loader's list, or a case-insensitive
//! substring of the name) or else the best usable device, discrete > integrated > virtual >
//! CPU. Usable means Vulkan 1.1, a compute queue, and 8/16-bit storage-buffer access.

use ash::vk;
use std::ffi::CStr;

/// What the rest of the crate needs to know about the chosen device.
#[derive(Clone, Debug)]
pub struct DeviceInfo {
    pub name: String,
    pub kind: vk::PhysicalDeviceType,
    pub api_version: u32,
    pub max_storage_buffer_range: u64,
    pub non_coherent_atom_size: u64,
    pub max_shared_bytes: u32,
    pub max_invocations: u32,
    pub max_storage_buffers: u32,
    pub max_push_constant_bytes: u32,
    pub max_group_count_x: u32,
    /// `Some(alignment)` when host pointers can be imported (VK_EXT_external_memory_host).
    pub host_import_alignment: Option<u64>,
    /// Nanoseconds per timestamp tick, when the compute queue has timestamps.
    pub timestamp_period_ns: Option<f64>,
    /// The invocations the device runs side by side as one (Vulkan 1.1's subgroup size).
    pub subgroup_size: u32,
}

pub struct Choice {
    pub physical: vk::PhysicalDevice,
    pub queue_family: u32,
    pub info: DeviceInfo,
    pub device_extensions: Vec<&'static CStr>,
}

fn rank(kind: vk::PhysicalDeviceType) -> u32 {
    match kind {
        vk::PhysicalDeviceType::DISCRETE_GPU => 0,
        vk::PhysicalDeviceType::INTEGRATED_GPU => 1,
        vk::PhysicalDeviceType::VIRTUAL_GPU => 2,
        vk::PhysicalDeviceType::CPU => 3,
        _ => 4,
    }
}

/// Checks one device; `Err` says what it lacks.
unsafe fn examine(
    instance: &ash::Instance,
    physical: vk::PhysicalDevice,
) -> Result<Choice, String> {
    let props = instance.get_physical_device_properties(physical);
    let name = props
        .device_name_as_c_str()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|_| "(unnamed)".into());
    if props.api_version < vk::API_VERSION_1_1 {
        return Err(format!("{name}: Vulkan 1.1 is required"));
    }
    let extensions = instance
        .enumerate_device_extension_properties(physical)
        .map_err(|e| format!("{name}: cannot list extensions: {e}"))?;
    let has = |ext: &CStr| {
        extensions
            .iter()
            .any(|p| p.extension_name_as_c_str() == Ok(ext))
    };

    // 8-bit storage is core in 1.2; on 1.1 it needs VK_KHR_8bit_storage.
    let mut device_extensions: Vec<&'static CStr> = Vec::new();
    let has_8bit_ext = has(ash::khr::_8bit_storage::NAME);
    if has_8bit_ext {
        device_extensions.push(ash::khr::_8bit_storage::NAME);
    } else if props.api_version < vk::API_VERSION_1_2 {
        return Err(format!(
            "{name}: needs VK_KHR_8bit_storage (Vulkan 1.1 device)"
        ));
    }
    if props.api_version < vk::API_VERSION_1_2 && has(ash::khr::storage_buffer_storage_class::NAME)
    {
        device_extensions.push(ash::khr::storage_buffer_storage_class::NAME);
    }
    let mut storage16 = vk::PhysicalDevice16BitStorageFeatures::default();
    let mut storage8 = vk::PhysicalDevice8BitStorageFeatures::default();
    let mut features = vk::PhysicalDeviceFeatures2::default()
        .push_next(&mut storage16)
        .push_next(&mut storage8);
    instance.get_physical_device_features2(physical, &mut features);
    if storage16.storage_buffer16_bit_access == vk::FALSE {
        return Err(format!("{name}: storageBuffer16BitAccess is not supported"));
    }
    if storage8.storage_buffer8_bit_access == vk::FALSE {
        return Err(format!("{name}: storageBuffer8BitAccess is not supported"));
    }

    let families = instance.get_physical_device_queue_family_properties(physical);
    // Prefer a compute queue without graphics (a dedicated async-compute family).
    let queue_family = families
        .iter()
        .enumerate()
        .filter(|(_, f)| f.queue_flags.contains(vk::QueueFlags::COMPUTE) && f.queue_count > 0)
        .min_by_key(|(_, f)| f.queue_flags.contains(vk::QueueFlags::GRAPHICS))
        .map(|(i, _)| i as u32)
        .ok_or_else(|| format!("{name}: no compute queue"))?;
    let timestamps = families[queue_family as usize].timestamp_valid_bits > 0
        && props.limits.timestamp_period > 0.0;

    let host_import_alignment = if has(ash::ext::external_memory_host::NAME) {
        device_extensions.push(ash::ext::external_memory_host::NAME);
        let mut host = vk::PhysicalDeviceExternalMemoryHostPropertiesEXT::default();
        let mut props2 = vk::PhysicalDeviceProperties2::default().push_next(&mut host);
        instance.get_physical_device_properties2(physical, &mut props2);
        Some(host.min_imported_host_pointer_alignment.max(1))
    } else {
        None
    };

    let mut subgroup = vk::PhysicalDeviceSubgroupProperties::default();
    let mut props2 = vk::PhysicalDeviceProperties2::default().push_next(&mut subgroup);
    instance.get_physical_device_properties2(physical, &mut props2);
    let subgroup_size = subgroup.subgroup_size;

    let l = &props.limits;
    Ok(Choice {
        physical,
        queue_family,
        device_extensions,
        info: DeviceInfo {
            name,
            kind: props.device_type,
            api_version: props.api_version,
            max_storage_buffer_range: storage_range(l.max_storage_buffer_range),
            non_coherent_atom_size: l.non_coherent_atom_size.max(1),
            max_shared_bytes: l.max_compute_shared_memory_size,
            max_invocations: l.max_compute_work_group_invocations,
            max_storage_buffers: l.max_per_stage_descriptor_storage_buffers,
            max_push_constant_bytes: l.max_push_constants_size,
            max_group_count_x: l.max_compute_work_group_count[0],
            host_import_alignment,
            timestamp_period_ns: timestamps.then_some(l.timestamp_period as f64),
            subgroup_size,
        },
    })
}

/// # Safety
/// `instance` is a live Vulkan instance.
pub unsafe fn choose(instance: &ash::Instance, wanted: Option<&str>) -> Result<Choice, String> {
    let devices = instance
        .enumerate_physical_devices()
        .map_err(|e| format!("vkEnumeratePhysicalDevices: {e}"))?;
    if devices.is_empty() {
        return Err("the Vulkan loader lists no device".into());
    }
    let names: Vec<String> = devices
        .iter()
        .map(|&d| {
            let p = instance.get_physical_device_properties(d);
            p.device_name_as_c_str()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        })
        .collect();

    if let Some(w) = wanted {
        let w = w.trim();
        let index = match w.parse::<usize>() {
            Ok(i) if i < devices.len() => i,
            Ok(i) => {
                return Err(format!(
                    "DAEDALUS_DEVICE={i}, but there are {} devices: {names:?}",
                    devices.len()
                ))
            }
            Err(_) => names
                .iter()
                .position(|n| n.to_lowercase().contains(&w.to_lowercase()))
                .ok_or_else(|| format!("DAEDALUS_DEVICE={w:?} matches none of {names:?}"))?,
        };
        return examine(instance, devices[index])
            .map_err(|e| format!("DAEDALUS_DEVICE={w:?}: {e}"));
    }

    let mut usable = Vec::new();
    let mut reasons = Vec::new();
    for &d in &devices {
        match examine(instance, d) {
            Ok(c) => usable.push(c),
            Err(e) => reasons.push(e),
        }
    }
    for r in &reasons {
        crate::info!("skipping device {r}");
    }
    usable
        .into_iter()
        .min_by_key(|c| rank(c.info.kind))
        .ok_or_else(|| format!("no usable device: {}", reasons.join("; ")))
}

/// The largest buffer a kernel binds: the device's limit, but below 2 GiB, so that every byte
/// offset inside a binding is a non-negative `int` in the shaders. (A larger region, e.g.
/// registered through the public API, is then not imported: its calls copy their blocks.)
pub fn storage_range(limit: u32) -> u64 {
    u64::from(limit).min(i32::MAX as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// NVIDIA's drivers report 4 GiB - 1: offsets past 2 GiB would be negative `int`s.
    #[test]
    fn bindings_stay_below_2_gib_whatever_the_device_allows() {
        assert_eq!(storage_range(u32::MAX), i32::MAX as u64);
        assert_eq!(storage_range(1 << 31), i32::MAX as u64);
        assert_eq!(storage_range(128 << 20), 128 << 20);
    }
}
