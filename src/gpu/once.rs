//! Levels of dispatches run in one submission that the caller waits for: the tests of the
//! kernels' arithmetic against the CPU references (`tests/frame_ipred.rs`,
//! `tests/cdef_row_gpu.rs`), and AV1's CDEF rows, which dav1d needs filtered before it goes
//! on (`crate::av1::cdef_apply`).

use super::engine::{Engine, Options, Sets};
use super::memory::BufferRef;
use super::{Gpu, GpuResult};
use crate::kernels::Kernel;
use std::time::Duration;

/// An engine of one command buffer and a descriptor set of the five bindings, kept for the
/// next run.
pub struct Runner {
    engine: Engine,
    sets: Sets,
}

impl Runner {
    pub fn new(gpu: &'static Gpu) -> GpuResult<Runner> {
        let options = Options {
            slots: 1,
            stage_ns: &[],
            hang: Duration::from_secs(20),
            retires: true,
        };
        Ok(Runner {
            engine: Engine::new(gpu, options)?,
            sets: Sets::new(gpu, 1)?,
        })
    }

    /// Runs each `(kernel, jobs)` of `levels` over `buffers` (the five bindings), one after
    /// the other, and waits; the host may then read what they wrote.
    pub fn run(&mut self, levels: &[(Kernel, u32)], buffers: [BufferRef; 5]) -> GpuResult<()> {
        self.start(levels, buffers)?;
        self.wait()
    }

    /// Submits `levels` over `buffers` as [`Runner::run`] does, and returns at once: the
    /// caller keeps the buffers alive and calls [`Runner::wait`] before it reads what the
    /// levels write or starts another run.
    pub fn start(&mut self, levels: &[(Kernel, u32)], buffers: [BufferRef; 5]) -> GpuResult<()> {
        // (The set is re-pointed only once the last run is done.)
        self.wait()?;
        let gpu = self.engine.gpu();
        gpu.pipelines.ensure(levels.iter().map(|&(k, _)| k))?;
        let set = self.sets.pointing_at(buffers, &mut Vec::new())?;
        let mut rec = self.engine.record()?;
        rec.start_timing();
        rec.bind(set);
        for &(kernel, jobs) in levels {
            rec.level(None);
            rec.dispatch(kernel, 0, jobs)?;
        }
        rec.submit(&[])?;
        Ok(())
    }

    /// Waits for the run started last, if any is in flight.
    pub fn wait(&mut self) -> GpuResult<()> {
        self.engine.wait_all()
    }
}

/// Runs `levels` over `buffers` once, with a runner of its own.
pub fn run_once(levels: &[(Kernel, u32)], buffers: [BufferRef; 5]) -> GpuResult<()> {
    let gpu = crate::gpu::get().ok_or("no usable Vulkan device")?;
    Runner::new(gpu)?.run(levels, buffers)
}
