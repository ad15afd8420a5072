//! What a key name says about its value.
//!
//! A name is split into words (`snake_case`, `camelCase`, `kebab-case`,
//! dotted) and every word counts, not only the last: `SecretString`,
//! `WEBHOOK_HMAC` and `clientSecretValue` hold secrets. A word after the
//! secret word can turn the name into metadata about a secret
//! (`password_file`, `token_count`, `secret_name`, `session_id`), and a
//! word before it can say the value is public (`public_key`). Words are
//! matched whole, never as substrings, so `author`, `tokenizer`,
//! `keyboard`, `monkey` and `secretary` stay ordinary.

/// What a key name says about its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyClass {
    /// The name says the value is a secret (`password`, `api_key`): the value
    /// is redacted whatever it looks like (unless it is a reference).
    Secret,
    /// The name may hold a secret (`key`, `auth`, `session`): the value is
    /// redacted when it looks random.
    MaybeSecret,
    /// Nothing secret about it.
    Plain,
}

/// Words that make a name secret wherever they stand.
const SECRET_WORDS: &[&str] = &[
    "password",
    "passwords",
    "passwd",
    "passphrase",
    "passcode",
    "pwd",
    "pw",
    "pass",
    "secret",
    "secrets",
    "token",
    "apikey",
    "accesskey",
    "secretkey",
    "privatekey",
    "credential",
    "credentials",
    "creds",
    "cookie",
    "cookies",
    "authorization",
    "bearer",
    "authtoken",
    "accesstoken",
    "refreshtoken",
    "sessiontoken",
    "idtoken",
    "clientsecret",
    "hmac",
    "pat",
    "pin",
    "otp",
    "totp",
    "mfa",
    "dsn",
    "jwt",
    "connectionstring",
];

/// Endings that make one run-together word secret (`PGPASSWORD`,
/// `NPMTOKEN`, `dbpass`).
const SECRET_SUFFIXES: &[&str] = &[
    "password", "passwd", "secret", "token", "apikey", "pass", "pwd",
];

/// Run-together words with a secret ending that are ordinary.
const ORDINARY_WORDS: &[&str] = &[
    "bypass",
    "compass",
    "encompass",
    "trespass",
    "overpass",
    "underpass",
    "surpass",
    "askpass",
    "sshpass",
    "impasse",
    "firstpass",
    "multipass",
    "onepass",
    "passthrough",
    "tokenizer",
    "tokenize",
    "tokenized",
    "tokens",
    "secretary",
    "secretariat",
];

/// Words that, right before `key`, make it a secret key (`api_key`).
const SECRET_KEY_QUALIFIERS: &[&str] = &[
    "api",
    "access",
    "secret",
    "private",
    "signing",
    "encryption",
    "master",
    "client",
    "app",
    "auth",
    "account",
    "license",
    "licence",
    "service",
    "subscription",
    "webhook",
    "hmac",
    "admin",
    "deploy",
    "root",
    "shared",
    "session",
    "storage",
    "consumer",
    "write",
    "read",
    "ingest",
    "sdk",
];

/// Words that may name a secret; the value decides.
const MAYBE_SECRET_WORDS: &[&str] = &[
    "key",
    "keys",
    "auth",
    "session",
    "sessionid",
    "sid",
    "signature",
    "sig",
    "salt",
    "nonce",
    "seed",
];

/// Words that, before the secret word, say the value is public.
const PUBLIC_QUALIFIERS: &[&str] = &["public", "pub", "publishable", "csrf", "xsrf"];

/// Words that, after the secret word, make the name metadata about a secret
/// rather than the secret itself.
const DESCRIPTOR_WORDS: &[&str] = &[
    "file",
    "files",
    "path",
    "paths",
    "dir",
    "directory",
    "name",
    "names",
    "id",
    "ids",
    "count",
    "counts",
    "length",
    "len",
    "size",
    "type",
    "kind",
    "url",
    "uri",
    "endpoint",
    "env",
    "var",
    "field",
    "header",
    "prefix",
    "suffix",
    "hint",
    "policy",
    "min",
    "max",
    "expiry",
    "expires",
    "expiration",
    "ttl",
    "lifetime",
    "age",
    "version",
    "format",
    "mode",
    "location",
    "ref",
    "arn",
    "label",
    "enabled",
    "disabled",
    "required",
    "rotation",
    "limit",
    "limits",
    "budget",
    "usage",
    "estimate",
    "estimator",
    "stdin",
    "prompt",
    "command",
    "cmd",
    "helper",
    "manager",
    "store",
    "storage",
    "provider",
    "source",
    "method",
    "scheme",
    "algorithm",
    "alg",
    "bits",
    "strength",
    "regex",
    "pattern",
    "rule",
    "rules",
    "check",
    "reset",
    "changed",
    "set",
    "exists",
    "present",
    "valid",
    "validation",
    "timeout",
    "retries",
    "fingerprint",
    "scope",
    "scopes",
    "issuer",
    "audience",
    "position",
    "index",
    "offset",
    "start",
    "end",
    "line",
    "column",
    "col",
    "at",
    "hash",
    "digest",
    "sha",
    "md5",
    "description",
    "desc",
    "doc",
    "docs",
    "help",
    "text",
    "message",
    "msg",
    "title",
    "placeholder",
    "example",
    "sample",
    "template",
    "schema",
    "spec",
    "config",
    "settings",
    "options",
    "opts",
    "flag",
    "flags",
    "list",
    "map",
    "table",
];

/// Most names [`classify_key`] remembers per thread; the memo is emptied
/// when full.
const MEMO_NAMES: usize = 1024;

/// Longest name the memo keeps; longer ones are classified every time.
const MEMO_NAME_BYTES: usize = 64;

thread_local! {
    /// Names repeat (`token=token=…`, a log's fields, the same option in
    /// every command): each is split into words and judged once.
    static MEMO: std::cell::RefCell<std::collections::HashMap<String, KeyClass>> =
        std::cell::RefCell::new(std::collections::HashMap::new());
}

/// What the name `name` says about its value.
pub fn classify_key(name: &str) -> KeyClass {
    if name.len() > MEMO_NAME_BYTES {
        return classify_uncached(name);
    }
    if let Some(class) = MEMO.with(|m| m.borrow().get(name).copied()) {
        return class;
    }
    let class = classify_uncached(name);
    MEMO.with(|m| {
        let mut memo = m.borrow_mut();
        if memo.len() >= MEMO_NAMES {
            memo.clear();
        }
        memo.insert(name.to_owned(), class);
    });
    class
}

/// Environment variables a program reads its password from whose names do
/// not say so: matched exactly, as environment names are written
/// (`SSHPASS='…' sshpass -e ssh h`; the command `sshpass` stays ordinary).
const SECRET_ENV_NAMES: &[&str] = &["SSHPASS", "REDISCLI_AUTH"];

fn classify_uncached(name: &str) -> KeyClass {
    if SECRET_ENV_NAMES.contains(&name) {
        return KeyClass::Secret;
    }
    let lower = name.to_ascii_lowercase();
    let words = word_slices(name, &lower);
    let mut class = KeyClass::Plain;
    for (i, word) in words.iter().enumerate() {
        let here = word_class(&words, i, word);
        if here == KeyClass::Plain {
            continue;
        }
        // The class of the last secret-ish word decides; words after it
        // may make it metadata.
        let after = words.get(i + 1..).unwrap_or_default();
        if after.iter().any(|w| DESCRIPTOR_WORDS.contains(w)) {
            class = KeyClass::Plain;
            continue;
        }
        class = stronger(class, here);
    }
    class
}

fn stronger(a: KeyClass, b: KeyClass) -> KeyClass {
    match (a, b) {
        (KeyClass::Secret, _) | (_, KeyClass::Secret) => KeyClass::Secret,
        (KeyClass::MaybeSecret, _) | (_, KeyClass::MaybeSecret) => KeyClass::MaybeSecret,
        (KeyClass::Plain, KeyClass::Plain) => KeyClass::Plain,
    }
}

/// The class one word gives the name, looking at its neighbours.
fn word_class(words: &[&str], i: usize, word: &str) -> KeyClass {
    let before = i.checked_sub(1).and_then(|p| words.get(p)).copied();
    if before.is_some_and(|b| PUBLIC_QUALIFIERS.contains(&b)) {
        return KeyClass::Plain;
    }
    if ORDINARY_WORDS.contains(&word) {
        return KeyClass::Plain;
    }
    if SECRET_WORDS.contains(&word) {
        return KeyClass::Secret;
    }
    if SECRET_SUFFIXES
        .iter()
        .any(|suffix| word.len() > suffix.len() && word.ends_with(suffix))
    {
        return KeyClass::Secret;
    }
    if matches!(word, "key" | "keys") {
        return match before {
            Some(q) if SECRET_KEY_QUALIFIERS.contains(&q) => KeyClass::Secret,
            Some(_) | None => KeyClass::MaybeSecret,
        };
    }
    if MAYBE_SECRET_WORDS.contains(&word) {
        return KeyClass::MaybeSecret;
    }
    KeyClass::Plain
}

/// The words of `name` as slices of `lower` (its lowercase form).
fn word_slices<'a>(name: &str, lower: &'a str) -> Vec<&'a str> {
    let bytes = name.as_bytes();
    let mut words = Vec::new();
    let mut start = None;
    for (i, &c) in bytes.iter().enumerate() {
        if !c.is_ascii_alphanumeric() {
            if let Some(s) = start.take() {
                words.push(lower.get(s..i).unwrap_or_default());
            }
            continue;
        }
        let prev = i.checked_sub(1).and_then(|p| bytes.get(p)).copied();
        let next = bytes.get(i + 1).copied();
        let boundary = c.is_ascii_uppercase()
            && prev.is_some_and(|p| {
                p.is_ascii_lowercase()
                    || p.is_ascii_digit()
                    || (p.is_ascii_uppercase() && next.is_some_and(|n| n.is_ascii_lowercase()))
            });
        if boundary && let Some(s) = start.take() {
            words.push(lower.get(s..i).unwrap_or_default());
        }
        if start.is_none() {
            start = Some(i);
        }
    }
    if let Some(s) = start {
        words.push(lower.get(s..).unwrap_or_default());
    }
    words
}

/// Splits `fooBar_baz-QUXName` into `[foo, bar, baz, qux, name]`.
#[cfg(test)]
pub fn split_words(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let chars: Vec<char> = name.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_ascii_alphanumeric() {
            if !current.is_empty() {
                words.push(std::mem::take(&mut current));
            }
            continue;
        }
        let prev = i.checked_sub(1).and_then(|p| chars.get(p)).copied();
        let next = chars.get(i + 1).copied();
        let boundary = c.is_ascii_uppercase()
            && prev.is_some_and(|p| {
                p.is_ascii_lowercase()
                    || p.is_ascii_digit()
                    || (p.is_ascii_uppercase() && next.is_some_and(|n| n.is_ascii_lowercase()))
            });
        if boundary && !current.is_empty() {
            words.push(std::mem::take(&mut current));
        }
        current.push(c.to_ascii_lowercase());
    }
    if !current.is_empty() {
        words.push(current);
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_on_case_and_separators() {
        assert_eq!(split_words("apiKey"), ["api", "key"]);
        assert_eq!(split_words("X-Api-Key"), ["x", "api", "key"]);
        assert_eq!(
            split_words("AWS_SECRET_ACCESS_KEY"),
            ["aws", "secret", "access", "key"]
        );
        assert_eq!(split_words("APIKey"), ["api", "key"]);
        assert_eq!(split_words("authToken2"), ["auth", "token2"]);
        assert_eq!(
            split_words("spring.datasource.password"),
            ["spring", "datasource", "password"]
        );
    }

    #[test]
    fn classes() {
        for secret in [
            "password",
            "db_password",
            "DATABASE_PASSWORD",
            "PGPASSWORD",
            "passwd",
            "token",
            "githubToken",
            "secret",
            "client_secret",
            "clientSecretValue",
            "SecretString",
            "WEBHOOK_HMAC",
            "api_key",
            "apikey",
            "apiKey",
            "x-api-key",
            "access_key",
            "private_key",
            "authorization",
            "Proxy-Authorization",
            "Cookie",
            "credentials",
            "aws_secret_access_key",
            "spring.datasource.password",
            "_authToken",
            "dbpass",
            "MYSQL_PWD",
        ] {
            assert_eq!(classify_key(secret), KeyClass::Secret, "{secret}");
        }
        for maybe in [
            "key",
            "sort_key",
            "session",
            "auth",
            "signature",
            "cache_key",
        ] {
            assert_eq!(classify_key(maybe), KeyClass::MaybeSecret, "{maybe}");
        }
        for plain in [
            "author",
            "tokenizer",
            "keyboard",
            "monkey",
            "secretary",
            "public_key",
            "max_tokens",
            "token_count",
            "password_file",
            "PASSWORD_FILE",
            "SSH_PRIVATE_KEY_PATH",
            "password_min_length",
            "session_id",
            "keychain",
            "passage",
            "bypass",
            "COMPASS",
            "GIT_ASKPASS",
            "secret_name",
            "csrf_token",
            "token_url",
            "",
        ] {
            assert_eq!(classify_key(plain), KeyClass::Plain, "{plain}");
        }
    }
}
