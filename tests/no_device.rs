//! With no usable Vulkan device (the loader pointed at a driver file that does not exist):
//! exactly one warning, the CPU reference does the work, and the output is FFmpeg's.
//! The test runs itself again as a child process with that environment and reads its stderr.

mod common;

use common::*;
use daedalus::ffi;
use daedalus::kernels::itx::Transform;
use std::process::Command;

const CHILD: &str = "DAEDALUS_NO_DEVICE_CHILD";

fn child() {
    assert_eq!(
        ffi::daedalus_backend(),
        ffi::DaedalusBackend::DAEDALUS_BACKEND_CPU
    );
    let name = unsafe { std::ffi::CStr::from_ptr(ffi::daedalus_device_name()) };
    assert_eq!(name.to_str().unwrap(), "cpu");
    let dsp = ffmpeg_c();
    let mut rng = Rng::new(40);
    for _ in 0..3 {
        let cs = vec![
            Canvas::new(&mut rng, 300, 200),
            Canvas::new(&mut rng, 200, 100),
        ];
        let blocks = place_blocks(&mut rng, &cs, 800, &Transform::ALL);
        let (mut ff, mut ours) = (clone_canvases(&cs), clone_canvases(&cs));
        apply_ffmpeg(&dsp, &mut ff, &mut blocks.clone());
        let p = ours[0].pixels.as_mut_ptr();
        assert_eq!(
            ffi::daedalus_register_memory(p.cast(), ours[0].pixels.len()),
            0
        );
        record_daedalus(&mut ours, &mut blocks.clone());
        ffi::daedalus_flush();
        assert_eq!(ffi::daedalus_unregister_memory(p.cast()), 0);
        if let Some(d) = first_difference(&ours, &ff) {
            panic!("CPU fallback differs from FFmpeg: {d}");
        }
    }
    let s = stats();
    assert_eq!(s.gpu_calls, 0);
    assert_eq!(s.submissions, 0);
    assert!(
        s.cpu_calls > 2000,
        "the CPU reference ran the deferred calls"
    );
    println!("child ok");
}

fn main() {
    if std::env::var_os(CHILD).is_some() {
        child();
        return;
    }
    let out = Command::new(std::env::current_exe().unwrap())
        .env(CHILD, "1")
        .env("VK_ICD_FILENAMES", "/nonexistent/daedalus-test-icd.json")
        .env("VK_DRIVER_FILES", "/nonexistent/daedalus-test-icd.json")
        .env_remove("DAEDALUS_DEVICE")
        .env_remove("DAEDALUS")
        .env("DAEDALUS_LOG", "warn")
        .output()
        .expect("running the test as a child");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "child failed:\n{stdout}\n{stderr}");
    assert!(
        stdout.contains("child ok"),
        "child did not finish:\n{stdout}"
    );
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("daedalus: warning:"))
        .collect();
    assert_eq!(
        warnings.len(),
        1,
        "exactly one warning expected, stderr was:\n{stderr}"
    );
    assert!(
        warnings[0].contains("CPU reference"),
        "the warning says what happens: {}",
        warnings[0]
    );
    println!("no_device: one warning, CPU reference, FFmpeg's output: ok");
}
