//! The history's messages in each provider's shape (SPEC §10.3's table): user texts, an
//! assistant turn with its state, the results of its calls, and the ids a provider takes.

use super::ids::{bit_set, earlier_call_has};
use super::*;
use crate::sink::Prefix;

impl Request<'_> {
    pub(super) fn users(&self, from: usize, to: usize, s: &mut dyn Sink) {
        let p = self.provider;
        let texts = Entries {
            buf: &self.conv.bytes()[..to],
            pos: from,
        };
        let many = texts.clone().count() > 1;
        if is_gemini(p) {
            s.put(b"{\"role\":\"user\",\"parts\":[");
            put_texts(s, texts, b"{\"text\":\"", b"\"}", b",");
            s.put(b"]}");
            return;
        }
        s.put(b"{\"role\":\"user\",\"content\":");
        if !many || is_ollama(p) {
            // Ollama's content is one string: the texts joined by a blank line.
            s.put(b"\"");
            put_texts(s, texts, b"", b"", b"\\n\\n");
            s.put(b"\"}");
            return;
        }
        s.put(b"[");
        put_texts(s, texts, text_block(p), b"\"}", b",");
        s.put(b"]}");
    }

    pub(super) fn turn(&self, turn: &Entry<'_>, s: &mut dyn Sink) {
        let p = self.provider;
        let same = self.same_provider(turn);
        let calls = || turn.parts().filter(|q| q.tag == Tag::Call);
        let texts = || turn.parts().filter(|q| q.tag == Tag::Text);
        if is_responses(p) {
            // Its items in the order they came; texts next to each other make one message.
            let mut first = true;
            let mut in_text = false;
            for part in turn.parts() {
                let starts_item = match part.tag {
                    Tag::Text if part.text().is_empty() => continue,
                    Tag::Text => !in_text,
                    Tag::Call => true,
                    _ if same && self.writes_state(&part) => true,
                    _ => continue,
                };
                if in_text && part.tag != Tag::Text {
                    s.put(b"\"}");
                    in_text = false;
                }
                if starts_item && !first {
                    s.put(b",");
                }
                first = false;
                match part.tag {
                    Tag::Text => {
                        if !in_text {
                            s.put(b"{\"role\":\"assistant\",\"content\":\"");
                            in_text = true;
                        }
                        s.put(part.text());
                    }
                    Tag::Call => self.call_item(&part.call(), s),
                    _ => s.put(part.sig()),
                }
            }
            if in_text {
                s.put(b"\"}");
            }
            return;
        }
        if is_anthropic(p) {
            s.put(b"{\"role\":\"assistant\",\"content\":[");
            let mut first = true;
            let mut sep = |s: &mut dyn Sink| {
                if !first {
                    s.put(b",");
                }
                first = false;
            };
            for part in turn.parts().filter(|q| same && self.writes_state(q)) {
                sep(s);
                if part.tag == Tag::Redacted {
                    s.put(b"{\"type\":\"redacted_thinking\",\"data\":\"");
                    s.put(part.sig());
                    s.put(b"\"}");
                } else {
                    s.put(b"{\"type\":\"thinking\",\"thinking\":\"");
                    s.put(part.text());
                    s.put(b"\",\"signature\":\"");
                    s.put(part.sig());
                    s.put(b"\"}");
                }
            }
            if texts().any(|q| !is_blank(q.text())) {
                sep(s);
                s.put(b"{\"type\":\"text\",\"text\":\"");
                texts().for_each(|q| s.put(q.text()));
                s.put(b"\"}");
            }
            for part in calls() {
                sep(s);
                self.call_item(&part.call(), s);
            }
            s.put(b"]}");
            return;
        }
        if is_gemini(p) {
            s.put(b"{\"role\":\"model\",\"parts\":[");
            let mut first = true;
            let mut open_text = false;
            for part in turn.parts() {
                let sig = if same { part.sig() } else { &[] };
                let signed = !sig.is_empty();
                match part.tag {
                    Tag::Text if part.text().is_empty() && !signed => continue,
                    Tag::Text | Tag::Call => {}
                    Tag::Thought if signed => {}
                    _ => continue,
                }
                // Unsigned texts next to each other make one part; a signed part stands alone.
                let joins = open_text && part.tag == Tag::Text && !signed;
                if open_text && !joins {
                    s.put(b"\"}");
                    open_text = false;
                }
                if !joins {
                    if !first {
                        s.put(b",");
                    }
                    first = false;
                }
                match part.tag {
                    Tag::Call => {
                        // The item encoder's `{"functionCall":{…}}`, its last brace held back
                        // for the signature to go before it.
                        let mut held = HoldLast { s, held: false };
                        self.call_item(&part.call(), &mut held);
                        put_sig(s, sig);
                        s.put(b"}");
                    }
                    Tag::Text if joins => s.put(part.text()),
                    _ => {
                        s.put(b"{\"text\":\"");
                        s.put(part.text());
                        if !signed {
                            // Closed when the next part is not an unsigned text.
                            open_text = true;
                            continue;
                        }
                        s.put(if part.tag == Tag::Thought {
                            b"\",\"thought\":true" as &[u8]
                        } else {
                            b"\""
                        });
                        put_sig(s, sig);
                        s.put(b"}");
                    }
                }
            }
            if open_text {
                s.put(b"\"}");
            }
            s.put(b"]}");
            return;
        }
        // openai-chat and ollama.
        s.put(b"{\"role\":\"assistant\",\"content\":");
        let has_text = texts().any(|q| !q.text().is_empty());
        if has_text || is_ollama(p) {
            s.put(b"\"");
            texts().for_each(|q| s.put(q.text()));
            s.put(b"\"");
        } else {
            s.put(b"null");
        }
        if calls().next().is_some() {
            s.put(b",\"tool_calls\":[");
            for (i, part) in calls().enumerate() {
                if i > 0 {
                    s.put(b",");
                }
                self.call_item(&part.call(), s);
            }
            s.put(b"]");
        }
        s.put(b"}");
    }

    pub(super) fn results(
        &self,
        turn: &Entry<'_>,
        users: Option<(usize, usize)>,
        s: &mut dyn Sink,
    ) {
        let p = self.provider;
        let calls = || {
            turn.parts()
                .filter(|q| q.tag == Tag::Call)
                .map(|q| q.call())
        };
        let user_texts = users.map(|(from, to)| Entries {
            buf: &self.conv.bytes()[..to],
            pos: from,
        });
        if is_anthropic(p) || is_gemini(p) {
            s.put(if is_gemini(p) {
                b"{\"role\":\"user\",\"parts\":[" as &[u8]
            } else {
                b"{\"role\":\"user\",\"content\":["
            });
            for (i, c) in calls().enumerate() {
                if i > 0 {
                    s.put(b",");
                }
                self.result_item(&c, s);
            }
            if let Some(texts) = user_texts {
                s.put(b",");
                let open: &[u8] = if is_gemini(p) {
                    b"{\"text\":\""
                } else {
                    text_block(p)
                };
                put_texts(s, texts, open, b"\"}", b",");
            }
            s.put(b"]}");
            return;
        }
        for (i, c) in calls().enumerate() {
            if i > 0 {
                s.put(b",");
            }
            self.result_item(&c, s);
        }
    }

    /// A call's id as the provider written to takes it: its own, or `pwcall_<n>` where the
    /// provider needs one it lacks or cannot take.
    pub(super) fn id<'b>(&self, c: &StoredCall<'b>, buf: &'b mut [u8; 24]) -> Option<JsonStr<'b>> {
        let p = self.provider;
        let ok = match c.id {
            Some(_) if is_anthropic(p) && !c.word_id() => false,
            // An id an earlier call already had (servers that number calls from 0 each
            // turn): the APIs refuse a history that repeats one.
            Some(id) => {
                !(bit_set(&self.shared_ids, id) && earlier_call_has(self.conv.bytes(), id, c.seq))
            }
            None => false,
        };
        if ok {
            return c.id.map(JsonStr::from_inner);
        }
        if (is_gemini(p) || is_ollama(p)) && c.id.is_none() {
            return None;
        }
        let mut w = Prefix {
            buf: &mut buf[..],
            pos: 0,
        };
        w.put(b"pwcall_");
        put_u64(&mut w, u64::from(c.seq));
        let n = w.pos;
        Some(JsonStr::from_inner(&buf[..n]))
    }

    pub(super) fn call_item(&self, c: &StoredCall<'_>, s: &mut dyn Sink) {
        let mut buf = [0u8; 24];
        let args = if c.broken() {
            Args::Text(JsonStr::from_inner(c.args))
        } else {
            Args::Value(c.args)
        };
        Item {
            id: self.id(c, &mut buf),
            name: JsonStr::from_inner(c.name),
            body: Body::Call(args),
            stored: true,
            escaped: Some(c.args_escaped),
        }
        .put_for(self.provider, s);
    }

    pub(super) fn result_item(&self, c: &StoredCall<'_>, s: &mut dyn Sink) {
        let mut buf = [0u8; 24];
        let name = JsonStr::from_inner(c.name);
        let outcome = match c.result {
            None => Outcome::Missing(name),
            Some(m) if c.is_error() => Outcome::Message(JsonStr::from_inner(m)),
            Some(v) => Outcome::Result(v),
        };
        Item {
            id: self.id(c, &mut buf),
            name,
            body: Body::Result(outcome),
            stored: true,
            escaped: Some(c.result_escaped),
        }
        .put_for(self.provider, s);
    }
}

/// The user texts among `texts`, each between `open` and `close`, joined by `sep`.
pub(super) fn put_texts(
    s: &mut dyn Sink,
    texts: Entries<'_>,
    open: &[u8],
    close: &[u8],
    sep: &[u8],
) {
    for (i, e) in texts.filter(|e| e.kind.is_user()).enumerate() {
        if i > 0 {
            s.put(sep);
        }
        s.put(open);
        s.put(e.payload);
        s.put(close);
    }
}

pub(super) fn put_sig(s: &mut dyn Sink, sig: &[u8]) {
    if !sig.is_empty() {
        s.put(b",\"thoughtSignature\":\"");
        s.put(sig);
        s.put(b"\"");
    }
}
