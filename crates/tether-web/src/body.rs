//! What the API and the pages read from a request — a JSON body, a query string: a request
//! that does not fit is answered like every other error (`{"error": "…"}` from the API, the
//! error page from a page), naming the field, never with the HTTP library's plain-text
//! rejection.

use axum::extract::{FromRequest, FromRequestParts, OptionalFromRequest, Query, Request};
use axum::http::request::Parts;
use serde::de::DeserializeOwned;

use crate::error::WebError;

/// A JSON request body of type `T`.
pub(crate) struct Body<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for Body<T> {
    type Rejection = WebError;

    async fn from_request(req: Request, state: &S) -> Result<Self, WebError> {
        let axum::Json(body) = <axum::Json<T> as FromRequest<S>>::from_request(req, state).await?;
        Ok(Body(body))
    }
}

impl<T: DeserializeOwned, S: Send + Sync> OptionalFromRequest<S> for Body<T> {
    type Rejection = WebError;

    async fn from_request(req: Request, state: &S) -> Result<Option<Self>, WebError> {
        let body = <axum::Json<T> as OptionalFromRequest<S>>::from_request(req, state).await?;
        Ok(body.map(|axum::Json(body)| Body(body)))
    }
}

/// A query string read as `T`.
pub(crate) struct Params<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequestParts<S> for Params<T> {
    type Rejection = WebError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, WebError> {
        let Query(params) = Query::<T>::from_request_parts(parts, state).await?;
        Ok(Params(params))
    }
}

/// A page's query string read as `T`; one that does not fit gets the error page.
pub(crate) struct PageParams<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequestParts<S> for PageParams<T> {
    type Rejection = axum::response::Response;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &S,
    ) -> Result<Self, axum::response::Response> {
        match Query::<T>::from_request_parts(parts, state).await {
            Ok(Query(params)) => Ok(PageParams(params)),
            Err(rejection) => Err(crate::pages::error_page(&rejection.into())),
        }
    }
}
