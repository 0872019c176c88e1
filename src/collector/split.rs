//! What a request handle learns at the end of a reasoning stream: how its chunks divided
//! into reasoning and answer ([`RequestRecord::reasoning`](crate::record::RequestRecord)).

use super::{Clock, RequestHandle};
use crate::record::{Accumulator, StreamSplit};

impl<C: Clock, A: Accumulator + Clone> RequestHandle<'_, C, A> {
    /// Set how the stream divided into reasoning and answer.
    pub fn set_reasoning(&mut self, split: StreamSplit) {
        if let Some(r) = self.record.as_mut() {
            r.reasoning = Some(split);
        }
    }
}
