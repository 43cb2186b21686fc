//! Real media for the content tests: a 16×16 PNG tile and a short 440 Hz WAV tone.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

/// A 16×16 RGB PNG of four coloured squares.
pub const PNG: &[u8] = include_bytes!("assets/tile.png");

/// 0.1 s of a 440 Hz sine, 8 kHz, 16-bit mono PCM WAV.
pub const WAV: &[u8] = include_bytes!("assets/tone.wav");

/// [`PNG`] in base64.
pub fn png_base64() -> String {
    STANDARD.encode(PNG)
}

/// [`WAV`] in base64.
pub fn wav_base64() -> String {
    STANDARD.encode(WAV)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn media_are_real() {
        assert_eq!(&PNG[..8], b"\x89PNG\r\n\x1a\n");
        assert_eq!(&WAV[..4], b"RIFF");
        assert_eq!(&WAV[8..12], b"WAVE");
    }
}
