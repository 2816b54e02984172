//! Whether a webhook destination may be used: an `http://` or `https://` URL whose host resolves only to public
//! addresses — never loopback, private, link-local, shared (CGNAT), multicast or unspecified ones — unless the
//! operator allows them (`webhooks.allow_private_destinations`). Checked when a key sets its webhook and again
//! at each delivery, whose connection then goes to the addresses checked (so a name that changes its answer in
//! between cannot point the delivery inside).

use std::net::{IpAddr, SocketAddr};

/// Whether an address is inside a private network (or the machine itself).
pub fn private(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_multicast()
                || v4.is_documentation()
                || (a == 100 && (64..128).contains(&b))
                || a == 0
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return private(IpAddr::V4(v4));
            }
            let first = v6.segments()[0];
            v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (first & 0xfe00) == 0xfc00
                || (first & 0xffc0) == 0xfe80
        }
    }
}

/// The addresses a destination's host resolves to, once the URL and every address may be used.
pub async fn check(url: &str, allow_private: bool) -> Result<(String, Vec<SocketAddr>), String> {
    let parsed = url::Url::parse(url).map_err(|e| format!("the webhook url is not a URL: {e}"))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err("the webhook url must be http:// or https://".into());
    }
    if url.len() > 2_048 {
        return Err("the webhook url may be 2048 characters at most".into());
    }
    let host = parsed
        .host_str()
        .ok_or("the webhook url needs a host")?
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_string();
    let port = parsed.port_or_known_default().unwrap_or(443);
    let addresses: Vec<SocketAddr> = match host.parse::<IpAddr>() {
        Ok(ip) => vec![SocketAddr::new(ip, port)],
        Err(_) => tokio::time::timeout(
            std::time::Duration::from_secs(5),
            tokio::net::lookup_host((host.as_str(), port)),
        )
        .await
        .map_err(|_| format!("{host} could not be resolved in time"))?
        .map_err(|e| format!("{host} could not be resolved: {e}"))?
        .collect(),
    };
    if addresses.is_empty() {
        return Err(format!("{host} resolves to no address"));
    }
    if !allow_private {
        if let Some(inside) = addresses.iter().find(|a| private(a.ip())) {
            return Err(format!(
                "the webhook url resolves to {}, a loopback, private or link-local address; the operator may allow such destinations with webhooks.allow_private_destinations",
                inside.ip()
            ));
        }
    }
    Ok((host, addresses))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_and_local_addresses_are_told_apart_from_public_ones() {
        for inside in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.9",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "::1",
            "fd00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "224.0.0.1",
        ] {
            assert!(private(inside.parse().unwrap()), "{inside}");
        }
        for outside in ["8.8.8.8", "41.59.1.1", "2001:4860:4860::8888"] {
            assert!(!private(outside.parse().unwrap()), "{outside}");
        }
    }

    #[tokio::test]
    async fn a_destination_inside_is_refused_unless_allowed() {
        assert!(check("http://127.0.0.1:9/hook", false)
            .await
            .unwrap_err()
            .contains("loopback"));
        assert!(check("http://localhost:9/hook", false).await.is_err());
        assert!(check("http://[::1]:9/hook", false).await.is_err());
        assert!(check("ftp://example.com/hook", false).await.is_err());
        let (host, addresses) = check("http://127.0.0.1:9/hook", true).await.unwrap();
        assert_eq!(host, "127.0.0.1");
        assert_eq!(addresses[0].port(), 9);
    }
}
