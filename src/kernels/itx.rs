//! VP9 inverse transforms: the CPU reference at 8, 10 and 12 bits, and the GPU job encoding.
//!
//! The reference reproduces FFmpeg 5.1's C functions (`vp9dsp_template.c`) bit for bit:
//! - the first 1-D pass runs over the columns of the coefficient block (row-major) and its
//!   results become the rows of an intermediate; the second pass runs over the intermediate's
//!   columns and its results are added to the destination column by column;
//! - every 1-D output is stored as FFmpeg's `dctcoef`: `int16_t` at 8 bits, `int32_t` at 10
//!   and 12 ([`Dct::store`]);
//! - products and sums are 32-bit and wrap at 8 bits (FFmpeg computes most of them as
//!   `unsigned`: [`W`]); 64-bit at 10 and 12 (its `dctint`), where they cannot overflow
//!   ([`W64`]); the Walsh-Hadamard transform is 32-bit `int` at every depth;
//! - only `idct_idct` has the DC shortcut for `eob == 1`, which zeroes only `block[0]`;
//!   every other call transforms the whole block and zeroes all of it, whatever `eob` says.
//!
//! Wrapping 32-bit arithmetic is a ring, so the transforms below are grouped as the usual
//! even/odd recursion rather than FFmpeg's unrolled text: every value that is rounded (`>> 14`)
//! or stored as `int16_t` is the same sum modulo 2^32 as FFmpeg's. The shaders in
//! `shaders/itx_1d.glsl` follow this file line for line.
//!
//! Exact integer arithmetic (64 bits never overflow here) is a ring too, so the same grouping
//! serves 10 and 12 bits ([`residual_high`]).

use super::job::{Job, JobHeader};
use std::ops::{Add, Mul, Neg, Shr, Sub};

/// A 32-bit signed integer whose arithmetic wraps like FFmpeg's (mostly `unsigned`) C.
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
struct W(i32);

impl Add for W {
    type Output = W;
    fn add(self, o: W) -> W {
        W(self.0.wrapping_add(o.0))
    }
}
impl Sub for W {
    type Output = W;
    fn sub(self, o: W) -> W {
        W(self.0.wrapping_sub(o.0))
    }
}
impl Mul<i32> for W {
    type Output = W;
    fn mul(self, c: i32) -> W {
        W(self.0.wrapping_mul(c))
    }
}
impl Neg for W {
    type Output = W;
    fn neg(self) -> W {
        W(self.0.wrapping_neg())
    }
}
impl Shr<u32> for W {
    type Output = W;
    fn shr(self, s: u32) -> W {
        W(self.0 >> s)
    }
}

/// FFmpeg's `dctint` at 10 and 12 bits: 64-bit, which the transforms' values never overflow
/// (products of 32-bit values and 15-bit constants, summed and rounded).
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
struct W64(i64);

impl Add for W64 {
    type Output = W64;
    fn add(self, o: W64) -> W64 {
        W64(self.0 + o.0)
    }
}
impl Sub for W64 {
    type Output = W64;
    fn sub(self, o: W64) -> W64 {
        W64(self.0 - o.0)
    }
}
impl Mul<i32> for W64 {
    type Output = W64;
    fn mul(self, c: i32) -> W64 {
        W64(self.0 * c as i64)
    }
}
impl Neg for W64 {
    type Output = W64;
    fn neg(self) -> W64 {
        W64(-self.0)
    }
}
impl Shr<u32> for W64 {
    type Output = W64;
    fn shr(self, s: u32) -> W64 {
        W64(self.0 >> s)
    }
}

/// The arithmetic of the transforms' intermediates at a bit depth: [`W`] at 8 bits, [`W64`] at
/// 10 and 12.
trait Dct:
    Copy
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<i32, Output = Self>
    + Neg<Output = Self>
    + Shr<u32, Output = Self>
{
    fn of(x: i32) -> Self;
    /// The value as a C `int`: its low 32 bits.
    fn int(self) -> i32;
    /// The value as FFmpeg stores it in a `dctcoef`: `int16_t` at 8 bits, `int32_t` above.
    fn store(self) -> i32;
    /// The value a 16-bit lane of FFmpeg's 8-bit SIMD holds, for [`Lanes`]; 0 where the
    /// bit depth's SIMD keeps no such lanes.
    fn lane(self) -> i32;
}

impl Dct for W {
    fn of(x: i32) -> W {
        W(x)
    }
    fn int(self) -> i32 {
        self.0
    }
    fn store(self) -> i32 {
        self.0 as i16 as i32
    }
    fn lane(self) -> i32 {
        self.0
    }
}

impl Dct for W64 {
    fn of(x: i32) -> W64 {
        W64(x as i64)
    }
    fn int(self) -> i32 {
        self.0 as i32
    }
    fn store(self) -> i32 {
        self.0 as i32
    }
    fn lane(self) -> i32 {
        0
    }
}

/// Round a Q14 product sum: `(x + (1 << 13)) >> 14`.
fn r14<T: Dct>(x: T) -> T {
    (x + T::of(1 << 13)) >> 14
}

/// Watches the values FFmpeg's SIMD transforms keep in 16-bit lanes: sums and differences of
/// 16-bit values, rounded products, negations, outputs, the final rounding. (Products and sums
/// of products are 32-bit there too.) FFmpeg's C and SIMD agree exactly while all of these fit
/// in 16 bits, which valid streams guarantee; a damaged stream can push them out, and then the
/// decoder's result is that of its SIMD, which the FFmpeg provider runs for such blocks.
#[derive(Default)]
pub struct Lanes {
    bits: std::cell::Cell<i32>,
    /// The largest magnitude watched (tests measure the transforms' gains with it).
    #[cfg(test)]
    max: std::cell::Cell<i64>,
}

impl Lanes {
    /// Records a value of a 16-bit lane and returns it.
    fn v<T: Dct>(&self, x: T) -> T {
        let lane = x.lane();
        self.bits.set(self.bits.get() | (lane ^ (lane >> 31)));
        #[cfg(test)]
        self.max.set(self.max.get().max((lane as i64).abs()));
        x
    }
    /// Whether a watched value fell outside [-32768, 32767].
    pub fn overflowed(&self) -> bool {
        self.bits.get() > 0x7fff
    }
}

/// Per transform (by [`Transform::index`]): the most a watched 16-bit lane value can grow per
/// unit of the block's coefficient magnitude sum, in 1/256, rounded up (`u32::MAX`: not
/// bounded here). Measured by `lane_gains_bound_every_position` in the tests, which also
/// checks that these are not loose.
const LANE_GAIN_Q8: [u32; 14] = [
    264,
    264,
    264,
    264,
    u32::MAX, // lossless Walsh-Hadamard: rare, left to the GPU's check
    364,
    369,
    364,
    369,
    369,
    370,
    369,
    370,
    370,
];

/// Margin for rounding, which is not linear: each rounding errs by at most 1, and the errors
/// of a 32-point first pass, summed by the second, stay far below this.
const LANE_MARGIN: u64 = 4096;

/// Whether no 16-bit lane value of FFmpeg's SIMD can overflow for this block (then FFmpeg's
/// C and SIMD agree on it), proven from the sum of its coefficient magnitudes: each watched
/// value is a linear function of the coefficients (plus rounding), so it is at most that sum
/// times the transform's gain. Valid streams nearly always pass; `false` says only that the
/// bound does not prove it.
pub fn lanes_cannot_overflow(tx: Transform, coefs: &[i16]) -> bool {
    let sum: u64 = coefs
        .iter()
        .map(|&c| (c as i32).unsigned_abs() as u64)
        .sum();
    within_gain(tx, sum)
}

/// [`lanes_cannot_overflow`] for a caller's block of `n * n` coefficients at any alignment.
///
/// # Safety
/// `block` must be valid for reading `n * n` coefficients.
pub unsafe fn block_lanes_cannot_overflow(tx: Transform, block: *const i16) -> bool {
    let count = tx.coefs();
    // At most 1024 magnitudes of at most 2^15 each: the sum fits 32 bits, which lets the loop
    // run in vector lanes.
    let mut sum = 0u32;
    for i in 0..count {
        sum += std::ptr::read_unaligned(block.add(i)).unsigned_abs() as u32;
    }
    within_gain(tx, sum as u64)
}

fn within_gain(tx: Transform, magnitude_sum: u64) -> bool {
    let gain = LANE_GAIN_Q8[tx.index()];
    gain != u32::MAX && magnitude_sum * gain as u64 <= (32767 - LANE_MARGIN) << 8
}

/// Butterfly rotation `(a*c - b*s, a*s + b*c)`, each rounded.
fn rot<T: Dct>(l: &Lanes, a: T, b: T, c: i32, s: i32) -> (T, T) {
    (l.v(r14(a * c - b * s)), l.v(r14(a * s + b * c)))
}

/// One of the 1-D transforms FFmpeg combines.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum Tx1d {
    Dct,
    Adst,
    /// Walsh-Hadamard, 4-point only (lossless mode).
    Wht,
}

/// Transform block size.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash, PartialOrd, Ord)]
pub enum TxSize {
    T4 = 0,
    T8 = 1,
    T16 = 2,
    T32 = 3,
}

impl TxSize {
    pub const ALL: [TxSize; 4] = [TxSize::T4, TxSize::T8, TxSize::T16, TxSize::T32];

    pub fn n(self) -> usize {
        4 << self as usize
    }
    /// Final rounding shift of the second pass (FFmpeg's `bits`).
    fn final_shift(self, tx: Transform) -> u32 {
        if tx.first == Tx1d::Wht {
            return 0;
        }
        match self {
            TxSize::T4 => 4,
            TxSize::T8 => 5,
            TxSize::T16 | TxSize::T32 => 6,
        }
    }
}

/// A 2-D inverse transform: `first` runs over the coefficient block's columns, `second` over
/// the intermediate's columns. FFmpeg names it `<first>_<second>_<n>x<n>_add`.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub struct Transform {
    pub size: TxSize,
    pub first: Tx1d,
    pub second: Tx1d,
}

impl Transform {
    pub const fn new(size: TxSize, first: Tx1d, second: Tx1d) -> Self {
        Transform {
            size,
            first,
            second,
        }
    }

    /// Every transform FFmpeg 5.1 has for 8-bit, in the order of `ALL_NAMES`.
    pub const ALL: [Transform; 14] = {
        use Tx1d::*;
        use TxSize::*;
        [
            Transform::new(T4, Dct, Dct),
            Transform::new(T4, Adst, Dct),
            Transform::new(T4, Dct, Adst),
            Transform::new(T4, Adst, Adst),
            Transform::new(T4, Wht, Wht),
            Transform::new(T8, Dct, Dct),
            Transform::new(T8, Adst, Dct),
            Transform::new(T8, Dct, Adst),
            Transform::new(T8, Adst, Adst),
            Transform::new(T16, Dct, Dct),
            Transform::new(T16, Adst, Dct),
            Transform::new(T16, Dct, Adst),
            Transform::new(T16, Adst, Adst),
            Transform::new(T32, Dct, Dct),
        ]
    };

    /// Index into [`Transform::ALL`].
    #[inline]
    pub fn index(self) -> usize {
        let ty = |t: Tx1d| (t == Tx1d::Adst) as usize;
        match self.size {
            TxSize::T4 if self.first == Tx1d::Wht => 4,
            TxSize::T4 => ty(self.first) + 2 * ty(self.second),
            TxSize::T8 => 5 + ty(self.first) + 2 * ty(self.second),
            TxSize::T16 => 9 + ty(self.first) + 2 * ty(self.second),
            TxSize::T32 => 13,
        }
    }

    /// FFmpeg's C function name without `_c`, e.g. `iadst_idct_16x16_add`.
    pub fn name(self) -> String {
        let one = |t: Tx1d| match t {
            Tx1d::Dct => "idct",
            Tx1d::Adst => "iadst",
            Tx1d::Wht => "iwht",
        };
        let n = self.size.n();
        format!("{}_{}_{n}x{n}_add", one(self.first), one(self.second))
    }

    /// Only `idct_idct` takes FFmpeg's DC shortcut when `eob == 1`.
    pub fn has_dc_only(self) -> bool {
        self.first == Tx1d::Dct && self.second == Tx1d::Dct
    }

    pub fn coefs(self) -> usize {
        self.size.n() * self.size.n()
    }

    /// Whether a call with this `eob` takes the DC shortcut.
    pub fn is_dc_only_call(self, eob: i32) -> bool {
        self.has_dc_only() && eob == 1
    }
}

// ---- 1-D transforms (outputs are not yet truncated to int16) ----------------------------------
// `l.v(...)` marks each value that FFmpeg's SIMD keeps in a 16-bit lane.

fn idct4<T: Dct>(i: &[T], l: &Lanes) -> [T; 4] {
    let t0 = l.v(r14(l.v(i[0] + i[2]) * 11585));
    let t1 = l.v(r14(l.v(i[0] - i[2]) * 11585));
    let (t2, t3) = rot(l, i[1], i[3], 6270, 15137);
    [l.v(t0 + t3), l.v(t1 + t2), l.v(t1 - t2), l.v(t0 - t3)]
}

fn idct8<T: Dct>(i: &[T], l: &Lanes) -> [T; 8] {
    let e = idct4(&[i[0], i[2], i[4], i[6]], l);
    let (t4a, t7a) = rot(l, i[1], i[7], 3196, 16069);
    let (t5a, t6a) = rot(l, i[5], i[3], 13623, 9102);
    let t4 = l.v(t4a + t5a);
    let t7 = l.v(t7a + t6a);
    let d5 = l.v(t4a - t5a);
    let d6 = l.v(t7a - t6a);
    let t5 = l.v(r14(l.v(d6 - d5) * 11585));
    let t6 = l.v(r14(l.v(d6 + d5) * 11585));
    let o = [t7, t6, t5, t4];
    std::array::from_fn(|k| {
        if k < 4 {
            l.v(e[k] + o[k])
        } else {
            l.v(e[7 - k] - o[7 - k])
        }
    })
}

fn idct16<T: Dct>(i: &[T], l: &Lanes) -> [T; 16] {
    let e = idct8(&[i[0], i[2], i[4], i[6], i[8], i[10], i[12], i[14]], l);
    let (t8a, t15a) = rot(l, i[1], i[15], 1606, 16305);
    let (t9a, t14a) = rot(l, i[9], i[7], 12665, 10394);
    let (t10a, t13a) = rot(l, i[5], i[11], 7723, 14449);
    let (t11a, t12a) = rot(l, i[13], i[3], 15679, 4756);

    let t8 = l.v(t8a + t9a);
    let t9 = l.v(t8a - t9a);
    let t10 = l.v(t11a - t10a);
    let t11 = l.v(t11a + t10a);
    let t12 = l.v(t12a + t13a);
    let t13 = l.v(t12a - t13a);
    let t14 = l.v(t15a - t14a);
    let t15 = l.v(t15a + t14a);

    let (t9a, t14a) = rot(l, t14, t9, 6270, 15137);
    let t10a = l.v(r14(-(t13 * 15137 + t10 * 6270)));
    let t13a = l.v(r14(t13 * 6270 - t10 * 15137));

    let t8a = l.v(t8 + t11);
    let t9 = l.v(t9a + t10a);
    let t10 = l.v(t9a - t10a);
    let t11a = l.v(t8 - t11);
    let t12a = l.v(t15 - t12);
    let t13 = l.v(t14a - t13a);
    let t14 = l.v(t14a + t13a);
    let t15a = l.v(t15 + t12);

    let t10a = l.v(r14(l.v(t13 - t10) * 11585));
    let t13a = l.v(r14(l.v(t13 + t10) * 11585));
    let t11 = l.v(r14(l.v(t12a - t11a) * 11585));
    let t12 = l.v(r14(l.v(t12a + t11a) * 11585));

    let o = [t15a, t14, t13a, t12, t11, t10a, t9, t8a];
    std::array::from_fn(|k| {
        if k < 8 {
            l.v(e[k] + o[k])
        } else {
            l.v(e[15 - k] - o[15 - k])
        }
    })
}

fn idct32<T: Dct>(i: &[T], l: &Lanes) -> [T; 32] {
    let even: [T; 16] = std::array::from_fn(|k| i[2 * k]);
    let e = idct16(&even, l);

    let (t16a, t31a) = rot(l, i[1], i[31], 804, 16364);
    let (t17a, t30a) = rot(l, i[17], i[15], 12140, 11003);
    let (t18a, t29a) = rot(l, i[9], i[23], 7005, 14811);
    let (t19a, t28a) = rot(l, i[25], i[7], 15426, 5520);
    let (t20a, t27a) = rot(l, i[5], i[27], 3981, 15893);
    let (t21a, t26a) = rot(l, i[21], i[11], 14053, 8423);
    let (t22a, t25a) = rot(l, i[13], i[19], 9760, 13160);
    let (t23a, t24a) = rot(l, i[29], i[3], 16207, 2404);

    let t16 = l.v(t16a + t17a);
    let t17 = l.v(t16a - t17a);
    let t18 = l.v(t19a - t18a);
    let t19 = l.v(t19a + t18a);
    let t20 = l.v(t20a + t21a);
    let t21 = l.v(t20a - t21a);
    let t22 = l.v(t23a - t22a);
    let t23 = l.v(t23a + t22a);
    let t24 = l.v(t24a + t25a);
    let t25 = l.v(t24a - t25a);
    let t26 = l.v(t27a - t26a);
    let t27 = l.v(t27a + t26a);
    let t28 = l.v(t28a + t29a);
    let t29 = l.v(t28a - t29a);
    let t30 = l.v(t31a - t30a);
    let t31 = l.v(t31a + t30a);

    let (t17a, t30a) = rot(l, t30, t17, 3196, 16069);
    let t18a = l.v(r14(-(t29 * 16069 + t18 * 3196)));
    let t29a = l.v(r14(t29 * 3196 - t18 * 16069));
    let (t21a, t26a) = rot(l, t26, t21, 13623, 9102);
    let t22a = l.v(r14(-(t25 * 9102 + t22 * 13623)));
    let t25a = l.v(r14(t25 * 13623 - t22 * 9102));

    let t16a = l.v(t16 + t19);
    let t17 = l.v(t17a + t18a);
    let t18 = l.v(t17a - t18a);
    let t19a = l.v(t16 - t19);
    let t20a = l.v(t23 - t20);
    let t21 = l.v(t22a - t21a);
    let t22 = l.v(t22a + t21a);
    let t23a = l.v(t23 + t20);
    let t24a = l.v(t24 + t27);
    let t25 = l.v(t25a + t26a);
    let t26 = l.v(t25a - t26a);
    let t27a = l.v(t24 - t27);
    let t28a = l.v(t31 - t28);
    let t29 = l.v(t30a - t29a);
    let t30 = l.v(t30a + t29a);
    let t31a = l.v(t31 + t28);

    let (t18a, t29a) = rot(l, t29, t18, 6270, 15137);
    let (t19, t28) = rot(l, t28a, t19a, 6270, 15137);
    let t20 = l.v(r14(-(t27a * 15137 + t20a * 6270)));
    let t27 = l.v(r14(t27a * 6270 - t20a * 15137));
    let t21a = l.v(r14(-(t26 * 15137 + t21 * 6270)));
    let t26a = l.v(r14(t26 * 6270 - t21 * 15137));

    let t16 = l.v(t16a + t23a);
    let t17a = l.v(t17 + t22);
    let t18 = l.v(t18a + t21a);
    let t19a = l.v(t19 + t20);
    let t20a = l.v(t19 - t20);
    let t21 = l.v(t18a - t21a);
    let t22a = l.v(t17 - t22);
    let t23 = l.v(t16a - t23a);
    let t24 = l.v(t31a - t24a);
    let t25a = l.v(t30 - t25);
    let t26 = l.v(t29a - t26a);
    let t27a = l.v(t28 - t27);
    let t28a = l.v(t28 + t27);
    let t29 = l.v(t29a + t26a);
    let t30a = l.v(t30 + t25);
    let t31 = l.v(t31a + t24a);

    let t20 = l.v(r14(l.v(t27a - t20a) * 11585));
    let t27 = l.v(r14(l.v(t27a + t20a) * 11585));
    let t21a = l.v(r14(l.v(t26 - t21) * 11585));
    let t26a = l.v(r14(l.v(t26 + t21) * 11585));
    let t22 = l.v(r14(l.v(t25a - t22a) * 11585));
    let t25 = l.v(r14(l.v(t25a + t22a) * 11585));
    let t23a = l.v(r14(l.v(t24 - t23) * 11585));
    let t24a = l.v(r14(l.v(t24 + t23) * 11585));

    let o = [
        t31, t30a, t29, t28a, t27, t26a, t25, t24a, t23a, t22, t21a, t20, t19a, t18, t17a, t16,
    ];
    std::array::from_fn(|k| {
        if k < 16 {
            l.v(e[k] + o[k])
        } else {
            l.v(e[31 - k] - o[31 - k])
        }
    })
}

fn iadst4<T: Dct>(i: &[T], l: &Lanes) -> [T; 4] {
    let t0 = i[0] * 5283 + i[2] * 15212 + i[3] * 9929;
    let t1 = i[0] * 9929 - i[2] * 5283 - i[3] * 15212;
    let t2 = l.v(l.v(i[0] - i[2]) + i[3]) * 13377;
    let t3 = i[1] * 13377;
    [
        l.v(r14(t0 + t3)),
        l.v(r14(t1 + t3)),
        l.v(r14(t2)),
        l.v(r14(t0 + t1 - t3)),
    ]
}

fn iadst8<T: Dct>(i: &[T], l: &Lanes) -> [T; 8] {
    let t0a = i[7] * 16305 + i[0] * 1606;
    let t1a = i[7] * 1606 - i[0] * 16305;
    let t2a = i[5] * 14449 + i[2] * 7723;
    let t3a = i[5] * 7723 - i[2] * 14449;
    let t4a = i[3] * 10394 + i[4] * 12665;
    let t5a = i[3] * 12665 - i[4] * 10394;
    let t6a = i[1] * 4756 + i[6] * 15679;
    let t7a = i[1] * 15679 - i[6] * 4756;

    let t0 = l.v(r14(t0a + t4a));
    let t1 = l.v(r14(t1a + t5a));
    let t2 = l.v(r14(t2a + t6a));
    let t3 = l.v(r14(t3a + t7a));
    let t4 = l.v(r14(t0a - t4a));
    let t5 = l.v(r14(t1a - t5a));
    let t6 = l.v(r14(t2a - t6a));
    let t7 = l.v(r14(t3a - t7a));

    let t4a = t4 * 15137 + t5 * 6270;
    let t5a = t4 * 6270 - t5 * 15137;
    let t6a = t7 * 15137 - t6 * 6270;
    let t7a = t7 * 6270 + t6 * 15137;

    let t2b = l.v(t0 - t2);
    let t3b = l.v(t1 - t3);
    let t6b = l.v(r14(t4a - t6a));
    let t7b = l.v(r14(t5a - t7a));
    [
        l.v(t0 + t2),
        l.v(-l.v(r14(t4a + t6a))),
        l.v(r14(l.v(t6b + t7b) * 11585)),
        l.v(-l.v(r14(l.v(t2b + t3b) * 11585))),
        l.v(r14(l.v(t2b - t3b) * 11585)),
        l.v(-l.v(r14(l.v(t6b - t7b) * 11585))),
        l.v(r14(t5a + t7a)),
        l.v(-l.v(t1 + t3)),
    ]
}

fn iadst16<T: Dct>(i: &[T], l: &Lanes) -> [T; 16] {
    // First stage: eight rotations of input pairs (15,0), (13,2), ... (1,14), not rounded.
    let pair =
        |hi: usize, lo: usize, c: i32, s: i32| (i[hi] * c + i[lo] * s, i[hi] * s - i[lo] * c);
    let (t0, t1) = pair(15, 0, 16364, 804);
    let (t2, t3) = pair(13, 2, 15893, 3981);
    let (t4, t5) = pair(11, 4, 14811, 7005);
    let (t6, t7) = pair(9, 6, 13160, 9760);
    let (t8, t9) = pair(7, 8, 11003, 12140);
    let (t10, t11) = pair(5, 10, 8423, 14053);
    let (t12, t13) = pair(3, 12, 5520, 15426);
    let (t14, t15) = pair(1, 14, 2404, 16207);

    let t0a = l.v(r14(t0 + t8));
    let t1a = l.v(r14(t1 + t9));
    let t2a = l.v(r14(t2 + t10));
    let t3a = l.v(r14(t3 + t11));
    let t4a = l.v(r14(t4 + t12));
    let t5a = l.v(r14(t5 + t13));
    let t6a = l.v(r14(t6 + t14));
    let t7a = l.v(r14(t7 + t15));
    let t8a = l.v(r14(t0 - t8));
    let t9a = l.v(r14(t1 - t9));
    let t10a = l.v(r14(t2 - t10));
    let t11a = l.v(r14(t3 - t11));
    let t12a = l.v(r14(t4 - t12));
    let t13a = l.v(r14(t5 - t13));
    let t14a = l.v(r14(t6 - t14));
    let t15a = l.v(r14(t7 - t15));

    let t8 = t8a * 16069 + t9a * 3196;
    let t9 = t8a * 3196 - t9a * 16069;
    let t10 = t10a * 9102 + t11a * 13623;
    let t11 = t10a * 13623 - t11a * 9102;
    let t12 = t13a * 16069 - t12a * 3196;
    let t13 = t13a * 3196 + t12a * 16069;
    let t14 = t15a * 9102 - t14a * 13623;
    let t15 = t15a * 13623 + t14a * 9102;

    let t0 = l.v(t0a + t4a);
    let t1 = l.v(t1a + t5a);
    let t2 = l.v(t2a + t6a);
    let t3 = l.v(t3a + t7a);
    let t4 = l.v(t0a - t4a);
    let t5 = l.v(t1a - t5a);
    let t6 = l.v(t2a - t6a);
    let t7 = l.v(t3a - t7a);
    let t8a = l.v(r14(t8 + t12));
    let t9a = l.v(r14(t9 + t13));
    let t10a = l.v(r14(t10 + t14));
    let t11a = l.v(r14(t11 + t15));
    let t12a = l.v(r14(t8 - t12));
    let t13a = l.v(r14(t9 - t13));
    let t14a = l.v(r14(t10 - t14));
    let t15a = l.v(r14(t11 - t15));

    let t4a = t4 * 15137 + t5 * 6270;
    let t5a = t4 * 6270 - t5 * 15137;
    let t6a = t7 * 15137 - t6 * 6270;
    let t7a = t7 * 6270 + t6 * 15137;
    let t12 = t12a * 15137 + t13a * 6270;
    let t13 = t12a * 6270 - t13a * 15137;
    let t14 = t15a * 15137 - t14a * 6270;
    let t15 = t15a * 6270 + t14a * 15137;

    let t2a = l.v(t0 - t2);
    let t3a = l.v(t1 - t3);
    let t6 = l.v(r14(t4a - t6a));
    let t7 = l.v(r14(t5a - t7a));
    let t10 = l.v(t8a - t10a);
    let t11 = l.v(t9a - t11a);
    let t14a = l.v(r14(t12 - t14));
    let t15a = l.v(r14(t13 - t15));

    [
        l.v(t0 + t2),
        l.v(-l.v(t8a + t10a)),
        l.v(r14(t12 + t14)),
        l.v(-l.v(r14(t4a + t6a))),
        l.v(r14(l.v(t7 + t6) * 11585)),
        l.v(r14(l.v(-l.v(t14a + t15a)) * 11585)),
        l.v(r14(l.v(t11 + t10) * 11585)),
        l.v(r14(l.v(-l.v(t2a + t3a)) * 11585)),
        l.v(r14(l.v(t2a - t3a) * 11585)),
        l.v(r14(l.v(t11 - t10) * 11585)),
        l.v(r14(l.v(t14a - t15a) * 11585)),
        l.v(r14(l.v(t7 - t6) * 11585)),
        l.v(r14(t5a + t7a)),
        l.v(-l.v(r14(t13 + t15))),
        l.v(t9a + t11a),
        l.v(-l.v(t1 + t3)),
    ]
}

fn iwht4<T: Dct>(i: &[T], first_pass: bool, l: &Lanes) -> [T; 4] {
    // (`int` in FFmpeg at every bit depth: 32 bits, wrapping.)
    let i: [W; 4] = std::array::from_fn(|k| W(i[k].int()));
    let s = if first_pass { 2 } else { 0 };
    let mut t0 = l.v(i[0] >> s);
    let mut t1 = l.v(i[3] >> s);
    let mut t2 = l.v(i[1] >> s);
    let mut t3 = l.v(i[2] >> s);
    t0 = l.v(t0 + t2);
    t3 = l.v(t3 - t1);
    let t4 = l.v(l.v(t0 - t3) >> 1);
    t1 = l.v(t4 - t1);
    t2 = l.v(t4 - t2);
    t0 = l.v(t0 - t1);
    t3 = l.v(t3 + t2);
    [t0, t1, t2, t3].map(|x| T::of(x.0))
}

/// One 1-D transform of `n` inputs into `out`, stored as FFmpeg's `dctcoef` ([`Dct::store`]).
fn tx_1d<T: Dct>(kind: Tx1d, n: usize, input: &[T], first_pass: bool, out: &mut [i32], l: &Lanes) {
    fn store<T: Dct, const N: usize>(v: [T; N], out: &mut [i32]) {
        for (o, x) in out.iter_mut().zip(v) {
            *o = x.store();
        }
    }
    match (kind, n) {
        (Tx1d::Dct, 4) => store(idct4(input, l), out),
        (Tx1d::Dct, 8) => store(idct8(input, l), out),
        (Tx1d::Dct, 16) => store(idct16(input, l), out),
        (Tx1d::Dct, 32) => store(idct32(input, l), out),
        (Tx1d::Adst, 4) => store(iadst4(input, l), out),
        (Tx1d::Adst, 8) => store(iadst8(input, l), out),
        (Tx1d::Adst, 16) => store(iadst16(input, l), out),
        (Tx1d::Wht, 4) => store(iwht4(input, first_pass, l), out),
        _ => unreachable!("no {kind:?} transform of size {n}"),
    }
}

/// The values FFmpeg adds to the destination, in raster order (`res[row * n + col]`). Returns
/// whether a value of FFmpeg's SIMD 16-bit lanes overflowed (see [`Lanes`]): only then can
/// FFmpeg's SIMD and C functions differ on this block.
///
/// `coefs` holds the block as the caller passed it (row-major, `n * n` values); for a DC-only
/// call only `coefs[0]` is read.
pub fn residual(tx: Transform, coefs: &[i16], dc_only: bool, res: &mut [i32]) -> bool {
    let lanes = Lanes::default();
    residual_watched(tx, coefs, dc_only, res, &lanes);
    lanes.overflowed()
}

/// [`residual`], watching the 16-bit lane values with `l`.
fn residual_watched(tx: Transform, coefs: &[i16], dc_only: bool, res: &mut [i32], l: &Lanes) {
    let n = tx.size.n();
    let shift = tx.size.final_shift(tx);
    let round = |x: i32| -> i32 {
        if shift == 0 {
            x
        } else {
            l.v(W(x) + W(1 << (shift - 1))).0 >> shift
        }
    };
    if dc_only {
        let dc = W(coefs[0] as i32);
        let t = r14(r14(dc * 11585) * 11585);
        res[..n * n].fill(round(t.0));
        return;
    }
    two_passes::<W>(tx, |i| coefs[i] as i32, res, l, round);
}

/// A transform's two passes over the coefficients `coef(row * n + col)`, the second's outputs
/// rounded by `round` into `res`.
fn two_passes<T: Dct>(
    tx: Transform,
    coef: impl Fn(usize) -> i32,
    res: &mut [i32],
    l: &Lanes,
    round: impl Fn(i32) -> i32,
) {
    let n = tx.size.n();
    // First pass: column c of the block becomes row c of `mid`.
    let mut mid = [0i32; 32 * 32];
    let mut col = [T::of(0); 32];
    for c in 0..n {
        for (k, v) in col[..n].iter_mut().enumerate() {
            *v = T::of(coef(k * n + c));
        }
        tx_1d(tx.first, n, &col[..n], true, &mut mid[c * n..c * n + n], l);
    }
    // Second pass: column c of `mid` gives column c of the residual.
    let mut out = [0i32; 32];
    for c in 0..n {
        for (k, v) in col[..n].iter_mut().enumerate() {
            *v = T::of(mid[k * n + c]);
        }
        tx_1d(tx.second, n, &col[..n], false, &mut out[..n], l);
        for (r, &o) in out[..n].iter().enumerate() {
            res[r * n + c] = round(o);
        }
    }
}

/// The values FFmpeg 5.1 adds to the destination at 10 and 12 bits (`vp9dsp_10bpp.c`,
/// `vp9dsp_12bpp.c`), in raster order: its C arithmetic, products and sums in 64 bits
/// (`dctint`), every 1-D output and the DC shortcut's value stored in 32 (`dctcoef`, `int`),
/// the final rounding in 32 again, wrapping. The same for both depths: only the clip after
/// differs. `coefs` as for [`residual`], a coefficient a 32-bit word.
pub fn residual_high(tx: Transform, coefs: &[i32], dc_only: bool, res: &mut [i32]) {
    let n = tx.size.n();
    let shift = tx.size.final_shift(tx);
    let round = |x: i32| -> i32 {
        if shift == 0 {
            x
        } else {
            x.wrapping_add(1 << (shift - 1)) >> shift
        }
    };
    let l = Lanes::default();
    if dc_only {
        let t = r14(r14(W64::of(coefs[0]) * 11585) * 11585);
        res[..n * n].fill(round(t.int()));
        return;
    }
    two_passes::<W64>(tx, |i| coefs[i], res, &l, round);
}

/// [`add_residual`] for pixels of `bit_depth` bits in 16-bit words (`stride` in pixels).
///
/// # Safety
/// As for [`add_residual`].
pub unsafe fn add_residual_high(
    dst: *mut u16,
    stride: isize,
    n: usize,
    res: &[i32],
    bit_depth: u32,
) {
    let max = (1 << bit_depth) - 1;
    for c in 0..n {
        for r in 0..n {
            let p = dst.offset(r as isize * stride + c as isize);
            let v = (*p as i32).wrapping_add(res[r * n + c]);
            *p = v.clamp(0, max) as u16;
        }
    }
}

/// [`itx_add_now`] at 10 or 12 bits: FFmpeg's function on pixels of `bit_depth` bits
/// (`stride` in pixels) and 32-bit coefficients.
///
/// # Safety
/// As for [`itx_add_now`], with 16-bit pixels and 32-bit coefficients.
pub unsafe fn itx_add_now_high(
    tx: Transform,
    dst: *mut u16,
    stride: isize,
    block: *mut i32,
    eob: i32,
    bit_depth: u32,
) {
    let dc_only = tx.is_dc_only_call(eob);
    let count = if dc_only { 1 } else { tx.coefs() };
    let mut coefs = [0i32; 32 * 32];
    std::ptr::copy_nonoverlapping(block as *const u8, coefs.as_mut_ptr() as *mut u8, count * 4);
    std::ptr::write_bytes(block as *mut u8, 0, count * 4);
    let mut res = [0i32; 32 * 32];
    residual_high(tx, &coefs[..count.max(1)], dc_only, &mut res);
    add_residual_high(dst, stride, tx.size.n(), &res, bit_depth);
}

/// Adds a residual to `dst` with clipping, in FFmpeg's order (column by column, top to
/// bottom), reading each pixel just before writing it, so that even rows that alias each
/// other (a stride smaller than the block) end as FFmpeg's C leaves them.
///
/// # Safety
/// Every `dst + row * stride + col` for `row, col < n` must be valid for reads and writes.
pub unsafe fn add_residual(dst: *mut u8, stride: isize, n: usize, res: &[i32]) {
    for c in 0..n {
        for r in 0..n {
            let p = dst.offset(r as isize * stride + c as isize);
            let v = *p as i32 + res[r * n + c];
            *p = v.clamp(0, 255) as u8;
        }
    }
}

/// FFmpeg's function, run at once on the CPU: transform, add, zero the coefficients it zeroes.
///
/// # Safety
/// `dst` as for [`add_residual`]; `block` valid for `n * n` reads and writes (any alignment).
pub unsafe fn itx_add_now(tx: Transform, dst: *mut u8, stride: isize, block: *mut i16, eob: i32) {
    let dc_only = tx.is_dc_only_call(eob);
    let count = if dc_only { 1 } else { tx.coefs() };
    let mut coefs = [0i16; 32 * 32];
    std::ptr::copy_nonoverlapping(block as *const u8, coefs.as_mut_ptr() as *mut u8, count * 2);
    std::ptr::write_bytes(block as *mut u8, 0, count * 2);
    let mut res = [0i32; 32 * 32];
    residual(tx, &coefs[..count.max(1)], dc_only, &mut res);
    add_residual(dst, stride, tx.size.n(), &res);
}

/// One 1-D transform on plain integers, int16-truncated as FFmpeg stores it. For tests that
/// build forward transforms by probing the inverse ones.
#[doc(hidden)]
pub fn one_d(kind: Tx1d, input: &[i32], first_pass: bool) -> Vec<i32> {
    let w: Vec<W> = input.iter().map(|&x| W(x)).collect();
    let mut out = vec![0; input.len()];
    tx_1d(
        kind,
        input.len(),
        &w,
        first_pass,
        &mut out,
        &Lanes::default(),
    );
    out
}

// ---- GPU side ------------------------------------------------------------------------------

/// One GPU pipeline of the transform shaders: each transform, and FFmpeg's DC-only shortcut
/// per size (`idct_idct` with `eob == 1`).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum ItxKernel {
    Full(Transform),
    DcOnly(TxSize),
}

impl ItxKernel {
    pub const COUNT: usize = Transform::ALL.len() + TxSize::ALL.len();

    pub fn all() -> impl Iterator<Item = ItxKernel> {
        Transform::ALL
            .into_iter()
            .map(ItxKernel::Full)
            .chain(TxSize::ALL.into_iter().map(ItxKernel::DcOnly))
    }

    #[inline]
    pub fn index(self) -> usize {
        match self {
            ItxKernel::Full(t) => t.index(),
            ItxKernel::DcOnly(s) => Transform::ALL.len() + s as usize,
        }
    }

    /// The kernel numbered `index` ([`ItxKernel::index`]), if any.
    pub fn from_index(index: usize) -> Option<ItxKernel> {
        BY_INDEX.get(index).copied()
    }

    pub fn for_call(tx: Transform, dc_only: bool) -> ItxKernel {
        if dc_only {
            ItxKernel::DcOnly(tx.size)
        } else {
            ItxKernel::Full(tx)
        }
    }

    pub fn size(self) -> TxSize {
        match self {
            ItxKernel::Full(t) => t.size,
            ItxKernel::DcOnly(s) => s,
        }
    }

    /// The shader file (stem) that implements this size.
    pub fn shader(self) -> &'static str {
        ["itx4", "itx8", "itx16", "itx32"][self.size() as usize]
    }

    /// Specialisation constants: first 1-D type, second 1-D type, DC only
    /// (shaders/itx_main.glsl: 0 = DCT, 1 = ADST, 2 = WHT).
    pub fn spec_constants(self) -> [u32; 3] {
        let code = |t: Tx1d| match t {
            Tx1d::Dct => 0,
            Tx1d::Adst => 1,
            Tx1d::Wht => 2,
        };
        match self {
            ItxKernel::Full(t) => [code(t.first), code(t.second), 0],
            ItxKernel::DcOnly(_) => [0, 0, 1],
        }
    }
}

/// The kernels by [`ItxKernel::index`].
const BY_INDEX: [ItxKernel; ItxKernel::COUNT] = {
    let mut all = [ItxKernel::DcOnly(TxSize::T4); ItxKernel::COUNT];
    let mut i = 0;
    while i < Transform::ALL.len() {
        all[i] = ItxKernel::Full(Transform::ALL[i]);
        i += 1;
    }
    all[i] = ItxKernel::DcOnly(TxSize::T4);
    all[i + 1] = ItxKernel::DcOnly(TxSize::T8);
    all[i + 2] = ItxKernel::DcOnly(TxSize::T16);
    all[i + 3] = ItxKernel::DcOnly(TxSize::T32);
    all
};

/// A transform's job (`shaders/itx_main.glsl`, a `uvec4`): the block's top-left pixel, the
/// coefficients and the flags.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct ItxJob {
    pub header: JobHeader,
    /// The block's first coefficient in the coefficient buffer (the arena), or for a DC-only
    /// kernel the DC value itself.
    pub coef: u32,
    /// FROM_FFMPEG (bit 0, which the shaders read), the batch's own flags, the call's eob
    /// (bits 16..32): `batch::call::job_flags`.
    pub flags: u32,
}

impl ItxJob {
    pub fn to_words(&self) -> Job {
        let mut words = self.header.job();
        words[2] = self.coef;
        words[3] = self.flags;
        words
    }

    pub fn from_words(words: &Job) -> ItxJob {
        ItxJob {
            header: JobHeader::of(words),
            coef: words[2],
            flags: words[3],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Rng;

    /// The largest watched magnitude per unit coefficient, over every position and sign of a
    /// single coefficient of magnitude `AMPLITUDE`, in 1/256, rounded up, with the rounding
    /// allowance of 64 that the bound's argument takes.
    fn measured_gain_q8(tx: Transform) -> u32 {
        const AMPLITUDE: i64 = 2048;
        let n = tx.size.n();
        let mut res = [0i32; 32 * 32];
        let mut worst = 0i64;
        for at in 0..n * n {
            for sign in [1i16, -1] {
                let mut coefs = vec![0i16; n * n];
                coefs[at] = sign * AMPLITUDE as i16;
                let lanes = Lanes::default();
                residual_watched(tx, &coefs, false, &mut res, &lanes);
                worst = worst.max(lanes.max.get());
            }
        }
        (((worst + 64) * 256 + AMPLITUDE - 1) / AMPLITUDE) as u32
    }

    /// A job's words give back its fields.
    #[test]
    fn a_transform_job_round_trips_through_its_words() {
        let mut rng = Rng(5);
        for _ in 0..100 {
            let mut word = || rng.below(1 << 32) as u32;
            let job = ItxJob {
                header: JobHeader {
                    pixel: word(),
                    stride: word() as i32,
                },
                coef: word(),
                flags: word(),
            };
            let words = job.to_words();
            assert_eq!(ItxJob::from_words(&words), job);
            assert!(words[4..].iter().all(|&w| w == 0));
        }
    }

    /// Every transform kernel's index finds it again, those of the calls among them.
    #[test]
    fn a_transform_kernel_s_index_finds_it() {
        for (i, kernel) in ItxKernel::all().enumerate() {
            assert_eq!(kernel.index(), i);
            assert_eq!(ItxKernel::from_index(i), Some(kernel));
        }
        assert_eq!(ItxKernel::from_index(ItxKernel::COUNT), None);
        for tx in Transform::ALL {
            for dc_only in [false, true] {
                let kernel = ItxKernel::for_call(tx, dc_only);
                assert_eq!(ItxKernel::from_index(kernel.index()), Some(kernel));
            }
        }
    }

    /// `LANE_GAIN_Q8` bounds every transform's gain, and is no more than 1/16 above it.
    #[test]
    fn lane_gains_bound_every_position() {
        let mut table = Vec::new();
        for tx in Transform::ALL {
            if tx.first == Tx1d::Wht {
                assert_eq!(LANE_GAIN_Q8[tx.index()], u32::MAX, "{tx:?} is not bounded");
                table.push(u32::MAX);
                continue;
            }
            let gain = measured_gain_q8(tx);
            table.push(gain);
        }
        for (tx, (&have, &want)) in Transform::ALL.iter().zip(LANE_GAIN_Q8.iter().zip(&table)) {
            assert!(
                have >= want && (have - want) <= want / 16,
                "{tx:?}: LANE_GAIN_Q8 {have}, measured {want} (table: {table:?})"
            );
        }
    }

    /// Blocks whose magnitude sum the bound accepts never overflow, however the sum is spread
    /// (one coefficient, a few, all of them).
    #[test]
    fn accepted_blocks_never_overflow() {
        let mut rng = Rng(31);
        let mut res = [0i32; 32 * 32];
        for tx in Transform::ALL {
            let n = tx.size.n();
            let mut accepted = 0;
            for round in 0..300 {
                let mut coefs = vec![0i16; n * n];
                let spread = [1, 3, n, n * n][round % 4];
                for _ in 0..spread {
                    let v = rng.below(1 << 15) as i16 - (1 << 14);
                    coefs[rng.below(n * n)] = v;
                }
                // Scale down until the bound accepts it (or nothing is left).
                while !lanes_cannot_overflow(tx, &coefs) && coefs.iter().any(|&c| c != 0) {
                    for c in &mut coefs {
                        *c = (*c as i32 * 7 / 8) as i16;
                    }
                }
                if coefs.iter().all(|&c| c == 0) {
                    continue;
                }
                accepted += 1;
                assert!(
                    !residual(tx, &coefs, false, &mut res),
                    "{tx:?}: an accepted block overflowed: {coefs:?}"
                );
            }
            assert!(
                tx.first == Tx1d::Wht || accepted > 200,
                "{tx:?}: only {accepted} blocks accepted"
            );
        }
    }
}
