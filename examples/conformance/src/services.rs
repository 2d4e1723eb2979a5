//! The fixture tools the official MCP conformance suite
//! (`@modelcontextprotocol/conformance`, server scenarios) calls, written as
//! plain annotated methods. Names, texts and URIs are the ones the suite's
//! scenario descriptions ask for.

use std::fmt;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use mcp::{Content, mcp_tool};

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

/// The fixture tools. Their names are fixed by the suite, so the service has
/// no alias: the methods are named `test_simple_text` and so on.
#[derive(Debug)]
pub struct Fixtures {
    audio: String,
}

impl Default for Fixtures {
    fn default() -> Self {
        // 100 ms of silence.
        Fixtures { audio: STANDARD.encode(silent_wav(800)) }
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
