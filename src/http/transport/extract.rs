//! Axum extractors whose rejections are our problem responses.

use axum::extract::{FromRequest, FromRequestParts, Path, Query, Request};
use axum::http::request::Parts;
use axum::Json;
use serde::de::DeserializeOwned;

use crate::http::transport::problem::ApiError;

/// A JSON body; malformed JSON is 400, a wrong shape 422, a missing content type 415.
pub struct ApiJson<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, ApiError> {
        // A body that declares more than the limit is refused at once, not read (or waited for) first.
        let declared = request
            .headers()
            .get(axum::http::header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        if declared.is_some_and(|length| length > crate::http::JSON_LIMIT as u64) {
            return Err(ApiError::too_large("the JSON body is larger than 1 MB"));
        }
        // One without a length (chunked) is cut off at the limit as it arrives. The limit is kept here rather
        // than in a layer over every route, which would mark every request, bodiless ones included.
        let request = request.map(|body| {
            axum::body::Body::new(http_body_util::Limited::new(body, crate::http::JSON_LIMIT))
        });
        let Json(value) = Json::<T>::from_request(request, state).await?;
        Ok(ApiJson(value))
    }
}

/// Query parameters; a malformed query is 400.
pub struct ApiQuery<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequestParts<S> for ApiQuery<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        // Most requests carry no query: read the parameters' absence directly (what parsing an empty query
        // would give), and leave a refusal (a required parameter missing) to the parser, which words it.
        if parts.uri.query().is_none() {
            let none = std::iter::empty::<(&str, &str)>();
            let empty = serde::de::value::MapDeserializer::<_, serde::de::value::Error>::new(none);
            if let Ok(value) = T::deserialize(empty) {
                return Ok(ApiQuery(value));
            }
        }
        let Query(value) = Query::<T>::from_request_parts(parts, state).await?;
        Ok(ApiQuery(value))
    }
}

/// Path parameters; an undecodable segment is 400.
pub struct ApiPath<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned + Send> FromRequestParts<S> for ApiPath<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let Path(value) = Path::<T>::from_request_parts(parts, state).await?;
        Ok(ApiPath(value))
    }
}

#[cfg(test)]
mod tests {
    use axum::extract::FromRequestParts;
    use serde::Deserialize;

    use super::ApiQuery;

    #[derive(Debug, Deserialize, PartialEq)]
    struct Optional {
        language: Option<String>,
        #[serde(default)]
        page: u32,
    }

    #[derive(Debug, Deserialize)]
    struct Required {
        #[allow(dead_code)]
        token: String,
    }

    async fn query<T: serde::de::DeserializeOwned>(uri: &str) -> Result<T, super::ApiError> {
        let request = axum::http::Request::get(uri).body(()).unwrap();
        let (mut parts, ()) = request.into_parts();
        ApiQuery::<T>::from_request_parts(&mut parts, &())
            .await
            .map(|ApiQuery(value)| value)
    }

    #[tokio::test]
    async fn an_absent_query_reads_as_an_empty_one() {
        let none = Optional {
            language: None,
            page: 0,
        };
        assert_eq!(query::<Optional>("/v1/voices").await.unwrap(), none);
        assert_eq!(query::<Optional>("/v1/voices?").await.unwrap(), none);
        let given = query::<Optional>("/v1/voices?language=sw&page=2")
            .await
            .unwrap();
        assert_eq!(given.language.as_deref(), Some("sw"));
        assert_eq!(given.page, 2);
        // A required parameter missing is refused the same way with or without a query.
        let without = query::<Required>("/v1/x").await.unwrap_err();
        let with = query::<Required>("/v1/x?other=1").await.unwrap_err();
        assert_eq!(without.status(), axum::http::StatusCode::BAD_REQUEST);
        assert_eq!(without.detail, with.detail);
        assert!(without.detail.contains("token"), "{}", without.detail);
    }
}
