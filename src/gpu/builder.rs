//! Kernels compiled in a process of their own, once per device: where the pipeline cache holds
//! nothing for this build and device (its first decode, or a new version of daedalus), the
//! driver compiles the frame path's kernels for seconds (2.0 s on the NVIDIA H100). Compiled
//! on a thread of the decoder's own, a decode that ended meanwhile still waited for the
//! compiler before it could exit (the driver must not be at work as the program exits): a
//! 132-frame clip took ten times its decode. The builder process writes the cache whether the
//! decoder still waits for it or has exited; a decoder that waited takes the pipelines from
//! the cache.
//!
//! The builder is `/bin/sh` with this library preloaded and [`ASKED`] naming its parent and
//! the kernels: the library's load-time hook ([`build_if_asked`]) builds them into the cache
//! and exits before the shell runs (which, where the library did not load, exits with
//! [`NOT_LOADED`]). It runs at the lowest priority, one kernel after another, behind the
//! decoders whose CPUs it shares.

use crate::kernels::Kernel;
use std::ffi::OsString;
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The environment variable that makes a process the builder: `PARENT:INDEX,INDEX,...:ON`,
/// its parent's process id, the kernels' indices, and `gpu` where a CPU device is to end it
/// before it builds anything ([`CPU_DEVICE`]), else `any`.
const ASKED: &str = "DAEDALUS_KERNEL_BUILDER";

/// The builder's exit statuses: the shell's where the library was not preloaded into it, and
/// the builder's where it built the kernels but the driver keeps nothing in pipeline caches,
/// or the cache file could not be written.
const NOT_LOADED: i32 = 125;
const NOT_KEPT: i32 = 3;
const NOT_WRITTEN: i32 = 4;
/// Where asked to build on a GPU only: the device is a CPU device, nothing built.
const CPU_DEVICE: i32 = 5;

/// The builder's CPU time at most (the system ends it beyond), and how long a decoder waits
/// for it at most (at the lowest priority, on CPUs the decoders keep busy, it may wait long).
const CPU_SECONDS: u64 = 60;
const LONGEST: Duration = Duration::from_secs(600);

/// How the builder ended, as a decoder waiting for it saw.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Built {
    /// It built them into the cache file, in so many milliseconds.
    Done(u64),
    /// It ended after so many milliseconds, how is unknown (the program reaps its children
    /// itself, or ignores their end): the cache file tells.
    Ended(u64),
    /// It built them, but the driver keeps nothing in pipeline caches (lavapipe): build them
    /// here (where the driver's own disk cache kept them, fast).
    NothingKept,
    /// Asked to build on a GPU only, it found a CPU device and built nothing.
    CpuDevice,
    /// It could not start or failed: build them here.
    Failed(String),
    /// The decoder stopped waiting (it closes); the builder goes on.
    Stopped,
}

/// The builder, once started (one a process at a time), the kernels it builds, and how it
/// ended, once it did.
struct Builder {
    child: Option<Child>,
    kernels: Vec<Kernel>,
    started: Instant,
    ended: Option<Built>,
}

static BUILDER: Mutex<Option<Builder>> = Mutex::new(None);

/// Builds `kernels` in the builder process (started here where none of them is building or
/// built; on a GPU only where `gpu_only`), waiting for it until it ends or `stop` says to
/// stop.
pub fn build_apart(kernels: &[Kernel], gpu_only: bool, stop: impl Fn() -> bool) -> Built {
    loop {
        {
            let mut builder = BUILDER.lock().unwrap_or_else(|p| p.into_inner());
            let same = builder.as_ref().is_some_and(|b| b.kernels == kernels);
            if !same {
                if builder.as_ref().is_some_and(|b| b.ended.is_none()) {
                    return Built::Failed("the builder builds other kernels".into());
                }
                *builder = Some(start(kernels, gpu_only));
            }
            let b = builder.as_mut().expect("started above");
            if b.ended.is_none() {
                b.ended = ended(b);
            }
            if let Some(ended) = &b.ended {
                return ended.clone();
            }
        }
        if stop() {
            return Built::Stopped;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// How the builder ended, for the stats line: `-` where none was started, `running` where it
/// still runs as the program exits, `built:MS`, `ended:MS`, `nothing-kept`, `cpu-device` or
/// `failed`.
pub fn describe() -> String {
    let mut builder = BUILDER.lock().unwrap_or_else(|p| p.into_inner());
    let Some(b) = builder.as_mut() else {
        return "-".into();
    };
    if b.ended.is_none() {
        b.ended = ended(b);
    }
    match &b.ended {
        None => "running".into(),
        Some(Built::Done(ms)) => format!("built:{ms}"),
        Some(Built::Ended(ms)) => format!("ended:{ms}"),
        Some(Built::NothingKept) => "nothing-kept".into(),
        Some(Built::CpuDevice) => "cpu-device".into(),
        Some(_) => "failed".into(),
    }
}

fn start(kernels: &[Kernel], gpu_only: bool) -> Builder {
    let started = Instant::now();
    let failed = |why: String| Builder {
        child: None,
        kernels: kernels.to_vec(),
        started,
        ended: Some(Built::Failed(why)),
    };
    let Some(library) = THIS_LIBRARY.get().and_then(Option::as_ref) else {
        return failed("this library's file is not one to preload".into());
    };
    let list: Vec<String> = kernels.iter().map(|k| k.index().to_string()).collect();
    let spawned = Command::new("/bin/sh")
        .args(["-c", &format!("exit {NOT_LOADED}")])
        .env("LD_PRELOAD", library)
        .env(
            ASKED,
            format!(
                "{}:{}:{}",
                std::process::id(),
                list.join(","),
                if gpu_only { "gpu" } else { "any" }
            ),
        )
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    match spawned {
        Ok(child) => Builder {
            child: Some(child),
            kernels: kernels.to_vec(),
            started,
            ended: None,
        },
        Err(e) => failed(format!("it could not start: {e}")),
    }
}

/// How the builder ended, where it did (killed where it ran too long).
fn ended(b: &mut Builder) -> Option<Built> {
    let child = b.child.as_mut()?;
    let ms = b.started.elapsed().as_millis() as u64;
    match child.try_wait() {
        Ok(None) if b.started.elapsed() > LONGEST => {
            let _ = child.kill();
            let _ = child.wait();
            Some(Built::Failed("it took too long".into()))
        }
        Ok(None) => None,
        Ok(Some(status)) if status.success() => Some(Built::Done(ms)),
        Ok(Some(status)) if status.code() == Some(NOT_KEPT) => Some(Built::NothingKept),
        Ok(Some(status)) if status.code() == Some(CPU_DEVICE) => Some(Built::CpuDevice),
        Ok(Some(status)) => Some(Built::Failed(match status.code() {
            Some(NOT_LOADED) => "the library did not load in it".into(),
            Some(NOT_WRITTEN) => "the cache file could not be written".into(),
            _ => format!("it ended with {status}"),
        })),
        // (The program reaps its children itself, or ignores their end.)
        Err(_) => Some(Built::Ended(ms)),
    }
}

/// The file this library was loaded from, made absolute at load, where it is a shared library
/// that `LD_PRELOAD` can name (`None` in a program that holds this library's code itself,
/// such as a test).
static THIS_LIBRARY: once_cell::sync::OnceCell<Option<OsString>> = once_cell::sync::OnceCell::new();

fn this_library() -> Option<OsString> {
    use std::os::unix::ffi::OsStrExt;
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: the address of a function of this library; `info` is valid to write.
    let found = unsafe { libc::dladdr(this_library as *const libc::c_void, &mut info) };
    if found == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: dladdr's answer, a string the loader keeps.
    let name = unsafe { std::ffi::CStr::from_ptr(info.dli_fname) }.to_bytes();
    let path = std::fs::canonicalize(std::ffi::OsStr::from_bytes(name)).ok()?;
    let program = std::fs::canonicalize("/proc/self/exe").ok();
    // (LD_PRELOAD separates its names with spaces and colons.)
    let nameable = !path
        .as_os_str()
        .as_bytes()
        .iter()
        .any(|&c| c == b' ' || c == b':');
    (nameable && Some(&path) != program.as_ref()).then(|| path.into_os_string())
}

/// What the library does as it loads: notes its own file, and where [`ASKED`] makes the
/// process the builder (started by its parent), builds the kernels into the cache and exits
/// (0 where the cache kept them all) before its program runs.
extern "C" fn at_load() {
    let _ = std::panic::catch_unwind(|| {
        THIS_LIBRARY.get_or_init(this_library);
        build_if_asked();
    });
}

fn build_if_asked() {
    let Some(asked) = std::env::var_os(ASKED) else {
        return;
    };
    let asked = asked.to_string_lossy().into_owned();
    let mut fields = asked.split(':');
    let (Some(parent), Some(list), Some(on)) = (fields.next(), fields.next(), fields.next()) else {
        return;
    };
    // (A program that merely inherited the variable is left alone.)
    // SAFETY: getppid has no preconditions.
    if parent.parse::<i32>().ok() != Some(unsafe { libc::getppid() }) {
        return;
    }
    // SAFETY: the process is the builder, one thread as it loads: no other reads the
    // environment meanwhile, and no descriptor of its parent's is in use here.
    unsafe {
        std::env::remove_var(ASKED);
        std::env::remove_var("LD_PRELOAD");
        // (None of the parent's files stays open for as long as the builder runs.)
        libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 0u32);
        // (Behind the decoders whose CPUs it shares, and off a CPU the moment one of theirs
        // wakes: SCHED_IDLE, where nice 19 alone still held frame threads' wake-ups; the
        // driver's threads inherit both.)
        libc::setpriority(libc::PRIO_PROCESS, 0, 19);
        let idle = libc::sched_param { sched_priority: 0 };
        libc::sched_setscheduler(0, libc::SCHED_IDLE, &idle);
        let cpu = libc::rlimit {
            rlim_cur: CPU_SECONDS,
            rlim_max: CPU_SECONDS + 1,
        };
        libc::setrlimit(libc::RLIMIT_CPU, &cpu);
    }
    let status = std::panic::catch_unwind(|| {
        let wanted: Vec<Kernel> = list
            .split(',')
            .filter_map(|i| i.parse::<usize>().ok())
            .filter_map(|i| Kernel::all().find(|k| k.index() == i))
            .collect();
        let Some(gpu) = crate::gpu::get().filter(|_| !wanted.is_empty()) else {
            return 1;
        };
        if on == "gpu" && gpu.info.kind == ash::vk::PhysicalDeviceType::CPU {
            return CPU_DEVICE;
        }
        // (One after another, on one CPU at most: on the NVIDIA H100 host a one-thread decode
        // beside four compiling threads ran at 0.62-0.83 of its speed.)
        if !wanted.into_iter().all(|k| gpu.pipelines.has(k)) {
            return 1;
        }
        // (Loaded: another process wrote them meanwhile.)
        use super::cache::Outcome;
        match gpu.pipelines.report().0 {
            Outcome::Written | Outcome::Loaded => 0,
            Outcome::Empty => NOT_KEPT,
            Outcome::Unavailable | Outcome::Unused => NOT_WRITTEN,
        }
    });
    // SAFETY: ends the process without the program's own exit work, which never began.
    unsafe { libc::_exit(status.unwrap_or(1)) };
}

#[used]
#[link_section = ".init_array"]
static AT_LOAD: extern "C" fn() = at_load;
