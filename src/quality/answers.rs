//! How the example server answers synthetic eval items at a configured accuracy
//! (`h200_server --serve … --accuracy P --accuracy-seed S`), seeded so that a quality drop
//! between two configurations can be staged and detected.
//!
//! Whether an item is answered rightly is drawn, per item, from a shared **difficulty**
//! (the same for every server: hard items are hard for all) with probability
//! [`SHARED_DIFFICULTY`], else from the server's own seed (what varies between runs and
//! configurations): right when the draw is below the accuracy. So each server is right on
//! a share `P` of items in expectation, two servers agree on most items as greedy decoding
//! of one model under two configurations does, and a server at a lower accuracy loses
//! items rather than trading them at random.

use crate::quality::eval::synthetic_question;
use crate::rng::mix;

/// The share of items whose outcome the shared difficulty decides.
pub const SHARED_DIFFICULTY: f64 = 0.9;

/// A uniform draw in [0, 1) from a hash.
fn unit(h: u64) -> f64 {
    (mix(h) >> 11) as f64 / (1u64 << 53) as f64
}

/// FNV-1a of `s`.
fn hash(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

/// Whether a server at `accuracy` with `seed` answers the synthetic item in `prompt`
/// rightly (see the module docs); `false` for a prompt without one.
pub fn is_right(prompt: &str, accuracy: f64, seed: u64) -> bool {
    let Some((a, b)) = synthetic_question(prompt) else {
        return false;
    };
    draw(&format!("{a}+{b}"), accuracy, seed)
}

/// Whether a server at `accuracy` with `seed` answers the item named `item` rightly (any
/// item: the simulator engine's answers to a study's eval set).
pub fn draw(item: &str, accuracy: f64, seed: u64) -> bool {
    let item = hash(item);
    let own = mix(item ^ mix(seed.wrapping_add(0x9e37_79b9)));
    let draw = if unit(own ^ 0x5348_4152) < SHARED_DIFFICULTY {
        unit(item)
    } else {
        unit(own)
    };
    draw < accuracy
}

/// The answer text a server at `accuracy` with `seed` gives to `prompt`: ` 95` for the
/// item `Compute 37 + 58…` when it answers rightly, ` 96` when not; `None` when the prompt
/// holds no synthetic item.
///
/// ```
/// use servebench::quality::answers::answer;
/// let p = "Compute 37 + 58. Answer with the number only.";
/// assert_eq!(answer(p, 1.0, 0).as_deref(), Some(" 95"));
/// assert_eq!(answer(p, 0.0, 0).as_deref(), Some(" 96"));
/// assert_eq!(answer("hello", 1.0, 0), None);
/// ```
pub fn answer(prompt: &str, accuracy: f64, seed: u64) -> Option<String> {
    let (a, b) = synthetic_question(prompt)?;
    let right = a + b;
    Some(if is_right(prompt, accuracy, seed) {
        format!(" {right}")
    } else {
        format!(" {}", right + 1)
    })
}
