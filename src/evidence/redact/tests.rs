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

/// The cases of [`secrets_the_second_round_found_are_hidden`]: the text,
/// its secret, and text around it that must be kept.
const SECOND_ROUND: &[(&str, &str, &str)] = &[
    // URL passwords holding `#`, `!`, `?`, `/`, `@` unescaped.
    (
        "psql \"postgresql://svc:Ab3!xYz9#qW7@db.example.net:5432/app\" -c 'select 1'",
        "Ab3!xYz9#qW7",
        "@db.example.net:5432/app\" -c 'select 1'",
    ),
    (
        "git clone https://bot:Kd8#mn2!Pq@git.example.org/team/repo.git",
        "Kd8#mn2!Pq",
        "@git.example.org/team/repo.git",
    ),
    (
        "celery worker --broker 'amqp://app:Hq7#yOp!x5@rabbit.internal:5672//'",
        "Hq7#yOp!x5",
        "@rabbit.internal:5672//'",
    ),
    (
        "mongosh 'mongodb+srv://app:u7?Zq/w#1@cluster0.abc.mongodb.net/prod' --eval 1",
        "u7?Zq/w#1",
        "@cluster0.abc.mongodb.net/prod' --eval 1",
    ),
    (
        "curl 'https://u:p@ss#w0rd@h.example/x?mail=a@b.example'",
        "p@ss#w0rd",
        "@h.example/x?mail=a@b.example'",
    ),
    // Credential-file lines.
    (
        "echo 'db.example:5432:app:svc:Qw7#Er!Ty9Ui' >> ~/.pgpass",
        "Qw7#Er!Ty9Ui",
        "' >> ~/.pgpass",
    ),
    (
        "cat >> ~/.pgpass <<EOF\nlocalhost:*:*:svc:Lm4 Np8Qr2St6\nEOF\nchmod 600 ~/.pgpass",
        "Lm4 Np8Qr2St6",
        "\nEOF\nchmod 600 ~/.pgpass",
    ),
    (
        "echo 'machine api.example login bot password Rt5#Yu8Io2' >> ~/.netrc",
        "Rt5#Yu8Io2",
        "' >> ~/.netrc",
    ),
    (
        "echo 'https://bot:gh7Ko9#Lp2@github.example' >> ~/.git-credentials",
        "gh7Ko9#Lp2",
        "@github.example' >> ~/.git-credentials",
    ),
    // A key's body split over shell words, with no END line.
    (
        "printf '%s\\n' '-----BEGIN OPENSSH PRIVATE KEY-----' 'b3BlbnNzaC1rZXktdjEAAAAABG5v' 'QyNTUxOQAAACBtZXNzYWdlc2Vj' > k && chmod 600 k",
        "QyNTUxOQAAACBtZXNzYWdlc2Vj",
        "' > k && chmod 600 k",
    ),
    // A substitution decoding an inline literal under a secret name.
    (
        "export OPENAI_API_KEY=$(echo c2stcHJvai1hYmNkZWYxMjM0NTY3 | base64 -d); python3 app.py",
        "c2stcHJvai1hYmNkZWYxMjM0NTY3",
        " | base64 -d); python3 app.py",
    ),
    (
        "sh -c \"export OPENAI_API_KEY=\\$(echo c2stcHJvai1hYmNkZWYxMjM0NTY3 | base64 -d); make\"",
        "c2stcHJvai1hYmNkZWYxMjM0NTY3",
        " | base64 -d); make\"",
    ),
    (
        "TOKEN=$(base64 -d <<< dG9rLWFiY2RlZjEyMzQ1Njc4) ./run.sh",
        "dG9rLWFiY2RlZjEyMzQ1Njc4",
        ") ./run.sh",
    ),
    // Prose.
    (
        "deploy to staging, the db password is Pw8#kL2!mN5x",
        "Pw8#kL2!mN5x",
        "deploy to staging, the db password is ",
    ),
    (
        "ssh password is Mq3wPxmtv8N4 if you need it",
        "Mq3wPxmtv8N4",
        " if you need it",
    ),
    (
        "git commit -m 'rotate: the new staging password is yQ85Cs44FOlm'",
        "yQ85Cs44FOlm",
        "'",
    ),
    (
        "the api key is Tk4Lm9Qz2Wx7Yb, use it",
        "Tk4Lm9Qz2Wx7Yb",
        ", use it",
    ),
    (
        "here is the api key: Tk4Lm9Qz2Wx7Yb",
        "Tk4Lm9Qz2Wx7Yb",
        "api key: ",
    ),
    // Commands that store a secret.
    (
        "gh secret set PROD_DB_URL --body 'H3hA7fcEVgAm' -R org/app",
        "H3hA7fcEVgAm",
        "' -R org/app",
    ),
    (
        "gh secret set X -b Gh7Jk2Lm9Np4",
        "Gh7Jk2Lm9Np4",
        "gh secret set X -b ",
    ),
    (
        "aws ssm put-parameter --name /app/db --type SecureString --value 'Ss3Dd8Ff2Gg7'",
        "Ss3Dd8Ff2Gg7",
        "--value '",
    ),
    (
        "aws secretsmanager put-secret-value --secret-id x --secret-string Sm9Nn2Bb5Vv8",
        "Sm9Nn2Bb5Vv8",
        "--secret-string ",
    ),
    (
        "doppler secrets set STRIPE_KEY Dp4Ll7Kk2Jj9 && make",
        "Dp4Ll7Kk2Jj9",
        " && make",
    ),
    (
        "doppler secrets set STRIPE_KEY=Dp4Ll7Kk2Jj9",
        "Dp4Ll7Kk2Jj9",
        "STRIPE_KEY=",
    ),
    (
        "npm config set _auth YWRtaW46cGFzc3dvcmQx",
        "YWRtaW46cGFzc3dvcmQx",
        "_auth ",
    ),
    (
        "npm config set //registry.example/:_authToken=Np5Mm8Nn2Bb4",
        "Np5Mm8Nn2Bb4",
        ":_authToken=",
    ),
    (
        "vault kv put secret/app db=Vk3Jj6Hh9Gg2",
        "Vk3Jj6Hh9Gg2",
        "secret/app db=",
    ),
    (
        "kubectl create secret generic app --from-literal=dbpw=Kc7Xx2Zz5Aa8 -n prod",
        "Kc7Xx2Zz5Aa8",
        " -n prod",
    ),
    (
        "heroku config:set STRIPE=Hk2Ll5Kk8Jj1 -a app",
        "Hk2Ll5Kk8Jj1",
        " -a app",
    ),
    (
        "fly secrets set DATABASE_X=Fy9Tt6Rr3Ee0",
        "Fy9Tt6Rr3Ee0",
        "DATABASE_X=",
    ),
    // A literal piped into a program that reads a password on stdin.
    (
        "echo 'Dk5Ff8Gg1Hh4' | docker login -u ci --password-stdin reg.example",
        "Dk5Ff8Gg1Hh4",
        "' | docker login -u ci --password-stdin reg.example",
    ),
    (
        "please run: echo 'Dk5Ff8Gg1Hh4' | docker login -u ci --password-stdin r.example",
        "Dk5Ff8Gg1Hh4",
        "please run: echo '",
    ),
    (
        "     1→echo Ht6Yy9Uu2Ii5 | htpasswd -i .htpasswd admin",
        "Ht6Yy9Uu2Ii5",
        "     1→echo ",
    ),
    (
        "echo Ht6Yy9Uu2Ii5 | htpasswd -i .htpasswd admin",
        "Ht6Yy9Uu2Ii5",
        " | htpasswd -i .htpasswd admin",
    ),
    (
        "printf '%s' 'Pw2Ee5Rr8Tt1' | passwd --stdin deploy",
        "Pw2Ee5Rr8Tt1",
        "' | passwd --stdin deploy",
    ),
    (
        "echo 'deploy:Cp3Vv6Bb9Nn2' | chpasswd",
        "Cp3Vv6Bb9Nn2",
        "' | chpasswd",
    ),
    (
        "docker login -u ci --password-stdin r.example <<< 'Zp3Vv6Bb9Nn2'",
        "Zp3Vv6Bb9Nn2",
        "docker login -u ci --password-stdin r.example <<< '",
    ),
    (
        "SSHPASS='Sp8Hh1Jj4Kk7' sshpass -e ssh deploy@web uptime",
        "Sp8Hh1Jj4Kk7",
        "' sshpass -e ssh deploy@web uptime",
    ),
];

/// The classes of issue 43's second red-team round: each secret is hidden
/// and the command around it is kept.
#[test]
fn secrets_the_second_round_found_are_hidden() {
    for &(text, secret, kept) in SECOND_ROUND {
        let out = red(text);
        assert!(!out.contains(secret), "{text}\n  -> {out}");
        assert!(out.contains(kept), "{text}\n  -> {out} (lost `{kept}`)");
        // The request's command, read by the shell analysis too.
        let body = serde_json::json!({"session_id": "s", "surface": "bash", "command": text});
        let request = Request::from_slice(body.to_string().as_bytes()).unwrap();
        let command = redact_request(&request).command.unwrap_or_default();
        assert!(!command.contains(secret), "{text}\n  -> {command}");
    }
}

/// Look-alikes of those classes that hold no secret come through whole.
#[test]
fn look_alikes_of_the_second_round_are_kept() {
    for text in [
        "psql postgresql://localhost/app",
        "psql postgresql://app@db.internal:5432/app",
        "npm install https://registry.npmjs.org/@scope/pkg",
        "curl https://example.com:8080/@user/x",
        "git clone ssh://git@github.com:22/org/repo.git",
        "curl https://proxy.example/?next=https://other.example/@me",
        "git commit -m 'fix password reset page'",
        "the password is required",
        "the token is expired, please log in again",
        "if token is None: return",
        "gh secret list",
        "gh secret set PROD_DB_URL < secret.txt",
        "gh pr create --body 'adds the login page'",
        "aws ssm get-parameter --name /app/db --with-decryption",
        "aws secretsmanager get-secret-value --secret-id app/db",
        "heroku config:get DATABASE_URL -a app",
        "vault kv get secret/app",
        "kubectl create secret generic app --from-file=./creds",
        "npm config set registry https://registry.npmjs.org/",
        "echo \"$REGISTRY_PASSWORD\" | docker login -u ci --password-stdin reg.example",
        "aws ecr get-login-password | docker login --password-stdin 1.dkr.ecr.example",
        "echo hello | base64",
        "cat ~/.pgpass",
        "echo 'localhost:5432' > hosts.txt",
    ] {
        assert_eq!(red(text), text);
    }
    // A file named after a BEGIN marker is not key material.
    let grep = red("grep -- '-----BEGIN RSA PRIVATE KEY-----' keyfile.pem backupKeyFile");
    assert!(grep.ends_with("' keyfile.pem backupKeyFile"), "{grep}");
}

/// A Write tool's `content` for `~/.pgpass` is read as a `.pgpass` file
/// though nothing in it says so; the same line written elsewhere is not.
#[test]
fn content_written_to_a_pgpass_file_is_read_as_one() {
    let v = serde_json::json!({
        "file_path": "/home/dev/.pgpass",
        "content": "db.internal:5432:app:app:qZyLV#XTQ!Ce9\n*:*:*:ro:Ro5Ro5Ro5Ro5\n",
    });
    let out = redact_value(&v).to_string();
    assert!(!out.contains("qZyLV#XTQ!Ce9"), "{out}");
    assert!(!out.contains("Ro5Ro5Ro5Ro5"), "{out}");
    assert!(out.contains("db.internal:5432:app:app:"), "{out}");
    let edits = serde_json::json!({
        "file_path": "/home/dev/.pgpass",
        "edits": [{"old_string": "x", "new_string": "h:5432:d:u:Ed1tEd1tEd1t"}],
    });
    assert!(!redact_value(&edits).to_string().contains("Ed1tEd1tEd1t"));
    let elsewhere = serde_json::json!({
        "file_path": "/srv/app/notes.txt",
        "content": "db.internal:5432:app:app:plainword",
    });
    assert_eq!(redact_value(&elsewhere), elsewhere);
    for (file, _) in FILE_FORMATS {
        assert!(
            crate::credentials::is_credential_path(&format!("/home/u/{file}")),
            "{file} is not a credential file"
        );
    }
}
