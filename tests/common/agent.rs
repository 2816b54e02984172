//! What a voice-agent turn answered, as the tests read it.

use super::Reply;

/// The agent's reply text of a 200 agent turn.
pub fn agent_text(reply: &Reply) -> String {
    let body = String::from_utf8_lossy(&reply.body);
    assert_eq!(reply.status, 200, "{body}");
    reply.json()["agent_text"].as_str().unwrap().to_string()
}
