//! Content blocks of every kind, alone and inside results and messages.

use super::*;

#[test]
fn content_blocks_validate() {
    let mut c = Ctx::new();
    for v in VERSIONS {
        for block in content_blocks(v) {
            let def = match &block {
                ContentBlock::Text(_) => "TextContent",
                ContentBlock::Image(_) => "ImageContent",
                ContentBlock::Audio(_) => "AudioContent",
                ContentBlock::ResourceLink(_) => "ResourceLink",
                ContentBlock::Resource(_) => "EmbeddedResource",
            };
            c.valid(&[v], def, &block);
            if v >= "2025-06-18" {
                c.valid(&[v], "ContentBlock", &block);
            }
        }
        // Every block inside a tool result and a prompt message.
        let mut result = CallToolResult::new(content_blocks(v));
        if v >= "2026-07-28" {
            result.result_type = Some(ResultType::Complete);
        }
        c.valid(&[v], "CallToolResult", &result);
        for block in content_blocks(v) {
            c.valid(
                &[v],
                "PromptMessage",
                &PromptMessage {
                    role: Role::Assistant,
                    content: block,
                },
            );
        }
    }
    // The extension schema carries the content types too.
    for block in content_blocks("2026-07-28") {
        c.valid(EXT, "ContentBlock", &block);
    }
    // Blocks that need `type` and their required members.
    c.invalid(ALL, "TextContent", &json!({"type": "text"}));
    c.invalid(
        ALL,
        "ImageContent",
        &json!({"type": "image", "data": "AA=="}),
    );
    c.invalid(
        &since("2025-06-18"),
        "ContentBlock",
        &json!({"type": "video", "data": "AA=="}),
    );
    c.finish();
}

#[test]
fn sampling_content_validates() {
    let mut c = Ctx::new();
    for v in since("2025-11-25") {
        let blocks = vec![
            SamplingMessageContentBlock::text("hi"),
            SamplingMessageContentBlock::Image(ImageContent::from_bytes(b"x", "image/png")),
            SamplingMessageContentBlock::Audio(AudioContent::from_bytes(b"x", "audio/wav")),
            SamplingMessageContentBlock::ToolUse(tool_use()),
            SamplingMessageContentBlock::ToolResult(tool_result(v)),
        ];
        for b in &blocks {
            c.valid(&[v], "SamplingMessageContentBlock", b);
        }
        c.valid(&[v], "ToolUseContent", &tool_use());
        c.valid(&[v], "ToolResultContent", &tool_result(v));
        c.valid(
            &[v],
            "SamplingMessage",
            &SamplingMessage {
                role: Role::User,
                content: SamplingContent::Multiple(blocks),
                meta: some_meta(),
            },
        );
    }
    c.valid(EXT, "ToolResultContent", &tool_result("2026-07-28"));
    for v in VERSIONS {
        c.valid(&[v], "SamplingMessage", &SamplingMessage::user_text("hi"));
        c.valid(
            &[v],
            "SamplingMessage",
            &SamplingMessage {
                role: Role::Assistant,
                content: SamplingMessageContentBlock::Image(ImageContent::new("AA==", "image/png"))
                    .into(),
                meta: None,
            },
        );
    }
    for v in since("2025-03-26") {
        c.valid(
            &[v],
            "SamplingMessage",
            &SamplingMessage {
                role: Role::User,
                content: SamplingMessageContentBlock::Audio(AudioContent::new("AA==", "audio/wav"))
                    .into(),
                meta: None,
            },
        );
    }
    // Arrays of blocks and tool use are 2025-11-25 additions.
    let multi = SamplingMessage {
        role: Role::User,
        content: SamplingContent::Multiple(vec![SamplingMessageContentBlock::text("a")]),
        meta: None,
    };
    c.invalid(&until("2025-06-18"), "SamplingMessage", &multi);
    c.finish();
}
