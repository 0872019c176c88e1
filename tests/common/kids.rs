//! Child processes of a test (shards, servers), killed and reaped if the test ends before
//! they do.

use std::process::Child;

/// Child processes killed if the test fails before they end.
pub struct Kids(pub Vec<Child>);

impl Drop for Kids {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}
