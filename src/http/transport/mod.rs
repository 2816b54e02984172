//! What every protocol rides on: listening and connections ([`listen`]), the edge every request passes
//! ([`edge`]: request ids, CORS, admission), keys and tokens ([`auth`]), rate limits ([`limits`]), request
//! bodies, paths, queries and uploads ([`extract`], [`upload`]), byte ranges of downloads ([`ranges`],
//! [`download`]), the `character-cost` header of synthesised answers ([`cost`]) and the problem+json rendering of
//! refusals ([`problem`]).

pub mod auth;
pub mod coarse_clock;
pub mod cors;
pub mod cost;
pub mod download;
pub mod edge;
pub mod extract;
pub mod limits;
pub mod listen;
pub mod problem;
pub mod ranges;
pub mod upload;
pub mod websocket;
