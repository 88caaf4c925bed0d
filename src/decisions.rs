//! The one store of what daedalus measured on a device and keeps for later runs: VP9's trial
//! decisions (`vp9::frame::decisions`), AV1's CDEF trials (`av1::cdef_choice`) and facts about
//! the device (whether it is a CPU device, whether it imports host memory), so that a later
//! run knows them without setting Vulkan up. A line of `devices.tsv` in the cache directory
//! (`key name \t value`) per fact, under a key of the device, its driver, the CPU and how many
//! CPUs the process may use, the program and this library: any of them changing measures again. Deleting the file forgets them all.

use std::path::PathBuf;

/// Bumped whenever what is kept changes meaning, so that old lines are ignored.
const VERSION: u32 = 1;

/// What decides the device, its driver and the CPU baseline, read without Vulkan: the
/// library version, the CPU model and how many CPUs the process may use, the program (path, size, modification time), `DAEDALUS_DEVICE`, the loader's driver variables, the
/// driver manifests (path, size, modification time) and the GPUs the kernel lists. A driver
/// upgrade rewrites its manifest, so it is measured again.
fn cache_key() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name") || l.starts_with("Model"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string());
    let mut facts = vec![format!("device={:?}", crate::config::get().device)];
    // The program, whose decoder functions (FFmpeg's, dav1d's linked into it) are the CPU
    // side of the measurement: another build is measured again.
    if let Ok(exe) = std::env::current_exe() {
        let m = std::fs::metadata(&exe).ok();
        let mtime = m.as_ref().and_then(|m| m.modified().ok());
        facts.push(format!(
            "{} {:?} {mtime:?}",
            exe.display(),
            m.map(|m| m.len())
        ));
    }
    let mut manifests: Vec<PathBuf> = Vec::new();
    let vars = ["VK_DRIVER_FILES", "VK_ICD_FILENAMES", "VK_ADD_DRIVER_FILES"];
    for var in vars {
        let value = std::env::var(var).unwrap_or_default();
        facts.push(format!("{var}={value}"));
        manifests.extend(
            value
                .split(':')
                .filter(|p| !p.is_empty())
                .map(PathBuf::from),
        );
    }
    let dirs = [
        "/etc/vulkan/icd.d",
        "/usr/share/vulkan/icd.d",
        "/usr/local/share/vulkan/icd.d",
    ];
    manifests.extend(dirs.iter().map(PathBuf::from));
    let mut files = Vec::new();
    for path in manifests {
        match std::fs::read_dir(&path) {
            Ok(entries) => files.extend(entries.flatten().map(|e| e.path())),
            Err(_) => files.push(path),
        }
    }
    files.sort();
    for file in files {
        if let Ok(m) = std::fs::metadata(&file) {
            let mtime = m
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok());
            facts.push(format!("{} {} {:?}", file.display(), m.len(), mtime));
        }
    }
    if let Ok(entries) = std::fs::read_dir("/sys/class/drm") {
        let mut gpus: Vec<String> = entries
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("renderD"))
            .map(|e| {
                let id = |f| {
                    std::fs::read_to_string(e.path().join("device").join(f)).unwrap_or_default()
                };
                format!("{}:{}", id("vendor").trim(), id("device").trim())
            })
            .collect();
        gpus.sort();
        facts.push(gpus.join(","));
    }
    // The CPUs the process may run on (its affinity): the CPU side of a trial decoding on
    // four of them is not that of one on sixteen.
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    format!(
        "v{VERSION} daedalus {} | {cpu} | {cpus} cpus | {:016x}",
        env!("CARGO_PKG_VERSION"),
        crate::gpu::cache::fnv1a(facts.join("\n").as_bytes())
    )
    .replace('\t', " ")
}

/// Replaces the line of `key` in the file at `path` with `key \t fields`, writing a temporary
/// file of this write alone and renaming it, so that readers never see half a file.
fn replace_line(path: &std::path::Path, key: &str, fields: &str) -> std::io::Result<()> {
    static COUNT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    std::fs::create_dir_all(path.parent().expect("has a parent"))?;
    let old = std::fs::read_to_string(path).unwrap_or_default();
    let mut text: String = old
        .lines()
        .filter(|l| l.split('\t').next() != Some(key))
        .map(|l| format!("{l}\n"))
        .collect();
    text.push_str(&format!("{key}\t{fields}\n"));
    let n = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = path.with_extension(format!("tmp{}-{n}", std::process::id()));
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path)
}

/// The kept value of this key's `name`, if any.
pub fn get(name: &str) -> Option<String> {
    get_all(&[name]).pop().flatten()
}

/// [`get`] of each of `names`, from one read of the file.
pub fn get_all(names: &[&str]) -> Vec<Option<String>> {
    let key = cache_key();
    let text = file()
        .and_then(|f| std::fs::read_to_string(f).ok())
        .unwrap_or_default();
    names
        .iter()
        .map(|name| {
            let wanted = format!("{key} {name}");
            text.lines()
                .find_map(|line| match line.split('\t').collect::<Vec<_>>()[..] {
                    [k, value] if k == wanted => Some(value.to_string()),
                    _ => None,
                })
        })
        .collect()
}

/// Keeps `value` as this key's `name`, unless it is kept so already. Failure only costs a new
/// measurement next time.
pub fn keep(name: &str, value: &str) {
    if get(name).as_deref() == Some(value) {
        return;
    }
    let key = format!("{} {name}", cache_key());
    let Some(path) = file() else { return };
    if let Err(e) = replace_line(&path, &key, value) {
        crate::debug!("{name} not kept in {}: {e}", path.display());
    }
}

/// `devices.tsv` in daedalus's cache directory.
fn file() -> Option<PathBuf> {
    Some(crate::config::cache_dir()?.join("devices.tsv"))
}

/// Whether the device is a CPU device (lavapipe), whose work takes the decoder's own cores:
/// kept, so that a later run that knows it sets no device up to learn it again.
pub fn on_cpu_device() -> bool {
    static CPU: once_cell::sync::OnceCell<bool> = once_cell::sync::OnceCell::new();
    *CPU.get_or_init(|| {
        if get("device-kind").as_deref() == Some("cpu") {
            return true;
        }
        let Some(gpu) = crate::gpu::get() else {
            return false;
        };
        let cpu = gpu.info.kind == ash::vk::PhysicalDeviceType::CPU;
        keep("device-kind", if cpu { "cpu" } else { "gpu" });
        cpu
    })
}

/// Where an earlier run set the device up and kept what a later one needs to know before it
/// sets it up again (the device's kind and whether it imports host memory): whether it is a
/// CPU device.
pub fn device_known() -> Option<bool> {
    match &get_all(&["device-kind", "host-import"])[..] {
        [Some(kind), Some(_)] => Some(kind == "cpu"),
        // (A CPU device found by the builder process, which set no device up here.)
        [Some(kind), None] if kind == "cpu" => Some(true),
        _ => None,
    }
}

/// Keeps what a later run needs before it sets the device up ([`device_known`]): whether it
/// is a CPU device, and whether it imports host memory, so that frames allocated before can
/// be imported once it is set up ([`crate::regions::frames_imported_later`]).
pub fn note_device() {
    // (Keeps `device-kind` where it is not kept yet.)
    on_cpu_device();
    if let Some(gpu) = crate::gpu::get() {
        let imports = gpu.info.host_import_alignment.is_some();
        keep("host-import", if imports { "yes" } else { "no" });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A decision taken on some CPUs is not followed on fewer: the key holds how many the
    /// process may use (this thread's affinity, as a decoder's threads inherit it).
    #[test]
    fn the_key_changes_with_the_cpus_the_process_may_use() {
        let all = cache_key();
        // SAFETY: a CPU set of this thread, zeroed then set through libc's own macros.
        let one = unsafe {
            let mut before: libc::cpu_set_t = std::mem::zeroed();
            let size = std::mem::size_of::<libc::cpu_set_t>();
            assert_eq!(libc::sched_getaffinity(0, size, &mut before), 0);
            let first = (0..libc::CPU_SETSIZE as usize)
                .find(|&c| libc::CPU_ISSET(c, &before))
                .expect("a CPU");
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(first, &mut set);
            assert_eq!(libc::sched_setaffinity(0, size, &set), 0);
            let one = cache_key();
            assert_eq!(libc::sched_setaffinity(0, size, &before), 0);
            one
        };
        assert!(one.contains("| 1 cpus |"), "{one}");
        let n = std::thread::available_parallelism().unwrap().get();
        assert!(all.contains(&format!("| {n} cpus |")), "{all}");
        assert_eq!(n > 1, one != all, "{one} / {all}");
    }
}
