//! Small URI helpers: percent-encoding and -decoding, and the syntax check
//! applied to every URI a client sends.

/// `ALPHA / DIGIT / "-" / "." / "_" / "~"` (RFC 3986 §2.3).
pub(crate) fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

/// `gen-delims / sub-delims` (RFC 3986 §2.2).
pub(crate) fn is_reserved(b: u8) -> bool {
    matches!(
        b,
        b':' | b'/'
            | b'?'
            | b'#'
            | b'['
            | b']'
            | b'@'
            | b'!'
            | b'$'
            | b'&'
            | b'\''
            | b'('
            | b')'
            | b'*'
            | b'+'
            | b','
            | b';'
            | b'='
    )
}

fn hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// Whether `s[i..]` starts with a well-formed `%XX` triplet.
pub(crate) fn is_triplet(s: &[u8], i: usize) -> bool {
    s.len() >= i + 3 && s[i] == b'%' && hex(s[i + 1]).is_some() && hex(s[i + 2]).is_some()
}

/// Decodes `%XX` triplets. `None` when a `%` does not start a triplet or the
/// bytes are not UTF-8.
pub(crate) fn percent_decode(s: &str) -> Option<String> {
    if !s.contains('%') {
        return Some(s.to_owned());
    }
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hi = hex(*bytes.get(i + 1)?)?;
            let lo = hex(*bytes.get(i + 2)?)?;
            out.push(hi << 4 | lo);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// Percent-encodes every byte that is not unreserved; with `allow_reserved`
/// reserved characters and existing `%XX` triplets are kept as they are
/// (RFC 6570 "U+R").
pub(crate) fn percent_encode(s: &str, allow_reserved: bool) -> String {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let bytes = s.as_bytes();
    let mut out = String::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if is_unreserved(b) || (allow_reserved && is_reserved(b)) {
            out.push(b as char);
        } else if allow_reserved && is_triplet(bytes, i) {
            out.push_str(&s[i..i + 3]);
            i += 3;
            continue;
        } else {
            out.push('%');
            out.push(HEX[usize::from(b >> 4)] as char);
            out.push(HEX[usize::from(b & 15)] as char);
        }
        i += 1;
    }
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
