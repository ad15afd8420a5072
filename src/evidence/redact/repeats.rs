//! Finding a remembered secret value again: a value a rule found in one
//! place is hidden wherever else it occurs in the same request, even bare.
//!
//! Values are looked up by their first [`MIN_REPEAT_BYTES`] bytes: at each
//! position of the text those bytes, as one integer, are tested against a
//! bitmap and then against a map of the values that start with them, and a
//! hit is compared with the value itself. The search costs a few
//! instructions a byte and a short comparison a hit, and there is nothing to
//! build but the map, whatever the values are. (An Aho-Corasick automaton
//! over the values cost the adversarial benchmark text ~27 M instructions
//! to build as a DFA, or ~1,800 instructions a hit searching as an NFA: its
//! secrets are common words, found every ~40 bytes.)

use std::collections::{HashMap, HashSet};

use foldhash::fast::RandomState;

use super::kind::SecretKind;
use super::values;
use super::{MIN_REPEAT_BYTES, REPEAT_PREFIX};

/// Bits of the bitmap of value keys.
const BITS: usize = 1 << 16;

/// The secret values of one request, to be found again.
pub(super) struct Repeats {
    values: Vec<(Vec<u8>, SecretKind)>,
    known: HashSet<Vec<u8>, RandomState>,
    /// Value indices by their key (first [`MIN_REPEAT_BYTES`] bytes).
    by_key: HashMap<u64, Vec<usize>, RandomState>,
    /// One bit per hashed key; `None` until a value is remembered.
    bitmap: Option<Box<[u64; BITS / 64]>>,
}

/// A remembered value found again: `start..end` of the searched bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Hit {
    pub start: usize,
    pub end: usize,
    pub kind: SecretKind,
}

impl Repeats {
    pub fn new() -> Repeats {
        Repeats {
            values: Vec::new(),
            known: HashSet::default(),
            by_key: HashMap::default(),
            bitmap: None,
        }
    }

    /// Remembers `value` (trimmed) to find again; a value shorter than
    /// [`MIN_REPEAT_BYTES`], an exempt one (a reference, a path) or one
    /// already known is not.
    pub fn remember(&mut self, value: &[u8], kind: SecretKind) {
        let value = value.trim_ascii();
        let Some(key) = key_of(value) else { return };
        if self.known.contains(value) || values::is_exempt(value) {
            return;
        }
        self.known.insert(value.to_vec());
        self.by_key.entry(key).or_default().push(self.values.len());
        self.values.push((value.to_vec(), kind));
        let bit = slot(key);
        let bitmap = self.bitmap.get_or_insert_with(|| Box::new([0; BITS / 64]));
        if let Some(word) = bitmap.get_mut(bit / 64) {
            *word |= 1 << (bit % 64);
        }
    }

    /// Every occurrence of a remembered value starting in `from..to` of
    /// `hay`, left to right and not overlapping: at each position the value
    /// with the longest indexed prefix ([`REPEAT_PREFIX`] bytes at most)
    /// that lies whole inside `from..to` wins. A hit covers the whole value
    /// when it is there (past `to` too), else that prefix; the search goes
    /// on after the prefix.
    pub fn find(&self, hay: &[u8], from: usize, to: usize, mut f: impl FnMut(Hit)) {
        let Some(bitmap) = self.bitmap.as_deref() else {
            return;
        };
        let region = hay.get(..to.min(hay.len())).unwrap_or_default();
        let mut i = from;
        // The key of `region[i..i + MIN_REPEAT_BYTES]`, rolled a byte at a
        // time and recomputed after a hit.
        while let Some(mut key) = region.get(i..).and_then(key_of) {
            loop {
                let bit = slot(key);
                let might = bitmap
                    .get(bit / 64)
                    .is_some_and(|word| word & (1 << (bit % 64)) != 0);
                if might && let Some((hit, prefix)) = self.best_at(hay, region, i, key) {
                    f(hit);
                    i += prefix;
                    break;
                }
                let Some(&next) = region.get(i + MIN_REPEAT_BYTES) else {
                    return;
                };
                key = (key >> 8) | (u64::from(next) << (8 * (MIN_REPEAT_BYTES - 1)));
                i += 1;
            }
        }
    }

    /// The hit at `i` and the length of its prefix, if a value starts there.
    fn best_at(&self, hay: &[u8], region: &[u8], i: usize, key: u64) -> Option<(Hit, usize)> {
        let rest = region.get(i..).unwrap_or_default();
        let whole_rest = hay.get(i..).unwrap_or_default();
        let mut best: Option<(Hit, usize)> = None;
        for &index in self.by_key.get(&key).map(Vec::as_slice).unwrap_or_default() {
            let Some((value, kind)) = self.values.get(index) else {
                continue;
            };
            let prefix = value.get(..REPEAT_PREFIX).unwrap_or(value);
            if !rest.starts_with(prefix) {
                continue;
            }
            let len = match whole_rest.starts_with(value) {
                true => value.len(),
                false => prefix.len(),
            };
            let better = best.is_none_or(|(hit, p)| (prefix.len(), len) > (p, hit.end - hit.start));
            if better {
                let hit = Hit {
                    start: i,
                    end: i + len,
                    kind: *kind,
                };
                best = Some((hit, prefix.len()));
            }
        }
        best
    }
}

/// The first [`MIN_REPEAT_BYTES`] bytes of `bytes` as one integer, when it
/// has that many.
fn key_of(bytes: &[u8]) -> Option<u64> {
    let head: &[u8; MIN_REPEAT_BYTES] = bytes.first_chunk()?;
    Some(
        head.iter()
            .rev()
            .fold(0u64, |key, b| (key << 8) | u64::from(*b)),
    )
}

/// A key's bit in the bitmap.
fn slot(key: u64) -> usize {
    // Fibonacci hashing: the top 16 bits of the product.
    usize::try_from(key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 48).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hits(r: &Repeats, hay: &str, from: usize, to: usize) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        r.find(hay.as_bytes(), from, to, |h| out.push((h.start, h.end)));
        out
    }

    #[test]
    fn values_are_found_again_whole_and_leftmost() {
        let mut r = Repeats::new();
        r.remember(b"hunter2hunter2", SecretKind::Repeated);
        r.remember(b"  s3cr3tValue ", SecretKind::Repeated);
        r.remember(b"short", SecretKind::Repeated);
        let hay = "a hunter2hunter2 b s3cr3tValues3cr3tValue short hunter2";
        assert_eq!(hits(&r, hay, 0, hay.len()), [(2, 16), (19, 30), (30, 41)]);
        // Only hits whose indexed prefix lies inside the region.
        assert_eq!(hits(&r, hay, 3, hay.len()), [(19, 30), (30, 41)]);
        assert_eq!(hits(&r, hay, 0, 15), Vec::<(usize, usize)>::new());
        // A value at the very end, and text shorter than a key.
        assert_eq!(hits(&r, "xs3cr3tValue", 0, 12), [(1, 12)]);
        assert!(hits(&r, "s3cr", 0, 4).is_empty());
    }

    #[test]
    fn the_longest_value_at_a_position_wins_and_long_values_match_by_prefix() {
        let mut r = Repeats::new();
        r.remember(b"abcdefgh", SecretKind::Repeated);
        r.remember(b"abcdefghijkl", SecretKind::Repeated);
        assert_eq!(hits(&r, "xabcdefghijklm", 0, 14), [(1, 13)]);
        assert_eq!(hits(&r, "xabcdefghijk", 0, 12), [(1, 9)]);
        let long = "k".repeat(REPEAT_PREFIX + 40);
        let mut r = Repeats::new();
        r.remember(long.as_bytes(), SecretKind::Repeated);
        let cut = &long[..REPEAT_PREFIX + 5];
        assert_eq!(hits(&r, cut, 0, cut.len()), [(0, REPEAT_PREFIX)]);
        assert_eq!(hits(&r, &long, 0, long.len()), [(0, long.len())]);
    }

    #[test]
    fn exempt_and_duplicate_values_are_not_remembered() {
        let mut r = Repeats::new();
        r.remember(b"$DATABASE_PASSWORD", SecretKind::Repeated);
        r.remember(b"/etc/app/secret.conf", SecretKind::Repeated);
        assert!(r.values.is_empty());
        r.remember(b"hunter2hunter2", SecretKind::Repeated);
        r.remember(b"hunter2hunter2", SecretKind::Jwt);
        assert_eq!(r.values.len(), 1);
    }
}
