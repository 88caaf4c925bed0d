//! [`MostRecent`]: the last few values a lookup found, for the batch's caches of regions.

/// The last few values a lookup found, most recent first: the regions a batch's calls were
/// in lately.
pub(super) struct MostRecent<T: Copy> {
    items: [Option<T>; 4],
}

impl<T: Copy> Default for MostRecent<T> {
    fn default() -> Self {
        MostRecent { items: [None; 4] }
    }
}

impl<T: Copy> MostRecent<T> {
    /// The most recent value `hit` accepts, moved to the front.
    pub(super) fn find(&mut self, mut hit: impl FnMut(&T) -> bool) -> Option<T> {
        let k = self
            .items
            .iter()
            .position(|v| v.as_ref().is_some_and(&mut hit))?;
        self.items[..=k].rotate_right(1);
        self.items[0]
    }

    /// Puts `value` in front, forgetting the oldest.
    pub(super) fn put(&mut self, value: T) {
        self.items.rotate_right(1);
        self.items[0] = Some(value);
    }

    pub(super) fn clear(&mut self) {
        self.items = [None; 4];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `find` gives the most recent value it accepts and moves it to the front; `put` forgets
    /// the oldest of four; `clear` forgets all.
    #[test]
    fn the_most_recent_match_comes_first_and_the_oldest_goes() {
        let mut r = MostRecent::default();
        for v in 1..=4 {
            r.put(v);
        }
        let odd = |v: &i32| v % 2 == 1;
        assert_eq!(r.find(odd), Some(3));
        assert_eq!(r.find(|&v| v == 1), Some(1));
        assert_eq!(r.find(odd), Some(1), "1 was moved to the front");
        // The order is 1, 4, 3, 2: a fifth value forgets 2, not 1.
        r.put(5);
        assert_eq!(r.find(|&v| v == 2), None);
        assert_eq!(r.find(|&v| v == 1), Some(1));
        assert_eq!(r.find(|&v| v % 2 == 0), Some(4));
        r.clear();
        assert_eq!(r.find(|_| true), None);
    }
}
