//! Helpers for the unit tests.

/// splitmix64: small, deterministic, good enough for test data.
pub struct Rng(pub u64);

impl Rng {
    pub fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) % n as u64) as usize
    }
}

/// The bytes of a `w` x `h` block at `offset`, rows `stride` apart.
pub fn bytes_of(offset: usize, stride: isize, w: usize, h: usize) -> Vec<usize> {
    (0..h)
        .flat_map(|r| (0..w).map(move |c| (offset as isize + r as isize * stride) as usize + c))
        .collect()
}
