//! Multipart forms for the upload endpoints.

use super::{Reply, Server, KEY_A};

pub const BOUNDARY: &str = "sauti-test-boundary-7f3a";

/// One part of a form: a file (name, media type, bytes) or a text value.
pub enum Part<'a> {
    File(&'a str, &'a [u8]),
    Text(&'a str),
}

pub fn form(parts: &[(&str, Part)]) -> Vec<u8> {
    let mut body = Vec::new();
    for (name, part) in parts {
        body.extend_from_slice(format!("--{BOUNDARY}\r\n").as_bytes());
        match part {
            Part::File(media, bytes) => {
                body.extend_from_slice(
                    format!(
                        "Content-Disposition: form-data; name=\"{name}\"; filename=\"clip\"\r\nContent-Type: {media}\r\n\r\n"
                    )
                    .as_bytes(),
                );
                body.extend_from_slice(bytes);
            }
            Part::Text(value) => {
                body.extend_from_slice(
                    format!("Content-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}")
                        .as_bytes(),
                );
            }
        }
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(format!("--{BOUNDARY}--\r\n").as_bytes());
    body
}

pub fn post_form(server: &Server, path: &str, parts: &[(&str, Part)]) -> Reply {
    super::post_raw(
        &server.url(path),
        Some(KEY_A),
        &format!("multipart/form-data; boundary={BOUNDARY}"),
        &form(parts),
    )
}
