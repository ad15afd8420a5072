//! Unit tests of the scanner as a whole: forms, whole values, exemptions,
//! idempotence.

use super::*;

fn red(s: &str) -> String {
    redact_text(s).into_owned()
}

#[test]
fn rules_compile() {
    assert!(prepare(), "{:?}", rule_error());
    let rules = provider_rules();
    assert!(rules.len() >= 200, "{}", rules.len());
    assert_eq!(scan::unbuildable_rules(), Vec::<&str>::new());
    assert!(structural::Structural::new().builds());
}

#[test]
fn provider_labels_are_unique_and_distinct_from_structural_ones() {
    let rules = provider_rules();
    let mut labels: Vec<&str> = rules.iter().map(|r| r.1).collect();
    labels.extend(SecretKind::structural_labels());
    let before = labels.len();
    labels.sort_unstable();
    labels.dedup();
    assert_eq!(before, labels.len(), "duplicate labels");
}

/// Unbounded rules whose keyword is an alternation at the very start of the
/// pattern (`(?:sc|ext|…)_`, `EAA[MC]`, `xox[os]`, `gl(?:pat|…)-`, `[sr]k_(?:live|…)_`), so the
/// text search cannot see it.
const EARLY_BY_ALTERNATION: &[&str] = &[
    "authress-service-client-access-key",
    "facebook-page-access-token",
    "gitlab-token",
    "slack-legacy-token",
    "stripe-key",
];

#[test]
fn unbounded_rules_keep_their_keyword_early() {
    let late: Vec<(&str, Option<usize>)> = provider_rules()
        .into_iter()
        .filter(|(id, _, unbounded, first)| {
            *unbounded && !EARLY_BY_ALTERNATION.contains(id) && first.is_none_or(|at| at >= 120)
        })
        .map(|(id, _, _, first)| (id, first))
        .collect();
    assert!(
        late.is_empty(),
        "unbounded patterns whose first keyword is late or absent: {late:?}"
    );
}

#[test]
fn assignment_forms() {
    let g = "[REDACTED:generic_assignment]";
    for (input, expected) in [
        ("token=hunter2", format!("token={g}")),
        ("password: hunter2", format!("password: {g}")),
        (r#""secret": "abc""#, format!(r#""secret": "{g}""#)),
        ("key=9f8e7d6c5b4a39281706f5e4d3c2b1a0", format!("key={g}")),
        ("key=name", "key=name".to_owned()),
        (
            "export GITHUB_TOKEN=abc x",
            format!("export GITHUB_TOKEN={g} x"),
        ),
        (r#"apiKey := "abc""#, format!(r#"apiKey := "{g}""#)),
        ("{:password => 'abc'}", format!("{{:password => '{g}'}}")),
        ("a?access_token=abc&b=1", format!("a?access_token={g}&b=1")),
        ("PASS=abc;make", format!("PASS={g};make")),
        (
            "path: /srv/app, session: 42",
            "path: /srv/app, session: 42".to_owned(),
        ),
        (
            "db:\n  password: correct horse battery\n  user: app",
            format!("db:\n  password: {g}\n  user: app"),
        ),
        (r#"PW="a\"b c" ./run"#, format!(r#"PW="{g}" ./run"#)),
        (r"PW='ab'\''cd' ./run", format!("PW='{g}' ./run")),
        ("SecretString=abc", format!("SecretString={g}")),
        ("WEBHOOK_HMAC=abc", format!("WEBHOOK_HMAC={g}")),
        ("clientSecretValue: abc", format!("clientSecretValue: {g}")),
    ] {
        assert_eq!(red(input), expected, "{input}");
    }
}

#[test]
fn exempt_values_stay_and_lookalikes_do_not() {
    for kept in [
        "PASSWORD=$DB_PASSWORD ./run",
        "token: ${{ secrets.NPM_TOKEN }}",
        "password_file: /run/secrets/db",
        "PASSWORD=/run/secrets/db_password",
    ] {
        assert_eq!(red(kept), kept);
    }
    for hidden in [
        "PASSWORD='$up3rS3cret!' ./run",
        "PASSWORD=[REDACTED:jwt]hunter2",
        "password: /Xq7vB2mK9pL/aB3dE5gH7j",
        "PASSWORD=${PW:-hunter2}",
    ] {
        let out = red(hidden);
        assert!(
            out.contains("[REDACTED:generic_assignment]"),
            "{hidden} -> {out}"
        );
    }
}

#[test]
fn encodings_are_decoded_before_matching() {
    let key = "sk-ant-api03-9wMxEhh2FDEEtfjgVvVqE1SkHbn88HxjSI6bWHtP3fS2qHx6kwXoIIXGvOoNZYW2mZp0zVZomHFwUbbYAA";
    let url = format!("curl 'https://x/?q=%3D{key}'");
    assert!(!red(&url).contains("9wMxEhh2"), "{}", red(&url));
    let jwt = "eyJhbGciOiJIUzI1NiJ9.fUkkibjL5DZPjN0MEQ7wjJJibaZUPgHV7iB3m03n.bqnsGpWLuqIA1id6Vw5DQL05HA064GiIjHGb3CXlMaX";
    let url = format!("curl 'https://x/?auth=Bearer%20{jwt}'");
    assert!(!red(&url).contains("fUkkibjL"), "{}", red(&url));
    let json = r#"echo "{\"password\":\"Hx9lBYOvfZ8\"}" > cfg.json"#;
    assert!(!red(json).contains("Hx9lBYOvfZ8"), "{}", red(json));
    let spliced = r"export DB_PASS='Hx9'\''lBYOvfZ8' && run";
    assert!(!red(spliced).contains("lBYOvfZ8"), "{}", red(spliced));
}

#[test]
fn repeated_values_are_found_where_nothing_says_secret() {
    let out = red("password: Qx7vB2mK9pLz\nlater we echo Qx7vB2mK9pLz to a file");
    assert!(!out.contains("Qx7vB2mK9pLz"), "{out}");
}

/// Fuzzing the older scanner found an AWS key glued to the letter before it
/// passing through: gitleaks' pattern wants a word boundary there.
#[test]
fn provider_keys_glued_to_text_still_go() {
    for text in [
        "uAKIAQ3EGRZ7NLPYVX2KD",
        "log:xAKIAQ3EGRZ7NLPYVX2KD done",
        "idASIAQ3EGRZ7NLPYVX2KD",
    ] {
        let out = red(text);
        assert!(!out.contains("Q3EGRZ7NLPYVX2KD"), "{text} -> {out}");
    }
    // Still not any uppercase run: too short, or the wrong alphabet.
    assert_eq!(red("AKIA1234 AKIASHORT"), "AKIA1234 AKIASHORT");
}

#[test]
fn netrc_passwords_are_whole_tokens() {
    for (text, secret) in [
        ("machine h login u password ab\"cd9Xq", "cd9Xq"),
        ("machine h login u password {\"k\":7Zp}", "7Zp"),
        ("machine h password \"two words\"", "words"),
    ] {
        let out = red(text);
        assert!(!out.contains(secret), "{text} -> {out}");
    }
}

#[test]
fn standalone_quoted_strings_keep_their_findings() {
    // The shell view leaves these as written; the text's own scan finds them.
    for (text, secret) in [
        (r#"{"password": "hunter2x"}"#, "hunter2x"),
        ("echo 'token=Zq8vLm2Rt'", "Zq8vLm2Rt"),
        (r#"curl -u "me:pQ7wR2sT" x"#, "pQ7wR2sT"),
        (r#"export PW="aB3dE5fG" ; x"#, "aB3dE5fG"),
    ] {
        let out = red(text);
        assert!(!out.contains(secret), "{text} -> {out}");
    }
}

#[test]
fn pem_blocks_in_file_viewer_lines() {
    let text = "     1→-----BEGIN RSA PRIVATE KEY-----\n     2→MIIEpAIBAAKCAQEA4PzJ59FHz5r1pY4OjE2jBMptUsGr7CmY\n     3→uCu3ZR1zTOlUcR64cXQLioDnkHI";
    let out = red(text);
    assert!(
        !out.contains("MIIEpAIB") && !out.contains("uCu3ZR1z"),
        "{out}"
    );
}

#[test]
fn har_pairs_are_read_as_pairs() {
    let v = serde_json::json!({"headers": [{"name": "Authorization", "value": "Basic ZGVwbG95OnM2T0JR"}, {"name": "Accept", "value": "text/html"}]});
    let out = redact_value(&v);
    assert_eq!(out["headers"][0]["value"], "[REDACTED:secret_field]");
    assert_eq!(out["headers"][1]["value"], "text/html");
    let text = r#"{"name": "X-Api-Key", "value": "abc123def456"}"#;
    assert!(!red(text).contains("abc123def456"), "{}", red(text));
}

#[test]
fn the_word_index_and_the_dfa_find_the_same_triggers() {
    let scanner = SCANNER.as_ref().unwrap();
    let mut texts = vec![
        adversarial::adversarial(64 * 1024, adversarial::DENSE),
        "PASSWORD=x Token: y | 100% --api-KEY=z curl -u a:b ghp_ sk-ant- AKIA".to_owned(),
        "p".to_owned(),
        String::new(),
    ];
    // Every byte value, and words cut at the region's edges.
    texts.push((0..=255u8).map(char::from).collect());
    for text in &texts {
        let hay = text.as_bytes();
        for (from, to) in [(0, hay.len()), (1, hay.len().saturating_sub(3)), (7, 9)] {
            let (from, to) = (
                from.min(hay.len()),
                to.min(hay.len()).max(from.min(hay.len())),
            );
            let [index, dfa] = scanner.hits_both(hay, from, to);
            assert_eq!(
                index,
                dfa,
                "{from}..{to} of {:?}",
                &text[..text.len().min(60)]
            );
        }
    }
}

#[test]
fn text_without_triggers_is_borrowed() {
    assert!(matches!(
        redact_text("cargo build --release"),
        Cow::Borrowed(_)
    ));
}

#[test]
fn overlapping_findings_merge_to_the_most_specific_kind() {
    let merged = merge(vec![
        Span::new(5, 20, SecretKind::AuthHeader),
        Span::new(5, 18, SecretKind::Jwt),
        Span::new(30, 31, SecretKind::Cookie),
    ]);
    assert_eq!(
        merged,
        vec![
            Span::new(5, 20, SecretKind::Jwt),
            Span::new(30, 31, SecretKind::Cookie)
        ]
    );
}

#[test]
#[ignore = "timing breakdown for development"]
fn profile_components() {
    let pieces = [
        "token=token=token=token=token=token=token=token=",
        "key:key:key:key:key:key:key:key:key:key:key:",
        "password=$password=$password=$password=",
        "ghp_short ghp_ ghp_abc sk-ant- sk- AKIA1234 xoxb- glpat- hf_ npm_ AIza ",
        "-----BEGIN RSA PRIVATE KEY----- -----END RSA PRIVATE KEY----- ",
        "https://user@host/ http://a:b http://x.y/@z s3://bucket/key ",
        "eyJhbGciOi.eyJzdWIi eyJ eyJ.eyJ. ",
        "%3D%3D%3D%25token%3D%2520Bearer%2520 ",
        r#"\"password\":\"\",\"token\":\"\",\"key\":\"\" "#,
        r#"'a'\''b'"c\"d"$'\x41' "#,
        "curl -u curl -u curl -H mysql -p mysql --password --token --api-key ",
        "machine machine login password ",
        r#"{"name": "value", "value": "name"} "#,
        "authorization: bearer authorization: cookie: set-cookie: ",
        "secret_key=SECRET_KEY=secretKey=apiKey=api_key=clientSecret= ",
        "the author used the tokenizer on the keyboard next to a monkey\n",
    ];
    let mut text = String::new();
    let mut i = 0;
    while text.len() < 1 << 20 {
        text.push_str(pieces[i % pieces.len()]);
        i += 1;
    }
    let hay = text.as_bytes();
    let scanner = SCANNER.as_ref().unwrap();
    let t = std::time::Instant::now();
    let views = Views::of(hay);
    eprintln!("views: {} in {:?}", views.views.len(), t.elapsed());
    let t = std::time::Instant::now();
    let n = scanner.triggers_count(hay);
    eprintln!("ac: {n} hits in {:?}", t.elapsed());
    for which in scan::WHICH {
        let t = std::time::Instant::now();
        let mut out = Vec::new();
        scanner.structural_only(which, hay, &mut out);
        eprintln!("{which:?}: {} in {:?}", out.len(), t.elapsed());
    }
    for (d, id, covered) in scanner.rule_times(hay) {
        eprintln!("rule {id}: {d:?} over {covered} bytes");
    }
    let t = std::time::Instant::now();
    let mut out = Vec::new();
    scanner.scan_view_pub(hay, &mut out);
    eprintln!("scan_view raw: {} in {:?}", out.len(), t.elapsed());
    let t = std::time::Instant::now();
    let found = scanner.scan(hay);
    eprintln!("scan all views: {} in {:?}", found.len(), t.elapsed());
    let t = std::time::Instant::now();
    let _ = redact_text(&text);
    eprintln!("redact_text: {:?}", t.elapsed());
}

#[path = "../../../benches/support/adversarial.rs"]
mod adversarial;

#[test]
#[ignore = "view statistics for development"]
fn view_stats() {
    for every in [adversarial::SPARSE, adversarial::DENSE] {
        let text = adversarial::adversarial(1 << 20, every);
        let views = Views::of(text.as_bytes());
        for (i, v) in views.views.iter().enumerate() {
            let (n, bytes) = views.regions(i).map_or((1, v.bytes.len()), |d| {
                (d.len(), d.iter().map(|(a, b)| b - a).sum())
            });
            eprintln!(
                "view {i}: {} bytes, {n} regions, {bytes} scanned",
                v.bytes.len()
            );
        }
    }
}
