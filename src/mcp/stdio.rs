//! `mem7 mcp`'s standard input and output, between the client and rmcp's transport: a
//! line that is not JSON gets JSON-RPC's parse error (`-32700`) and a line over
//! [`MAX_LINE_BYTES`] an invalid-request error (`-32600`), instead of silence; every
//! other line goes to rmcp as it came. Answers (rmcp's and these) reach standard output
//! one whole line at a time, from one writer.

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

/// The longest request line read (values are limited far below this by
/// `max_value_bytes`; a longer line is refused, not buffered).
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// The reader and writer rmcp's transport takes, and the task writing standard output
/// (await it after the service ends, so that its last answers are written).
pub type Filtered = (
    (tokio::io::DuplexStream, tokio::io::DuplexStream),
    tokio::task::JoinHandle<()>,
);

/// Connects `input` and `output` (the process's standard streams) to the reader and
/// writer returned, which rmcp's transport takes. The tasks end when `input` ends and
/// rmcp drops its writer.
pub fn filtered<R, W>(input: R, output: W) -> Filtered
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (to_rmcp, rmcp_reads) = tokio::io::duplex(1 << 16);
    let (rmcp_writes, from_rmcp) = tokio::io::duplex(1 << 16);
    let (lines, mut outbox) = mpsc::channel::<Vec<u8>>(64);
    // One writer: rmcp's answers and ours, each a whole line.
    let writer = tokio::spawn(async move {
        let mut output = output;
        while let Some(line) = outbox.recv().await {
            if output.write_all(&line).await.is_err() || output.flush().await.is_err() {
                break;
            }
        }
    });
    let answers = lines.clone();
    tokio::spawn(async move {
        let mut from_rmcp = BufReader::new(from_rmcp);
        let mut line = Vec::new();
        loop {
            line.clear();
            match from_rmcp.read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    if answers.send(line.clone()).await.is_err() {
                        break;
                    }
                }
            }
        }
    });
    tokio::spawn(async move {
        let mut input = BufReader::new(input);
        let mut to_rmcp = to_rmcp;
        loop {
            let line = match read_line(&mut input).await {
                Ok(Some(line)) => line,
                Ok(None) | Err(_) => break,
            };
            let reply = match &line {
                Line::TooLong(n) => Some(error_line(
                    -32600,
                    &format!(
                        "the request is {n} bytes, over mem7's limit of {MAX_LINE_BYTES}; send smaller values (a memory holds short facts)"
                    ),
                )),
                Line::Text(bytes) if bytes.iter().all(u8::is_ascii_whitespace) => None,
                Line::Text(bytes) => match serde_json::from_slice::<serde_json::Value>(bytes) {
                    Ok(_) => {
                        if to_rmcp.write_all(bytes).await.is_err() {
                            break;
                        }
                        None
                    }
                    Err(e) => Some(error_line(
                        -32700,
                        &format!("parse error: the line is not JSON ({e})"),
                    )),
                },
            };
            if let Some(reply) = reply
                && lines.send(reply).await.is_err()
            {
                break;
            }
        }
        let _ = to_rmcp.shutdown().await;
    });
    ((rmcp_reads, rmcp_writes), writer)
}

/// One line of input: its bytes with the line feed, or only its length when it was over
/// the limit (its bytes are skipped, never held).
enum Line {
    Text(Vec<u8>),
    TooLong(usize),
}

async fn read_line<R: AsyncBufReadExt + Unpin>(input: &mut R) -> std::io::Result<Option<Line>> {
    let mut bytes = Vec::new();
    let mut total = 0usize;
    loop {
        let buf = input.fill_buf().await?;
        if buf.is_empty() {
            return Ok((total > 0).then(|| finish(bytes, total)));
        }
        let (chunk, done) = match memchr::memchr(b'\n', buf) {
            Some(at) => (&buf[..=at], true),
            None => (buf, false),
        };
        let n = chunk.len();
        total += n;
        if total <= MAX_LINE_BYTES {
            bytes.extend_from_slice(chunk);
        } else {
            bytes = Vec::new();
        }
        input.consume(n);
        if done {
            return Ok(Some(finish(bytes, total)));
        }
    }
}

fn finish(mut bytes: Vec<u8>, total: usize) -> Line {
    if total > MAX_LINE_BYTES {
        return Line::TooLong(total);
    }
    if bytes.last() != Some(&b'\n') {
        bytes.push(b'\n');
    }
    Line::Text(bytes)
}

/// A JSON-RPC error answer with a null id (the request's id could not be read).
fn error_line(code: i64, message: &str) -> Vec<u8> {
    let v = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": { "code": code, "message": message },
    });
    let mut line = serde_json::to_vec(&v).unwrap_or_default();
    line.push(b'\n');
    line
}
