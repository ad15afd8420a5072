//! The adversarial redaction text shared by `benches/redaction.rs` and
//! `examples/redact_profile.rs` (the instruction-count profile of the same
//! input): built to make a naive scanner quadratic.
//!
//! Keywords repeated back to back (`token=token=…`, `key:key:…`),
//! near-matches of every kind (provider prefixes with bodies one character
//! short, PEM headers without material, URLs without a password, JWT
//! lookalikes), and every encoding the decoder views undo (URL escapes, JSON
//! escapes, shell quoting).

/// Pieces that each stress one part of the scanner: repeated keywords and
/// near-matches.
const PIECES: &[&str] = &[
    "token=token=token=token=token=token=token=token=",
    "key:key:key:key:key:key:key:key:key:key:key:",
    "password=$password=$password=$password=",
    "ghp_short ghp_ ghp_abc sk-ant- sk- AKIA1234 xoxb- glpat- hf_ npm_ AIza ",
    "-----BEGIN RSA PRIVATE KEY----- -----END RSA PRIVATE KEY----- ",
    "https://user@host/ http://a:b http://x.y/@z s3://bucket/key ",
    "eyJhbGciOi.eyJzdWIi eyJ eyJ.eyJ. ",
    "curl -u curl -u curl -H mysql -p mysql --password --token --api-key ",
    "machine machine login password ",
    r#"{"name": "value", "value": "name"} "#,
    "authorization: bearer authorization: cookie: set-cookie: ",
    "secret_key=SECRET_KEY=secretKey=apiKey=api_key=clientSecret= ",
    "the author used the tokenizer on the keyboard next to a monkey\n",
];

/// Encoded near-matches: URL escapes, JSON escapes, shell quoting. Each
/// one makes the decoder views scan the text around it.
const ENCODED: &[&str] = &[
    "%3D%3D%3D%25token%3D%2520Bearer%2520 ",
    r#"\"password\":\"\",\"token\":\"\",\"key\":\"\" "#,
    r#"'a'\''b'"c\"d"$'\x41' "#,
];

/// An encoded piece every this many pieces (about one per 2 KiB): the
/// issue's adversarial text.
pub const SPARSE: usize = 64;

/// An encoded piece after every piece: each decoder view is as large as
/// the text.
pub const DENSE: usize = 1;

/// Adversarial text of `len` bytes with an encoded piece every
/// `encoded_every` pieces.
pub fn adversarial(len: usize, encoded_every: usize) -> String {
    let mut out = String::with_capacity(len + 128);
    let mut encoded = ENCODED.iter().cycle();
    for (i, piece) in PIECES.iter().cycle().enumerate() {
        if out.len() >= len {
            break;
        }
        out.push_str(piece);
        if i % encoded_every == 0
            && let Some(e) = encoded.next()
        {
            out.push_str(e);
        }
    }
    out.truncate(out.floor_char_boundary(len));
    out
}
