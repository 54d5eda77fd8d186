//! RFC 3986 reference resolution (§5.2) in a fixed buffer, for the URIs `$id` and `$ref`
//! name: an `$id` is resolved against the `$id`s around it, a `$ref` against the `$id` of
//! the resource it is in, and the two compared.

/// The longest URI resolved (a longer one names nothing: the schema is refused).
pub(super) const URI_MAX: usize = 256;

/// An absolute (or, with no `$id` at the root, relative) URI without its fragment.
#[derive(Clone, Copy)]
pub(super) struct Uri {
    buf: [u8; URI_MAX],
    len: usize,
}

impl Uri {
    /// The empty URI: the base of a document with no `$id`.
    pub(super) const fn new() -> Self {
        Self {
            buf: [0; URI_MAX],
            len: 0,
        }
    }

    pub(super) fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }

    fn push(&mut self, bytes: &[u8]) -> Option<()> {
        let end = self
            .len
            .checked_add(bytes.len())
            .filter(|&e| e <= URI_MAX)?;
        self.buf[self.len..end].copy_from_slice(bytes);
        self.len = end;
        Some(())
    }

    /// `reference` resolved against this URI (RFC 3986 §5.2.2), without its fragment;
    /// `None` when the result is longer than [`URI_MAX`].
    pub(super) fn join(&self, reference: &[u8]) -> Option<Uri> {
        let [b_scheme, b_auth, b_path, b_query] = parts(self.as_bytes());
        let [scheme, auth, path, query] = parts(reference);
        let mut out = Uri::new();
        if !scheme.is_empty() {
            out.push(scheme)?;
            out.push(auth)?;
            out.path(&[path])?;
            return out.push(query).map(|()| out);
        }
        out.push(b_scheme)?;
        if !auth.is_empty() {
            out.push(auth)?;
            out.path(&[path])?;
            return out.push(query).map(|()| out);
        }
        out.push(b_auth)?;
        match path.first() {
            None => {
                out.push(b_path)?;
                out.push(if query.is_empty() { b_query } else { query })?;
            }
            Some(b'/') => {
                out.path(&[path])?;
                out.push(query)?;
            }
            Some(_) => {
                // Merged onto the base's directory (RFC 3986 §5.2.3).
                let dir: &[u8] = match b_path.iter().rposition(|&b| b == b'/') {
                    Some(i) => &b_path[..=i],
                    None if !b_auth.is_empty() => b"/",
                    None => b"",
                };
                out.path(&[dir, path])?;
                out.push(query)?;
            }
        }
        Some(out)
    }

    /// Appends the concatenated `pieces` as a path with its dot segments removed (RFC 3986
    /// §5.2.4).
    fn path(&mut self, pieces: &[&[u8]]) -> Option<()> {
        let mut whole = Uri::new();
        for p in pieces {
            whole.push(p)?;
        }
        let path = whole.as_bytes();
        let start = self.len;
        let absolute = path.first() == Some(&b'/');
        let body = if absolute { &path[1..] } else { path };
        let count = body.split(|&b| b == b'/').count();
        for (i, segment) in body.split(|&b| b == b'/').enumerate() {
            let last = i + 1 == count;
            match segment {
                b"." | b".." => {
                    if segment == b".." {
                        let written = &self.buf[start..self.len];
                        self.len = start + written.iter().rposition(|&b| b == b'/').unwrap_or(0);
                    }
                    if last {
                        self.push(b"/")?;
                    }
                }
                _ => {
                    if absolute || self.len > start {
                        self.push(b"/")?;
                    }
                    self.push(segment)?;
                }
            }
        }
        Some(())
    }
}

/// A URI reference's scheme (with its `:`), authority (with its `//`), path and query (with
/// its `?`); its fragment is dropped.
fn parts(uri: &[u8]) -> [&[u8]; 4] {
    let uri = uri.split(|&b| b == b'#').next().unwrap_or(b"");
    let scheme = uri
        .iter()
        .position(|&b| matches!(b, b':' | b'/' | b'?'))
        .filter(|&i| i > 0 && uri[i] == b':' && uri[0].is_ascii_alphabetic())
        .map_or(0, |i| i + 1);
    let rest = &uri[scheme..];
    let auth = match rest.strip_prefix(b"//") {
        Some(after) => {
            2 + after
                .iter()
                .position(|&b| b == b'/' || b == b'?')
                .unwrap_or(after.len())
        }
        None => 0,
    };
    let after = &rest[auth..];
    let query = after.iter().position(|&b| b == b'?').unwrap_or(after.len());
    [
        &uri[..scheme],
        &rest[..auth],
        &after[..query],
        &after[query..],
    ]
}

#[cfg(test)]
mod tests {
    use super::Uri;

    fn join(base: &str, reference: &str) -> Uri {
        let mut b = Uri::new();
        if !base.is_empty() {
            b = b.join(base.as_bytes()).expect("short");
        }
        b.join(reference.as_bytes()).expect("short")
    }

    fn text(uri: &Uri) -> &str {
        core::str::from_utf8(uri.as_bytes()).expect("UTF-8")
    }

    /// RFC 3986 §5.4's examples, and the shapes `$id`s take.
    #[test]
    fn references_resolve_as_rfc_3986_says() {
        let base = "http://a/b/c/d;p?q";
        for (reference, want) in [
            ("g", "http://a/b/c/g"),
            ("./g", "http://a/b/c/g"),
            ("g/", "http://a/b/c/g/"),
            ("/g", "http://a/g"),
            ("//g", "http://g"),
            ("?y", "http://a/b/c/d;p?y"),
            ("g?y", "http://a/b/c/g?y"),
            ("#s", "http://a/b/c/d;p?q"),
            ("", "http://a/b/c/d;p?q"),
            (".", "http://a/b/c/"),
            ("./", "http://a/b/c/"),
            ("..", "http://a/b/"),
            ("../g", "http://a/b/g"),
            ("../..", "http://a/"),
            ("../../g", "http://a/g"),
            ("../../../g", "http://a/g"),
            ("/./g", "http://a/g"),
            ("g.", "http://a/b/c/g."),
            ("./../g", "http://a/b/g"),
            ("g;x=1/../y", "http://a/b/c/y"),
            ("g:h", "g:h"),
        ] {
            assert_eq!(text(&join(base, reference)), want, "{reference}");
        }
        assert_eq!(text(&join("http://x.com", "a.json")), "http://x.com/a.json");
        assert_eq!(text(&join("urn:uuid:1234#", "#/$defs/a")), "urn:uuid:1234");
        assert_eq!(text(&join("", "nested/foo.json")), "nested/foo.json");
        assert_eq!(text(&join("", "../a.json")), "a.json");
        assert_eq!(
            text(&join("file:///c:/f/x.json", "y.json")),
            "file:///c:/f/y.json"
        );
        assert!(Uri::new().join(&[b'a'; 300]).is_none());
    }
}
