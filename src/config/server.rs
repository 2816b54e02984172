//! `[server]`: the listening socket, timeouts, connection bounds, CORS and the async runtime's threads.

use std::net::SocketAddr;

use serde::{Deserialize, Serialize};

/// `[server]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ServerSettings {
    /// Address to listen on; port 0 picks a free port (the bound address is logged).
    pub bind: String,
    /// Base URL clients reach the service at; problem `type` URLs are built from it. Empty: `http://` and the
    /// address actually bound.
    pub public_base_url: String,
    /// A request body that sends nothing for this many seconds is abandoned with 408 (slow uploads).
    pub body_timeout_seconds: u64,
    /// A connection that has not sent a request's complete headers within this many seconds is closed.
    pub header_timeout_seconds: u64,
    /// A connection with no request in flight that sends nothing for this many seconds is closed.
    pub idle_timeout_seconds: u64,
    /// A client that reads nothing of its response for this many seconds is dropped.
    pub write_timeout_seconds: u64,
    /// Connections open at once; one more is answered 503 and closed.
    pub max_connections: usize,
    /// After SIGTERM or SIGINT, requests in flight get this many seconds to finish; then the rest are closed
    /// (running jobs are picked up again at the next start).
    pub shutdown_grace_seconds: u64,
    /// Origins whose web pages may call the API from a browser (CORS): `scheme://host[:port]` each, or `*` for
    /// any (development). Empty (the default): none. Blank entries are ignored.
    pub cors_origins: Vec<String>,
    /// Threads of the async runtime (connections, HTTP, actors); 0 = one per four cores, at least one.
    /// Synthesis and recognition run on their own threads, so a few carry the rest.
    pub io_threads: usize,
}

impl ServerSettings {
    /// Async runtime threads for `cores` cores: the configured count, or one per four cores (at least one).
    pub fn io_threads_for(&self, cores: usize) -> usize {
        match self.io_threads {
            0 => (cores / 4).max(1),
            threads => threads,
        }
    }
}

impl Default for ServerSettings {
    fn default() -> Self {
        Self {
            bind: "127.0.0.1:8080".into(),
            public_base_url: String::new(),
            body_timeout_seconds: 30,
            header_timeout_seconds: 30,
            idle_timeout_seconds: 60,
            write_timeout_seconds: 30,
            max_connections: 4096,
            shutdown_grace_seconds: 20,
            cors_origins: Vec::new(),
            io_threads: 0,
        }
    }
}

impl ServerSettings {
    /// The first value the types alone do not rule out that is wrong: its key and what is wrong.
    pub fn problem(&self) -> Option<(&'static str, String)> {
        let invalid = |key, problem: &str| Some((key, problem.to_string()));
        if self.bind.parse::<SocketAddr>().is_err() {
            return invalid("server.bind", "must be an address such as 127.0.0.1:8080");
        }
        let url = &self.public_base_url;
        if !url.is_empty()
            && (!(url.starts_with("http://") || url.starts_with("https://")) || url.ends_with('/'))
        {
            return invalid(
                "server.public_base_url",
                "must be an http(s) URL without a trailing slash",
            );
        }
        for (key, value) in [
            ("server.body_timeout_seconds", self.body_timeout_seconds),
            ("server.header_timeout_seconds", self.header_timeout_seconds),
            ("server.idle_timeout_seconds", self.idle_timeout_seconds),
            ("server.write_timeout_seconds", self.write_timeout_seconds),
            ("server.max_connections", self.max_connections as u64),
        ] {
            if value == 0 {
                return invalid(key, "must be at least 1");
            }
        }
        if self.io_threads > 256 {
            return invalid("server.io_threads", "must be 0 (one per four cores) to 256");
        }
        let mut origins = self.cors_origins.iter().filter(|o| !o.trim().is_empty());
        if let Some(origin) = origins.find_map(|o| origin_problem(o)) {
            return Some(("server.cors_origins", origin));
        }
        None
    }
}

/// Why `origin` is not a CORS origin (`scheme://host[:port]`, http or https, no path) nor `*`, if it is not.
pub fn origin_problem(origin: &str) -> Option<String> {
    let origin = origin.trim();
    let host = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"));
    match host {
        _ if origin == "*" => None,
        Some(h) if !h.is_empty() && !h.contains(['/', '?', '#', ' ', '@']) => None,
        _ => Some(format!(
            "{origin:?} is not an origin: write scheme://host[:port] (no path), or \"*\""
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cors_origins_must_be_origins() {
        assert_eq!(origin_problem("*"), None);
        assert_eq!(origin_problem("https://app.example:8443"), None);
        assert!(origin_problem("https://app.example/page").is_some());
        assert!(origin_problem("app.example").is_some());
        assert!(origin_problem("ftp://app.example").is_some());
        let server = ServerSettings {
            cors_origins: vec!["http://ok.example".into(), "nope".into()],
            ..Default::default()
        };
        assert_eq!(server.problem().map(|p| p.0), Some("server.cors_origins"));
    }

    #[test]
    fn io_threads_are_one_per_four_cores_unless_configured() {
        let mut server = ServerSettings::default();
        let automatic: Vec<usize> = [1, 2, 4, 7, 8, 16, 64]
            .iter()
            .map(|&cores| server.io_threads_for(cores))
            .collect();
        assert_eq!(automatic, [1, 1, 1, 1, 2, 4, 16]);
        server.io_threads = 3;
        assert_eq!(server.io_threads_for(2), 3);
    }
}
