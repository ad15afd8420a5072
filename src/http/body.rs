//! Request bodies: read within `server.max_body_bytes`, parsed strictly, in
//! one extractor ([`Strict`]) that every JSON route uses.
//!
//! The size limit is enforced up front from `Content-Length` and again while
//! reading (the bounded read tower-http's `RequestBodyLimitLayer` uses,
//! `http_body_util::Limited`), in the extractor rather than as a layer, so
//! an oversized body gets the JSON error on the API routes and a fail-closed
//! decision — not a bare 413 — on the hook route. Bodies over
//! [`INLINE_PARSE_BYTES`] are parsed on the blocking pool, so a long
//! transcript never stalls the async workers.

use axum::body::{Body, Bytes};
use axum::extract::{FromRequest, Request};
use axum::http::{HeaderMap, header};
use serde::de::DeserializeOwned;

use super::AppState;
use super::errors::AppError;

/// Bodies up to this size are parsed on the async worker (a few µs); larger
/// ones (up to `server.max_body_bytes`, milliseconds of JSON work with a long
/// transcript) go to the blocking pool.
pub const INLINE_PARSE_BYTES: usize = 16 * 1024;

/// What a body can be parsed into.
pub trait FromBody: Sized + Send + 'static {
    fn from_body(bytes: &[u8]) -> Result<Self, AppError>;
}

/// A JSON body of type `T`, strict ([`crate::json::from_slice`]).
#[derive(Debug)]
pub struct Json<T>(pub T);

impl<T: DeserializeOwned + Send + 'static> FromBody for Json<T> {
    fn from_body(bytes: &[u8]) -> Result<Self, AppError> {
        Ok(Json(crate::json::from_slice(bytes)?))
    }
}

/// The canonical request: parsed with the same code as `vouch review`, so
/// the 400 messages are the CLI's.
impl FromBody for crate::request::Request {
    fn from_body(bytes: &[u8]) -> Result<Self, AppError> {
        Ok(crate::request::Request::from_slice(bytes)?)
    }
}

/// The extractor: a body read within the limit and parsed as `T`.
#[derive(Debug)]
pub struct Strict<T>(pub T);

impl<T: FromBody> FromRequest<AppState> for Strict<T> {
    type Rejection = AppError;

    async fn from_request(request: Request, state: &AppState) -> Result<Self, AppError> {
        let (parts, body) = request.into_parts();
        let bytes = read_limited(state, &parts.headers, body).await?;
        parse_off_worker(bytes, T::from_body).await.map(Strict)
    }
}

/// Reads the whole body, refusing more than `server.max_body_bytes`.
pub async fn read_limited(
    state: &AppState,
    headers: &HeaderMap,
    body: Body,
) -> Result<Bytes, AppError> {
    let limit = state.limits().max_body_bytes;
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return Err(AppError::PayloadTooLarge { limit });
    }
    axum::body::to_bytes(body, limit).await.map_err(|e| {
        let too_large = std::error::Error::source(&e)
            .is_some_and(|s| s.is::<http_body_util::LengthLimitError>());
        if too_large {
            AppError::PayloadTooLarge { limit }
        } else {
            AppError::BadRequest(format!("cannot read the request body: {e}"))
        }
    })
}

/// Runs `parse` over `bytes`, off the async worker when the body is large.
pub async fn parse_off_worker<T, E>(
    bytes: Bytes,
    parse: impl FnOnce(&[u8]) -> Result<T, E> + Send + 'static,
) -> Result<T, AppError>
where
    T: Send + 'static,
    E: Into<AppError> + Send + 'static,
{
    if bytes.len() <= INLINE_PARSE_BYTES {
        return parse(&bytes).map_err(Into::into);
    }
    tokio::task::spawn_blocking(move || parse(&bytes))
        .await?
        .map_err(Into::into)
}
