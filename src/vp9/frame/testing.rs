//! The frame path's kernels run alone, for the tests of their arithmetic against the CPU
//! references (`tests/frame_ipred.rs`, `tests/itx_high_gpu.rs`, `tests/mc_lf_gpu.rs`). Not
//! part of the decoder's path.

use crate::gpu::memory::HostBuffer;
use crate::gpu::once::run_once;
use crate::gpu::GpuResult;
use crate::kernels::itx::{Transform, Tx1d};
use crate::kernels::Kernel;

/// Runs `kernel` alone, a workgroup for each of `cases` cases: `words` in binding 0, and in
/// binding 1 `out_words` zeroed 32-bit words, which it returns once the GPU is done.
fn run_alone(kernel: Kernel, cases: usize, words: &[u32], out_words: usize) -> GpuResult<Vec<u32>> {
    let gpu = crate::gpu::get().ok_or("no usable Vulkan device")?;
    if cases == 0 {
        return Ok(Vec::new());
    }
    let input = HostBuffer::coherent_zeroed(gpu, (words.len() * 4) as u64)?;
    let output = HostBuffer::coherent_zeroed(gpu, (out_words * 4) as u64)?;
    // SAFETY: the buffer holds exactly these words.
    unsafe { std::ptr::copy_nonoverlapping(words.as_ptr(), input.ptr as *mut u32, words.len()) };
    run_once(
        &[(kernel, cases as u32)],
        [&input, &output, &output, &output, &output].map(|b| b.as_ref()),
    )?;
    output.invalidate(0..output.size)?;
    // SAFETY: the buffer's words, which the GPU no longer writes.
    Ok(unsafe { std::slice::from_raw_parts(output.ptr as *const u32, out_words).to_vec() })
}

/// One intra prediction for the GPU: the converted mode, the size (4 << size_log2), the bit
/// depth (8, 10 or 12), and the edges as `shaders/vp9_ipred.glsl` keeps them: the top-left,
/// the row above (64), and the column left of the block top to bottom (32).
#[derive(Clone, Debug)]
pub struct IntraCase {
    pub mode: u8,
    pub size_log2: usize,
    pub bit_depth: u32,
    pub topleft: u16,
    pub top: [u16; 64],
    pub left: [u16; 32],
}

const CASE_WORDS: usize = 98;
const OUT_PIXELS: usize = 1024;

/// Predicts every case on the GPU (`shaders/vp9_ipred_check.comp`); returns each block,
/// row-major.
pub fn predict_intra(cases: &[IntraCase]) -> GpuResult<Vec<Vec<u16>>> {
    let mut words = Vec::with_capacity(cases.len() * CASE_WORDS);
    for c in cases {
        words.push(c.mode as u32 | (c.size_log2 as u32) << 8 | c.bit_depth << 12);
        words.push(c.topleft as u32);
        words.extend(c.top.iter().map(|&p| p as u32));
        words.extend(c.left.iter().map(|&p| p as u32));
    }
    // (Two 16-bit pixels a word, the first in the low half.)
    let out = run_alone(
        Kernel::Vp9IpredCheck,
        cases.len(),
        &words,
        cases.len() * OUT_PIXELS / 2,
    )?;
    let pixels: Vec<u16> = out
        .iter()
        .flat_map(|&w| [w as u16, (w >> 16) as u16])
        .collect();
    Ok(cases
        .iter()
        .zip(pixels.chunks(OUT_PIXELS))
        .map(|(c, block)| block[..(4usize << c.size_log2).pow(2)].to_vec())
        .collect())
}

/// One transform block at 10 or 12 bits for the GPU: its depth, its coefficients (row-major,
/// `n * n`) and end-of-block position (FFmpeg's DC shortcut takes `idct_idct` with `eob` 1),
/// and where an intra block's mode names a type the transform does not have (a 32x32, which
/// FFmpeg runs as `idct_idct` whatever the type), FFmpeg's type (0 to 3).
#[derive(Clone, Debug)]
pub struct HighItxCase {
    pub tx: Transform,
    pub bit_depth: u32,
    pub eob: i32,
    pub coefs: Vec<i32>,
    pub mode_type: Option<u32>,
}

/// What the frame path's transform made of a [`HighItxCase`]: the residual (row-major), and
/// whether its watch flagged the block as one FFmpeg's SIMD may compute differently.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HighItxResult {
    pub residual: Vec<i32>,
    pub flagged: bool,
}

/// Where the check kernel's cases start in its data, after a frame header's words.
const ITX_CASES: usize = 32;
const ITX_CASE_WORDS: usize = 1026;
const ITX_OUT_WORDS: usize = 1025;

/// Each case through the frame path's transforms at its depth on the GPU
/// (`shaders/vp9_itx_high_check.comp`, a dispatch per depth).
pub fn high_residuals(cases: &[HighItxCase]) -> GpuResult<Vec<HighItxResult>> {
    let kind = |k: Tx1d| match k {
        Tx1d::Dct | Tx1d::Wht => 0u32,
        Tx1d::Adst => 1,
    };
    let mut results = vec![None; cases.len()];
    for bit_depth in [10, 12] {
        let at_depth: Vec<usize> = (0..cases.len())
            .filter(|&i| cases[i].bit_depth == bit_depth)
            .collect();
        let mut words = vec![0u32; ITX_CASES + at_depth.len() * ITX_CASE_WORDS];
        words[super::header::BIT_DEPTH] = bit_depth;
        for (c, &i) in words[ITX_CASES..].chunks_mut(ITX_CASE_WORDS).zip(&at_depth) {
            let tx = cases[i].tx;
            let tx_type = cases[i]
                .mode_type
                .unwrap_or(kind(tx.first) | kind(tx.second) << 1);
            c[0] = tx.size as u32 | tx_type << 2 | ((tx.first == Tx1d::Wht) as u32) << 4;
            c[1] = cases[i].eob as u32;
            for (w, &v) in c[2..].iter_mut().zip(&cases[i].coefs) {
                *w = v as u32;
            }
        }
        let out = run_alone(
            Kernel::Vp9ItxHighCheck,
            at_depth.len(),
            &words,
            at_depth.len() * ITX_OUT_WORDS,
        )?;
        for (&i, res) in at_depth.iter().zip(out.chunks(ITX_OUT_WORDS)) {
            results[i] = Some(HighItxResult {
                residual: res[..cases[i].tx.coefs()]
                    .iter()
                    .map(|&w| w as i32)
                    .collect(),
                flagged: res[ITX_OUT_WORDS - 1] != 0,
            });
        }
    }
    results
        .into_iter()
        .map(|r| r.ok_or_else(|| "a case of neither 10 nor 12 bits".into()))
        .collect()
}

/// One line across an edge for the loop filter's arithmetic (`shaders/lf_filter.glsl`): the
/// width (4, 8 or 16), the bit depth, the thresholds E, I and H, and the 16 pixels from 8
/// before the edge.
#[derive(Clone, Debug)]
pub struct LfCase {
    pub wd: u32,
    pub bit_depth: u32,
    pub thresholds: (i32, i32, i32),
    pub line: [i32; 16],
}

/// Each case's line filtered on the GPU (`shaders/lf_filter_check.comp`).
pub fn filter_lines(cases: &[LfCase]) -> GpuResult<Vec<[i32; 16]>> {
    let mut words = Vec::with_capacity(cases.len() * 20);
    for c in cases {
        let (e, i, h) = c.thresholds;
        words.extend([c.wd | c.bit_depth << 8, e as u32, i as u32, h as u32]);
        words.extend(c.line.map(|p| p as u32));
    }
    let out = run_alone(Kernel::LfFilterCheck, cases.len(), &words, cases.len() * 16)?;
    Ok(out
        .chunks(16)
        .map(|l| std::array::from_fn(|k| l[k] as i32))
        .collect())
}
