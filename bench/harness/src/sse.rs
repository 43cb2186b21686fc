//! A minimal Server-Sent Events reader: the `data` of each event in a
//! complete response body (what a POST's SSE response carries).

/// The data of every event in `body` that has some, in order. Lines end with
/// LF, CRLF or CR; `data:` lines of one event are joined with LF; one space
/// after the colon is dropped; comments, `id`, `event` and `retry` are skipped.
pub fn event_data(body: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(body);
    let mut out = Vec::new();
    let mut data: Option<String> = None;
    let mut lines = Lines { rest: &text };
    while let Some(line) = lines.next_line() {
        if line.is_empty() {
            if let Some(d) = data.take()
                && !d.is_empty()
            {
                out.push(d);
            }
            continue;
        }
        if line.starts_with(':') {
            continue;
        }
        let (field, value) = match line.find(':') {
            Some(i) => {
                let v = &line[i + 1..];
                (&line[..i], v.strip_prefix(' ').unwrap_or(v))
            }
            None => (line, ""),
        };
        if field == "data" {
            match &mut data {
                Some(d) => {
                    d.push('\n');
                    d.push_str(value);
                }
                None => data = Some(value.to_owned()),
            }
        }
    }
    // An event not closed by a blank line at the end of the stream is dropped
    // by the SSE spec; accept it anyway when it holds data (lenient reader).
    if let Some(d) = data
        && !d.is_empty()
    {
        out.push(d);
    }
    out
}

struct Lines<'a> {
    rest: &'a str,
}

impl<'a> Lines<'a> {
    fn next_line(&mut self) -> Option<&'a str> {
        if self.rest.is_empty() {
            return None;
        }
        match self.rest.find(['\r', '\n']) {
            Some(i) => {
                let line = &self.rest[..i];
                let skip = if self.rest[i..].starts_with("\r\n") {
                    2
                } else {
                    1
                };
                self.rest = &self.rest[i + skip..];
                Some(line)
            }
            None => {
                let line = self.rest;
                self.rest = "";
                Some(line)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::event_data;

    #[test]
    fn priming_event_then_message() {
        let body = b"data: \nid: 0\nretry: 3000\n\ndata: {\"id\":2}\nid: 1/0\n\n";
        assert_eq!(event_data(body), vec!["{\"id\":2}".to_owned()]);
    }

    #[test]
    fn crlf_multiline_and_comments() {
        let body = b": ping\r\nevent: message\r\ndata: a\r\ndata:b\r\n\r\ndata: c";
        assert_eq!(event_data(body), vec!["a\nb".to_owned(), "c".to_owned()]);
    }
}
