//! Answers to the host's requests that are checked before they are taken: a `read_file`
//! answer whose `requested_path` is not the path sent answers another request under the
//! same id (CLI 2.1.337 and later say so), so it is set aside and the right one awaited.

use std::collections::HashMap;

use byre_proto::{HostRequest, RawJson, ReadFileResponse};

use crate::correlation::RequestId;

/// The paths of the `read_file` requests in flight, by id.
#[derive(Debug, Default)]
pub(super) struct ReadPaths(HashMap<RequestId, String>);

impl ReadPaths {
    /// Notes the path of `request`, sent as `id`, when it is a `read_file`; forgets the ids
    /// `pending` says are no longer in flight (answered, cancelled, expired).
    pub(super) fn sent(
        &mut self,
        id: &RequestId,
        request: &HostRequest,
        pending: impl Fn(&RequestId) -> bool,
    ) {
        if let HostRequest::ReadFile(read) = request {
            self.0.retain(|id, _| pending(id));
            self.0.insert(id.clone(), read.path.clone());
        }
    }

    /// Why a success answer to `id` answers another request (its `requested_path` is not the
    /// path sent), or `None` when it is the answer (and the id is forgotten).
    pub(super) fn stale(&mut self, id: &RequestId, payload: Option<&RawJson>) -> Option<String> {
        let sent = self.0.get(id)?;
        let requested = payload
            .and_then(|raw| raw.parse::<ReadFileResponse>().ok())
            .and_then(|answer| answer.requested_path);
        match requested {
            Some(requested) if &requested != sent => Some(format!(
                "a read_file answer for {requested:?}, not {sent:?}: another request's, set aside"
            )),
            _ => {
                self.0.remove(id);
                None
            }
        }
    }

    /// Forgets `id` (its answer came, as an error).
    pub(super) fn forget(&mut self, id: &RequestId) {
        self.0.remove(id);
    }
}
