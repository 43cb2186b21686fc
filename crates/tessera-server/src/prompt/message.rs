//! Checks on the messages a prompt handler produced, and their fitting to
//! the protocol version of the request.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use tessera_types::{ContentBlock, PromptMessage, ProtocolVersion, ResourceContents, TextContent};

/// Checks that every message is well formed: base64 data with a MIME type for
/// images and audio, a URI for resource links and embedded resources, base64
/// for embedded blobs. The error says which message is wrong and why.
pub(crate) fn check_messages(messages: &[PromptMessage]) -> Result<(), String> {
    for (i, m) in messages.iter().enumerate() {
        check_content(&m.content).map_err(|problem| format!("message {i}: {problem}"))?;
    }
    Ok(())
}

fn check_content(content: &ContentBlock) -> Result<(), String> {
    let base64 = |what: &str, data: &str| {
        BASE64
            .decode(data)
            .map(drop)
            .map_err(|e| format!("{what} is not valid base64 ({e})"))
    };
    match content {
        ContentBlock::Text(_) => Ok(()),
        ContentBlock::Image(c) => {
            if c.mime_type.trim().is_empty() {
                return Err("an image needs a MIME type".into());
            }
            base64("the image data", &c.data)
        }
        ContentBlock::Audio(c) => {
            if c.mime_type.trim().is_empty() {
                return Err("audio needs a MIME type".into());
            }
            base64("the audio data", &c.data)
        }
        ContentBlock::ResourceLink(l) => {
            if l.uri.is_empty() {
                return Err("a resource link needs a URI".into());
            }
            Ok(())
        }
        ContentBlock::Resource(r) => {
            if r.resource.uri().is_empty() {
                return Err("an embedded resource needs a URI".into());
            }
            match &r.resource {
                ResourceContents::Text(_) => Ok(()),
                ResourceContents::Blob(b) => base64("the embedded resource's blob", &b.blob),
            }
        }
    }
}

/// Rewrites content a client of an older protocol version cannot read:
/// before 2025-06-18 a resource link becomes a text message naming the
/// resource; before 2025-03-26 audio cannot be sent at all (an error).
pub(crate) fn fit_to_version(
    messages: &mut [PromptMessage],
    version: ProtocolVersion,
) -> Result<(), String> {
    for (i, m) in messages.iter_mut().enumerate() {
        match &m.content {
            ContentBlock::Audio(_) if version < ProtocolVersion::V2025_03_26 => {
                return Err(format!(
                    "message {i} is audio, which protocol version {version} cannot carry"
                ));
            }
            ContentBlock::ResourceLink(l) if version < ProtocolVersion::V2025_06_18 => {
                let mut text = format!("Resource: {}", l.title.as_deref().unwrap_or(&l.name));
                text.push_str(&format!(" <{}>", l.uri));
                if let Some(d) = &l.description {
                    text.push_str(&format!("\n{d}"));
                }
                let mut block = TextContent::new(text);
                block.annotations = l.annotations.clone();
                m.content = ContentBlock::Text(block);
            }
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use tessera_types::Role;

    fn user(content: ContentBlock) -> PromptMessage {
        PromptMessage {
            role: Role::User,
            content,
        }
    }

    #[test]
    fn refuses_malformed_content() {
        assert!(check_messages(&[user(ContentBlock::image("aGk=", "image/png"))]).is_ok());
        let e = check_messages(&[
            user(ContentBlock::text("ok")),
            user(ContentBlock::image("not base64!", "image/png")),
        ])
        .unwrap_err();
        assert!(e.starts_with("message 1:"), "{e}");
        assert!(check_messages(&[user(ContentBlock::audio("aGk=", ""))]).is_err());
        assert!(check_messages(&[user(ContentBlock::resource_link("", "x"))]).is_err());
        assert!(check_messages(&[user(ContentBlock::embedded_text("", "x"))]).is_err());
    }

    #[test]
    fn fits_older_versions() {
        let mut m = vec![user(ContentBlock::resource_link("file:///a.rs", "a.rs"))];
        fit_to_version(&mut m, ProtocolVersion::V2025_06_18).unwrap();
        assert!(matches!(m[0].content, ContentBlock::ResourceLink(_)));
        fit_to_version(&mut m, ProtocolVersion::V2025_03_26).unwrap();
        assert_eq!(
            m[0].content.as_text(),
            Some("Resource: a.rs <file:///a.rs>")
        );

        let mut a = vec![user(ContentBlock::audio("aGk=", "audio/wav"))];
        fit_to_version(&mut a, ProtocolVersion::V2025_03_26).unwrap();
        assert!(fit_to_version(&mut a, ProtocolVersion::V2024_11_05).is_err());
    }
}
