//! The driver's errors, split by fault.

use crate::session::RequestFailure;

/// Why a session call failed, split by fault.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The CLI could not be started or exited before its first line.
    #[error("launch: {0}")]
    Launch(String),
    /// A request failed (refused by the CLI, timed out, cancelled, or the CLI exited).
    #[error("{subtype}: {failure}")]
    Request {
        /// The request subtype.
        subtype: String,
        /// Why.
        failure: RequestFailure,
    },
    /// A success payload did not decode as its typed answer (the CLI changed its shape).
    #[error("{subtype}: the answer does not decode: {message}")]
    BadAnswer {
        /// The request subtype.
        subtype: String,
        /// The decode error.
        message: String,
    },
    /// The session has ended, or its input has (after [`Claude::end_input`]).
    #[error("the session has ended: {0}")]
    Closed(String),
    /// The call was refused before anything was written (a raw line holding a newline).
    #[error("invalid input: {0}")]
    InvalidInput(String),
}

/// Whose fault an [`Error`] is: what a caller can do about it differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Fault {
    /// The CLI could not be started: the program, its arguments or the machine (not found,
    /// not executable, refused its options, not logged in). Fix the setup.
    Launch,
    /// The API was misused (for example a raw line with a newline in it).
    Usage,
    /// The CLI broke the protocol: an answer that does not decode as its type.
    Protocol,
    /// The CLI refused the request (an error answer, with its `error_code` when it gave one).
    Refused,
    /// No answer in time, or the host withdrew the request.
    Timeout,
    /// The CLI exited, or the session was closed: the session is over.
    Exited,
}

impl Error {
    /// Whose fault this error is.
    pub fn fault(&self) -> Fault {
        match self {
            Error::Launch(_) => Fault::Launch,
            Error::InvalidInput(_) => Fault::Usage,
            Error::BadAnswer { .. } => Fault::Protocol,
            Error::Request { failure, .. } => match failure {
                RequestFailure::Refused { .. } => Fault::Refused,
                RequestFailure::TimedOut(_) | RequestFailure::Cancelled => Fault::Timeout,
                RequestFailure::Exited(_) => Fault::Exited,
            },
            Error::Closed(_) => Fault::Exited,
        }
    }

    /// The CLI's `error_code` when it refused the request.
    pub fn error_code(&self) -> Option<&byre_proto::ErrorCode> {
        match self {
            Error::Request {
                failure: RequestFailure::Refused { code, .. },
                ..
            } => code.as_ref(),
            _ => None,
        }
    }
}
