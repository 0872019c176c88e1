//! What a bench run records about the shape of its load: its stages (phases, ramp steps,
//! a staged fill), from the arguments it was sent with.

use super::BenchArgs;
use crate::observe::Stage;

impl BenchArgs {
    /// The run's load stages ([`Stage::of_load`]) over the requests it sends.
    pub(crate) fn stages(&self) -> Vec<Stage> {
        let requests = self.max_requests.map_or(self.profile.total_requests, |m| {
            m.min(self.profile.total_requests)
        });
        let cap = self.max_concurrency.or(self
            .profile
            .max_concurrency
            .and_then(|c| usize::try_from(c).ok()));
        Stage::of_load(
            self.phases.as_ref(),
            self.arrivals.as_ref(),
            requests,
            self.fill,
            cap,
        )
    }
}
