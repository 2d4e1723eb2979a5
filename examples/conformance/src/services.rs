//! The fixture tools the official MCP conformance suite
//! (`@modelcontextprotocol/conformance`, server scenarios) calls, written as
//! plain annotated methods. Names, texts and URIs are the ones the suite's
//! scenario descriptions ask for.

use std::fmt;

use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use mcp::{Content, Context, ListChanges, mcp_tool};

rpc::api_group! {
    /// The fixture tools, published over MCP (`/mcp`).
    pub struct Conformance => "conformance", mcp = true;
}

/// Text of `test_simple_text`.
pub const SIMPLE_TEXT: &str = "This is a simple text response for testing.";

/// Message of the error `test_error_handling` always fails with.
pub const ERROR_MESSAGE: &str = "This tool intentionally returns an error for testing";

/// A 1x1 red pixel, as a base64 PNG (8-bit RGB, one IDAT chunk).
pub const RED_PIXEL_PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR42mP4z8AAAAMBAQD3A0FDAAAAAElFTkSuQmCC";

/// A short WAV file: 16-bit mono PCM at 8 kHz, `samples` samples of silence.
pub fn silent_wav(samples: u32) -> Vec<u8> {
    const RATE: u32 = 8_000;
    const BYTES_PER_SAMPLE: u16 = 2;
    let data_len = samples * u32::from(BYTES_PER_SAMPLE);
    let mut wav = Vec::with_capacity(44 + data_len as usize);
    wav.extend_from_slice(b"RIFF");
    wav.extend_from_slice(&(36 + data_len).to_le_bytes());
    wav.extend_from_slice(b"WAVEfmt ");
    wav.extend_from_slice(&16u32.to_le_bytes()); // fmt chunk size
    wav.extend_from_slice(&1u16.to_le_bytes()); // PCM
    wav.extend_from_slice(&1u16.to_le_bytes()); // mono
    wav.extend_from_slice(&RATE.to_le_bytes());
    wav.extend_from_slice(&(RATE * u32::from(BYTES_PER_SAMPLE)).to_le_bytes()); // byte rate
    wav.extend_from_slice(&BYTES_PER_SAMPLE.to_le_bytes()); // block align
    wav.extend_from_slice(&16u16.to_le_bytes()); // bits per sample
    wav.extend_from_slice(b"data");
    wav.extend_from_slice(&data_len.to_le_bytes());
    wav.resize(44 + data_len as usize, 0);
    wav
}

/// The error of `test_error_handling`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IntentionalError;

impl fmt::Display for IntentionalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(ERROR_MESSAGE)
    }
}

impl std::error::Error for IntentionalError {}

impl rpc::ApplicationError for IntentionalError {
    fn code(&self) -> i32 {
        1
    }
}

/// Pause between the steps of the progress and logging fixtures (the
/// suite asks for about 50 ms, so clients see notifications arrive over time).
pub const STEP: Duration = Duration::from_millis(50);

/// The fixture tools. Their names are fixed by the suite, so the service has
/// no alias: the methods are named `test_simple_text` and so on.
#[derive(Debug)]
pub struct Fixtures {
    audio: String,
    changes: ListChanges,
}

impl Default for Fixtures {
    fn default() -> Self {
        Self::new(ListChanges::new())
    }
}

impl Fixtures {
    /// The fixtures; `changes` is the hub `test_trigger_tool_change` notifies.
    pub fn new(changes: ListChanges) -> Self {
        // 100 ms of silence.
        Fixtures { audio: STANDARD.encode(silent_wav(800)), changes }
    }
}

#[rpc::service(alias = "", groups(Conformance))]
impl Fixtures {
    /// Returns one text block.
    ///
    /// Fixture of the `tools-call-simple-text` scenario.
    #[mcp_tool(title = "Simple text", read_only_hint = true, idempotent_hint = true, open_world_hint = false)]
    pub fn test_simple_text(&self) -> Content {
        Content::text(SIMPLE_TEXT)
    }

    /// Returns one image block: a 1x1 red PNG.
    ///
    /// Fixture of the `tools-call-image` scenario.
    #[mcp_tool(title = "Image content", read_only_hint = true, idempotent_hint = true, open_world_hint = false)]
    pub fn test_image_content(&self) -> Content {
        Content::image(RED_PIXEL_PNG, "image/png")
    }

    /// Returns one audio block: a short silent WAV.
    ///
    /// Fixture of the `tools-call-audio` scenario.
    #[mcp_tool(title = "Audio content", read_only_hint = true, idempotent_hint = true, open_world_hint = false)]
    pub fn test_audio_content(&self) -> Content {
        Content::audio(self.audio.clone(), "audio/wav")
    }

    /// Returns one embedded text resource, `test://embedded-resource`.
    ///
    /// Fixture of the `tools-call-embedded-resource` scenario.
    #[mcp_tool(title = "Embedded resource", read_only_hint = true, idempotent_hint = true, open_world_hint = false)]
    pub fn test_embedded_resource(&self) -> Content {
        Content::embedded_text("test://embedded-resource", "text/plain", "This is an embedded resource content.")
    }

    /// Returns a text, an image and an embedded JSON resource, in that order.
    ///
    /// Fixture of the `tools-call-mixed-content` scenario.
    #[mcp_tool(title = "Mixed content", read_only_hint = true, idempotent_hint = true, open_world_hint = false)]
    pub fn test_multiple_content_types(&self) -> Vec<Content> {
        vec![
            Content::text("Multiple content types test:"),
            Content::image(RED_PIXEL_PNG, "image/png"),
            Content::embedded_text(
                "test://mixed-content-resource",
                "application/json",
                r#"{"test":"data","value":123}"#,
            ),
        ]
    }

    /// Reports progress 0, 50 and 100 out of 100, about 50 ms apart, when
    /// the request carries a progress token; returns a text.
    ///
    /// Fixture of the `tools-call-with-progress` scenario.
    #[mcp_tool(title = "Progress", read_only_hint = true, open_world_hint = false)]
    pub async fn test_tool_with_progress(&self, ctx: Context) -> Content {
        for (step, progress) in [0.0, 50.0, 100.0].into_iter().enumerate() {
            if step > 0 {
                tokio::time::sleep(STEP).await;
            }
            ctx.progress(progress, Some(100.0), Some(&format!("step {}", step + 1)));
        }
        Content::text("Progress reported: 0, 50 and 100 of 100.")
    }

    /// Logs three `info` messages, about 50 ms apart; returns a text.
    ///
    /// Fixture of the `tools-call-with-logging` scenario (after
    /// `logging/setLevel`; without a level no message is sent).
    #[mcp_tool(title = "Logging", read_only_hint = true, open_world_hint = false)]
    pub async fn test_tool_with_logging(&self, ctx: Context) -> Content {
        ctx.info("Tool execution started");
        tokio::time::sleep(STEP).await;
        ctx.info("Tool processing data");
        tokio::time::sleep(STEP).await;
        ctx.info("Tool execution completed");
        Content::text("Logged three messages.")
    }

    /// Logs at every level; the transport delivers only what the request
    /// asked for (2026-07-28: nothing without `_meta` `logLevel`).
    ///
    /// Fixture of the `server-stateless` scenario's no-log-without-level check.
    #[mcp_tool(title = "Logging tool", read_only_hint = true, open_world_hint = false)]
    pub fn test_logging_tool(&self, ctx: Context) -> Content {
        for level in mcp::LogLevel::ALL {
            ctx.log(level, format!("a {level} message"));
        }
        Content::text("Logged one message at each level.")
    }

    /// Needs the client's `sampling` capability: a client that did not
    /// declare it gets `-32021` and the method does not run.
    ///
    /// Fixture of the `server-stateless` scenario's capability checks.
    #[mcp_tool(title = "Needs sampling", read_only_hint = true, open_world_hint = false, requires_client(sampling))]
    pub fn test_missing_capability(&self) -> Content {
        Content::text("The client declared sampling.")
    }

    /// Tells open `subscriptions/listen` streams that the tool list changed.
    ///
    /// Fixture of the `server-stateless` scenario's subscription checks.
    #[mcp_tool(title = "Trigger a tool-list change", idempotent_hint = true, open_world_hint = false)]
    pub fn test_trigger_tool_change(&self) -> Content {
        self.changes.tools_changed();
        Content::text("Sent notifications/tools/list_changed to the open listen streams.")
    }

    /// Tells open `subscriptions/listen` streams that the prompt list changed.
    ///
    /// Fixture of the `server-stateless` scenario's subscription checks.
    #[mcp_tool(title = "Trigger a prompt-list change", idempotent_hint = true, open_world_hint = false)]
    pub fn test_trigger_prompt_change(&self) -> Content {
        self.changes.prompts_changed();
        Content::text("Sent notifications/prompts/list_changed to the open listen streams.")
    }

    /// Echoes `region`, which clients of 2026-07-28 mirror into the
    /// `Mcp-Param-Region` header (SEP-2243); the server checks the header
    /// against the argument.
    ///
    /// # Arguments
    /// * `region` - Where to run
    #[mcp_tool(title = "Mirrored header", read_only_hint = true, open_world_hint = false)]
    pub fn test_mirrored_header(&self, #[rpc(header = "Region")] region: String) -> Content {
        Content::text(format!("region: {region}"))
    }

    /// Records a contact, described by a hand-written JSON Schema 2020-12
    /// (`$defs` with an `$anchor`, `allOf`/`anyOf`, `if`/`then`/`else`) that
    /// is listed as written and enforced before the call.
    ///
    /// Fixture of the `json-schema-2020-12` scenario.
    #[mcp_tool(
        title = "JSON Schema 2020-12",
        read_only_hint = true,
        open_world_hint = false,
        input_schema = "schemas/json_schema_2020_12.json"
    )]
    #[allow(non_snake_case)]
    pub fn json_schema_2020_12_tool(
        &self,
        name: Option<String>,
        address: Option<serde_json::Value>,
        contactMethod: Option<String>,
        phone: Option<String>,
        email: Option<String>,
    ) -> Content {
        let how = match contactMethod.as_deref() {
            Some("phone") => format!("phone {}", phone.unwrap_or_default()),
            _ => format!("email {}", email.or(phone).unwrap_or_default()),
        };
        let city = address.as_ref().and_then(|a| a["city"].as_str()).unwrap_or("nowhere");
        Content::text(format!("{} in {city}, by {how}", name.unwrap_or_else(|| "someone".into())))
    }

    /// Always fails: the result is a tool error (`isError: true`).
    ///
    /// Fixture of the `tools-call-error` scenario.
    #[mcp_tool(title = "Error handling", read_only_hint = true, idempotent_hint = true, open_world_hint = false)]
    pub fn test_error_handling(&self) -> Result<Content, IntentionalError> {
        Err(IntentionalError)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn png_is_one_red_pixel() {
        let png = STANDARD.decode(RED_PIXEL_PNG).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        assert_eq!(&png[12..16], b"IHDR");
        assert_eq!(u32::from_be_bytes(png[16..20].try_into().unwrap()), 1, "width");
        assert_eq!(u32::from_be_bytes(png[20..24].try_into().unwrap()), 1, "height");
        assert!(png.ends_with(b"IEND\xae\x42\x60\x82"));
    }

    #[test]
    fn wav_header_is_consistent() {
        let wav = silent_wav(800);
        assert_eq!(wav.len(), 44 + 1600);
        assert_eq!(&wav[..4], b"RIFF");
        assert_eq!(u32::from_le_bytes(wav[4..8].try_into().unwrap()) as usize, wav.len() - 8);
        assert_eq!(&wav[8..16], b"WAVEfmt ");
        assert_eq!(&wav[36..40], b"data");
        assert_eq!(u32::from_le_bytes(wav[40..44].try_into().unwrap()), 1600);
    }
}
