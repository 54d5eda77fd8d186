//! The byte pumps: one thread per input pipe reads chunks and sends them to the sans-IO loop
//! over a channel. No protocol logic lives here.

use std::io::{ErrorKind, Read};
use std::sync::mpsc::Sender;
use std::thread;

/// Bytes asked for in one read.
const CHUNK: usize = 64 * 1024;

/// What a pump hands the loop.
pub enum Input {
    /// Bytes from the model (our stdin, or a response body).
    Model(Vec<u8>),
    /// The model's bytes ended (or failed).
    ModelEnd,
    /// Bytes from the server (its stdout).
    Server(Vec<u8>),
    /// The server's stdout ended (or failed): the transport is closed.
    ServerEnd,
    /// A piece of a Streamable HTTP response.
    Http(crate::http::Piece),
}

/// Starts a thread that sends `wrap(chunk)` for every chunk read from `source`, then `end`.
pub fn spawn_reader<R: Read + Send + 'static>(
    mut source: R,
    tx: Sender<Input>,
    wrap: fn(Vec<u8>) -> Input,
    end: Input,
    what: &'static str,
) -> std::io::Result<()> {
    thread::Builder::new()
        .name(format!("read {what}"))
        .spawn(move || {
            let mut buf = vec![0u8; CHUNK];
            loop {
                match source.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        if tx.send(wrap(buf[..n].to_vec())).is_err() {
                            return;
                        }
                    }
                    Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                    Err(e) => {
                        crate::log!("reading {what}: {e}");
                        break;
                    }
                }
            }
            let _ = tx.send(end);
        })
        .map(drop)
}
