//! Helpers shared by the kernel tests: FFmpeg's own C functions as the oracle, a deterministic
//! random source, and realistic coefficient blocks.
#![allow(dead_code)]

pub mod cdef_rows;

use daedalus::kernels::itx::{one_d, Transform, Tx1d};
use daedalus::vp9dsp::Vp9DspContext;

#[cfg(daedalus_oracle_c)]
extern "C" {
    fn ff_vp9dsp_init(dsp: *mut Vp9DspContext, bpp: i32, bitexact: i32);
}

/// FFmpeg's VP9 DSP table from the pure-C static build (`scripts/setup`).
pub fn ffmpeg_c() -> Vp9DspContext {
    ffmpeg_c_at(8)
}

/// [`ffmpeg_c`] at `bit_depth` bits (8, 10 or 12): at 10 and 12 its functions take 16-bit
/// pixels (strides in bytes) and 32-bit coefficients behind the same pointer types.
pub fn ffmpeg_c_at(bit_depth: i32) -> Vp9DspContext {
    #[cfg(daedalus_oracle_c)]
    {
        let mut dsp = Vp9DspContext::empty();
        unsafe { ff_vp9dsp_init(&mut dsp, bit_depth, 1) };
        dsp
    }
    #[cfg(not(daedalus_oracle_c))]
    {
        let _ = bit_depth;
        panic!("the FFmpeg C oracle (build/oracle-c) is missing: run scripts/setup, then rebuild");
    }
}

/// FFmpeg's C function for a transform, looked up as the decoder does.
pub fn ffmpeg_itx(dsp: &Vp9DspContext, tx: Transform) -> daedalus::vp9dsp::ItxfmAddFn {
    let size = if tx.first == Tx1d::Wht {
        4
    } else {
        tx.size as usize
    };
    let ty = daedalus::vp9dsp::ffmpeg_tx_type(tx.first == Tx1d::Adst, tx.second == Tx1d::Adst);
    dsp.itxfm_add[size][ty].expect("FFmpeg fills every itxfm_add entry")
}

/// FFmpeg's function for an MC function, looked up as the decoder does.
pub fn ffmpeg_mc(
    dsp: &Vp9DspContext,
    f: daedalus::kernels::mc::McFunction,
) -> daedalus::vp9dsp::McFn {
    dsp.mc_fn(f).expect("FFmpeg fills every mc entry")
}

/// FFmpeg's function for a loop filter, looked up as the decoder does.
pub fn ffmpeg_lf(
    dsp: &Vp9DspContext,
    f: daedalus::kernels::lf::LfFunction,
) -> daedalus::vp9dsp::LoopFilterFn {
    dsp.lf_fn(f).expect("FFmpeg fills every loop-filter entry")
}

/// splitmix64: small, deterministic, good enough for test data.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed ^ 0x9e37_79b9_7f4a_7c15)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next_u64() % (hi - lo + 1) as u64) as i64
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
    pub fn chance(&mut self, percent: u64) -> bool {
        self.next_u64() % 100 < percent
    }
    pub fn bytes(&mut self, buf: &mut [u8]) {
        for b in buf {
            *b = self.next_u64() as u8;
        }
    }
}

/// The 1-D inverse transform as a float matrix, probed column by column.
fn inverse_matrix(kind: Tx1d, n: usize) -> Vec<Vec<f64>> {
    let scale = 1 << 12;
    let mut m = vec![vec![0.0; n]; n];
    for k in 0..n {
        let mut unit = vec![0; n];
        unit[k] = scale;
        let col = one_d(kind, &unit, false);
        for (row, v) in col.iter().enumerate() {
            m[row][k] = *v as f64 / scale as f64;
        }
    }
    m
}

fn invert(m: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let n = m.len();
    let mut a: Vec<Vec<f64>> = m.to_vec();
    let mut inv: Vec<Vec<f64>> = (0..n)
        .map(|i| (0..n).map(|j| (i == j) as u8 as f64).collect())
        .collect();
    for c in 0..n {
        let p = (c..n)
            .max_by(|&x, &y| a[x][c].abs().total_cmp(&a[y][c].abs()))
            .unwrap();
        a.swap(c, p);
        inv.swap(c, p);
        let d = a[c][c];
        for j in 0..n {
            a[c][j] /= d;
            inv[c][j] /= d;
        }
        for r in 0..n {
            if r != c {
                let f = a[r][c];
                for j in 0..n {
                    a[r][j] -= f * a[c][j];
                    inv[r][j] -= f * inv[c][j];
                }
            }
        }
    }
    inv
}

fn matmul(a: &[Vec<f64>], b: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let n = a.len();
    (0..n)
        .map(|i| {
            (0..n)
                .map(|j| (0..n).map(|k| a[i][k] * b[k][j]).sum())
                .collect()
        })
        .collect()
}

fn transpose(a: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let n = a.len();
    (0..n).map(|i| (0..n).map(|j| a[j][i]).collect()).collect()
}

type Matrices = (Vec<Vec<f64>>, Vec<Vec<f64>>);

/// `B^-1` and `A^-T` for a transform, computed once per thread.
fn solve_matrices(tx: Transform) -> Matrices {
    use std::cell::RefCell;
    use std::collections::HashMap;
    thread_local! {
        static CACHE: RefCell<HashMap<(Tx1d, Tx1d, usize), Matrices>> = RefCell::new(HashMap::new());
    }
    let n = tx.size.n();
    CACHE.with(|c| {
        c.borrow_mut()
            .entry((tx.first, tx.second, n))
            .or_insert_with(|| {
                let a = inverse_matrix(tx.first, n);
                let b = inverse_matrix(tx.second, n);
                (invert(&b), transpose(&invert(&a)))
            })
            .clone()
    })
}

/// Coefficients whose inverse transform is close to `residual` (row-major, n x n), like an
/// encoder's forward transform: `residual = B * X^T * A^T / 2^shift` solved for `X`.
pub fn forward(tx: Transform, residual: &[i32]) -> Vec<i16> {
    let n = tx.size.n();
    let shift = match (tx.first, n) {
        (Tx1d::Wht, _) => 0,
        (_, 4) => 4,
        (_, 8) => 5,
        _ => 6,
    };
    // The WHT's first pass divides its input by 4.
    let pre = if tx.first == Tx1d::Wht { 4.0 } else { 1.0 };
    let r: Vec<Vec<f64>> = (0..n)
        .map(|i| {
            (0..n)
                .map(|j| residual[i * n + j] as f64 * (1u32 << shift) as f64)
                .collect()
        })
        .collect();
    let (b_inv, a_inv_t) = solve_matrices(tx);
    let xt = matmul(&matmul(&b_inv, &r), &a_inv_t);
    let mut out = vec![0i16; n * n];
    for j in 0..n {
        for k in 0..n {
            out[j * n + k] = (xt[k][j] * pre).round().clamp(-32768.0, 32767.0) as i16;
        }
    }
    out
}

/// A realistic block: random residual (noise or smooth ramps) of a random amplitude, forward
/// transformed and quantized with a random step, so high frequencies are often zero.
pub fn realistic_block(rng: &mut Rng, tx: Transform) -> Vec<i16> {
    let n = tx.size.n();
    let amp = [4, 16, 64, 255][rng.below(4)];
    let smooth = rng.chance(40);
    let (gx, gy) = (rng.range(-amp, amp), rng.range(-amp, amp));
    let residual: Vec<i32> = (0..n * n)
        .map(|i| {
            let (y, x) = ((i / n) as i64, (i % n) as i64);
            let v = if smooth {
                (gx * x + gy * y) / n as i64 + rng.range(-2, 2)
            } else {
                rng.range(-amp, amp)
            };
            v.clamp(-255, 255) as i32
        })
        .collect();
    let mut c = forward(tx, &residual);
    let q = [1, 1, 8, 24, 60, 200][rng.below(6)];
    for v in &mut c {
        *v = ((*v as i32 / q) * q) as i16;
    }
    c
}

/// A 10- or 12-bit transform case of the GPU's checks, for their messages, and its residual
/// by the CPU reference (`residual_high`, FFmpeg's C).
pub fn high_case_reference(c: &daedalus::vp9::frame::testing::HighItxCase) -> (String, Vec<i32>) {
    let what = format!(
        "{} at {} bits, eob {}; first coefs {:?}",
        c.tx.name(),
        c.bit_depth,
        c.eob,
        &c.coefs[..8.min(c.coefs.len())]
    );
    let n = c.tx.size.n();
    let mut residual = vec![0i32; n * n];
    daedalus::kernels::itx::residual_high(
        c.tx,
        &c.coefs,
        c.tx.is_dc_only_call(c.eob),
        &mut residual,
    );
    (what, residual)
}

/// A block of 32-bit coefficients as the 10- and 12-bit parse leaves them: a token times its
/// dequantizer in wrapping 32-bit arithmetic, so any value can come, from realistic blocks
/// scaled as a higher bit depth scales them to the ends of the range.
pub fn high_block(rng: &mut Rng, tx: Transform, bit_depth: u32) -> Vec<i32> {
    let n2 = tx.coefs();
    let ends = [i32::MIN, i32::MAX, i32::MIN + 1, -1, 1, 1 << 30, -(1 << 30)];
    match rng.below(6) {
        0 => (0..n2).map(|_| ends[rng.below(ends.len())]).collect(),
        1 => (0..n2).map(|_| rng.next_u64() as i32).collect(),
        2 => {
            let mut c = vec![0; n2];
            c[rng.below(n2)] = rng.next_u64() as i32;
            c[0] = ends[rng.below(ends.len())];
            c
        }
        3 => extreme_block(rng, tx)
            .iter()
            .map(|&v| (v as i32).wrapping_mul(1 << rng.below(17)))
            .collect(),
        _ => realistic_block(rng, tx)
            .iter()
            .map(|&v| (v as i32) << (bit_depth - 8))
            .collect(),
    }
}

/// Extreme blocks a stream can carry: one coefficient at full int16 range, all of them at a
/// large value, alternating signs, and DC only.
pub fn extreme_block(rng: &mut Rng, tx: Transform) -> Vec<i16> {
    let n2 = tx.coefs();
    let mut c = vec![0i16; n2];
    let big = [32767i16, -32768, 16384, -16384, 8191][rng.below(5)];
    match rng.below(5) {
        0 => c[rng.below(n2)] = big,
        1 => c[0] = big,
        2 => c.iter_mut().for_each(|v| *v = big / (tx.size.n() as i16)),
        3 => c
            .iter_mut()
            .enumerate()
            .for_each(|(i, v)| *v = if i % 2 == 0 { 1200 } else { -1200 }),
        _ => c
            .iter_mut()
            .for_each(|v| *v = rng.range(-32768, 32767) as i16),
    }
    c
}

#[cfg(any(daedalus_oracle_c, daedalus_oracle_asm))]
extern "C" {
    /// FFmpeg's coefficient scan orders, `[tx size (4 = lossless)][tx type]`.
    static ff_vp9_scans: [[*const i16; 4]; 5];
}

/// The eob the decoder passes: one past the last non-zero coefficient in FFmpeg's scan order
/// for this transform (FFmpeg's SIMD relies on it to skip zero regions). At least 1.
pub fn plausible_eob(_rng: &mut Rng, tx: Transform, coefs: &[i16]) -> i32 {
    #[cfg(any(daedalus_oracle_c, daedalus_oracle_asm))]
    {
        let row = if tx.first == Tx1d::Wht {
            4
        } else {
            tx.size as usize
        };
        let ty = daedalus::vp9dsp::ffmpeg_tx_type(tx.first == Tx1d::Adst, tx.second == Tx1d::Adst);
        let scan = unsafe { std::slice::from_raw_parts(ff_vp9_scans[row][ty], coefs.len()) };
        let last = scan.iter().rposition(|&pos| coefs[pos as usize] != 0);
        last.map_or(1, |i| i as i32 + 1)
    }
    #[cfg(not(any(daedalus_oracle_c, daedalus_oracle_asm)))]
    {
        let _ = (tx, coefs);
        panic!("FFmpeg's scan tables come with the oracle builds: run scripts/setup, then rebuild")
    }
}

/// Memory aligned as FFmpeg aligns frames and coefficient blocks (its SIMD relies on it:
/// e.g. the AVX2 32x32 transform loads `dst` with aligned 32-byte loads).
#[repr(C, align(64))]
#[derive(Clone, Copy)]
struct Line([u8; 64]);

pub struct Aligned<T: Copy> {
    lines: Vec<Line>,
    len: usize,
    _t: std::marker::PhantomData<T>,
}

impl<T: Copy> Aligned<T> {
    pub fn new(values: &[T]) -> Aligned<T> {
        let bytes = std::mem::size_of_val(values);
        let mut a = Aligned {
            lines: vec![Line([0; 64]); bytes.div_ceil(64)],
            len: values.len(),
            _t: std::marker::PhantomData,
        };
        a.as_mut_slice().copy_from_slice(values);
        a
    }
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        unsafe { std::slice::from_raw_parts_mut(self.lines.as_mut_ptr().cast(), self.len) }
    }
    pub fn as_slice(&self) -> &[T] {
        unsafe { std::slice::from_raw_parts(self.lines.as_ptr().cast(), self.len) }
    }
}

use daedalus::ffi;

/// Fails the test unless the GPU path is active: these tests exist to exercise it.
pub fn require_gpu() {
    let name = unsafe { std::ffi::CStr::from_ptr(ffi::daedalus_device_name()) }
        .to_string_lossy()
        .into_owned();
    assert_eq!(
        ffi::daedalus_backend(),
        ffi::DaedalusBackend::DAEDALUS_BACKEND_GPU,
        "no usable Vulkan device (device: {name}); install mesa-vulkan-drivers (scripts/setup) \
         or set DAEDALUS_DEVICE"
    );
}

pub fn stats() -> ffi::DaedalusStats {
    let mut s = ffi::DaedalusStats::default();
    unsafe { ffi::daedalus_get_stats(&mut s) };
    s
}

/// With DAEDALUS_VALIDATION=1 (as scripts/test runs), no validation message may appear.
pub fn assert_validation_clean() {
    assert_eq!(
        stats().validation_messages,
        0,
        "the Vulkan validation layer reported messages (see stderr)"
    );
}

/// The exported `daedalus_vp9_*` function for a transform.
pub fn daedalus_itx(tx: Transform) -> unsafe extern "C" fn(*mut u8, isize, *mut i16, i32) {
    use daedalus::kernels::itx::{Tx1d::*, TxSize::*};
    match (tx.size, tx.first, tx.second) {
        (T4, Dct, Dct) => ffi::daedalus_vp9_idct_idct_4x4_add,
        (T4, Adst, Dct) => ffi::daedalus_vp9_iadst_idct_4x4_add,
        (T4, Dct, Adst) => ffi::daedalus_vp9_idct_iadst_4x4_add,
        (T4, Adst, Adst) => ffi::daedalus_vp9_iadst_iadst_4x4_add,
        (T4, Wht, Wht) => ffi::daedalus_vp9_iwht_iwht_4x4_add,
        (T8, Dct, Dct) => ffi::daedalus_vp9_idct_idct_8x8_add,
        (T8, Adst, Dct) => ffi::daedalus_vp9_iadst_idct_8x8_add,
        (T8, Dct, Adst) => ffi::daedalus_vp9_idct_iadst_8x8_add,
        (T8, Adst, Adst) => ffi::daedalus_vp9_iadst_iadst_8x8_add,
        (T16, Dct, Dct) => ffi::daedalus_vp9_idct_idct_16x16_add,
        (T16, Adst, Dct) => ffi::daedalus_vp9_iadst_idct_16x16_add,
        (T16, Dct, Adst) => ffi::daedalus_vp9_idct_iadst_16x16_add,
        (T16, Adst, Adst) => ffi::daedalus_vp9_iadst_iadst_16x16_add,
        (T32, Dct, Dct) => ffi::daedalus_vp9_idct_idct_32x32_add,
        _ => unreachable!("no such transform"),
    }
}

/// A picture-like buffer with a margin, so that out-of-block writes would show.
pub struct Canvas {
    pub stride: usize,
    pub height: usize,
    pub pixels: Vec<u8>,
}

impl Canvas {
    pub fn new(rng: &mut Rng, width: usize, height: usize) -> Canvas {
        let stride = width + rng.below(64);
        let mut pixels = vec![0u8; stride * height];
        rng.bytes(&mut pixels);
        Canvas {
            stride,
            height,
            pixels,
        }
    }
}

/// One block of a test batch: canvas, position, transform and its inputs.
#[derive(Clone)]
pub struct Placed {
    pub canvas: usize,
    pub x: usize,
    pub y: usize,
    pub tx: Transform,
    pub coefs: Vec<i16>,
    pub eob: i32,
}

/// Random coefficients of every kind the tests use.
pub fn any_block(rng: &mut Rng, tx: Transform) -> (Vec<i16>, i32) {
    match rng.below(10) {
        0 => {
            let c = extreme_block(rng, tx);
            let eob = plausible_eob(rng, tx, &c);
            (c, eob)
        }
        1 => {
            // DC only, as a decoder passes it.
            let mut c = vec![0i16; tx.coefs()];
            c[0] = rng.range(-4000, 4000) as i16;
            (c, 1)
        }
        2 => {
            let c = realistic_block(rng, tx);
            (c, [0, 1, tx.coefs() as i32 + 7][rng.below(3)])
        }
        _ => {
            let c = realistic_block(rng, tx);
            let eob = plausible_eob(rng, tx, &c);
            (c, eob)
        }
    }
}

/// Places up to `count` blocks at random, not overlapping, at any (unaligned) position.
pub fn place_blocks(
    rng: &mut Rng,
    canvases: &[Canvas],
    count: usize,
    sizes: &[Transform],
) -> Vec<Placed> {
    let mut taken: Vec<Vec<bool>> = canvases
        .iter()
        .map(|c| vec![false; c.stride * c.height])
        .collect();
    let mut out = Vec::new();
    let mut tries = 0;
    while out.len() < count && tries < count * 20 {
        tries += 1;
        let tx = sizes[rng.below(sizes.len())];
        let n = tx.size.n();
        let ci = rng.below(canvases.len());
        let c = &canvases[ci];
        if c.stride < n || c.height < n {
            continue;
        }
        let (x, y) = (rng.below(c.stride - n + 1), rng.below(c.height - n + 1));
        let free = (0..n).all(|r| (0..n).all(|k| !taken[ci][(y + r) * c.stride + x + k]));
        if !free {
            continue;
        }
        for r in 0..n {
            for k in 0..n {
                taken[ci][(y + r) * c.stride + x + k] = true;
            }
        }
        let (coefs, eob) = any_block(rng, tx);
        out.push(Placed {
            canvas: ci,
            x,
            y,
            tx,
            coefs,
            eob,
        });
    }
    out
}

/// Applies blocks with FFmpeg's C functions, one after the other.
pub fn apply_ffmpeg(dsp: &Vp9DspContext, canvases: &mut [Canvas], blocks: &mut [Placed]) {
    for b in blocks {
        let c = &mut canvases[b.canvas];
        let at = b.y * c.stride + b.x;
        unsafe {
            ffmpeg_itx(dsp, b.tx)(
                c.pixels[at..].as_mut_ptr(),
                c.stride as isize,
                b.coefs.as_mut_ptr(),
                b.eob,
            )
        };
    }
}

/// Applies blocks with the CPU reference, one after the other.
pub fn apply_reference(canvases: &mut [Canvas], blocks: &mut [Placed]) {
    for b in blocks {
        let c = &mut canvases[b.canvas];
        let at = b.y * c.stride + b.x;
        unsafe {
            daedalus::kernels::itx::itx_add_now(
                b.tx,
                c.pixels[at..].as_mut_ptr(),
                c.stride as isize,
                b.coefs.as_mut_ptr(),
                b.eob,
            )
        };
    }
}

/// Records blocks through the exported functions (no flush).
pub fn record_daedalus(canvases: &mut [Canvas], blocks: &mut [Placed]) {
    for b in blocks {
        let c = &mut canvases[b.canvas];
        let at = b.y * c.stride + b.x;
        unsafe {
            daedalus_itx(b.tx)(
                c.pixels[at..].as_mut_ptr(),
                c.stride as isize,
                b.coefs.as_mut_ptr(),
                b.eob,
            )
        };
    }
}

/// Where two sets of canvases first differ.
pub fn first_difference(a: &[Canvas], b: &[Canvas]) -> Option<String> {
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        if let Some(p) = x.pixels.iter().zip(&y.pixels).position(|(u, v)| u != v) {
            return Some(format!(
                "canvas {i} (stride {}): pixel ({}, {}) is {} vs {}",
                x.stride,
                p % x.stride,
                p / x.stride,
                x.pixels[p],
                y.pixels[p]
            ));
        }
    }
    None
}

pub fn clone_canvases(c: &[Canvas]) -> Vec<Canvas> {
    c.iter()
        .map(|c| Canvas {
            stride: c.stride,
            height: c.height,
            pixels: c.pixels.clone(),
        })
        .collect()
}

/// dav1d's `Dav1dCdefDSPContext` for one pixel size: `dir`, then `fb[3]` (8x8, 4x8, 4x4).
#[repr(C)]
pub struct CdefDsp {
    pub dir: *const std::ffi::c_void,
    pub fb: [*const std::ffi::c_void; 3],
}

pub type Fb8 = unsafe extern "C" fn(
    *mut u8,
    isize,
    *const [u8; 2],
    *const u8,
    *const u8,
    i32,
    i32,
    i32,
    i32,
    i32,
);
pub type Fb16 = unsafe extern "C" fn(
    *mut u16,
    isize,
    *const [u16; 2],
    *const u16,
    *const u16,
    i32,
    i32,
    i32,
    i32,
    i32,
    i32,
);

#[cfg(daedalus_dav1d_oracle_c)]
extern "C" {
    fn dav1d_cdef_dsp_init_8bpc(c: *mut CdefDsp);
    fn dav1d_cdef_dsp_init_16bpc(c: *mut CdefDsp);
}

/// dav1d's C CDEF table for 8 or 16 bits per pixel.
pub fn dav1d_c(high_bitdepth: bool) -> CdefDsp {
    #[cfg(daedalus_dav1d_oracle_c)]
    {
        let mut dsp = CdefDsp {
            dir: std::ptr::null(),
            fb: [std::ptr::null(); 3],
        };
        unsafe {
            if high_bitdepth {
                dav1d_cdef_dsp_init_16bpc(&mut dsp)
            } else {
                dav1d_cdef_dsp_init_8bpc(&mut dsp)
            }
        };
        assert!(dsp.fb.iter().all(|f| !f.is_null()), "dav1d fills fb[]");
        dsp
    }
    #[cfg(not(daedalus_dav1d_oracle_c))]
    {
        let _ = high_bitdepth;
        panic!(
            "the dav1d C oracle (build/dav1d-oracle-c) is missing: run scripts/setup, then rebuild"
        );
    }
}

/// A CDEF `fb[]` function of either pixel size; `call` passes dav1d's arguments with the
/// pixel pointers as bytes.
#[derive(Clone, Copy)]
pub enum CdefFn {
    Bits8(Fb8),
    Bits16(Fb16),
}

impl CdefFn {
    /// `fb[size]` of a table that `dav1d_cdef_dsp_init_{8,16}bpc` filled.
    pub fn of_dav1d(dsp: &CdefDsp, size: usize, high_bitdepth: bool) -> CdefFn {
        let f = dsp.fb[size];
        assert!(!f.is_null(), "dav1d fills fb[]");
        unsafe {
            if high_bitdepth {
                CdefFn::Bits16(std::mem::transmute::<*const std::ffi::c_void, Fb16>(f))
            } else {
                CdefFn::Bits8(std::mem::transmute::<*const std::ffi::c_void, Fb8>(f))
            }
        }
    }

    /// daedalus's export for `fb[size]`.
    pub fn of_daedalus(size: usize, high_bitdepth: bool) -> CdefFn {
        match (size, high_bitdepth) {
            (0, false) => CdefFn::Bits8(ffi::daedalus_av1_cdef_filter_8x8_8bpc),
            (1, false) => CdefFn::Bits8(ffi::daedalus_av1_cdef_filter_4x8_8bpc),
            (2, false) => CdefFn::Bits8(ffi::daedalus_av1_cdef_filter_4x4_8bpc),
            (0, true) => CdefFn::Bits16(ffi::daedalus_av1_cdef_filter_8x8_16bpc),
            (1, true) => CdefFn::Bits16(ffi::daedalus_av1_cdef_filter_4x8_16bpc),
            (2, true) => CdefFn::Bits16(ffi::daedalus_av1_cdef_filter_4x4_16bpc),
            _ => panic!("fb[] has sizes 0, 1 and 2"),
        }
    }

    /// Calls it; `strengths` are primary, secondary, direction, damping, and `bitdepth_max`
    /// goes to the 16 bpc functions only.
    ///
    /// # Safety
    /// As dav1d's function.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn call(
        self,
        dst: *mut u8,
        stride: isize,
        left: *const u8,
        top: *const u8,
        bottom: *const u8,
        [p, s, dir, damping]: [i32; 4],
        edges: i32,
        bitdepth_max: i32,
    ) {
        match self {
            CdefFn::Bits8(f) => f(
                dst,
                stride,
                left.cast(),
                top,
                bottom,
                p,
                s,
                dir,
                damping,
                edges,
            ),
            CdefFn::Bits16(f) => f(
                dst.cast(),
                stride,
                left.cast(),
                top.cast(),
                bottom.cast(),
                p,
                s,
                dir,
                damping,
                edges,
                bitdepth_max,
            ),
        }
    }
}

/// A random superblock filter as `ff_vp9_loopfilter_sb` takes it (each column of a mask row
/// takes at most one of 16/8/4, and maybe the inner 4).
pub struct RandomFilter {
    pub level: [u8; 64],
    pub mask: [[[[u8; 4]; 8]; 2]; 2],
    pub mblim_lut: [u8; 64],
    pub lim_lut: [u8; 64],
}

impl RandomFilter {
    pub fn new(rng: &mut Rng) -> RandomFilter {
        let mut f = RandomFilter {
            level: [0; 64],
            mask: [[[[0; 4]; 8]; 2]; 2],
            mblim_lut: [0; 64],
            lim_lut: [0; 64],
        };
        for l in 0..64 {
            f.level[l] = rng.below(64) as u8;
            f.lim_lut[l] = 1 + rng.below(63) as u8;
            f.mblim_lut[l] = (2 * (l + 2)) as u8 + f.lim_lut[l];
        }
        for row in f.mask.iter_mut().flatten().flatten() {
            for col in 0..8 {
                if let w @ 0..=2 = rng.below(8) {
                    row[w] |= 1 << col;
                }
                if rng.below(3) == 0 {
                    row[3] |= 1 << col;
                }
            }
        }
        f
    }

    pub fn sb(&self) -> daedalus::kernels::lf_sb::SbFilter<'_> {
        daedalus::kernels::lf_sb::SbFilter {
            level: &self.level,
            mask: &self.mask,
            mblim_lut: &self.mblim_lut,
            lim_lut: &self.lim_lut,
        }
    }

    /// Filters superblock `sb` of [`superblock_planes`] `cs` with the reference walk, pass by
    /// pass at once.
    pub fn filter_reference(&self, cs: &mut [Canvas], sb: (usize, usize)) {
        let (row, col) = (8 * sb.0 as i32, 8 * sb.1 as i32);
        for (p, pass) in daedalus::kernels::lf_sb::SbPass::superblock(self.sb(), row, col, 1, 1) {
            if let Some(pass) = pass {
                let stride = cs[p].stride as isize;
                let first = superblock_first(cs, p, sb);
                unsafe {
                    daedalus::kernels::lf_sb::run_pass_now(&pass.table, pass.dir, first, stride)
                };
            }
        }
    }

    /// Hands superblock `sb` of [`superblock_planes`] `cs` to daedalus: through the public
    /// call (`decoder` `None`), or through the provider's hook for the decoder attached as
    /// `decoder`. Returns what the call returned (0: taken).
    ///
    /// # Safety
    /// `cs` must stay valid and untouched until the next flush; `decoder` must come from the
    /// provider's `attach`.
    pub unsafe fn filter_daedalus(
        &self,
        cs: &mut [Canvas],
        sb: (usize, usize),
        decoder: Option<*mut std::ffi::c_void>,
    ) -> i32 {
        let planes = [0, 1, 2].map(|p| superblock_first(cs, p, sb));
        let dst = planes.as_ptr();
        let (ls_y, ls_uv) = (cs[0].stride as isize, cs[1].stride as isize);
        let (row, col) = (8 * sb.0 as i32, 8 * sb.1 as i32);
        let (level, mask, mblim, lim) = (
            self.level.as_ptr(),
            self.mask.as_ptr().cast(),
            self.mblim_lut.as_ptr(),
            self.lim_lut.as_ptr(),
        );
        match decoder {
            None => daedalus::ffi::daedalus_vp9_loopfilter_sb(
                dst, ls_y, ls_uv, 1, 1, row, col, level, mask, mblim, lim,
            ),
            Some(ctx) => (daedalus::vp9::PROVIDER.loopfilter_sb)(
                ctx, dst, ls_y, ls_uv, 1, 1, row, col, level, mask, mblim, lim,
            ),
        }
    }
}

/// A 4:2:0 frame of `sb_cols` x `sb_rows` superblocks for the superblock loop filter: three
/// planes with a margin the first edges filter into (16 pixels left, 8 above), the chroma
/// planes sharing their stride, and smooth content with small steps, which the filters change
/// (noise they mostly leave).
pub fn superblock_planes(rng: &mut Rng, sb_cols: usize, sb_rows: usize) -> Vec<Canvas> {
    let mut planes: Vec<Canvas> = (0..2)
        .map(|p| Canvas::new(rng, ((sb_cols * 64) >> p) + 32, ((sb_rows * 64) >> p) + 16))
        .collect();
    planes.push(Canvas {
        pixels: vec![0; planes[1].pixels.len()],
        ..planes[1]
    });
    for c in &mut planes {
        for (i, p) in c.pixels.iter_mut().enumerate() {
            let (x, y) = (i % c.stride, i / c.stride);
            *p = (104 + (x / 8 + y / 8) % 5 * 12 + rng.below(5)) as u8;
        }
    }
    planes
}

/// The first pixel of superblock (`sb_row`, `sb_col`) in plane `p` of [`superblock_planes`].
pub fn superblock_first(cs: &mut [Canvas], p: usize, (sb_row, sb_col): (usize, usize)) -> *mut u8 {
    let shift = (p > 0) as usize;
    let (x, y) = (16 + ((sb_col * 64) >> shift), 8 + ((sb_row * 64) >> shift));
    let c = &mut cs[p];
    unsafe { c.pixels.as_mut_ptr().add(y * c.stride + x) }
}
