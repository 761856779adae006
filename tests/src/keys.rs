//! API keys as an operator writes them into the key file.

/// The hex SHA-256 of `text`, by the sha256sum command (as an operator
/// would compute a key's digest for the key file).
pub fn sha256_hex(text: &str) -> String {
    let output = std::process::Command::new("sha256sum")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write as _;
            child
                .stdin
                .take()
                .expect("stdin")
                .write_all(text.as_bytes())?;
            child.wait_with_output()
        })
        .expect("run sha256sum");
    String::from_utf8(output.stdout).expect("utf-8")[..64].to_owned()
}
