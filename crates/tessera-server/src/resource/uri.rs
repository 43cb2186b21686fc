//! URI helpers: percent-encoding and -decoding (on the `percent-encoding`
//! crate) with the strictness and the RFC 6570 reserved set templates need,
//! and the syntax check applied to every URI a client sends.

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};

/// Every byte but the unreserved ones, `ALPHA / DIGIT / "-" / "." / "_" /
/// "~"` (RFC 3986 §2.3), is encoded.
const NOT_UNRESERVED: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// As [`NOT_UNRESERVED`], but the reserved characters (`gen-delims` and
/// `sub-delims`, RFC 3986 §2.2) are kept as well.
const NOT_UNRESERVED_OR_RESERVED: &AsciiSet = &NOT_UNRESERVED
    .remove(b':')
    .remove(b'/')
    .remove(b'?')
    .remove(b'#')
    .remove(b'[')
    .remove(b']')
    .remove(b'@')
    .remove(b'!')
    .remove(b'$')
    .remove(b'&')
    .remove(b'\'')
    .remove(b'(')
    .remove(b')')
    .remove(b'*')
    .remove(b'+')
    .remove(b',')
    .remove(b';')
    .remove(b'=');

/// Whether `s[i..]` starts with a well-formed `%XX` triplet.
pub(crate) fn is_triplet(s: &[u8], i: usize) -> bool {
    s.len() >= i + 3 && s[i] == b'%' && s[i + 1].is_ascii_hexdigit() && s[i + 2].is_ascii_hexdigit()
}

/// Decodes `%XX` triplets. `None` when a `%` does not start a triplet or the
/// bytes are not UTF-8 (the `percent-encoding` crate itself lets a stray `%`
/// through, so that is checked first).
pub(crate) fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let malformed = bytes
        .iter()
        .enumerate()
        .any(|(i, &b)| b == b'%' && !is_triplet(bytes, i));
    if malformed {
        return None;
    }
    percent_decode_str(s)
        .decode_utf8()
        .ok()
        .map(|text| text.into_owned())
}

/// Percent-encodes every byte that is not unreserved; with `allow_reserved`
/// reserved characters and existing `%XX` triplets are kept as they are
/// (RFC 6570 "U+R").
pub(crate) fn percent_encode(s: &str, allow_reserved: bool) -> String {
    if !allow_reserved {
        return utf8_percent_encode(s, NOT_UNRESERVED).to_string();
    }
    // Encode the text between well-formed triplets, and copy the triplets.
    let bytes = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut from = 0;
    let mut i = 0;
    while i < bytes.len() {
        if is_triplet(bytes, i) {
            out.extend(utf8_percent_encode(&s[from..i], NOT_UNRESERVED_OR_RESERVED));
            out.push_str(&s[i..i + 3]);
            i += 3;
            from = i;
        } else {
            i += 1;
        }
    }
    out.extend(utf8_percent_encode(&s[from..], NOT_UNRESERVED_OR_RESERVED));
    out
}

/// Checks that `uri` looks like an absolute URI (RFC 3986): a scheme, then
/// no whitespace, control characters or characters that URIs never contain,
/// and only well-formed `%XX` escapes. Non-ASCII characters are accepted
/// (IRIs).
pub(crate) fn check_uri(uri: &str) -> Result<(), &'static str> {
    let Some((scheme, _)) = uri.split_once(':') else {
        return Err("a URI needs a scheme (such as `file:`)");
    };
    let mut chars = scheme.bytes();
    let scheme_ok = chars.next().is_some_and(|b| b.is_ascii_alphabetic())
        && chars.all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'));
    if !scheme_ok {
        return Err("the URI scheme is not valid");
    }
    let bytes = uri.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        if b <= b' ' || b == 0x7f {
            return Err("URIs contain no spaces or control characters");
        }
        if matches!(
            b,
            b'"' | b'<' | b'>' | b'\\' | b'^' | b'`' | b'{' | b'|' | b'}'
        ) {
            return Err("the URI contains a character that URIs never contain");
        }
        if b == b'%' && !is_triplet(bytes, i) {
            return Err("the URI contains a `%` that does not start a %XX escape");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_and_encodes() {
        assert_eq!(percent_decode("a%20b%2Fc").as_deref(), Some("a b/c"));
        assert_eq!(percent_decode("%C3%A9t%C3%A9").as_deref(), Some("été"));
        assert_eq!(percent_decode("bad%2"), None);
        assert_eq!(percent_decode("bad%zz"), None);
        assert_eq!(percent_decode("%FF"), None, "not UTF-8");
        assert_eq!(percent_encode("Hello World!", false), "Hello%20World%21");
        assert_eq!(percent_encode("Hello World!", true), "Hello%20World!");
        assert_eq!(percent_encode("/foo/bar", true), "/foo/bar");
        assert_eq!(percent_encode("/foo/bar", false), "%2Ffoo%2Fbar");
        assert_eq!(percent_encode("50%25 off", true), "50%25%20off");
        assert_eq!(percent_encode("50% off", true), "50%25%20off");
        assert_eq!(percent_encode("été", false), "%C3%A9t%C3%A9");
    }

    #[test]
    fn checks_uris() {
        for ok in [
            "file:///project/src/main.rs",
            "https://example.com/a?b=c#d",
            "db+sql://host/table",
            "urn:isbn:0451450523",
            "mem://caf%C3%A9",
            "notes://été",
        ] {
            assert_eq!(check_uri(ok), Ok(()), "{ok}");
        }
        for bad in [
            "",
            "no-scheme",
            "/absolute/path",
            "1abc://x",
            "file:///a b",
            "file:///a\nb",
            "file:///a\0b",
            "file:///{x}",
            "file:///100%",
            "file:///%zz",
            ":nothing",
        ] {
            assert!(check_uri(bad).is_err(), "{bad:?}");
        }
    }
}
